// Built only with TONY_SANITIZE=thread: each hand-off below is ordered by Debian's uninstrumented
// absl::Mutex, CondVar or Notification alone, so TSan reports a race (and fails the test binary)
// unless absl_sync_interposer.cc tells it about them.

#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace {

TEST(AbslSyncInterposerTest, MutexLockAndReaderLock) {
  absl::Mutex mu;
  std::vector<int> values;
  std::vector<std::thread> threads;
  for (int t = 0; t < 2; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 200; ++i) {
        absl::MutexLock lock(&mu);
        values.push_back(i);
      }
    });
  }
  size_t seen = 0;
  while (seen < 400) {
    absl::ReaderMutexLock lock(&mu);
    seen = values.size();
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(values.size(), 400u);
}

TEST(AbslSyncInterposerTest, TryLock) {
  absl::Mutex mu;
  int value = 0;
  std::thread writer([&] {
    while (!mu.TryLock()) {
    }
    value = 1;
    mu.Unlock();
  });
  writer.join();
  ASSERT_TRUE(mu.TryLock());
  EXPECT_EQ(value, 1);
  mu.Unlock();
}

TEST(AbslSyncInterposerTest, CondVarWaitReleasesAndReacquires) {
  absl::Mutex mu;
  absl::CondVar cv;
  bool ready = false;
  int payload = 0;
  std::thread writer([&] {
    payload = 42;  // before the lock: ordered through the mutex's release in Wait
    absl::MutexLock lock(&mu);
    ready = true;
    cv.Signal();
  });
  {
    absl::MutexLock lock(&mu);
    while (!ready) cv.WaitWithTimeout(&mu, absl::Seconds(10));
  }
  EXPECT_EQ(payload, 42);
  writer.join();
}

TEST(AbslSyncInterposerTest, AwaitAndLockWhen) {
  absl::Mutex mu;
  bool ready = false;
  int payload = 0;
  std::thread writer([&] {
    payload = 7;
    absl::MutexLock lock(&mu);
    ready = true;
  });
  mu.LockWhen(absl::Condition(&ready));
  mu.Unlock();
  EXPECT_EQ(payload, 7);
  writer.join();

  bool done = false;
  std::thread second([&] {
    payload = 8;
    absl::MutexLock lock(&mu);
    done = true;
  });
  {
    absl::MutexLock lock(&mu);
    EXPECT_TRUE(mu.AwaitWithTimeout(absl::Condition(&done), absl::Seconds(10)));
  }
  EXPECT_EQ(payload, 8);
  second.join();
}

TEST(AbslSyncInterposerTest, NotificationAlreadyNotified) {
  absl::Notification notified;
  int payload = 0;
  std::thread writer([&] {
    payload = 9;
    notified.Notify();
  });
  writer.join();
  // Notified already: the wait takes the library's lock-free path.
  notified.WaitForNotification();
  EXPECT_EQ(payload, 9);
}

// Waited for: the library's wait locks, and Debian's build ends it with a tail call to
// Mutex::Unlock (which once made the interposer take that unlock for our code's and report an
// unlock of an unlocked mutex). The writer pauses so that the wait usually starts first; the
// test's verdict does not depend on it.
TEST(AbslSyncInterposerTest, NotificationWaitedFor) {
  for (int i = 0; i < 10; ++i) {
    absl::Notification plain, with_timeout, with_deadline;
    int first = 0, second = 0, third = 0;  // each published by its own notification
    std::thread writer([&] {
      absl::SleepFor(absl::Milliseconds(2));
      first = 1;
      plain.Notify();
      absl::SleepFor(absl::Milliseconds(2));
      second = 2;
      with_timeout.Notify();
      absl::SleepFor(absl::Milliseconds(2));
      third = 3;
      with_deadline.Notify();
    });
    plain.WaitForNotification();
    EXPECT_EQ(first, 1);
    EXPECT_TRUE(with_timeout.WaitForNotificationWithTimeout(absl::Seconds(10)));
    EXPECT_EQ(second, 2);
    EXPECT_TRUE(with_deadline.WaitForNotificationWithDeadline(absl::Now() + absl::Seconds(10)));
    EXPECT_EQ(third, 3);
    writer.join();
  }
}

}  // namespace
