// Copyright libtony authors.
//
// JobState's status: the state and progress shown, the pending tasks, the status page's lines
// (job_state.h).

#include "am/job_state.h"

#include <algorithm>
#include <cstdlib>
#include <tuple>

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

namespace {

auto Fields(const JobTypeProgress& p) {
  return std::tie(p.total, p.allocated, p.registered, p.running, p.succeeded, p.failed, p.restarts);
}

}  // namespace

bool JobState::Counted::operator==(const Counted& o) const {
  return pending == o.pending && Fields(share) == Fields(o.share);
}

JobState::Counted JobState::CountOf(const Task& t) const {
  Counted c;
  c.pending = !t.outside && !t.allocated && !t.finished() && t.phase != TaskPhase::kStopping &&
              t.phase != TaskPhase::kBlocked;
  // No longer part of the job (Scale) once stopped: `ytf scale --wait` follows it until then.
  if (t.scaled_down && t.phase != TaskPhase::kStopping) return c;
  JobTypeProgress& p = c.share;
  p.total = 1;
  if (suspension_ != Suspension::kNone && t.phase == TaskPhase::kStopped) return c;
  p.allocated = t.allocated;
  p.registered = t.registered;
  p.running = t.started && !t.finished();
  p.restarts = t.in_place_restarts;
  p.succeeded = t.phase == TaskPhase::kEnded && t.exit_code == 0;
  p.failed = t.phase == TaskPhase::kEnded && t.exit_code != 0;
  return c;
}

void JobState::AddCount(const Counted& c, int sign, JobTypeProgress& p) {
  const JobTypeProgress& d = c.share;
  p.total += sign * d.total;
  p.allocated += sign * d.allocated;
  p.registered += sign * d.registered;
  p.running += sign * d.running;
  p.succeeded += sign * d.succeeded;
  p.failed += sign * d.failed;
  p.restarts += sign * d.restarts;
}

void JobState::Recount() const {
  if (recount_all_) {
    recount_all_ = false;
    dirty_.clear();
    progress_.clear();
    pending_.assign(shapes_.size(), PendingGroup{});
    ++pending_changes_;
    for (const auto& [id, task] : order_) {
      task->dirty = false;
      task->counted = CountOf(*task);
      AddCount(task->counted, 1, progress_[task->spec.job_name]);
      if (task->counted.pending) AddPending(task->ordinal);
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
        AddPending(ordinal);
      } else {
        RemovePending(ordinal);
      }
    }
    t.counted = now;
  }
  dirty_.clear();
}

void JobState::VerifyCounts() const {
  Recount();
  std::map<std::string, JobTypeProgress> progress;
  std::vector<int> in_phase(in_phase_.size(), 0);
  for (const auto& [id, task] : order_) {
    const Counted c = CountOf(*task);
    if (!(c == task->counted)) {
      TONY_LOG(ERROR) << "internal error: " << id.ToString() << " changed untouched";
      std::abort();
    }
    AddCount(c, 1, progress[task->spec.job_name]);
    ++in_phase[static_cast<size_t>(task->phase)];
    if (task->MayBeDue() && timed_.count(task->ordinal) == 0) {
      TONY_LOG(ERROR) << "internal error: " << id.ToString() << " has a deadline, unwatched";
      std::abort();
    }
  }
  bool agree = PendingTasks() == PendingTasksFromScratch() && in_phase == in_phase_ &&
               progress.size() == progress_.size();
  for (const auto& [role, p] : progress) {
    auto it = progress_.find(role);
    agree = agree && it != progress_.end() && Fields(p) == Fields(it->second);
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

bool JobState::Neighbours(size_t a) const {
  if (a + 1 >= order_.size()) return false;
  const auto& [x, tx] = order_[a];
  const auto& [y, ty] = order_[a + 1];
  return tx->shape == ty->shape && x.job == y.job && y.index == x.index + 1;
}

void JobState::AddPending(size_t o) const {
  PendingGroup& g = pending_[order_[o].second->shape];
  ++g.tasks;
  size_t first = o, last = o;
  auto next = g.runs.upper_bound(o);
  if (next != g.runs.begin()) {
    auto before = std::prev(next);
    if (before->second + 1 == o && Neighbours(before->second)) {
      first = before->first;
      g.runs.erase(before);
    }
  }
  if (next != g.runs.end() && next->first == o + 1 && Neighbours(o)) {
    last = next->second;
    g.runs.erase(next);
  }
  g.runs[first] = last;
}

void JobState::RemovePending(size_t o) const {
  PendingGroup& g = pending_[order_[o].second->shape];
  --g.tasks;
  auto run = std::prev(g.runs.upper_bound(o));  // the run holding o
  const size_t first = run->first, last = run->second;
  g.runs.erase(run);
  if (first < o) g.runs[first] = o - 1;
  if (o < last) g.runs[o + 1] = last;
}

const std::string& JobState::PendingTasks() const {
  Recount();
  if (pending_text_of_ == pending_changes_) return pending_text_;
  // The groups in the order of their first pending task; each shows its first runs only.
  std::vector<size_t> groups;  // shapes
  for (size_t shape = 0; shape < pending_.size(); ++shape) {
    if (pending_[shape].tasks > 0) groups.push_back(shape);
  }
  std::sort(groups.begin(), groups.end(), [this](size_t a, size_t b) {
    return pending_[a].runs.begin()->first < pending_[b].runs.begin()->first;
  });
  constexpr size_t kMaxChars = 200;
  std::vector<std::string> parts;
  for (size_t shape : groups) {
    const PendingGroup* g = &pending_[shape];
    // A range takes at least two characters and its separator: enough of them to fill the line.
    std::vector<TaskRange> shown;
    for (auto run = g->runs.begin(); run != g->runs.end() && shown.size() <= kMaxChars / 2; ++run) {
      const TaskId& first = order_[run->first].first;
      shown.push_back({first.job, first.index, order_[run->second].first.index});
    }
    parts.push_back(
        absl::StrCat(g->tasks, " \u00d7 ", shapes_[shape], " (",
                     SummarizeTaskRanges(shown, kMaxChars, g->runs.size() - shown.size()), ")"));
  }
  pending_text_ = absl::StrJoin(parts, ", ");
  pending_text_of_ = pending_changes_;
  return pending_text_;
}

std::string JobState::PendingTasksFromScratch() const {
  std::vector<std::pair<size_t, std::vector<TaskRange>>> groups;  // by shape, in task order
  std::map<size_t, int> tasks;
  for (const auto& [id, task] : order_) {
    if (!CountOf(*task).pending) continue;
    const size_t shape = task->shape;
    auto g = std::find_if(groups.begin(), groups.end(),
                          [shape](const auto& x) { return x.first == shape; });
    if (g == groups.end()) g = groups.insert(groups.end(), {shape, {}});
    AddToTaskRanges(id.job, id.index, &g->second);
    ++tasks[shape];
  }
  std::vector<std::string> parts;
  for (const auto& [shape, ranges] : groups) {
    parts.push_back(absl::StrCat(tasks[shape], " \u00d7 ", shapes_[shape], " (",
                                 SummarizeTaskRanges(ranges, 200), ")"));
  }
  return absl::StrJoin(parts, ", ");
}

}  // namespace tony::am
