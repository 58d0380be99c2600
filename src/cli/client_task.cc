// Copyright libtony authors.

#include "cli/client_task.h"

#include <signal.h>
#include <stdlib.h>

#include "absl/time/clock.h"
#include "spec/task_env.h"

namespace tony::cli {
namespace {

// Well inside the AM's one-minute heartbeat timeout.
constexpr absl::Duration kHeartbeatInterval = absl::Seconds(10);
constexpr absl::Duration kStopGrace = absl::Seconds(10);

}  // namespace

ClientTask::ClientTask(const JobSpec& spec, Application* app, std::ostream& err)
    : spec_(spec),
      app_(app),
      err_(err),
      // The AM fails the job at its registration deadline; a margin for its start.
      deadline_(absl::Now() + spec.timeouts.registration + absl::Minutes(2)) {}

ClientTask::~ClientTask() { Stop(); }

void ClientTask::Step(bool job_over, absl::Duration wait) {
  if (job_over) {
    Stop();
    return;
  }
  if (process_ == nullptr) {
    if (gave_up_) return;
    absl::StatusOr<ClusterSpec> cluster = app_->WaitForClusterSpec(wait);
    if (cluster.ok()) {
      Start(*cluster);
    } else if (!absl::IsDeadlineExceeded(cluster.status()) || absl::Now() >= deadline_) {
      // The job ended (or never came up): its own status says why.
      gave_up_ = true;
      err_ << "ytf-submit: the client task will not start: " << cluster.status().message() << "\n";
    }
    return;
  }
  if (exit_code_) return;
  exit_code_ = process_->Poll();
  if (exit_code_) {
    err_ << "ytf-submit: client task exited with code " << *exit_code_ << "\n";
    // The AM decides the outcome from this report: retry a little if it is busy.
    absl::Status reported;
    for (int attempt = 0; attempt < 3; ++attempt) {
      reported = app_->ReportClientExit(*exit_code_);
      if (reported.ok()) break;
      absl::SleepFor(absl::Seconds(1));
    }
    if (!reported.ok()) {
      err_ << "ytf-submit: could not report the client's exit: " << reported.message() << "\n";
    }
    return;
  }
  if (absl::Now() >= next_heartbeat_) {
    next_heartbeat_ = absl::Now() + kHeartbeatInterval;
    (void)app_->ReportClientAlive();  // a missed one is harmless; six in a row are not
  }
}

void ClientTask::Start(const ClusterSpec& cluster) {
  TaskSpec task = ResolveClientTask(spec_);
  std::map<std::string, std::string> env = CurrentEnvironment();
  for (auto& [k, v] : BuildTaskEnvironment(spec_, task, &cluster)) env[k] = std::move(v);
  if (!spec_.script_file.empty()) {
    // Here the script is the local file itself, not a localized copy.
    char* resolved = ::realpath(spec_.script_file.c_str(), nullptr);
    if (resolved != nullptr) {
      env["DTF_TASK_SCRIPT"] = resolved;
      ::free(resolved);
    }
  }
  SubprocessOptions options;
  options.argv = {"/bin/bash", "-c", task.command};
  options.env = std::move(env);
  // The terminal's: an interactive client reads from it, and Ctrl-C reaches it as well.
  options.null_stdin = false;
  options.new_process_group = false;
  options.parent_death_signal = SIGTERM;  // not left behind if ytf-submit is killed
  absl::StatusOr<std::unique_ptr<Subprocess>> process = Subprocess::Spawn(options);
  if (!process.ok()) {
    gave_up_ = true;
    err_ << "ytf-submit: cannot start the client task: " << process.status().message() << "\n";
    // Its failure decides the job, as a task that cannot start would.
    (void)app_->ReportClientExit(127);
    return;
  }
  process_ = std::move(*process);
  err_ << "ytf-submit: every task registered; client task started (pid " << process_->pid()
       << ")\n";
  if (absl::Status s = app_->ReportClientStarted(); !s.ok()) {
    err_ << "ytf-submit: could not report the client's start: " << s.message() << "\n";
  }
  next_heartbeat_ = absl::Now() + kHeartbeatInterval;
}

void ClientTask::Stop() {
  if (process_ == nullptr || exit_code_) return;
  exit_code_ = process_->Poll();
  if (exit_code_) return;
  err_ << "ytf-submit: the job is over; stopping the client task\n";
  exit_code_ = process_->Terminate(kStopGrace);
}

}  // namespace tony::cli
