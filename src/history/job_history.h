// Copyright libtony authors.
//
// A finished (or running) job as its event log tells it (docs/events.md): what the history server
// lists and shows, and `ytf history` prints. Built from the log's text alone, so a job's page is
// the same whether the AM that wrote it is alive, restarted or long gone. A log that is cut short
// or has bad lines still gives what its good lines say; the bad ones are named in `problems`.
//
// Thread-safety: plain values and a pure function.

#ifndef TONY_HISTORY_JOB_HISTORY_H_
#define TONY_HISTORY_JOB_HISTORY_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "history/goodput.h"
#include "http/json.h"

namespace tony::history {

// What one job's history holds at most, whatever its log says: a log is its owner's to write,
// and a forged one must cost a reader no more than a large real one. Tasks (the spec's limit),
// timeline marks and usage points over all tasks, the bytes of one text (a stderr tail, the
// diagnostics, the spec), and problems named; what is past a bound is left out and said among
// the problems.
inline constexpr int kMaxHistoryTasks = 10000;
inline constexpr int kMaxHistoryMarks = 100000;
inline constexpr int kMaxHistoryUsagePoints = 100000;
inline constexpr size_t kMaxHistoryTextBytes = size_t{64} << 10;
inline constexpr int kMaxHistoryProblems = 100;

// A container's size, how long it was held, and its task's measured means when the task sent
// usage samples (task_usage).
struct HeldContainer {
  int64_t memory_mb = 0;
  int vcores = 0;
  int gpus = 0;
  absl::Duration held;
  bool sampled = false;  // the task sent task_usage: the next two mean something
  double cpu_cores = 0;  // its mean over the samples
  double rss_bytes = 0;  // its mean over the samples
};

// What a job's containers held and used, summed (ytf usage: history/usage_report.h).
struct UsageTotals {
  double vcore_seconds = 0;
  double mb_seconds = 0;
  double gpu_seconds = 0;
  // Over the containers whose tasks sent samples only: what they held, and what they used.
  double sampled_vcore_seconds = 0;
  double sampled_mb_seconds = 0;
  double used_core_seconds = 0;
  double used_mb_seconds = 0;
  int idle_gpus = 0;  // GPUs task_gpu_idle named, each once per task

  void Add(const HeldContainer& c);
};

// What a list of jobs needs of one job: small, so that tens of thousands fit in an index.
struct JobSummary {
  std::string app_id;
  std::string user;       // the log file's owner, else (a local directory) am_started's
  std::string view_acls;  // am_started's: who else may view the job (spec/access_control.h)
  std::string name;
  std::string queue;
  std::vector<std::string> tags;
  // SUCCEEDED, FAILED, KILLED (job_finished's), or RUNNING while the log has no end (a running
  // job, or an AM that died before writing one).
  std::string state = "RUNNING";
  absl::Time started = absl::InfinitePast();   // the first line's time
  absl::Time finished = absl::InfinitePast();  // job_finished's time, when there is one
  int attempts = 0;
  int tasks = 0;
  int restarts = 0;
  std::string diagnostics;  // cut to 300 bytes
  int bad_lines = 0;
  UsageTotals usage;  // over its containers (TaskHistory::containers)
  Goodput goodput;    // its wall time split (history/goodput.h): started to finished, or so far

  bool ended() const { return finished != absl::InfinitePast(); }
};

// One change in a task's life, for its timeline: from `time` until the next mark it was `phase`
// (waiting, launching, registered, running, backoff, stopping), or the end of a run (exited).
struct TaskMark {
  absl::Time time;
  std::string phase;
};

struct UsagePoint {
  absl::Time time;
  int64_t rss_bytes = 0;
  double cpu_cores = 0;
  int gpus = 0;                  // GPUs sampled (0: none; the next two mean nothing)
  double gpu_utilization = 0;    // their mean, 0..1
  int64_t gpu_memory_bytes = 0;  // their memory in use, summed
};

// A container a task held, and its size (the task_requested before it): from task_allocated to
// container_completed, else to the job's end (the last event of a log without one).
struct ContainerSpan {
  std::string container;
  absl::Time start;
  absl::Time end = absl::InfiniteFuture();  // open until ReadJobHistory closes it
  int64_t memory_mb = 0;
  int vcores = 0;
  int gpus = 0;
};

struct TaskHistory {
  std::string task;  // "worker:0"
  std::string role;
  int index = 0;
  std::string container;
  std::string node;                 // the NodeManager, host:port
  std::string node_http;            // its web address (log pages), where the log has it
  std::string address;              // what the task registered, host:port
  std::string state = "REQUESTED";  // the last thing that happened to it, upper case
  std::optional<int64_t> exit_code;
  int restarts = 0;
  std::string stderr_tail;
  bool gpu_idle = false;  // a task_gpu_idle event: a GPU sat idle holding memory
  int idle_gpus = 0;      // how many of its GPUs task_gpu_idle named (each counted once)
  std::vector<ContainerSpan> containers;  // at most kMaxHistoryMarks over all tasks
  std::vector<TaskMark> marks;
  std::vector<UsagePoint> usage;
};

struct JobHistory {
  JobSummary summary;
  std::string tracking_url;
  std::string tensorboard_url;
  std::string spec_yaml;
  std::vector<TaskHistory> tasks;     // by role, then index
  std::vector<std::string> problems;  // "line 12: not a JSON object (cut short?)"
  absl::Time last_event = absl::InfinitePast();
};

// Reads the log `text` of `app_id`; `owner` (the file's) stands in for an older log's missing
// user.
JobHistory ReadJobHistory(absl::string_view app_id, absl::string_view text,
                          absl::string_view owner = "");

// A summary as JSON (the history server's /api/jobs entries, the index file's) and back. Times
// are UTC with milliseconds, "2026-11-26T10:00:00.000Z" ("" for none, HistoryTime); back, a
// member that is missing or of another type keeps its default.
std::string HistoryTime(absl::Time t);
http::Json SummaryJson(const JobSummary& s);
JobSummary SummaryFromJson(const http::Json& j);

// The history directory's file name for a job and back: "<app_id>.jsonl"; nullopt for anything
// else in the directory.
std::optional<std::string> AppIdOfLogName(absl::string_view file_name);

}  // namespace tony::history

#endif  // TONY_HISTORY_JOB_HISTORY_H_
