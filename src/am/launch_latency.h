// Copyright libtony authors.
//
// LaunchLatencies: how long each task took through its launch, as histograms for /metrics
// (tony_task_launch_phase_seconds, docs/metrics.md), measured from the AM's own event records:
//   allocation  task_requested (or task_relaunch_requested) -> task_allocated: YARN's scheduler
//   launch      task_allocated -> task_registered: container start, localization, executor start
//   start       task_registered -> task_started: the gang (every task registered) and the spec
// A platform team reads where launches spend their time, per job, without the event log.
//
// Thread-safe: Observe() on the AM's loop, Render() on a page thread.

#ifndef TONY_AM_LAUNCH_LATENCY_H_
#define TONY_AM_LAUNCH_LATENCY_H_

#include <array>
#include <cstdint>
#include <map>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "am/job_record.h"

namespace tony::am {

class LaunchLatencies {
 public:
  // Upper bounds of the buckets, in seconds (+Inf follows).
  static constexpr std::array<double, 11> kBuckets = {0.1, 0.25, 0.5, 1,   2.5, 5,
                                                      10,  30,   60,  120, 300};

  void Observe(const JobRecord& record, absl::Time now);
  std::string Render() const;

 private:
  struct Histogram {
    std::array<int64_t, kBuckets.size()> counts{};  // cumulative at render time, not here
    int64_t count = 0;
    double sum = 0;
    void Add(absl::Duration d);
  };
  // The start of the phase a task is in, by task.
  mutable absl::Mutex mu_;
  std::map<std::string, absl::Time> requested_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, absl::Time> allocated_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, absl::Time> registered_ ABSL_GUARDED_BY(mu_);
  Histogram allocation_ ABSL_GUARDED_BY(mu_);
  Histogram launch_ ABSL_GUARDED_BY(mu_);
  Histogram start_ ABSL_GUARDED_BY(mu_);
};

}  // namespace tony::am

#endif  // TONY_AM_LAUNCH_LATENCY_H_
