// Copyright libtony authors.

#include "am/launch_latency.h"

#include <optional>

#include "absl/strings/str_cat.h"

namespace tony::am {
namespace {

// Moves the phase start of `task` out of `from` (if there) and returns it.
std::optional<absl::Time> Take(std::map<std::string, absl::Time>& from, const std::string& task) {
  auto it = from.find(task);
  if (it == from.end()) return std::nullopt;
  const absl::Time t = it->second;
  from.erase(it);
  return t;
}

}  // namespace

void LaunchLatencies::Histogram::Add(absl::Duration d) {
  const double s = absl::ToDoubleSeconds(d);
  for (size_t i = 0; i < kBuckets.size(); ++i) {
    if (s <= kBuckets[i]) {
      ++counts[i];
      break;
    }
  }
  ++count;
  sum += s;
}

void LaunchLatencies::Observe(const JobRecord& record, absl::Time now) {
  const std::string& e = record.event;
  const std::string& task = record.task;
  if (task.empty()) return;
  absl::MutexLock lock(&mu_);
  if (e == "task_requested" || e == "task_relaunch_requested") {
    requested_[task] = now;
    allocated_.erase(task);
    registered_.erase(task);
  } else if (e == "task_allocated") {
    // An adopted container (AM recovery) was never requested by this attempt: no sample.
    if (auto since = Take(requested_, task)) allocation_.Add(now - *since);
    allocated_[task] = now;
  } else if (e == "task_registered") {
    if (auto since = Take(allocated_, task)) launch_.Add(now - *since);
    registered_[task] = now;
  } else if (e == "task_started") {
    if (auto since = Take(registered_, task)) start_.Add(now - *since);
  } else if (e == "task_exited" || e == "container_completed" || e == "task_launch_failed") {
    requested_.erase(task);
    allocated_.erase(task);
    registered_.erase(task);
  }
}

std::string LaunchLatencies::Render() const {
  absl::MutexLock lock(&mu_);
  std::string out =
      "# HELP tony_task_launch_phase_seconds How long tasks took through each launch phase: "
      "allocation (asked for to allocated), launch (allocated to registered), start (registered "
      "to started).\n# TYPE tony_task_launch_phase_seconds histogram\n";
  for (const auto& [phase, h] :
       {std::pair<const char*, const Histogram*>{"allocation", &allocation_},
        {"launch", &launch_},
        {"start", &start_}}) {
    int64_t cumulative = 0;
    for (size_t i = 0; i < kBuckets.size(); ++i) {
      cumulative += h->counts[i];
      absl::StrAppend(&out, "tony_task_launch_phase_seconds_bucket{phase=\"", phase, "\",le=\"",
                      kBuckets[i], "\"} ", cumulative, "\n");
    }
    absl::StrAppend(&out, "tony_task_launch_phase_seconds_bucket{phase=\"", phase,
                    "\",le=\"+Inf\"} ", h->count, "\n",
                    "tony_task_launch_phase_seconds_sum{phase=\"", phase, "\"} ", h->sum, "\n",
                    "tony_task_launch_phase_seconds_count{phase=\"", phase, "\"} ", h->count, "\n");
  }
  return out;
}

}  // namespace tony::am
