// Copyright libtony authors.
//
// LaunchLatencies: records and times in, histogram lines out.

#include "am/launch_latency.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tony::am {
namespace {

using ::testing::HasSubstr;

TEST(LaunchLatenciesTest, EachPhaseFromItsRecords) {
  const absl::Time t0 = absl::FromUnixSeconds(1795600000);
  struct Step {
    double at;  // seconds after t0
    const char* event;
    const char* task;
  };
  const std::vector<Step> steps = {
      {0, "task_requested", "worker:0"},
      {0, "task_requested", "worker:1"},
      {0.3, "task_allocated", "worker:0"},
      {7, "task_allocated", "worker:1"},
      {2, "task_registered", "worker:0"},
      {8, "task_registered", "worker:1"},
      {8.05, "task_started", "worker:0"},
      {8.05, "task_started", "worker:1"},
      // A relaunch measures again; an adopted container (never requested) does not.
      {20, "task_exited", "worker:1"},
      {21, "task_relaunch_requested", "worker:1"},
      {21.5, "task_allocated", "worker:1"},
      {30, "task_allocated", "ps:0"},
      {0, "job_outcome", ""},
  };
  LaunchLatencies l;
  for (const Step& s : steps) {
    l.Observe(JobRecord{s.event, s.task}, t0 + absl::Seconds(s.at));
  }
  const std::string text = l.Render();
  // allocation: 0.3, 7, 0.5
  EXPECT_THAT(
      text,
      HasSubstr("tony_task_launch_phase_seconds_bucket{phase=\"allocation\",le=\"0.25\"} 0\n"));
  EXPECT_THAT(
      text,
      HasSubstr("tony_task_launch_phase_seconds_bucket{phase=\"allocation\",le=\"0.5\"} 2\n"));
  EXPECT_THAT(
      text, HasSubstr("tony_task_launch_phase_seconds_bucket{phase=\"allocation\",le=\"10\"} 3\n"));
  EXPECT_THAT(text, HasSubstr("tony_task_launch_phase_seconds_count{phase=\"allocation\"} 3\n"));
  EXPECT_THAT(text, HasSubstr("tony_task_launch_phase_seconds_sum{phase=\"allocation\"} 7.8\n"));
  // launch: 1.7, 1
  EXPECT_THAT(text,
              HasSubstr("tony_task_launch_phase_seconds_bucket{phase=\"launch\",le=\"1\"} 1\n"));
  EXPECT_THAT(text,
              HasSubstr("tony_task_launch_phase_seconds_bucket{phase=\"launch\",le=\"2.5\"} 2\n"));
  // start: 6.05 and 0.05
  EXPECT_THAT(text,
              HasSubstr("tony_task_launch_phase_seconds_bucket{phase=\"start\",le=\"0.1\"} 1\n"));
  EXPECT_THAT(text,
              HasSubstr("tony_task_launch_phase_seconds_bucket{phase=\"start\",le=\"+Inf\"} 2\n"));
  EXPECT_THAT(text, HasSubstr("# TYPE tony_task_launch_phase_seconds histogram\n"));
}

}  // namespace
}  // namespace tony::am
