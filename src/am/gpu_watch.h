// Copyright libtony authors.
//
// GpuWatch: the last sample of every task's GPUs (nvidia-smi through the executors'
// heartbeats) for /metrics and the event log, and the one judgement summary figures hide: a GPU
// that sits idle while its task holds its memory (a data pipeline starving it, a hung collective,
// a process that forgot to exit) - a device nobody else can use, doing nothing. Once a GPU has
// stayed under `idle_utilization` with at least `held_memory` of its memory in use for
// `idle_after`, it is flagged (tony_task_gpu_idle, one task_gpu_idle event per streak) until it
// works again.
//
// Thread-safe: Add() from the broker's threads, the rest from page threads.

#ifndef TONY_AM_GPU_WATCH_H_
#define TONY_AM_GPU_WATCH_H_

#include <map>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "am/job_record.h"
#include "tony/cluster_spec_broker.h"

namespace tony::am {

struct GpuWatchOptions {
  double idle_utilization = 0.05;                // Default: under 5 % busy
  double held_memory = 0.10;                     // Default: 10 % of its memory or more in use
  absl::Duration idle_after = absl::Minutes(5);  // Default: 5 minutes
};

class GpuWatch {
 public:
  explicit GpuWatch(GpuWatchOptions options = {}) : options_(options) {}

  // A heartbeat's sample of `task`'s GPUs at `now`; the task_gpu_idle records of the GPUs that
  // this sample flagged.
  std::vector<JobRecord> Add(const std::string& task, absl::Time now,
                             const std::vector<GpuUsage>& gpus);
  // `task`'s last sample as the event log writes it (an array; empty when none).
  nlohmann::json LastSampleJson(const std::string& task) const;
  // Gauges per task and GPU: utilization, memory used and total, idle flag.
  std::string RenderMetrics() const;

 private:
  struct Gpu {
    GpuUsage last;
    absl::Time idle_since = absl::InfiniteFuture();
    bool flagged = false;
  };
  const GpuWatchOptions options_;
  mutable absl::Mutex mu_;
  std::map<std::string, std::map<int, Gpu>> tasks_ ABSL_GUARDED_BY(mu_);
};

}  // namespace tony::am

#endif  // TONY_AM_GPU_WATCH_H_
