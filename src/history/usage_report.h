// Copyright libtony authors.
//
// ytf usage: what jobs held and used, per user, queue or job, from their summaries' usage
// (JobSummary::usage: ReadJobHistory sums it from the event log; the history index keeps it):
// vcore-, GB- and GPU-hours held (each container's size times how long it was held), the CPU and
// memory the tasks measured against what they held (task_usage), idle GPUs (task_gpu_idle), and
// goodput: the jobs' wall time split into waiting, starting, training, recovering and stopping
// (history/goodput.h), summed, and the share of it spent training.
//
//   std::vector<JobSummary> jobs = {ReadJobHistory(app_id, text, owner).summary, ...};
//   UsageReport r = SummarizeUsage(jobs, {.by = UsageBy::kUser});
//   std::cout << UsageTable(r, UsageBy::kUser);
//
// Thread-safety: plain values and pure functions.

#ifndef TONY_HISTORY_USAGE_REPORT_H_
#define TONY_HISTORY_USAGE_REPORT_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "history/job_history.h"

namespace tony::history {

enum class UsageBy { kUser, kQueue, kJob };
// "user", "queue" or "job": the word `--by` and the page's `by=` take.
const char* UsageByName(UsageBy by);
// "user", "queue" or "job"; InvalidArgument naming --by otherwise.
absl::StatusOr<UsageBy> ParseUsageBy(absl::string_view text);

struct UsageOptions {
  // How jobs are grouped. Default: by user.
  UsageBy by = UsageBy::kUser;
  // Only the jobs started in [from, to). Default: every job.
  absl::Time from = absl::InfinitePast();
  absl::Time to = absl::InfiniteFuture();
};

struct UsageGroup {
  std::string key;  // the user, queue or application id ("(none)" when the log names none)
  int jobs = 0;
  double vcore_hours = 0;
  double gb_hours = 0;  // memory: GiB (1024 MB) held for an hour
  double gpu_hours = 0;
  // Over the containers whose tasks sent samples only: what they held, and what they used.
  double sampled_vcore_hours = 0;
  double used_core_hours = 0;
  double sampled_gb_hours = 0;
  double used_gb_hours = 0;
  int idle_gpus = 0;
  Goodput goodput;  // the jobs' splits, summed

  // Used over held, 0..1 (more when a task used more than it asked); nullopt without samples.
  std::optional<double> cpu_efficiency() const;
  std::optional<double> memory_efficiency() const;
};

struct UsageReport {
  std::vector<UsageGroup> groups;  // the most vcore-hours first, then by key
  UsageGroup total;                // key "total"
};

// MB in a GB, as YARN counts memory (mb_seconds) and the reports print it (GB-hours).
inline constexpr double kMbPerGb = 1024;

// A ratio as a whole percentage ("87%"), or "-" when there is none (no samples).
std::string PercentOrDash(std::optional<double> ratio);

// Groups `jobs` as `options` say. Pure.
UsageReport SummarizeUsage(const std::vector<JobSummary>& jobs, const UsageOptions& options);

// The report as an aligned table, as CSV (a header line, then a line per group and the total),
// and as JSON ({"by", "groups": [...], "total": {...}}). Efficiencies without samples are
// empty (CSV), "-" (table) or null (JSON).
std::string UsageTable(const UsageReport& report, UsageBy by);
std::string UsageCsv(const UsageReport& report, UsageBy by);
std::string UsageJson(const UsageReport& report, UsageBy by);

}  // namespace tony::history

#endif  // TONY_HISTORY_USAGE_REPORT_H_
