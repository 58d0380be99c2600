// Copyright libtony authors.

#include "common/clock.h"

#include <thread>

#include "absl/time/clock.h"
#include "common/logging.h"
#include "gtest/gtest.h"

namespace tony {
namespace {

TEST(ClockTest, TheRealClockIsNow) {
  const absl::Time before = absl::Now();
  const absl::Time now = RealClock()->Now();
  EXPECT_GE(now, before);
  EXPECT_LE(now, absl::Now());
}

TEST(ClockTest, ASimulatedClockMovesOnlyWhenTold) {
  SimulatedClock clock;
  const absl::Time t0 = clock.Now();
  EXPECT_EQ(clock.Now(), t0);
  clock.Advance(absl::Seconds(5));
  EXPECT_EQ(clock.Now(), t0 + absl::Seconds(5));
  clock.Set(t0);
  EXPECT_EQ(clock.Now(), t0);
}

TEST(ClockTest, AWaitOnASimulatedClockEndsWhenItPassesTheDeadlineOrTheConditionHolds) {
  SimulatedClock clock;
  absl::Mutex mu;
  bool ready = false;
  const absl::Time deadline = clock.Now() + absl::Hours(1);
  std::thread advancer([&] { clock.Advance(absl::Hours(1)); });
  {
    absl::MutexLock lock(&mu);
    // An hour of simulated time, however long the advancer takes to run.
    EXPECT_FALSE(clock.AwaitWithDeadline(&mu, absl::Condition(&ready), deadline));
  }
  advancer.join();
  std::thread setter([&] {
    absl::MutexLock lock(&mu);
    ready = true;
  });
  {
    absl::MutexLock lock(&mu);
    EXPECT_TRUE(clock.AwaitWithDeadline(&mu, absl::Condition(&ready), absl::InfiniteFuture()));
  }
  setter.join();
}

TEST(DeferredLogTest, LinesWaitUntilEmittedInOrder) {
  std::vector<std::string> seen;
  SetLogSink(
      [&](LogSeverity, absl::string_view, int, absl::string_view msg) { seen.emplace_back(msg); });
  DeferredLog log;
  TONY_DEFER_LOG(log, INFO) << "first " << 1;
  DeferredLog more;
  TONY_DEFER_LOG(more, WARNING) << "second";
  log.Append(std::move(more));
  EXPECT_TRUE(seen.empty());
  EXPECT_EQ(log.Texts(), (std::vector<std::string>{"first 1", "second"}));
  log.Emit();
  SetLogSink(nullptr);
  EXPECT_EQ(seen, (std::vector<std::string>{"first 1", "second"}));
  EXPECT_TRUE(log.empty());
}

}  // namespace
}  // namespace tony
