// Copyright libtony authors.
//
// An orchestrator embedding libtony: it submits three jobs at once from one thread, follows
// them through the asynchronous API (an ApplicationMonitor's queue behind a descriptor, waited
// on with poll() as an event loop would), re-attaches to one of them by id as a component that
// knows only the id would (Submitter::Open), and cancels another once it runs.
//
//   orchestrator           local backend (tony-am and tony-executor of the installed package)
//   orchestrator --yarn    the YARN cluster of $HADOOP_CONF_DIR
//
// It prints one line per state change and each job's outcome, and exits 0 when the first two
// SUCCEEDED and the third was KILLED. Built against the installed package by
// tests/consumer (find_package(tony)) and run there with the local backend.

#include <poll.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "tony/application_monitor.h"
#include "tony/job_spec.h"
#include "tony/submitter.h"

namespace {

tony::JobSpec Job(const std::string& name, int workers, const std::string& command) {
  tony::JobSpec spec;
  spec.name = name;
  spec.command = command;
  spec.job_types.push_back({.name = "worker", .instances = workers});
  spec.task_defaults.memory_mb = 256;  // small enough for any test cluster
  return spec;
}

absl::Status Run(bool yarn) {
  std::unique_ptr<tony::Submitter> submitter;
  if (yarn) {
    absl::StatusOr<std::unique_ptr<tony::Submitter>> s = tony::NewYarnSubmitter({});
    if (!s.ok()) return s.status();
    submitter = *std::move(s);
  } else {
    submitter = tony::NewLocalSubmitter({});
  }
  tony::ApplicationMonitor monitor;
  if (absl::Status s = monitor.Start(); !s.ok()) return s;

  // Three jobs at once. The third would run for ten minutes: it is cancelled.
  const std::vector<tony::JobSpec> jobs = {
      Job("orchestrator-train", 2, "echo training $DTF_TASK_INDEX; sleep 2"),
      Job("orchestrator-eval", 1, "echo evaluating; sleep 4"),
      Job("orchestrator-sweep", 1, "sleep 600")};
  std::vector<std::unique_ptr<tony::Application>> submitted;
  for (const tony::JobSpec& spec : jobs) {
    absl::StatusOr<std::unique_ptr<tony::Application>> app = submitter->Submit(spec);
    if (!app.ok()) return app.status();
    std::printf("submitted %s as %s\n", spec.name.c_str(), (*app)->id().c_str());
    submitted.push_back(*std::move(app));
  }
  const std::string train_id = submitted[0]->id();
  const std::string eval_id = submitted[1]->id();
  const std::string sweep_id = submitted[2]->id();
  std::map<std::string, std::string> names = {
      {train_id, jobs[0].name}, {eval_id, jobs[1].name}, {sweep_id, jobs[2].name}};

  // The monitor follows the first and the third through the handles Submit returned.
  std::shared_ptr<tony::Application> sweep = std::move(submitted[2]);
  for (const std::shared_ptr<tony::Application>& app :
       {std::shared_ptr<tony::Application>(std::move(submitted[0])), sweep}) {
    if (absl::Status s = monitor.Follow(app, absl::Minutes(10)); !s.ok()) return s;
  }
  // The second through a handle re-attached by id, as a component that was handed only the id
  // would; the submitting handle is dropped once the other one exists.
  absl::StatusOr<std::unique_ptr<tony::Application>> reattached = submitter->Open(eval_id);
  if (!reattached.ok()) return reattached.status();
  submitted[1].reset();
  std::printf("re-attached to %s\n", (*reattached)->id().c_str());
  if (absl::Status s = monitor.Follow(*std::move(reattached), absl::Minutes(10)); !s.ok()) {
    return s;
  }

  // The event loop: one thread, waiting on the monitor's descriptor.
  std::map<std::string, tony::AppState> outcome;
  bool sweep_cancelled = false;
  pollfd pfd{monitor.fd(), POLLIN, 0};
  while (outcome.size() < names.size()) {
    if (poll(&pfd, 1, -1) < 0) {
      if (errno == EINTR) continue;
      return absl::ErrnoToStatus(errno, "poll");
    }
    for (const tony::ApplicationEvent& e : monitor.TakeEvents()) {
      const char* name = names[e.id].c_str();
      if (!e.status.ok()) {
        std::printf("%s: %s\n", name, e.status.status().ToString().c_str());
        if (e.last) outcome[e.id] = tony::AppState::kFailed;
        continue;
      }
      int running = 0, total = 0;
      for (const auto& [job_type, p] : e.status->progress) {
        running += p.running;
        total += p.total;
      }
      std::printf("%s: %s, %d of %d tasks running\n", name,
                  std::string(tony::AppStateName(e.status->state)).c_str(), running, total);
      if (e.last) outcome[e.id] = e.status->state;
      if (e.id == sweep_id && !sweep_cancelled && e.status->state == tony::AppState::kRunning) {
        sweep_cancelled = true;
        std::printf("%s: cancelling\n", name);
        // KillAsync() returns at once, so the loop never blocks; the monitor then reports the
        // job KILLED. Its `done` runs on a thread of the Application's, where only a failure
        // is worth a line.
        sweep->KillAsync({}, [name = std::string(name)](absl::Status s) {
          if (!s.ok()) std::fprintf(stderr, "%s: kill: %s\n", name.c_str(), s.ToString().c_str());
        });
      }
    }
  }
  monitor.Stop();

  for (const auto& [id, state] : outcome) {
    std::printf("outcome %s %s\n", names[id].c_str(),
                std::string(tony::AppStateName(state)).c_str());
  }
  if (outcome[train_id] != tony::AppState::kSucceeded ||
      outcome[eval_id] != tony::AppState::kSucceeded ||
      outcome[sweep_id] != tony::AppState::kKilled) {
    return absl::InternalError("unexpected outcomes");
  }
  return absl::OkStatus();
}

}  // namespace

int main(int argc, char** argv) {
  bool yarn = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--yarn") == 0) {
      yarn = true;
    } else {
      std::fprintf(stderr, "usage: %s [--yarn]\n", argv[0]);
      return 2;
    }
  }
  absl::Status s = Run(yarn);
  if (!s.ok()) {
    std::fprintf(stderr, "orchestrator: %s\n", s.ToString().c_str());
    return 1;
  }
  std::printf("ORCHESTRATED\n");
  return 0;
}
