// Built only with TONY_SANITIZE=thread: each hand-off below is ordered by Debian's uninstrumented
// absl::Mutex, CondVar or Notification alone, so TSan reports a race (and fails the test binary)
// unless absl_sync_interposer.cc tells it about them.

#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
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

}  // namespace
