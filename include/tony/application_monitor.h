// Copyright libtony authors.
//
// ApplicationMonitor: follows many applications from one library-owned thread, for programs
// that run an event loop or that do not want a thread per job. While an ApplicationMaster runs,
// its status arrives by long polls (an event the moment anything changes, the outcome
// included); YARN is asked, with a backoff, only while no AM answers.
//
// Events go to a callback on the monitor's thread, or, without a callback, to a queue behind a
// descriptor that an event loop (epoll, asio, libuv) waits on:
//
//   tony::ApplicationMonitor monitor;
//   if (absl::Status s = monitor.Start(); !s.ok()) return s;
//   if (!submitted.ok()) return submitted.status();
//   std::shared_ptr<tony::Application> app = *std::move(submitted);
//   (void)monitor.Follow(app, absl::Hours(2));  // no callback: queued
//   pollfd pfd{monitor.fd(), POLLIN, 0};
//   while (poll(&pfd, 1, -1) >= 0) {
//     for (const tony::ApplicationEvent& e : monitor.TakeEvents()) {
//       if (e.last) return e.status.ok() ? absl::OkStatus() : e.status.status();
//     }
//   }
//   return absl::ErrnoToStatus(errno, "poll");
//
// (tests/consumer builds this example against the installed package.)
//
// Stability: stable API (tony/version.h); events may gain fields at their end.
//
// Thread-safe: every method may be called from any thread, callbacks included.

#ifndef TONY_APPLICATION_MONITOR_H_
#define TONY_APPLICATION_MONITOR_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "tony/export.h"
#include "tony/submitter.h"

namespace tony {

struct ApplicationEvent {
  std::string id;
  // The status after a change. On the last event: the final status, or why following ended
  // (DeadlineExceeded when the application was not final within its timeout, or the backend's
  // error when it could not be asked several times in a row).
  absl::StatusOr<ApplicationStatus> status;
  bool last = false;  // nothing follows for this application
};

struct ApplicationMonitorOptions {
  // Longest pause between two questions to a backend that cannot push changes (YARN before the
  // ApplicationMaster is up). Default: 1 second.
  absl::Duration max_poll_interval = absl::Seconds(1);
  // Longest single long poll of an ApplicationMaster (renewed at once). Default: 20 seconds.
  absl::Duration long_poll = absl::Seconds(20);
  // Consecutive failed questions after which following ends with the error. Default: 5.
  int max_failures = 5;
};

class TONY_EXPORT ApplicationMonitor {
 public:
  using Callback = std::function<void(const ApplicationEvent&)>;

  explicit ApplicationMonitor(ApplicationMonitorOptions options = {});
  ~ApplicationMonitor();  // Stop()s
  ApplicationMonitor(const ApplicationMonitor&) = delete;
  ApplicationMonitor& operator=(const ApplicationMonitor&) = delete;

  // Starts the monitor's thread and creates fd(). Internal error if the system refuses.
  absl::Status Start();
  // Ends following everything (no last events) and joins the thread. Idempotent.
  void Stop();

  // Follows `app` until it is final (one last event with the final status) or `timeout` passes
  // (a last event with DeadlineExceeded). Events go to `callback` on the monitor's thread (it
  // should not block: every application waits for it), or to the queue when it is empty.
  // AlreadyExists when the application is followed already; FailedPrecondition when not
  // started.
  absl::Status Follow(std::shared_ptr<Application> app, absl::Duration timeout,
                      Callback callback = nullptr);
  // Stops following `id` without a last event. Harmless when not followed.
  void Unfollow(absl::string_view id);
  // Applications followed now.
  int size() const;

  // Readable while TakeEvents() has events (an eventfd); -1 before Start(). Owned by the
  // monitor: do not close it.
  int fd() const;
  // Queued events in order, emptying the queue.
  std::vector<ApplicationEvent> TakeEvents();

 private:
  class Impl;
  std::shared_ptr<Impl> impl_;
};

}  // namespace tony

#endif  // TONY_APPLICATION_MONITOR_H_
