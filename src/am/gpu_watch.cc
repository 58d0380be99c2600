// Copyright libtony authors.

#include "am/gpu_watch.h"

#include "absl/strings/str_cat.h"
#include "am/metrics.h"

namespace tony::am {

std::vector<JobRecord> GpuWatch::Add(const std::string& task, absl::Time now,
                                     const std::vector<GpuUsage>& gpus) {
  std::vector<JobRecord> out;
  absl::MutexLock lock(&mu_);
  std::map<int, Gpu>& known = tasks_[task];
  for (const GpuUsage& g : gpus) {
    Gpu& gpu = known[g.index];
    gpu.last = g;
    const bool holding = g.memory_total_bytes > 0 &&
                         static_cast<double>(g.memory_used_bytes) >=
                             options_.held_memory * static_cast<double>(g.memory_total_bytes);
    if (g.utilization >= options_.idle_utilization || !holding) {
      gpu.idle_since = absl::InfiniteFuture();
      gpu.flagged = false;
      continue;
    }
    if (gpu.idle_since == absl::InfiniteFuture()) gpu.idle_since = now;
    if (!gpu.flagged && now - gpu.idle_since >= options_.idle_after) {
      gpu.flagged = true;
      out.push_back({"task_gpu_idle",
                     task,
                     {{"gpu", g.index},
                      {"idle_ms", absl::ToInt64Milliseconds(now - gpu.idle_since)},
                      {"utilization", g.utilization},
                      {"memory_used_bytes", g.memory_used_bytes},
                      {"memory_total_bytes", g.memory_total_bytes}}});
    }
  }
  return out;
}

nlohmann::json GpuWatch::LastSampleJson(const std::string& task) const {
  nlohmann::json out = nlohmann::json::array();
  absl::MutexLock lock(&mu_);
  auto it = tasks_.find(task);
  if (it == tasks_.end()) return out;
  for (const auto& [index, gpu] : it->second) {
    out.push_back({{"gpu", index},
                   {"utilization", gpu.last.utilization},
                   {"memory_used_bytes", gpu.last.memory_used_bytes},
                   {"memory_total_bytes", gpu.last.memory_total_bytes},
                   {"idle", gpu.flagged}});
  }
  return out;
}

std::string GpuWatch::RenderMetrics() const {
  absl::MutexLock lock(&mu_);
  if (tasks_.empty()) return "";
  std::string util, used, total, idle;
  for (const auto& [task, gpus] : tasks_) {
    for (const auto& [index, gpu] : gpus) {
      const std::string labels =
          absl::StrCat("{task=\"", PrometheusLabel(task), "\",gpu=\"", index, "\"} ");
      absl::StrAppend(&util, "tony_task_gpu_utilization", labels, gpu.last.utilization, "\n");
      absl::StrAppend(&used, "tony_task_gpu_memory_used_bytes", labels, gpu.last.memory_used_bytes,
                      "\n");
      absl::StrAppend(&total, "tony_task_gpu_memory_total_bytes", labels,
                      gpu.last.memory_total_bytes, "\n");
      absl::StrAppend(&idle, "tony_task_gpu_idle", labels, gpu.flagged ? 1 : 0, "\n");
    }
  }
  return absl::StrCat(
      "# HELP tony_task_gpu_utilization Share of the last sample period a kernel ran (0..1).\n"
      "# TYPE tony_task_gpu_utilization gauge\n",
      util,
      "# HELP tony_task_gpu_memory_used_bytes Device memory in use.\n"
      "# TYPE tony_task_gpu_memory_used_bytes gauge\n",
      used,
      "# HELP tony_task_gpu_memory_total_bytes Device memory.\n"
      "# TYPE tony_task_gpu_memory_total_bytes gauge\n",
      total,
      "# HELP tony_task_gpu_idle 1 while the GPU sits idle holding memory (see docs/metrics.md).\n"
      "# TYPE tony_task_gpu_idle gauge\n",
      idle);
}

}  // namespace tony::am
