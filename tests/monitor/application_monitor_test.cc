// Copyright libtony authors.

#include "tony/application_monitor.h"

#include <poll.h>

#include <atomic>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tony {
namespace {

// An application that is not broker-backed: the monitor asks its Status(). It walks through
// `states`, one per call, then stays on the last.
class ScriptedApplication : public Application {
 public:
  ScriptedApplication(std::string id, std::vector<AppState> states)
      : id_(std::move(id)), states_(std::move(states)) {}
  using Application::Kill;
  using Application::Status;

  const std::string& id() const override { return id_; }
  absl::StatusOr<ApplicationStatus> Status(const CallOptions&) override {
    absl::MutexLock lock(&mu_);
    ApplicationStatus s;
    s.id = id_;
    s.state = states_[std::min(calls_, states_.size() - 1)];
    ++calls_;
    return s;
  }
  absl::StatusOr<ApplicationStatus> Wait(
      absl::Duration, const std::function<void(const ApplicationStatus&)>&) override {
    waited_ = true;
    ApplicationStatus s;
    s.id = id_;
    s.state = states_.back();
    return s;
  }
  absl::Status Kill(const CallOptions&) override { return absl::OkStatus(); }
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
