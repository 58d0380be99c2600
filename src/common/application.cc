// Copyright libtony authors.
//
// What every Application shares: status equality and the default hooks of tony/submitter.h.

#include <tuple>

#include "absl/strings/str_cat.h"
#include "tony/submitter.h"

namespace tony {

bool operator==(const JobTypeProgress& a, const JobTypeProgress& b) {
  return std::tie(a.total, a.allocated, a.registered, a.running, a.succeeded, a.failed,
                  a.restarts) ==
         std::tie(b.total, b.allocated, b.registered, b.running, b.succeeded, b.failed, b.restarts);
}

bool operator==(const ApplicationStatus& a, const ApplicationStatus& b) {
  return std::tie(a.id, a.state, a.tracking_url, a.diagnostics, a.progress, a.log_dir,
                  a.tensorboard_url, a.pending, a.wait_reason, a.wait_kind, a.attempt,
                  a.max_attempts, a.suspended_since) ==
         std::tie(b.id, b.state, b.tracking_url, b.diagnostics, b.progress, b.log_dir,
                  b.tensorboard_url, b.pending, b.wait_reason, b.wait_kind, b.attempt,
                  b.max_attempts, b.suspended_since);
}

void Application::DoStatusAsync(const CallOptions& options, StatusCallback done) {
  done(DoStatus(options));
}

void Application::DoWaitAsync(absl::Duration timeout, ProgressCallback on_progress,
                              StatusCallback done, const Cancellation& cancel) {
  done(DoWait(timeout, on_progress, cancel));
}

void Application::DoKillAsync(const CallOptions& options, DoneCallback done) {
  done(DoKill(options));
}

absl::Status Application::DoScale(absl::string_view job_name, int tasks,
                                  const CallOptions& options) {
  return absl::UnimplementedError("this backend cannot scale a role");
}

void Application::DoScaleAsync(absl::string_view job_name, int tasks, const CallOptions& options,
                               DoneCallback done) {
  done(DoScale(job_name, tasks, options));
}

absl::Status Application::DoSuspend(bool suspend, const CallOptions& options) {
  return absl::UnimplementedError(
      absl::StrCat("this backend cannot ", suspend ? "suspend" : "resume", " a job"));
}

void Application::DoSuspendAsync(bool suspend, const CallOptions& options, DoneCallback done) {
  done(DoSuspend(suspend, options));
}

void Application::DoWatchAsync(uint64_t /*known_version*/, absl::Duration /*max_wait*/,
                               WatchCallback done) {
  DoStatusAsync(CallOptions(), [done = std::move(done)](absl::StatusOr<ApplicationStatus> s) {
    done(std::move(s), 0);
  });
}

}  // namespace tony
