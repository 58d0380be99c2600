// Copyright libtony authors.
//
// TaskId: one task of a job, "worker:1" on the wire and in messages, a job name and an index
// everywhere else, so that nothing splits strings by hand.
//
// Thread-compatible (a value).

#ifndef TONY_AM_TASK_ID_H_
#define TONY_AM_TASK_ID_H_

#include <optional>
#include <string>
#include <tuple>

#include "absl/strings/string_view.h"
#include "tony/job_spec.h"

namespace tony::am {

struct TaskId {
  std::string job;
  int index = 0;

  static TaskId Of(const TaskSpec& spec) { return {spec.job_name, spec.index}; }
  // "job:index" with a non-negative index; nullopt otherwise.
  static std::optional<TaskId> Parse(absl::string_view id);
  std::string ToString() const { return job + ":" + std::to_string(index); }

  bool operator==(const TaskId& o) const { return index == o.index && job == o.job; }
  bool operator!=(const TaskId& o) const { return !(*this == o); }
  bool operator<(const TaskId& o) const { return std::tie(job, index) < std::tie(o.job, o.index); }
};

}  // namespace tony::am

#endif  // TONY_AM_TASK_ID_H_
