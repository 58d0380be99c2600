// Copyright libtony authors.
//
// What the history server shows: the job list (HTML with filters and paging, and JSON) and one
// job's page rebuilt from its event log — summary, task table, each task's phases on a timeline
// and its memory and CPU over time. Charts are SVG drawn here: no script, no asset to fetch
// (clusters are often offline), and the page reads the same in any browser or saved to a file.
//
// Thread-safety: pure functions.

#ifndef TONY_HISTORY_HISTORY_PAGES_H_
#define TONY_HISTORY_HISTORY_PAGES_H_

#include <string>

#include "absl/strings/string_view.h"
#include "history/history_index.h"
#include "history/job_history.h"
#include "http/json.h"

namespace tony::history {

// {"total": N, "offset": .., "limit": .., "jobs": [SummaryJson...]}
http::Json JobListJson(const HistoryPage& page, const HistoryQuery& query);
// The summary plus "tasks" (each with its marks and usage), "problems", "spec_yaml".
http::Json JobJson(const JobHistory& job);

// The list page; `indexed` is how many jobs the index holds.
std::string RenderJobListPage(const HistoryPage& page, const HistoryQuery& query, size_t indexed);
// How a job's page links and what it shows: the history server's (the defaults), or the AM's live
// view at its tracking URL (relative links, since YARN's proxy serves it under its own path;
// refreshing while the job runs).
struct JobPageOptions {
  std::string list_href = "/";  // "all jobs"; empty: no link
  std::string list_text = "all jobs";
  std::string json_href;  // Default: "" (/api/jobs/<app id>)
  bool live = false;
  absl::Time now = absl::InfinitePast();  // live: the timeline's end while the job runs
  // An ended job's TensorBoard, started when followed (the history server's); "": none.
  std::string tensorboard_on_demand_href;
  // Each task's stdout and stderr at <task_logs_href>/<task>/<file> (the history server's
  // /jobs/<app id>/logs, which reads the NodeManager, then YARN's aggregated logs). Default: ""
  // (the NodeManager's own pages, as the AM's live view links them: they serve running tasks).
  std::string task_logs_href;
};
std::string RenderJobPage(const JobHistory& job, const JobPageOptions& options = {});
// Every page's start: doctype, title, style, up to <body>.
std::string HistoryPageHead(absl::string_view title);
// A task name as one segment of a URL path ("worker:0" stays as it is; anything but letters,
// digits and "-._~:" is percent-encoded).
std::string TaskPathSegment(absl::string_view task);
// A page saying `message` (an unknown job, a bad filter).
std::string RenderMessagePage(absl::string_view title, absl::string_view message);

// A task's phases as one SVG (a row per task) over [begin, end].
std::string TimelineSvg(const JobHistory& job, absl::Time begin, absl::Time end);
// Resident memory (MB), CPU (cores), GPU utilization (%) or GPU memory (MB) of every task over
// [begin, end], one line per task.
enum class UsageMetric { kMemory, kCpu, kGpu, kGpuMemory };
std::string UsageSvg(const JobHistory& job, UsageMetric metric, absl::Time begin, absl::Time end);

}  // namespace tony::history

#endif  // TONY_HISTORY_HISTORY_PAGES_H_
