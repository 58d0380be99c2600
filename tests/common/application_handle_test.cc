// Copyright libtony authors.

#include "common/application_handle.h"

#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <memory>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

#include "absl/base/config.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "common/retirer.h"
#include "gtest/gtest.h"

namespace tony {
namespace {

constexpr absl::Duration kPrompt = absl::Seconds(20);  // "promptly", never a measurement

// What a FakeBackend's calls left for the test to answer, held apart from the backend so that
// the test can answer after the backend began to go.
struct Pending {
  absl::Mutex mu;
  std::vector<Application::StatusCallback> status ABSL_GUARDED_BY(mu);
  Application::ProgressCallback progress ABSL_GUARDED_BY(mu);
  std::optional<Cancellation> wait_token ABSL_GUARDED_BY(mu);
  absl::Notification release_destructor;  // the backend's destructor waits for it when asked
  absl::Notification destroyed;
  std::atomic<bool> destroyed_on_caller_thread{false};
  std::thread::id caller = std::this_thread::get_id();

  Application::StatusCallback TakeStatus() {
    absl::MutexLock lock(&mu);
    Application::StatusCallback done = std::move(status.front());
    status.erase(status.begin());
    return done;
  }
};

// A backend whose async calls stay in flight until the test answers them, and whose destructor
// (like a real backend's joining its calls) can be made to wait.
class FakeBackend : public Application {
 public:
  FakeBackend(std::shared_ptr<Pending> pending, bool destructor_waits)
      : pending_(std::move(pending)), destructor_waits_(destructor_waits) {}
  ~FakeBackend() override {
    if (destructor_waits_) pending_->release_destructor.WaitForNotification();
    pending_->destroyed_on_caller_thread = std::this_thread::get_id() == pending_->caller;
    pending_->destroyed.Notify();
  }
  const std::string& id() const override { return id_; }

 protected:
  absl::StatusOr<ApplicationStatus> DoStatus(const CallOptions&) override { return Running(); }
  absl::StatusOr<ApplicationStatus> DoWait(absl::Duration, const ProgressCallback&,
                                           const Cancellation&) override {
    return Running();
  }
  absl::Status DoKill(const CallOptions&) override { return absl::OkStatus(); }
  void DoStatusAsync(const CallOptions&, StatusCallback done) override {
    absl::MutexLock lock(&pending_->mu);
    pending_->status.push_back(std::move(done));
  }
  void DoWaitAsync(absl::Duration, ProgressCallback on_progress, StatusCallback done,
                   const Cancellation& cancel) override {
    absl::MutexLock lock(&pending_->mu);
    pending_->status.push_back(std::move(done));
    pending_->progress = std::move(on_progress);
    pending_->wait_token = cancel;
  }

 private:
  ApplicationStatus Running() const {
    ApplicationStatus s;
    s.id = id_;
    s.state = AppState::kRunning;
    return s;
  }
  const std::string id_ = "application_1_0001";
  const std::shared_ptr<Pending> pending_;
  const bool destructor_waits_;
};

struct Answer {
  absl::Mutex mu;
  std::vector<absl::StatusCode> codes ABSL_GUARDED_BY(mu);
  std::vector<std::thread::id> threads ABSL_GUARDED_BY(mu);
  Application::StatusCallback Recorder() {
    return [this](absl::StatusOr<ApplicationStatus> s) {
      absl::MutexLock lock(&mu);
      codes.push_back(s.status().code());
      threads.push_back(std::this_thread::get_id());
    };
  }
  std::vector<absl::StatusCode> Codes() {
    absl::MutexLock lock(&mu);
    return codes;
  }
};

TEST(ApplicationHandleTest, ItsDestructionDoesNotWaitForTheBackendsCallInFlight) {
  auto pending = std::make_shared<Pending>();
  auto handle = MakeApplicationHandle(std::make_shared<FakeBackend>(pending, true));
  Answer answer;
  handle->StatusAsync({}, answer.Recorder());

  // The backend's destructor would wait until released: the handle's does not.
  handle.reset();
  EXPECT_EQ(answer.Codes(), std::vector<absl::StatusCode>{absl::StatusCode::kCancelled});
  {
    absl::MutexLock lock(&answer.mu);
    EXPECT_EQ(answer.threads.front(), std::this_thread::get_id());  // on the destroying thread
  }
  EXPECT_FALSE(pending->destroyed.HasBeenNotified());

  // The backend's late answer goes nowhere; the backend goes on the Retirer's thread.
  pending->TakeStatus()(absl::StatusOr<ApplicationStatus>(ApplicationStatus{}));
  EXPECT_EQ(answer.Codes().size(), 1u);
  pending->release_destructor.Notify();
  ASSERT_TRUE(pending->destroyed.WaitForNotificationWithTimeout(kPrompt));
  EXPECT_FALSE(pending->destroyed_on_caller_thread);
}

TEST(ApplicationHandleTest, WithNothingInFlightTheBackendGoesWithTheHandle) {
  auto pending = std::make_shared<Pending>();
  auto handle = MakeApplicationHandle(std::make_shared<FakeBackend>(pending, false));
  Answer answer;
  handle->StatusAsync({}, answer.Recorder());
  pending->TakeStatus()(absl::StatusOr<ApplicationStatus>(ApplicationStatus{}));
  EXPECT_EQ(answer.Codes(), std::vector<absl::StatusCode>{absl::StatusCode::kOk});

  handle.reset();
  EXPECT_TRUE(pending->destroyed.HasBeenNotified());
  EXPECT_TRUE(pending->destroyed_on_caller_thread);
  EXPECT_EQ(answer.Codes().size(), 1u);
}

TEST(ApplicationHandleTest, ADoneRunningOnAnotherThreadIsWaitedFor) {
  auto pending = std::make_shared<Pending>();
  auto handle = MakeApplicationHandle(std::make_shared<FakeBackend>(pending, false));
  absl::Notification entered, proceed;
  std::atomic<bool> done_finished{false};
  handle->StatusAsync({}, [&](absl::StatusOr<ApplicationStatus>) {
    entered.Notify();
    proceed.WaitForNotification();
    done_finished = true;
  });
  std::thread answering(pending->TakeStatus(), ApplicationStatus{});
  entered.WaitForNotification();
  std::atomic<bool> destroyed_after_done{false};
  std::thread destroying([&] {
    handle.reset();
    destroyed_after_done = done_finished.load();
  });
  proceed.Notify();
  destroying.join();
  answering.join();
  EXPECT_TRUE(destroyed_after_done);
}

TEST(ApplicationHandleTest, ADoneMayDestroyTheHandleAndTheOtherCallsAreAnswered) {
  auto pending = std::make_shared<Pending>();
  auto handle = MakeApplicationHandle(std::make_shared<FakeBackend>(pending, false));
  Answer other;
  handle->StatusAsync({}, [&](absl::StatusOr<ApplicationStatus>) { handle.reset(); });
  handle->StatusAsync({}, other.Recorder());
  std::thread answering(pending->TakeStatus(), ApplicationStatus{});
  answering.join();
  EXPECT_EQ(handle, nullptr);
  EXPECT_EQ(other.Codes(), std::vector<absl::StatusCode>{absl::StatusCode::kCancelled});
  ASSERT_TRUE(pending->destroyed.WaitForNotificationWithTimeout(kPrompt));
}

TEST(ApplicationHandleTest, ItsDestructionCancelsAWaitAndSilencesItsProgress) {
  auto pending = std::make_shared<Pending>();
  auto handle = MakeApplicationHandle(std::make_shared<FakeBackend>(pending, false));
  Answer answer;
  std::atomic<int> progress{0};
  handle->WaitAsync(
      absl::Hours(1), [&](const ApplicationStatus&) { ++progress; }, answer.Recorder());
  Application::ProgressCallback on_progress;
  Cancellation token;
  {
    absl::MutexLock lock(&pending->mu);
    on_progress = pending->progress;
    token = *pending->wait_token;
  }
  on_progress(ApplicationStatus{});
  EXPECT_EQ(progress, 1);
  EXPECT_FALSE(token.cancelled());

  handle.reset();
  EXPECT_TRUE(token.cancelled());  // the backend's wait ends promptly
  EXPECT_EQ(answer.Codes(), std::vector<absl::StatusCode>{absl::StatusCode::kCancelled});
  on_progress(ApplicationStatus{});
  pending->TakeStatus()(absl::CancelledError("late"));
  EXPECT_EQ(progress, 1);
  EXPECT_EQ(answer.Codes().size(), 1u);
}

TEST(ApplicationHandleTest, ACallFromADoneItsDestructionAnswersIsAnsweredCancelledAtOnce) {
  auto pending = std::make_shared<Pending>();
  auto handle = MakeApplicationHandle(std::make_shared<FakeBackend>(pending, false));
  Application* raw = handle.get();
  Answer again;
  // A done that asks again on an error, as a poll loop would.
  handle->StatusAsync({}, [&](absl::StatusOr<ApplicationStatus> s) {
    if (!s.ok()) raw->StatusAsync({}, again.Recorder());
  });
  handle.reset();
  EXPECT_EQ(again.Codes(), std::vector<absl::StatusCode>{absl::StatusCode::kCancelled});
  absl::MutexLock lock(&pending->mu);
  EXPECT_EQ(pending->status.size(), 1u);  // only the first call reached the backend
}

TEST(RetirerTest, DestroysOnItsThreadInOrderAndStopDrainsWhatIsLeft) {
  Retirer retirer;
  absl::Mutex mu;
  std::vector<int> order;
  std::vector<std::thread::id> threads;
  auto marker = [&](int n) {
    return std::shared_ptr<void>(new int(n), [&, n](void* p) {
      delete static_cast<int*>(p);
      absl::MutexLock lock(&mu);
      order.push_back(n);
      threads.push_back(std::this_thread::get_id());
    });
  };
  retirer.Retire(marker(0));  // not started: at once, here
  retirer.Start();
  retirer.Retire(marker(1));
  retirer.Retire(marker(2));
  retirer.Stop();
  EXPECT_EQ(retirer.pending(), 0u);
  absl::MutexLock lock(&mu);
  EXPECT_EQ(order, (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(threads[0], std::this_thread::get_id());
  EXPECT_NE(threads[1], std::this_thread::get_id());
}

// A fork while the Retirer's thread destroys something and more is queued: the child's Retirer
// starts afresh (the parent's thread does not exist there) and never destroys the parent's
// objects; the parent's go on.
TEST(RetirerTest, AForkedChildStartsAfreshAndLeavesTheParentsObjectsAlone) {
#ifdef ABSL_HAVE_THREAD_SANITIZER
  GTEST_SKIP() << "TSan does not support starting threads after a multi-threaded fork";
#endif
  Retirer retirer;
  retirer.Start();
  absl::Notification busy, release;
  std::atomic<bool> queued_destroyed{false};
  retirer.Retire(std::shared_ptr<void>(new int(0), [&](void* p) {
    busy.Notify();
    release.WaitForNotification();
    delete static_cast<int*>(p);
  }));
  retirer.Retire(std::shared_ptr<void>(new int(1), [&](void* p) {
    queued_destroyed = true;
    delete static_cast<int*>(p);
  }));
  busy.WaitForNotification();
  retirer.BeforeFork();
  const pid_t child = ::fork();
  if (child == 0) {
    retirer.AfterForkInChild();
    std::atomic<bool> mine{false};
    retirer.Start();
    retirer.Retire(std::shared_ptr<void>(new int(2), [&](void* p) {
      mine = true;
      delete static_cast<int*>(p);
    }));
    retirer.Stop();
    ::_exit(mine && !queued_destroyed ? 0 : 1);
  }
  retirer.AfterForkInParent();
  ASSERT_GT(child, 0);
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  release.Notify();
  retirer.Stop();
  EXPECT_TRUE(queued_destroyed);
}

}  // namespace
}  // namespace tony
