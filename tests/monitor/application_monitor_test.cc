// Copyright libtony authors.

#include "tony/application_monitor.h"

#include <poll.h>

#include <atomic>
#include <chrono>
#include <future>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "common/application_handle.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/wait_until.h"

namespace tony {
namespace {

// A test double (tony/submitter.h allows them): the monitor asks its status through the default
// hooks, inline. It walks through `states`, one per call, then stays on the last.
class ScriptedApplication : public Application {
 public:
  ScriptedApplication(std::string id, std::vector<AppState> states)
      : id_(std::move(id)), states_(std::move(states)) {}

  const std::string& id() const override { return id_; }
  absl::StatusOr<ApplicationStatus> DoStatus(const CallOptions&) override {
    absl::MutexLock lock(&mu_);
    ApplicationStatus s;
    s.id = id_;
    s.state = states_[std::min(calls_, states_.size() - 1)];
    ++calls_;
    return s;
  }
  absl::StatusOr<ApplicationStatus> DoWait(absl::Duration, const ProgressCallback&,
                                           const Cancellation&) override {
    waited_ = true;
    ApplicationStatus s;
    s.id = id_;
    s.state = states_.back();
    return s;
  }
  absl::Status DoKill(const CallOptions&) override { return absl::OkStatus(); }
  size_t calls() {
    absl::MutexLock lock(&mu_);
    return calls_;
  }
  std::atomic<bool> waited_{false};

 private:
  const std::string id_;
  const std::vector<AppState> states_;
  absl::Mutex mu_;
  size_t calls_ ABSL_GUARDED_BY(mu_) = 0;
};

ApplicationMonitorOptions FastOptions() {
  ApplicationMonitorOptions o;
  o.max_poll_interval = absl::Milliseconds(20);
  return o;
}

TEST(ApplicationMonitorTest, CallbackSeesEveryChangeThenOneLastEvent) {
  ApplicationMonitor monitor(FastOptions());
  ASSERT_TRUE(monitor.Start().ok());
  auto app = std::make_shared<ScriptedApplication>(
      "a1", std::vector<AppState>{AppState::kAccepted, AppState::kAccepted, AppState::kRunning,
                                  AppState::kRunning, AppState::kSucceeded});
  absl::Mutex mu;
  std::vector<std::string> seen;
  absl::Notification done;
  ASSERT_TRUE(monitor
                  .Follow(app, absl::Minutes(1),
                          [&](const ApplicationEvent& e) {
                            absl::MutexLock lock(&mu);
                            seen.push_back(absl::StrCat(e.id, " ", AppStateName(e.status->state),
                                                        e.last ? " last" : ""));
                            if (e.last) done.Notify();
                          })
                  .ok());
  EXPECT_EQ(monitor.Follow(app, absl::Minutes(1)).code(), absl::StatusCode::kAlreadyExists);
  ASSERT_TRUE(done.WaitForNotificationWithTimeout(absl::Seconds(20)));
  absl::MutexLock lock(&mu);
  EXPECT_THAT(seen, ::testing::ElementsAre("a1 ACCEPTED", "a1 RUNNING", "a1 SUCCEEDED last"));
  EXPECT_TRUE(app->waited_);
  EXPECT_EQ(monitor.size(), 0);
}

TEST(ApplicationMonitorTest, QueuedEventsMakeTheDescriptorReadable) {
  ApplicationMonitor monitor(FastOptions());
  EXPECT_EQ(monitor.fd(), -1);
  EXPECT_EQ(monitor
                .Follow(std::make_shared<ScriptedApplication>(
                            "x", std::vector<AppState>{AppState::kRunning}),
                        absl::Minutes(1))
                .code(),
            absl::StatusCode::kFailedPrecondition);
  ASSERT_TRUE(monitor.Start().ok());
  ASSERT_GE(monitor.fd(), 0);
  for (const char* id : {"b1", "b2", "b3"}) {
    ASSERT_TRUE(monitor
                    .Follow(std::make_shared<ScriptedApplication>(
                                id, std::vector<AppState>{AppState::kRunning, AppState::kFailed}),
                            absl::Minutes(1))
                    .ok());
  }
  std::vector<std::string> last;
  absl::Time deadline = absl::Now() + absl::Seconds(20);
  while (last.size() < 3 && absl::Now() < deadline) {
    pollfd pfd{monitor.fd(), POLLIN, 0};
    ASSERT_GE(poll(&pfd, 1, 1000), 0);
    for (const ApplicationEvent& e : monitor.TakeEvents()) {
      ASSERT_TRUE(e.status.ok());
      if (e.last) {
        EXPECT_EQ(e.status->state, AppState::kFailed);
        last.push_back(e.id);
      }
    }
  }
  EXPECT_THAT(last, ::testing::UnorderedElementsAre("b1", "b2", "b3"));
  pollfd pfd{monitor.fd(), POLLIN, 0};
  EXPECT_EQ(poll(&pfd, 1, 0), 0);  // drained
}

TEST(ApplicationMonitorTest, TimeoutEndsFollowingWithDeadlineExceeded) {
  ApplicationMonitor monitor(FastOptions());
  ASSERT_TRUE(monitor.Start().ok());
  absl::Notification done;
  absl::StatusCode code = absl::StatusCode::kOk;
  ASSERT_TRUE(monitor
                  .Follow(std::make_shared<ScriptedApplication>(
                              "c", std::vector<AppState>{AppState::kRunning}),
                          absl::Milliseconds(200),
                          [&](const ApplicationEvent& e) {
                            if (!e.last) return;
                            code = e.status.status().code();
                            done.Notify();
                          })
                  .ok());
  ASSERT_TRUE(done.WaitForNotificationWithTimeout(absl::Seconds(20)));
  EXPECT_EQ(code, absl::StatusCode::kDeadlineExceeded);
}

TEST(ApplicationMonitorTest, UnfollowAndStopEndQuietly) {
  ApplicationMonitor monitor(FastOptions());
  ASSERT_TRUE(monitor.Start().ok());
  auto app = std::make_shared<ScriptedApplication>("d", std::vector<AppState>{AppState::kRunning});
  std::atomic<int> events{0};
  absl::Notification unfollowed;
  // A callback may call back into the monitor.
  ASSERT_TRUE(monitor
                  .Follow(app, absl::Minutes(1),
                          [&](const ApplicationEvent& e) {
                            ++events;
                            monitor.Unfollow(e.id);
                            unfollowed.Notify();
                          })
                  .ok());
  ASSERT_TRUE(unfollowed.WaitForNotificationWithTimeout(absl::Seconds(20)));
  EXPECT_EQ(monitor.size(), 0);
  EXPECT_EQ(events.load(), 1);
  ASSERT_TRUE(monitor
                  .Follow(std::make_shared<ScriptedApplication>(
                              "e", std::vector<AppState>{AppState::kRunning}),
                          absl::Minutes(1))
                  .ok());
  monitor.Stop();
  monitor.Stop();
  EXPECT_EQ(monitor.Follow(app, absl::Minutes(1)).code(), absl::StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace tony

namespace tony {
namespace {

// A double whose final confirmation (WaitAsync) hangs until released, as a backend that does not
// answer would: the monitor must go on serving the others meanwhile.
class HangingConfirmation : public ScriptedApplication {
 public:
  using ScriptedApplication::ScriptedApplication;
  ~HangingConfirmation() override { Release(); }
  void Release() {
    StatusCallback done;
    {
      absl::MutexLock lock(&mu_);
      done = std::move(done_);
    }
    if (done) done(absl::UnavailableError("released"));
  }

 protected:
  void DoWaitAsync(absl::Duration, ProgressCallback, StatusCallback done,
                   const Cancellation&) override {
    absl::MutexLock lock(&mu_);
    done_ = std::move(done);
  }

 private:
  absl::Mutex mu_;
  StatusCallback done_ ABSL_GUARDED_BY(mu_);
};

TEST(ApplicationMonitorContractTest, AnUnansweredConfirmationHoldsUpNoOtherApplication) {
  ApplicationMonitor monitor(FastOptions());
  ASSERT_TRUE(monitor.Start().ok());
  auto hung =
      std::make_shared<HangingConfirmation>("hung", std::vector<AppState>{AppState::kSucceeded});
  ASSERT_TRUE(monitor.Follow(hung, absl::Minutes(10)).ok());
  absl::Notification other_done;
  ASSERT_TRUE(
      monitor
          .Follow(std::make_shared<ScriptedApplication>(
                      "other", std::vector<AppState>{AppState::kRunning, AppState::kSucceeded}),
                  absl::Minutes(1),
                  [&](const ApplicationEvent& e) {
                    if (e.last) other_done.Notify();
                  })
          .ok());
  // With the confirmation run on the monitor's thread, "other" would wait for "hung".
  EXPECT_TRUE(other_done.WaitForNotificationWithTimeout(absl::Seconds(20)));
  EXPECT_EQ(monitor.size(), 1);
  hung->Release();
  std::vector<ApplicationEvent> events;
  for (absl::Time deadline = absl::Now() + absl::Seconds(20);
       events.empty() && absl::Now() < deadline;) {
    pollfd pfd{monitor.fd(), POLLIN, 0};
    ASSERT_GE(poll(&pfd, 1, 1000), 0);
    events = monitor.TakeEvents();
  }
  ASSERT_EQ(events.size(), 1u);
  EXPECT_TRUE(events[0].last);
  EXPECT_EQ(events[0].status.status().code(), absl::StatusCode::kUnavailable);
}

TEST(ApplicationMonitorContractTest, StopAndDestructionFromACallbackAreSafe) {
  // Stop() from a callback: the thread cannot join itself; it ends once the callback returns.
  ApplicationMonitor stopped(FastOptions());
  ASSERT_TRUE(stopped.Start().ok());
  absl::Notification stop_returned;
  ASSERT_TRUE(stopped
                  .Follow(std::make_shared<ScriptedApplication>(
                              "s", std::vector<AppState>{AppState::kRunning}),
                          absl::Minutes(1),
                          [&](const ApplicationEvent&) {
                            stopped.Stop();
                            stop_returned.Notify();
                          })
                  .ok());
  ASSERT_TRUE(stop_returned.WaitForNotificationWithTimeout(absl::Seconds(20)));
  EXPECT_EQ(stopped
                .Follow(std::make_shared<ScriptedApplication>(
                            "s2", std::vector<AppState>{AppState::kRunning}),
                        absl::Minutes(1))
                .code(),
            absl::StatusCode::kFailedPrecondition);

  // Destruction from a callback: what the thread still reads outlives the monitor.
  auto owned = std::make_unique<ApplicationMonitor>(FastOptions());
  ASSERT_TRUE(owned->Start().ok());
  absl::Notification destroyed;
  ASSERT_TRUE(owned
                  ->Follow(std::make_shared<ScriptedApplication>(
                               "d", std::vector<AppState>{AppState::kRunning}),
                           absl::Minutes(1),
                           [&](const ApplicationEvent&) {
                             owned.reset();
                             destroyed.Notify();
                           })
                  .ok());
  ASSERT_TRUE(destroyed.WaitForNotificationWithTimeout(absl::Seconds(20)));
}

TEST(ApplicationStatusTest, EqualityCoversEveryFieldTheTensorBoardUrlIncluded) {
  ApplicationStatus a;
  a.progress["worker"].total = 2;
  ApplicationStatus b = a;
  EXPECT_EQ(a, b);
  b.tensorboard_url = "http://node:6006/";  // what YARN's Wait once missed
  EXPECT_NE(a, b);
  b = a;
  b.progress["worker"].restarts = 1;
  EXPECT_NE(a, b);
  b = a;
  b.tracking_url = "http://rm/proxy/app/";
  EXPECT_NE(a, b);
}

// A backend whose long poll stays in flight; the host unfollows meanwhile, so the monitor's
// copy is the last reference to the handle. Found by review: the monitor let go of it with its
// lock held, the handle's destruction answered the watch Cancelled, and the answer took the
// same lock on the same thread (absl's deadlock detection aborted; without it, a hang).
class HeldWatchBackend : public Application {
 public:
  explicit HeldWatchBackend(std::shared_ptr<std::atomic<bool>> destroyed)
      : destroyed_(std::move(destroyed)) {}
  ~HeldWatchBackend() override { *destroyed_ = true; }
  const std::string& id() const override { return id_; }
  absl::Notification asking, unfollowed;

 protected:
  absl::StatusOr<ApplicationStatus> DoStatus(const CallOptions&) override {
    return ApplicationStatus{};
  }
  absl::StatusOr<ApplicationStatus> DoWait(absl::Duration, const ProgressCallback&,
                                           const Cancellation&) override {
    return ApplicationStatus{};
  }
  absl::Status DoKill(const CallOptions&) override { return absl::OkStatus(); }
  void DoWatchAsync(uint64_t, absl::Duration, WatchCallback done) override {
    held_ = std::move(done);  // a long poll in flight
    asking.Notify();
    unfollowed.WaitForNotification();
  }

 private:
  const std::string id_ = "application_7_0001";
  const std::shared_ptr<std::atomic<bool>> destroyed_;
  WatchCallback held_;
};

TEST(ApplicationMonitorTest, UnfollowingDuringAWatchLetsGoOfTheApplicationWithoutItsLock) {
  ApplicationMonitor monitor;
  ASSERT_TRUE(monitor.Start().ok());
  auto destroyed = std::make_shared<std::atomic<bool>>(false);
  auto backend = std::make_shared<HeldWatchBackend>(destroyed);
  HeldWatchBackend* raw = backend.get();
  ASSERT_TRUE(monitor.Follow(MakeApplicationHandle(std::move(backend)), absl::Hours(1)).ok());
  raw->asking.WaitForNotification();
  monitor.Unfollow("application_7_0001");  // the monitor's copy is now the only one
  raw->unfollowed.Notify();
  // The monitor's thread goes on: it answers, and the backend goes (on the Retirer).
  auto size = std::async(std::launch::async, [&] { return monitor.size(); });
  ASSERT_EQ(size.wait_for(std::chrono::seconds(20)), std::future_status::ready)
      << "the monitor's thread is stuck";
  EXPECT_EQ(size.get(), 0);
  EXPECT_TRUE(testing::WaitUntil([&] { return destroyed->load(); }, absl::Seconds(20)));
  monitor.Stop();
}

}  // namespace
}  // namespace tony
