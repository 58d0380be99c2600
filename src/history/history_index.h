// Copyright libtony authors.
//
// HistoryIndex: what the history server knows of every job in the history directory, kept in
// memory and brought up to date incrementally. A scan lists the directory and reads only the
// logs that are new or have changed (length or modification time) since the last one: finished
// jobs' logs never change, so a directory of tens of thousands of jobs costs one listing per scan
// and a read per new line written, never a full re-read. Requests are answered from the index.
//
//   HistoryIndex index;
//   for (const HistoryFile& f : index.Stale(listing)) index.Put(f, ReadJobHistory(...).summary);
//   index.Forget(listing);  // logs no longer in the directory
//   HistoryPage page = index.Query({.state = "FAILED", .limit = 20});
//
// Thread-compatible: the history server guards it with a lock.

#ifndef TONY_HISTORY_HISTORY_INDEX_H_
#define TONY_HISTORY_HISTORY_INDEX_H_

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "history/job_history.h"

namespace tony::history {

// One log in the history directory, as a listing shows it.
struct HistoryFile {
  std::string name;  // "<app_id>.jsonl"
  int64_t length = 0;
  int64_t modification_time_ms = 0;
  std::string owner;
};

// Which jobs a list shows. Empty strings and infinite times match everything.
struct HistoryQuery {
  std::string user;
  std::string queue;
  std::string state;  // SUCCEEDED, FAILED, KILLED or RUNNING
  std::string name;   // a part of the job's name, any case
  std::string tag;
  absl::Time started_after = absl::InfinitePast();
  absl::Time started_before = absl::InfiniteFuture();
  // Paging over the matching jobs, newest first. Default: the first 50.
  int offset = 0;
  int limit = 50;
};

struct HistoryPage {
  int total = 0;  // jobs matching the query
  std::vector<JobSummary> jobs;
};

// The query of a request's query string ("state=FAILED&user=alice&offset=50"); InvalidArgument
// naming the parameter for a value that cannot be read.
absl::StatusOr<HistoryQuery> ParseHistoryQuery(absl::string_view query_string);
// A date as the query's from and to take it: "2026-11-26" (midnight UTC) or RFC 3339;
// InvalidArgument naming `key` otherwise.
absl::StatusOr<absl::Time> ParseHistoryDate(absl::string_view key, const std::string& value);

// What retention removes: ended jobs whose log HDFS last changed longer ago than `max_age`, then
// each owner's oldest ended jobs beyond `max_jobs` (0: no limit). Age and order come from the
// log's modification time as the file system keeps it, never from the log's text, and the count
// is per owner: no user's logs (forged end times, a flood of logs) can push out another's. Jobs
// without an end stay.
struct RetentionPolicy {
  absl::Duration max_age = absl::InfiniteDuration();
  int max_jobs = 0;
};

class HistoryIndex {
 public:
  // The files of `listing` this index has not read as they are now.
  std::vector<HistoryFile> Stale(const std::vector<HistoryFile>& listing) const;
  // Records `summary` as what `file` says now.
  void Put(const HistoryFile& file, JobSummary summary);
  // Drops the jobs whose logs are not in `listing`; how many. `on_drop` (when given) sees each
  // job's last summary as it goes (the history server keeps its usage counted).
  int Forget(const std::vector<HistoryFile>& listing,
             const std::function<void(const JobSummary&)>& on_drop = nullptr);
  // Drops one job (its log was deleted).
  void Remove(const std::string& app_id);

  // Not const: it may sort the index again (after Put or Forget) before it answers.
  // `visible` (when given) leaves out the jobs the asker may not view, before paging.
  HistoryPage Query(const HistoryQuery& query,
                    const std::function<bool(const JobSummary&)>& visible = nullptr);
  // The names of the logs `policy` removes at `now`, oldest first.
  std::vector<std::string> Expired(const RetentionPolicy& policy, absl::Time now) const;

  // The index as JSON lines (each log's listing and summary), and back: a restarted server
  // reads only the logs that changed meanwhile. Load() adds to what is there; a line it cannot
  // read is skipped (that log is read again by the next scan). How many entries it took.
  std::string Save() const;
  int Load(absl::string_view text);

  size_t size() const { return entries_.size(); }
  // How many jobs are in each state.
  std::map<std::string, int> CountByState() const;
  const JobSummary* Find(const std::string& app_id) const;
  // Calls `each` with every job's summary, in no particular order (a report over all of them
  // without copying any).
  void ForEach(const std::function<void(const JobSummary&)>& each) const;
  int64_t bytes_read() const { return bytes_read_; }

 private:
  struct Entry {
    HistoryFile file;
    JobSummary summary;
  };
  std::unordered_map<std::string, Entry> entries_;  // by app id
  std::vector<const Entry*> newest_first_;          // rebuilt when `sorted_` is false
  bool sorted_ = false;
  int64_t bytes_read_ = 0;
};

}  // namespace tony::history

#endif  // TONY_HISTORY_HISTORY_INDEX_H_
