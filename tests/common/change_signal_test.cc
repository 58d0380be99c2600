// Copyright libtony authors.

#include "common/change_signal.h"

#include <gtest/gtest.h>

#include <thread>
#include <vector>

#include "absl/synchronization/notification.h"

namespace tony {
namespace {

TEST(ChangeSignalTest, ANoticeBeforeTheWaitIsNotLost) {
  ChangeSignal changes;
  changes.Notify();
  changes.Notify();
  uint64_t seen = 0;
  ASSERT_TRUE(changes.WaitPast(&seen));
  EXPECT_EQ(seen, 2u);  // both notices, one wake-up
}

TEST(ChangeSignalTest, AWaiterWakesOnANoticeFromAnotherThread) {
  ChangeSignal changes;
  absl::Notification started;
  std::thread waiter([&] {
    uint64_t seen = 0;
    started.Notify();
    // Whether the notice comes before or during the wait, it is seen.
    EXPECT_TRUE(changes.WaitPast(&seen));
    EXPECT_EQ(seen, 1u);
  });
  started.WaitForNotification();
  changes.Notify();
  waiter.join();
}

TEST(ChangeSignalTest, CloseReleasesEveryWaiterForGood) {
  ChangeSignal changes;
  std::vector<std::thread> waiters;
  for (int i = 0; i < 3; ++i) {
    waiters.emplace_back([&] {
      uint64_t seen = 0;
      while (changes.WaitPast(&seen)) {
      }
    });
  }
  changes.Notify();
  changes.Close();
  for (std::thread& t : waiters) t.join();
  uint64_t seen = 0;
  EXPECT_FALSE(changes.WaitPast(&seen));  // after Close(), at once
}

}  // namespace
}  // namespace tony
