// Copyright libtony authors.
//
// What each task's processes used over time, as its executor's heartbeats said (resident memory,
// CPU): a bounded series per task, never only a maximum or an average. At most `max_points`
// points per task; when a series is full, neighbouring points merge (the later time, the larger
// memory, the time-weighted CPU), so it keeps covering the whole run at a coarser step. Served
// by the AM at /metrics and on its status page, and written to the event log (task_usage) once
// per `record_every` per task.
//
// Thread-safe.

#ifndef TONY_AM_TASK_USAGE_H_
#define TONY_AM_TASK_USAGE_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace tony::am {

struct TaskUsagePoint {
  absl::Time time;
  int64_t rss_bytes = 0;
  double cpu_seconds = 0;  // used so far (by this incarnation of the task)
  double cpu_cores = 0;    // cores busy on average since the point before (0 for the first)
  int processes = 0;
};

struct TaskUsageOptions {
  // Points kept per task. Default: 240 (20 minutes at the executors' 5 s, then coarser).
  size_t max_points = 240;
  // How often a task's usage goes to the event log. Default: 1 minute.
  absl::Duration record_every = absl::Minutes(1);
};

class TaskUsageStore {
 public:
  explicit TaskUsageStore(TaskUsageOptions options = {}) : options_(options) {}

  // A sample of `task` ("worker:0") at `now`; its point when the event log should get it (the
  // task's first, then at most one per record_every). CPU seconds going down mean a new
  // incarnation (a relaunched task): its series goes on, the rate restarts.
  std::optional<TaskUsagePoint> Add(const std::string& task, absl::Time now, int64_t rss_bytes,
                                    double cpu_seconds, int processes);
  // Each task's last point.
  std::map<std::string, TaskUsagePoint> Latest() const;
  std::vector<TaskUsagePoint> Series(const std::string& task) const;

 private:
  struct Task {
    std::vector<TaskUsagePoint> points;
    absl::Time recorded = absl::InfinitePast();
  };
  static void Halve(std::vector<TaskUsagePoint>* points);

  const TaskUsageOptions options_;
  mutable absl::Mutex mu_;
  std::map<std::string, Task> tasks_ ABSL_GUARDED_BY(mu_);
};

}  // namespace tony::am

#endif  // TONY_AM_TASK_USAGE_H_
