// Copyright libtony authors.
//
// The history server's side of `ytf usage`: the /usage page (a table per user, queue or job and
// an SVG bar chart, for the jobs started in [from, to)) over history/usage_report.h's figures,
// and the usage counters it adds to /metrics. Like the other pages: no script, no asset to
// fetch, every text from a log HTML-escaped.
//
//   absl::StatusOr<UsageOptions> options = ParseUsageQuery("by=queue&from=2026-11-01");
//   std::string html = RenderUsagePage(SummarizeUsage(jobs, *options), *options);
//
// Thread-safety: plain values and pure functions.

#ifndef TONY_HISTORY_USAGE_PAGE_H_
#define TONY_HISTORY_USAGE_PAGE_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "history/usage_report.h"

namespace tony::history {

// The options of a request's query string: by (user, queue or job), from, to (as the job list
// takes them). InvalidArgument naming the parameter for a value that cannot be read, or a
// window that is empty.
absl::StatusOr<UsageOptions> ParseUsageQuery(absl::string_view query_string);

// The page: a form (by, from, to), a bar chart of the groups with the most vcore-hours, the
// table (at most `max_rows` groups, the total last), and a link to the same as JSON.
std::string RenderUsagePage(const UsageReport& report, const UsageOptions& options,
                            size_t max_rows = 500);
// Vcore-hours (and GPU-hours when any group held GPUs) of the first `max_bars` groups as
// horizontal bars, each bar scaled to its figure's largest.
std::string UsageBarsSvg(const UsageReport& report, size_t max_bars);

// What one user held in one queue, over every job the server has indexed since it started
// (a job retention deleted still counts): Prometheus counters.
struct UsageCounters {
  double vcore_seconds = 0;
  double mb_seconds = 0;
  double gpu_seconds = 0;
  std::map<std::string, int64_t> finished;  // ended jobs by final state

  void Add(const JobSummary& job);
  void Add(const UsageCounters& other);
};

// The counters as Prometheus text (0.0.4), keyed by {user, queue}:
// tony_history_vcore_seconds_total, tony_history_memory_gb_seconds_total,
// tony_history_gpu_seconds_total and tony_history_jobs_finished_total (also by state). Each
// family's HELP and TYPE appear even without a sample. Label values are valid UTF-8, escaped.
using UsageCounterMap = std::map<std::pair<std::string, std::string>, UsageCounters>;
std::string RenderUsageMetrics(const UsageCounterMap& counters);

}  // namespace tony::history

#endif  // TONY_HISTORY_USAGE_PAGE_H_
