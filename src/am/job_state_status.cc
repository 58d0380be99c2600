// Copyright libtony authors.
//
// JobState's status: the state and progress shown, the pending tasks, the status page's lines
// (job_state.h).

#include "am/job_state.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace tony::am {

void JobState::BackendStopped() {
  for (auto& [id, t] : tasks_) t.container_ended = true;
}

bool JobState::AllContainersEnded() const {
  for (const auto& [id, t] : tasks_) {
    if (!t.container_ended) return false;
  }
  return true;
}

ApplicationStatus JobState::Status(absl::Time now) const {
  ApplicationStatus s;
  // The outcome shows once every task has stopped: a client that sees it may rely on that.
  s.state = !started_                                            ? AppState::kAccepted
            : outcome_ && AllContainersEnded()                   ? *outcome_
            : !outcome_ && suspension_ == Suspension::kSuspended ? AppState::kSuspended
                                                                 : AppState::kRunning;
  if (s.state == AppState::kSuspended) s.suspended_since = suspended_since_;
  s.tensorboard_url = tensorboard_url_;
  if (outcome_) {
    s.diagnostics = final_diagnostics_;
  } else {
    s.pending = Pending(now);
    s.diagnostics = diagnostics_.Running();
  }
  // Called at every step of the AM (the broker's status): a job type's tasks are together in
  // order_, so its entry is looked up once per job type, not once per task.
  JobTypeProgress* progress = nullptr;
  const std::string* progress_of = nullptr;
  for (const auto& [id, task] : order_) {
    const Task& t = *task;
    // No longer part of the job (Scale) once stopped: `ytf scale --wait` follows it until then.
    if (t.scaled_down && t.phase != TaskPhase::kStopping) continue;
    if (progress_of == nullptr || *progress_of != t.spec.job_name) {
      progress = &s.progress[t.spec.job_name];
      progress_of = &t.spec.job_name;
    }
    JobTypeProgress& p = *progress;
    ++p.total;
    if (suspension_ != Suspension::kNone && t.phase == TaskPhase::kStopped) continue;
    p.allocated += t.allocated;
    p.registered += t.registered;
    p.running += t.started && !t.finished();
    p.restarts += t.in_place_restarts;
    if (t.phase == TaskPhase::kEnded) {
      if (t.exit_code == 0) {
        ++p.succeeded;
      } else {
        ++p.failed;
      }
    }
  }
  return s;
}

std::vector<std::string> JobState::TaskLines() const {
  std::vector<std::string> lines;
  for (const auto& [id, task] : order_) {
    const Task& t = *task;
    std::string state(TaskPhaseName(t.phase));
    if (t.phase == TaskPhase::kEnded) absl::StrAppend(&state, " ", t.exit_code);
    if (t.phase == TaskPhase::kExitHeld) state = "RUNNING";  // as far as anyone knows
    if (t.restarts > 0) absl::StrAppend(&state, " (restarts: ", t.restarts, ")");
    lines.push_back(absl::StrCat(
        absl::StrFormat("%-16s %-28s ", id.ToString(), t.address.empty() ? "-" : t.address),
        state));
  }
  return lines;
}

std::string JobState::Pending(absl::Time now) const {
  // Unallocated tasks by what they ask for, in task order.
  std::vector<std::pair<std::string, std::vector<std::string>>> groups;
  const TaskSpec* shaped = nullptr;  // the last task whose shape was made
  std::string shape;
  auto group = groups.end();
  for (const auto& [id, task] : order_) {
    const Task& t = *task;
    if (t.outside || t.allocated || t.finished() || t.phase == TaskPhase::kStopping ||
        t.phase == TaskPhase::kBlocked) {
      continue;
    }
    const TaskSpec& spec = t.spec;
    // Neighbours mostly ask for the same: the shape is made again only when the ask changes.
    if (shaped == nullptr || spec.memory_mb != shaped->memory_mb || spec.vcores != shaped->vcores ||
        spec.gpus != shaped->gpus || spec.node_label != shaped->node_label) {
      shaped = &spec;
      shape = absl::StrCat("<", spec.memory_mb, " MB, ", spec.vcores,
                           spec.vcores == 1 ? " vcore" : " vcores");
      if (spec.gpus > 0) {
        absl::StrAppend(&shape, ", ", spec.gpus, spec.gpus == 1 ? " GPU" : " GPUs");
      }
      if (!spec.node_label.empty()) absl::StrAppend(&shape, ", label ", spec.node_label);
      shape += ">";
      group = std::find_if(groups.begin(), groups.end(),
                           [&](const auto& g) { return g.first == shape; });
      if (group == groups.end()) group = groups.insert(groups.end(), {shape, {}});
    }
    group->second.push_back(id.ToString());
  }
  if (groups.empty()) {
    std::string waiting = WaitingNote();
    return waiting.empty() ? "" : waiting.substr(2);  // without its "; "
  }
  std::vector<std::string> parts;
  for (const auto& [shape, ids] : groups) {
    parts.push_back(
        absl::StrCat(ids.size(), " \u00d7 ", shape, " (", SummarizeTasks(ids, 200), ")"));
  }
  std::string out = absl::StrCat(absl::StrJoin(parts, ", "), " pending");
  if (std::string headroom = options_.headroom ? options_.headroom() : ""; !headroom.empty()) {
    absl::StrAppend(&out, "; queue headroom ", headroom);
  }
  return out + gang_.PendingNote(now) + WaitingNote();
}

}  // namespace tony::am
