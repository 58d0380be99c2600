// Copyright libtony authors.
//
// GpuWatch: samples and times in, idle flags, records and gauges out.

#include "am/gpu_watch.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tony::am {
namespace {

using ::testing::HasSubstr;

constexpr int64_t kGiB = int64_t{1} << 30;

TEST(GpuWatchTest, AnIdleGpuHoldingMemoryIsFlaggedOncePerStreak) {
  const absl::Time t0 = absl::FromUnixSeconds(1795600000);
  GpuWatch watch;  // under 5 %, 10 % of memory held, 5 minutes
  struct Step {
    int minute;
    double utilization;
    int64_t used;
    int flagged;  // task_gpu_idle records this sample gives
  };
  const std::vector<Step> steps = {
      {0, 0.90, 8 * kGiB, 0},                            // working
      {1, 0.01, 8 * kGiB, 0},                            // idle from here
      {5, 0.02, 8 * kGiB, 0},                            // 4 minutes
      {6, 0.00, 8 * kGiB, 1},                            // 5 minutes: flagged
      {7, 0.00, 8 * kGiB, 0},                            // once
      {8, 0.50, 8 * kGiB, 0},                            // works again
      {9, 0.00, 1 * kGiB, 0},                            // idle but holding little: not a waste
      {20, 0.00, 1 * kGiB, 0}, {21, 0.00, 4 * kGiB, 0},  // a new streak starts
      {26, 0.00, 4 * kGiB, 1},
  };
  for (const Step& s : steps) {
    std::vector<JobRecord> records = watch.Add("worker:0", t0 + absl::Minutes(s.minute),
                                               {{3, s.utilization, s.used, 16 * kGiB}});
    EXPECT_EQ(static_cast<int>(records.size()), s.flagged) << "minute " << s.minute;
    if (!records.empty()) {
      EXPECT_EQ(records[0].event, "task_gpu_idle");
      EXPECT_EQ(records[0].fields["gpu"], 3);
      EXPECT_EQ(records[0].fields["idle_ms"], 5 * 60 * 1000);
    }
  }
  const std::string metrics = watch.RenderMetrics();
  EXPECT_THAT(metrics, HasSubstr("tony_task_gpu_idle{task=\"worker:0\",gpu=\"3\"} 1\n"));
  EXPECT_THAT(metrics, HasSubstr("tony_task_gpu_memory_used_bytes{task=\"worker:0\",gpu=\"3\"} "));
  EXPECT_EQ(watch.LastSampleJson("worker:0")[0]["idle"], true);
  EXPECT_TRUE(watch.LastSampleJson("worker:1").empty());
  EXPECT_EQ(GpuWatch().RenderMetrics(), "");  // no GPU: no series
}

}  // namespace
}  // namespace tony::am
