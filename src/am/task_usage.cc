// Copyright libtony authors.

#include "am/task_usage.h"

#include <algorithm>

namespace tony::am {

std::optional<TaskUsagePoint> TaskUsageStore::Add(const std::string& task, absl::Time now,
                                                  int64_t rss_bytes, double cpu_seconds,
                                                  int processes) {
  absl::MutexLock lock(&mu_);
  Task& t = tasks_[task];
  TaskUsagePoint p{now, rss_bytes, cpu_seconds, 0, processes};
  if (!t.points.empty()) {
    const TaskUsagePoint& last = t.points.back();
    const double seconds = absl::ToDoubleSeconds(now - last.time);
    if (seconds > 0 && cpu_seconds >= last.cpu_seconds) {
      p.cpu_cores = (cpu_seconds - last.cpu_seconds) / seconds;
    }
  }
  t.points.push_back(p);
  if (t.points.size() > std::max<size_t>(options_.max_points, 2)) Halve(&t.points);
  if (now - t.recorded < options_.record_every) return std::nullopt;
  t.recorded = now;
  return p;
}

// Pairs merge into their later point: the larger memory, the CPU rate over both intervals.
void TaskUsageStore::Halve(std::vector<TaskUsagePoint>* points) {
  std::vector<TaskUsagePoint> merged;
  merged.reserve(points->size() / 2 + 1);
  size_t i = 0;
  if (points->size() % 2 == 1) merged.push_back((*points)[i++]);  // the oldest stays alone
  for (; i + 1 < points->size(); i += 2) {
    const TaskUsagePoint& a = (*points)[i];
    TaskUsagePoint b = (*points)[i + 1];
    const absl::Time before = merged.empty() ? a.time : merged.back().time;
    const double span = absl::ToDoubleSeconds(b.time - before);
    const double a_span = absl::ToDoubleSeconds(a.time - before);
    const double b_span = absl::ToDoubleSeconds(b.time - a.time);
    if (span > 0) b.cpu_cores = (a.cpu_cores * a_span + b.cpu_cores * b_span) / span;
    b.rss_bytes = std::max(a.rss_bytes, b.rss_bytes);
    merged.push_back(b);
  }
  *points = std::move(merged);
}

std::map<std::string, TaskUsagePoint> TaskUsageStore::Latest() const {
  absl::MutexLock lock(&mu_);
  std::map<std::string, TaskUsagePoint> out;
  for (const auto& [task, t] : tasks_) {
    if (!t.points.empty()) out[task] = t.points.back();
  }
  return out;
}

std::vector<TaskUsagePoint> TaskUsageStore::Series(const std::string& task) const {
  absl::MutexLock lock(&mu_);
  auto it = tasks_.find(task);
  return it == tasks_.end() ? std::vector<TaskUsagePoint>() : it->second.points;
}

}  // namespace tony::am
