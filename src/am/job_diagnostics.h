// Copyright libtony authors.
//
// JobDiagnostics: what a job tells people about itself, beside its state. The cause of the
// outcome, one warning line per sidecar (a TensorBoard that died) and any other warning, and one
// line per restart with its cause; while the job runs, the restarts and warnings; at the end
// the cause first, bounded to 16 KB (YARN keeps it and every `ytf status` prints it).
//
// Messages may quote a task's stderr (WithTail): the diagnostics are for the submitter, through
// YARN and the broker. The status page, which YARN's web proxy shows, gets them without
// (WithoutTails).
//
// Thread-compatible.

#ifndef TONY_AM_JOB_DIAGNOSTICS_H_
#define TONY_AM_JOB_DIAGNOSTICS_H_

#include <set>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "am/task_id.h"

namespace tony::am {

class JobDiagnostics {
 public:
  // `message` with the last 20 lines of `tail`: the task's stderr, or (`from_container`) what
  // the backend said of its container.
  std::string WithTail(std::string message, const std::string& tail, bool from_container);
  // Records (or replaces) `task`'s one warning line.
  void SidecarWarning(const TaskId& task, std::string warning);
  void AddWarning(std::string warning);
  // Adds a restart line; its index, for AppendToRestart.
  size_t AddRestart(std::string line);
  void AppendToRestart(size_t index, absl::string_view text);
  bool has_restarts() const { return !restarts_.empty(); }

  // While the job runs: the restarts, then the warnings ("" when neither).
  std::string Running() const;
  // The outcome's: `cause`, then the warnings and the restarts, bounded.
  std::string Final(const std::string& cause) const;
  // `diagnostics` with every quoted stderr tail replaced by a pointer to the task's log.
  std::string WithoutTails(std::string diagnostics) const;

 private:
  std::vector<std::string> warnings_;
  std::vector<TaskId> warning_owners_;  // the sidecar of each warning; an empty job: none
  std::vector<std::string> restarts_;
  std::set<std::string> tails_;
};

// "worker:0-4999 (5000 tasks), ps:1" for a list of "job:index" ids: consecutive indices of a job
// as ranges, at most about `max_chars` characters ("..., and N more" beyond).
std::string SummarizeTasks(const std::vector<std::string>& tasks, size_t max_chars = 1000);

// A run of a job's consecutive task indices; `first` < 0: `job` is an id that is not
// "job:index", shown as it is.
struct TaskRange {
  std::string job;
  int first = -1;
  int last = -1;
};
// Adds task `job`:`index` to `ranges`, which are in task order: extends the last range when it
// is the next index of the same job.
void AddToTaskRanges(const std::string& job, int index, std::vector<TaskRange>* ranges);
// SummarizeTasks of the tasks in `ranges`, followed by `more` ranges not given (counted in
// "..., and N more" only; `ranges` must then hold more than fit in `max_chars`).
std::string SummarizeTaskRanges(const std::vector<TaskRange>& ranges, size_t max_chars = 1000,
                                size_t more = 0);

}  // namespace tony::am

#endif  // TONY_AM_JOB_DIAGNOSTICS_H_
