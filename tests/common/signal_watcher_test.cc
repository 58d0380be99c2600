// Copyright libtony authors.

#include "common/signal_watcher.h"

#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>

#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"

namespace tony {
namespace {

class SignalWatcherTest : public ::testing::Test {
 protected:
  // The watcher blocks its signals in this thread for good; later tests in this binary start
  // children (subprocess_test) that must not inherit that mask.
  void TearDown() override {
    sigset_t s;
    sigemptyset(&s);
    sigaddset(&s, SIGTERM);
    sigaddset(&s, SIGINT);
    sigaddset(&s, SIGHUP);
    ::pthread_sigmask(SIG_UNBLOCK, &s, nullptr);
  }
};

TEST_F(SignalWatcherTest, HandsASignalToTheCallback) {
  SignalWatcher watcher;
  ASSERT_TRUE(watcher.status().ok()) << watcher.status();
  std::atomic<int> got{0};
  absl::Notification called;
  watcher.Start([&](int sig) {
    got.store(sig);
    if (!called.HasBeenNotified()) called.Notify();
  });
  ASSERT_EQ(::kill(::getpid(), SIGHUP), 0);  // the whole process: only the watcher takes it
  ASSERT_TRUE(called.WaitForNotificationWithTimeout(absl::Seconds(30)));
  EXPECT_EQ(got.load(), SIGHUP);
  watcher.Stop();
}

TEST_F(SignalWatcherTest, StopEndsTheThreadWithoutASignal) {
  SignalWatcher watcher;
  ASSERT_TRUE(watcher.status().ok()) << watcher.status();
  bool called = false;
  watcher.Start([&](int) { called = true; });
  watcher.Stop();  // returns: the eventfd woke the thread
  watcher.Stop();  // idempotent
  EXPECT_FALSE(called);
}

TEST_F(SignalWatcherTest, StopWithoutStartIsHarmless) {
  SignalWatcher watcher;
  watcher.Stop();
}

}  // namespace
}  // namespace tony
