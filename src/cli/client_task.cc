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

// Errors after which waiting for the spec is pointless: the job is over or we may not talk to
// it. Anything else (an RM failover, a slow AM) is waited out.
bool Fatal(const absl::Status& s) {
  return absl::IsFailedPrecondition(s) || absl::IsAborted(s) || absl::IsUnauthenticated(s) ||
         absl::IsNotFound(s) || absl::IsInvalidArgument(s) || absl::IsUnimplemented(s);
}

}  // namespace

ClientTask::ClientTask(const JobSpec& spec, Application* app, std::ostream& err)
    : spec_(spec), app_(app), err_(err) {}

ClientTask::~ClientTask() { Stop(); }

void ClientTask::Step(bool job_over, absl::Duration wait) {
  if (job_over) {
    Stop();
    return;
  }
  if (process_ == nullptr) {
    if (gave_up_ || wait <= absl::ZeroDuration()) return;
    absl::StatusOr<ClusterSpec> cluster = app_->WaitForClusterSpec(wait);
    if (cluster.ok()) {
      Start(*cluster);
    } else if (Fatal(cluster.status())) {
      gave_up_ = true;
      err_ << "ytf-submit: the client task will not start: " << cluster.status().message() << "\n";
      // A job still running would wait for a client that never comes: end it now.
      if (!absl::IsFailedPrecondition(cluster.status()) && !absl::IsAborted(cluster.status())) {
        (void)app_->Kill();
      }
    }
    return;
  }
  if (exit_code_) return;
  exit_code_ = process_->Poll();
  if (!exit_code_) return;
  StopHeartbeats();
  err_ << "ytf-submit: client task exited with code " << *exit_code_ << "\n";
  if (absl::Status s = Report([&] { return app_->ReportClientExit(*exit_code_); }); !s.ok()) {
    err_ << "ytf-submit: could not report the client's exit: " << s.message() << "\n";
  }
}

absl::Status ClientTask::Report(const std::function<absl::Status()>& report) {
  absl::Status s;
  for (int attempt = 0; attempt < 5; ++attempt) {
    s = report();
    if (s.ok() || Fatal(s)) break;
    absl::SleepFor(absl::Seconds(1));
  }
  return s;
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
    (void)Report([&] { return app_->ReportClientExit(127); });
    return;
  }
  process_ = std::move(*process);
  err_ << "ytf-submit: every task registered; client task started (pid " << process_->pid()
       << ")\n";
  if (absl::Status s = Report([&] { return app_->ReportClientStarted(); }); !s.ok()) {
    err_ << "ytf-submit: could not report the client's start: " << s.message() << "\n";
  }
  heartbeats_ = std::thread([this] {
    absl::MutexLock lock(&mu_);
    while (!stop_heartbeats_) {
      auto stop = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return stop_heartbeats_; };
      if (mu_.AwaitWithTimeout(absl::Condition(&stop), kHeartbeatInterval)) break;
      mu_.Unlock();
      (void)app_->ReportClientAlive();  // a missed one is harmless; six in a row are not
      mu_.Lock();
    }
  });
}

void ClientTask::StopHeartbeats() {
  {
    absl::MutexLock lock(&mu_);
    stop_heartbeats_ = true;
  }
  if (heartbeats_.joinable()) heartbeats_.join();
}

void ClientTask::Stop() {
  StopHeartbeats();
  if (process_ == nullptr || exit_code_) return;
  exit_code_ = process_->Poll();
  if (exit_code_) return;
  err_ << "ytf-submit: the job is over; stopping the client task\n";
  exit_code_ = process_->Terminate(kStopGrace);
}

}  // namespace tony::cli
