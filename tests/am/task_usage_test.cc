// Copyright libtony authors.

#include "am/task_usage.h"

#include <algorithm>

#include "gtest/gtest.h"

namespace tony::am {
namespace {

const absl::Time kUsageStart = absl::UnixEpoch() + absl::Hours(1000);

TEST(TaskUsageStoreTest, RatesComeFromConsecutiveSamplesAndTheLogGetsOnePerPeriod) {
  TaskUsageStore store(TaskUsageOptions{.max_points = 100, .record_every = absl::Seconds(60)});
  EXPECT_TRUE(store.Add("worker:0", kUsageStart, 100 << 20, 1.0, 2).has_value());  // the first
  auto second = store.Add("worker:0", kUsageStart + absl::Seconds(5), 200 << 20, 3.0, 2);
  EXPECT_FALSE(second.has_value());                                // within the period
  EXPECT_DOUBLE_EQ(store.Latest().at("worker:0").cpu_cores, 0.4);  // 2 s of CPU in 5 s
  auto later = store.Add("worker:0", kUsageStart + absl::Seconds(61), 150 << 20, 3.5, 1);
  ASSERT_TRUE(later.has_value());
  EXPECT_EQ(later->rss_bytes, 150 << 20);
  EXPECT_EQ(later->processes, 1);
  // Relaunched: its CPU seconds start again; no negative rate.
  store.Add("worker:0", kUsageStart + absl::Seconds(70), 10 << 20, 0.2, 1);
  EXPECT_EQ(store.Latest().at("worker:0").cpu_cores, 0);
  EXPECT_EQ(store.Series("worker:0").size(), 4u);
  EXPECT_TRUE(store.Series("ps:0").empty());
}

TEST(TaskUsageStoreTest, AFullSeriesHalvesKeepingPeaksAndTheWholeSpan) {
  TaskUsageStore store(TaskUsageOptions{.max_points = 8});
  // One core busy throughout, memory peaking once at sample 3.
  for (int i = 0; i <= 8; ++i) {
    store.Add("w:0", kUsageStart + absl::Seconds(5 * i), i == 3 ? 900 : 100, 5.0 * i, 1);
  }
  const std::vector<TaskUsagePoint> s = store.Series("w:0");
  ASSERT_EQ(s.size(), 5u);  // 9 points: the oldest alone, then four merged pairs
  EXPECT_EQ(s.front().time, kUsageStart);
  EXPECT_EQ(s.back().time, kUsageStart + absl::Seconds(40));
  int64_t peak = 0;
  for (const TaskUsagePoint& p : s) {
    peak = std::max(peak, p.rss_bytes);
    if (p.time > kUsageStart) {
      EXPECT_NEAR(p.cpu_cores, 1.0, 1e-9);
    }
  }
  EXPECT_EQ(peak, 900);  // never averaged away
}

}  // namespace
}  // namespace tony::am
