// Copyright libtony authors.

#include "history/goodput.h"

#include <algorithm>
#include <optional>

namespace tony::history {

const char* GoodputPartName(GoodputPart part) {
  switch (part) {
    case GoodputPart::kWaiting:
      return "waiting";
    case GoodputPart::kStarting:
      return "starting";
    case GoodputPart::kTraining:
      return "training";
    case GoodputPart::kRecovering:
      return "recovering";
    case GoodputPart::kStopping:
      return "stopping";
  }
  return "?";
}

absl::Duration Goodput::wall() const {
  absl::Duration sum;
  for (absl::Duration d : parts) sum += d;
  return sum;
}

std::optional<double> Goodput::training_share() const {
  const absl::Duration w = wall();
  if (w <= absl::ZeroDuration()) return std::nullopt;
  return absl::FDivDuration((*this)[GoodputPart::kTraining], w);
}

void Goodput::Add(const Goodput& other) {
  for (size_t i = 0; i < parts.size(); ++i) parts[i] += other.parts[i];
}

void GoodputMeter::Add(const GoodputEvent& e) {
  if (ended_ || e.time == absl::InfinitePast() || e.time == absl::InfiniteFuture()) return;
  // A line without an attempt is the current one's; one of an earlier attempt after a later one
  // began (its AM is fenced off by then) changes nothing.
  const int64_t attempt = e.attempt > 0 ? e.attempt : std::max<int64_t>(attempt_, 1);
  if (attempt < attempt_) return;
  if (e.seq > 0) {
    int64_t& last_seq = last_seq_[attempt];
    if (e.seq <= last_seq) return;
    last_seq = e.seq;
  }
  if (last_ == absl::InfinitePast()) last_ = e.time;
  const absl::Time t = std::max(e.time, last_);
  const bool new_attempt = attempt_ != 0 && attempt != attempt_;
  // Until the next attempt's first line, the job was getting its AM back.
  const GoodputPart part = new_attempt ? GoodputPart::kRecovering : phase_;
  split_[part] += t - last_;
  if (part == GoodputPart::kStopping) attempt_stopping_ += t - last_;
  last_ = t;
  if (attempt_ == 0 || new_attempt) NewAttempt(attempt);
  Apply(e);
  phase_ = Phase();
}

void GoodputMeter::NewAttempt(int64_t attempt) {
  const bool first = attempt_ == 0;
  Recover();  // this attempt's stopping, if any, was the way to the next
  attempt_ = attempt;
  // Containers whose commands ran: YARN keeps them for the next attempt (work-preserving), which
  // adopts them still running.
  adoptable_.clear();
  for (const auto& [task, phase] : tasks_) {
    auto c = containers_.find(task);
    if (phase == TaskPhase::kRunning && c != containers_.end()) adoptable_.insert(c->second);
  }
  tasks_.clear();
  containers_.clear();
  counts_ = {};
  trained_ = false;
  stopping_ = false;
  // A first line of attempt 2 or later: the earlier attempts' lines were lost (an AM killed
  // before its first flush), not their failure.
  recovering_ = !first || attempt > 1;
}

// The stopping of an attempt another one follows was recovery.
void GoodputMeter::Recover() {
  split_[GoodputPart::kStopping] -= attempt_stopping_;
  split_[GoodputPart::kRecovering] += attempt_stopping_;
  attempt_stopping_ = absl::ZeroDuration();
}

void GoodputMeter::Apply(const GoodputEvent& e) {
  const std::string& ev = e.event;
  if (!e.task.empty()) {
    ApplyTask(e);
  } else if (ev == "job_outcome" || ev == "kill_requested") {
    stopping_ = true;
  } else if (ev == "attempt_finished") {
    Recover();
    stopping_ = false;
    recovering_ = true;
  } else if (ev == "job_finished") {
    ended_ = true;
  } else if (ev == "role_scaled" || ev == "suspend_requested" || ev == "job_suspending" ||
             (ev == "gang_released" && trained_)) {
    recovering_ = !stopping_;
  }
}

void GoodputMeter::ApplyTask(const GoodputEvent& e) {
  const std::string& ev = e.event;
  auto it = tasks_.find(e.task);
  const bool known = it != tasks_.end();
  const std::optional<TaskPhase> before =
      known ? std::optional<TaskPhase>(it->second) : std::nullopt;
  if (ev == "task_requested" || ev == "task_launch_failed") {
    SetTask(e.task, TaskPhase::kPending);
  } else if (ev == "task_relaunch_requested" || ev == "task_restart_scheduled") {
    SetTask(e.task, TaskPhase::kPending);
    if (!stopping_) recovering_ = true;
  } else if (ev == "task_allocated" || ev == "task_registered") {
    if (!e.container.empty() && tasks_.size() < kMaxGoodputTasks) {
      containers_[e.task] = e.container;
    }
    if (ev == "task_allocated" && adoptable_.count(e.container) > 0) {
      SetTask(e.task, TaskPhase::kRunning);  // adopted: its command never stopped
      trained_ = true;
    } else if (!known || it->second != TaskPhase::kRunning) {
      SetTask(e.task, TaskPhase::kStarting);
    }
  } else if (ev == "task_started" || ev == "task_restarted_in_place" ||
             (ev == "task_usage" && known && it->second == TaskPhase::kStarting)) {
    // A usage sample shows the command runs (a task adopted by a later attempt starts no more).
    SetTask(e.task, TaskPhase::kRunning);
    trained_ = true;
  } else if (ev == "task_exited" || ev == "task_stop_requested" || ev == "task_linger_expired") {
    SetTask(e.task, TaskPhase::kDone);
  } else if (ev == "container_completed" && known &&
             (it->second == TaskPhase::kStarting || it->second == TaskPhase::kRunning) &&
             HoldsContainer(e.task, e.container)) {
    // Ended under a task nobody stopped: preempted, a lost node, killed from outside. (The
    // report of a container the task no longer holds changes nothing.)
    if (!stopping_) recovering_ = true;
    SetTask(e.task, TaskPhase::kDone);
  }
  // Recovered once a task's change leaves every task not finished running (a job's own cause,
  // a scale or a suspension, holds until its tasks change; a usage sample changes none).
  it = tasks_.find(e.task);
  if (it == tasks_.end() || before == it->second) return;
  const int unready = counts_[static_cast<int>(TaskPhase::kPending)] +
                      counts_[static_cast<int>(TaskPhase::kStarting)];
  if (recovering_ && unready == 0 && counts_[static_cast<int>(TaskPhase::kRunning)] > 0) {
    recovering_ = false;
  }
}

bool GoodputMeter::HoldsContainer(const std::string& task, const std::string& container) const {
  auto it = containers_.find(task);
  return container.empty() || it == containers_.end() || it->second == container;
}

void GoodputMeter::SetTask(const std::string& task, TaskPhase phase) {
  // A log is its owner's to write: past the bound, more task names are not remembered.
  if (tasks_.size() >= kMaxGoodputTasks && tasks_.count(task) == 0) return;
  auto [it, added] = tasks_.try_emplace(task, phase);
  if (!added) --counts_[static_cast<int>(it->second)];
  it->second = phase;
  ++counts_[static_cast<int>(phase)];
}

GoodputPart GoodputMeter::Phase() const {
  if (stopping_) return GoodputPart::kStopping;
  if (recovering_) return GoodputPart::kRecovering;
  if (counts_[static_cast<int>(TaskPhase::kPending)] > 0) return GoodputPart::kWaiting;
  if (counts_[static_cast<int>(TaskPhase::kStarting)] > 0) return GoodputPart::kStarting;
  return trained_ ? GoodputPart::kTraining : GoodputPart::kStarting;
}

Goodput ComputeGoodput(const std::vector<GoodputEvent>& events) {
  GoodputMeter meter;
  for (const GoodputEvent& e : events) meter.Add(e);
  return meter.split();
}

}  // namespace tony::history
