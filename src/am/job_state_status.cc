// Copyright libtony authors.
//
// JobState's status: the state and progress shown, the pending tasks, the status page's lines
// (job_state.h).

#include "am/job_state.h"

#include <algorithm>
#include <cstdlib>

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
  // Called at every step of the AM (the broker's status): from the counts, brought up to date
  // with the tasks this step changed.
  if (options_.verify_counts) VerifyCounts();
  Recount();
  for (const auto& [role, p] : progress_) {
    if (p.total > 0) s.progress[role] = p;
  }
  return s;
}

bool JobState::Counted::operator==(const Counted& o) const {
  return total == o.total && allocated == o.allocated && registered == o.registered &&
         running == o.running && succeeded == o.succeeded && failed == o.failed &&
         pending == o.pending && restarts == o.restarts;
}

JobState::Counted JobState::CountOf(const Task& t) const {
  Counted c;
  c.pending = !t.outside && !t.allocated && !t.finished() && t.phase != TaskPhase::kStopping &&
              t.phase != TaskPhase::kBlocked;
  // No longer part of the job (Scale) once stopped: `ytf scale --wait` follows it until then.
  if (t.scaled_down && t.phase != TaskPhase::kStopping) return c;
  c.total = true;
  if (suspension_ != Suspension::kNone && t.phase == TaskPhase::kStopped) return c;
  c.allocated = t.allocated;
  c.registered = t.registered;
  c.running = t.started && !t.finished();
  c.restarts = t.in_place_restarts;
  c.succeeded = t.phase == TaskPhase::kEnded && t.exit_code == 0;
  c.failed = t.phase == TaskPhase::kEnded && t.exit_code != 0;
  return c;
}

void JobState::AddCount(const Counted& c, int sign, JobTypeProgress& p) {
  p.total += sign * c.total;
  p.allocated += sign * c.allocated;
  p.registered += sign * c.registered;
  p.running += sign * c.running;
  p.succeeded += sign * c.succeeded;
  p.failed += sign * c.failed;
  p.restarts += sign * c.restarts;
}

void JobState::Recount() const {
  if (recount_all_) {
    recount_all_ = false;
    dirty_.clear();
    progress_.clear();
    pending_.clear();
    ++pending_changes_;
    for (const auto& [id, task] : order_) {
      task->dirty = false;
      task->counted = CountOf(*task);
      AddCount(task->counted, 1, progress_[task->spec.job_name]);
      if (task->counted.pending) pending_.insert(task->ordinal);
    }
    return;
  }
  for (size_t ordinal : dirty_) {
    const Task& t = *order_[ordinal].second;
    t.dirty = false;
    const Counted now = CountOf(t);
    if (now == t.counted) continue;
    JobTypeProgress& p = progress_[t.spec.job_name];
    AddCount(t.counted, -1, p);
    AddCount(now, 1, p);
    if (now.pending != t.counted.pending) {
      ++pending_changes_;
      if (now.pending) {
        pending_.insert(ordinal);
      } else {
        pending_.erase(ordinal);
      }
    }
    t.counted = now;
  }
  dirty_.clear();
}

void JobState::VerifyCounts() const {
  Recount();
  std::map<std::string, JobTypeProgress> progress;
  std::set<size_t> pending;
  std::vector<int> in_phase(in_phase_.size(), 0);
  for (const auto& [id, task] : order_) {
    const Counted c = CountOf(*task);
    if (!(c == task->counted)) {
      TONY_LOG(ERROR) << "internal error: " << id.ToString() << " changed untouched";
      std::abort();
    }
    AddCount(c, 1, progress[task->spec.job_name]);
    if (c.pending) pending.insert(task->ordinal);
    ++in_phase[static_cast<size_t>(task->phase)];
    if (task->MayBeDue() && timed_.count(task->ordinal) == 0) {
      TONY_LOG(ERROR) << "internal error: " << id.ToString() << " has a deadline, unwatched";
      std::abort();
    }
  }
  auto same = [](const JobTypeProgress& a, const JobTypeProgress& b) {
    return a.total == b.total && a.allocated == b.allocated && a.registered == b.registered &&
           a.running == b.running && a.succeeded == b.succeeded && a.failed == b.failed &&
           a.restarts == b.restarts;
  };
  bool agree = pending == pending_ && in_phase == in_phase_ && progress.size() == progress_.size();
  for (const auto& [role, p] : progress) {
    auto it = progress_.find(role);
    agree = agree && it != progress_.end() && same(p, it->second);
  }
  if (!agree) {
    TONY_LOG(ERROR) << "internal error: the counts differ from the tasks";
    std::abort();
  }
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
  const std::string& tasks = PendingTasks();
  if (tasks.empty()) {
    std::string waiting = WaitingNote();
    return waiting.empty() ? "" : waiting.substr(2);  // without its "; "
  }
  std::string out = absl::StrCat(tasks, " pending");
  if (std::string headroom = options_.headroom ? options_.headroom() : ""; !headroom.empty()) {
    absl::StrAppend(&out, "; queue headroom ", headroom);
  }
  return out + gang_.PendingNote(now) + WaitingNote();
}

const std::string& JobState::PendingTasks() const {
  Recount();
  if (pending_text_of_ == pending_changes_) return pending_text_;
  // Unallocated tasks by what they ask for, in task order, as ranges of indices.
  struct Group {
    std::string shape;
    int tasks = 0;
    std::vector<TaskRange> ranges;
  };
  std::vector<Group> groups;
  const TaskSpec* shaped = nullptr;  // the last task whose shape was made
  auto group = groups.end();
  for (size_t ordinal : pending_) {
    const auto& [id, task] = order_[ordinal];
    const TaskSpec& spec = task->spec;
    // Neighbours mostly ask for the same: the shape is made again only when the ask changes.
    if (shaped == nullptr || spec.memory_mb != shaped->memory_mb || spec.vcores != shaped->vcores ||
        spec.gpus != shaped->gpus || spec.node_label != shaped->node_label) {
      shaped = &spec;
      std::string shape = absl::StrCat("<", spec.memory_mb, " MB, ", spec.vcores,
                                       spec.vcores == 1 ? " vcore" : " vcores");
      if (spec.gpus > 0) {
        absl::StrAppend(&shape, ", ", spec.gpus, spec.gpus == 1 ? " GPU" : " GPUs");
      }
      if (!spec.node_label.empty()) absl::StrAppend(&shape, ", label ", spec.node_label);
      shape += ">";
      group = std::find_if(groups.begin(), groups.end(),
                           [&](const Group& g) { return g.shape == shape; });
      if (group == groups.end()) group = groups.insert(groups.end(), Group{shape});
    }
    ++group->tasks;
    AddToTaskRanges(id.job, id.index, &group->ranges);
  }
  std::vector<std::string> parts;
  for (const Group& g : groups) {
    parts.push_back(
        absl::StrCat(g.tasks, " \u00d7 ", g.shape, " (", SummarizeTaskRanges(g.ranges, 200), ")"));
  }
  pending_text_ = absl::StrJoin(parts, ", ");
  pending_text_of_ = pending_changes_;
  return pending_text_;
}

}  // namespace tony::am
