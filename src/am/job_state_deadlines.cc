// Copyright libtony authors.
//
// JobState's rules that run on the clock: deadlines, backoffs, held exits, the stop (job_state.h).

#include "am/job_state.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace tony::am {

JobActions JobState::Tick(absl::Time now) {
  JobActions out;
  if (!started_) return out;
  CheckClientStart(now, &out);
  CheckGang(now, &out);
  DueRelaunches(now, &out);
  ReleaseHeldExits(now, &out);
  StopPreempted(now, &out);
  CheckRelaunchedRegistrations(now, &out);
  CheckDependencies(now, &out);
  CheckElasticStart(now, &out);
  CheckScale(&out);
  CheckLinger(now, &out);
  CheckSuspended(now, &out);
  if (!outcome_ && suspension_ == Suspension::kNone && now >= job_deadline_) {
    Finish(AppState::kFailed,
           absl::StrCat("the job timeout of ", absl::FormatDuration(options_.spec.timeouts.job),
                        " passed"),
           &out);
  }
  if (outcome_ && !stop_deadline_) StopEverything(now, &out);
  if (outcome_ && (AllContainersEnded() || now >= *stop_deadline_) && !AwaitingOrphanNotice(now)) {
    if (!AllContainersEnded()) {
      TONY_DEFER_LOG(out.log, WARNING) << "some tasks did not stop in time; the backend ends them";
    }
    out.done = true;
  }
  for (auto it = timed_.begin(); it != timed_.end();) {
    it = order_[*it].second->MayBeDue() ? std::next(it) : timed_.erase(it);
  }
  if (options_.verify_counts) VerifyCounts();
  return out;
}

std::vector<std::pair<TaskId, JobState::Task*>> JobState::TimedTasks() const {
  std::vector<std::pair<TaskId, Task*>> tasks;
  tasks.reserve(timed_.size());
  for (size_t ordinal : timed_) tasks.push_back(order_[ordinal]);
  return tasks;
}

// Tasks whose command already ended have executors on their way out: left alone.
void JobState::StopEverything(absl::Time now, JobActions* out) {
  for (const auto& [id, task] : order_) {
    Task& t = *task;
    if (t.container_ended || t.finished() || t.phase == TaskPhase::kStopping) continue;
    MoveTo(t, TaskPhase::kStopping, out);
    out->kills.emplace_back(id, options_.spec.timeouts.stop_grace);
  }
  stop_deadline_ = now + options_.spec.timeouts.stop_grace + options_.stop_margin;
  notice_deadline_ = now + options_.orphan_notice;
}

// An executor on a node YARN gave up on runs on after its container "completed": it learns the
// job's end only from its heartbeat's answer (or, much later, from timeouts.am_unreachable).
bool JobState::UninformedOrphans() const {
  for (const auto& [id, t] : tasks_) {
    if (!t.registered || t.outside || t.executor_ended || t.told_over) continue;
    // A container still being stopped has the stop deadline, which is longer.
    if (t.end_unconfirmed) return true;
  }
  return false;
}

bool JobState::AwaitingOrphanNotice(absl::Time now) const {
  return notice_deadline_ && now < *notice_deadline_ && UninformedOrphans();
}

absl::Time JobState::NextWake() const {
  // Suspended: the job timeout and the dependencies' do not run.
  const bool suspended = suspension_ != Suspension::kNone && !outcome_;
  absl::Time wake = suspended ? absl::InfiniteFuture() : job_deadline_;
  for (const std::optional<absl::Time>& d :
       {stop_deadline_, client_start_deadline_, gang_.NextWake()}) {
    if (d) wake = std::min(wake, *d);
  }
  if (notice_deadline_ && UninformedOrphans()) wake = std::min(wake, *notice_deadline_);
  for (size_t ordinal : timed_) {
    if (std::optional<absl::Time> d = order_[ordinal].second->NextDeadline()) {
      wake = std::min(wake, *d);
    }
  }
  if (!outcome_ && !suspended) {
    for (const auto& [when, role] : DependencyDeadlines()) wake = std::min(wake, when);
    if (elastic_start_by_) wake = std::min(wake, *elastic_start_by_);
  }
  return wake;
}

void JobState::CheckClientStart(absl::Time now, JobActions* out) {
  if (!client_start_deadline_ || now < *client_start_deadline_) return;
  client_start_deadline_.reset();
  for (const auto& [id, t] : tasks_) {
    if (t.outside && !t.registered && !t.finished()) {
      Finish(AppState::kFailed,
             absl::StrCat(id.ToString(), " did not start within ",
                          absl::FormatDuration(options_.spec.timeouts.registration),
                          " of every task registering (is `ytf-submit --client` still "
                          "running?)"),
             out);
    }
  }
}

// All-or-nothing: a partial gang would only keep the containers from another job.
void JobState::CheckGang(absl::Time now, JobActions* out) {
  if (outcome_) return;
  if (gang_.ReleaseDue(now)) {
    bool partial = false;
    for (const auto& [id, t] : tasks_) {
      partial |= !t.outside && !t.allocated && t.phase != TaskPhase::kBlocked &&
                 t.phase != TaskPhase::kStopped && t.phase != TaskPhase::kEnded;
    }
    if (!partial) {
      gang_.Settle();
      return;
    }
    const std::string pending = Pending(now);
    const absl::Duration backoff = gang_.Release(now);
    TONY_DEFER_LOG(out->log, WARNING)
        << "not every container within " << absl::FormatDuration(options_.spec.timeouts.allocation)
        << " (" << pending << "); releasing all, asking again in " << absl::FormatDuration(backoff);
    out->records.push_back(
        {"gang_released",
         "",
         {{"pending", pending}, {"backoff_ms", absl::ToInt64Milliseconds(backoff)}}});
    for (const auto& [id, task] : order_) {
      Task& t = *task;
      // Finished ones (before a suspension, or scaled down) are not part of this gang.
      if (t.outside || t.phase == TaskPhase::kBlocked || t.phase == TaskPhase::kStopped ||
          t.phase == TaskPhase::kEnded) {
        continue;
      }
      MoveTo(t, TaskPhase::kReleased, out);
      if (!t.container_ended) out->kills.emplace_back(id, options_.spec.timeouts.stop_grace);
    }
    return;
  }
  if (!gang_.AskAgainDue(now)) return;
  for (const auto& [id, t] : tasks_) {
    if (t.phase == TaskPhase::kReleased && !t.container_ended) return;  // not yet all gone
  }
  for (const auto& [id, task] : order_) {
    Task& t = *task;
    if (t.phase != TaskPhase::kReleased) continue;
    if (t.scaled_down) {
      // Scaled down while the gang was incomplete (released while stopping): it stays stopped,
      // as the scale says; a scale up asks for it.
      MoveTo(t, TaskPhase::kStopped, out);
      t.container_ended = true;
      continue;
    }
    out->reopen.push_back(id);  // its earlier registration no longer counts
    const JobTypeSpec* jt = options_.spec.FindJobType(t.spec.job_name);
    if (jt != nullptr && !jt->depends_on.empty()) {
      // Its dependencies start afresh too: asked for again once they hold.
      Renew(t, TaskPhase::kBlocked, out);
      t.container_ended = true;
      asked_at_.erase(t.spec.job_name);
      continue;
    }
    Renew(t, TaskPhase::kWaiting, out);
    asked_at_[t.spec.job_name] = now;
    out->requests.push_back(t.spec);
  }
  gang_.Asked(now);
  TONY_DEFER_LOG(out->log, INFO) << "asking again for " << out->requests.size() << " containers";
}

// Relaunched once its old container has ended (its node's resources and its port free).
void JobState::DueRelaunches(absl::Time now, JobActions* out) {
  if (outcome_) return;
  for (const auto& [id, task] : TimedTasks()) {
    Task& t = *task;
    if (t.phase != TaskPhase::kRestartPending || !t.container_ended || now < t.relaunch_at) {
      continue;
    }
    JobActions::Relaunch r{t.spec};
    if (size_t colon = t.previous_address.rfind(':'); colon != std::string::npos) {
      if (!t.avoid_host) r.host = t.previous_address.substr(0, colon);
      (void)absl::SimpleAtoi(t.previous_address.substr(colon + 1), &r.port);
    }
    MoveTo(t, TaskPhase::kWaiting, out);
    t.allocated = t.registered = t.started = t.container_ended = false;
    t.executor_ended = false;   // the new executor has reported nothing yet
    t.preempt_noticed = false;  // a notice was about the old container
    t.preempt_stop_at.reset();
    t.preempt_stopped = false;
    t.exit_code = 0;
    t.address.clear();
    t.container.clear();
    // An elastic task comes back when YARN has room; the others train on meanwhile.
    if (ElasticOf(t.spec) == nullptr) {
      t.register_by = now + options_.spec.timeouts.registration;
      t.asked_again = "was relaunched";
      Watch(t);
    }
    TONY_DEFER_LOG(out->log, INFO)
        << "relaunching " << id.ToString()
        << (r.host.empty() ? "" : absl::StrCat(", preferably at ", t.previous_address));
    out->reopen.push_back(id);
    out->relaunches.push_back(std::move(r));
  }
}

// The end of a task's preemption grace: the AM stops it (its executor's stop path: SIGTERM, then
// SIGKILL after stop_grace) and so releases its container before YARN takes it; its end then
// counts as the preemption (OnExited, OnCompleted). A task that ended meanwhile, whose container
// YARN took first, or that is stopping anyway is left alone.
void JobState::StopPreempted(absl::Time now, JobActions* out) {
  for (const auto& [id, task] : TimedTasks()) {
    Task& t = *task;
    if (!t.preempt_stop_at || now < *t.preempt_stop_at) continue;
    t.preempt_stop_at.reset();
    if (outcome_ || t.container_ended || t.finished() || t.Idle() ||
        t.phase == TaskPhase::kStopping || t.phase == TaskPhase::kExitHeld) {
      continue;
    }
    t.preempt_stopped = true;
    out->kills.emplace_back(id, options_.spec.timeouts.stop_grace);
    TONY_DEFER_LOG(out->log, INFO)
        << id.ToString() << ": preemption grace over; the AM stops it "
        << "and releases container " << t.container << " before YARN takes it";
    out->records.push_back({"task_preempt_stop",
                            id.ToString(),
                            {{"container", t.container},
                             {"grace_ms", absl::ToInt64Milliseconds(PreemptionGrace(t))}}});
  }
}

// An exit report held for its container's completion stands once the wait is over.
void JobState::ReleaseHeldExits(absl::Time now, JobActions* out) {
  for (const auto& [id, task] : TimedTasks()) {
    Task& t = *task;
    if (t.phase == TaskPhase::kExitHeld && now >= t.held_until) {
      TaskEnded(t, t.held_code, t.held_tail, EndKind::kExited, now, out);
    }
  }
}

void JobState::CheckRelaunchedRegistrations(absl::Time now, JobActions* out) {
  for (const auto& [id, task] : TimedTasks()) {
    Task& t = *task;
    if (!t.register_by) continue;
    if (t.registered || t.finished() || outcome_) {
      t.register_by.reset();
    } else if (now >= *t.register_by) {
      t.register_by.reset();
      Finish(AppState::kFailed,
             absl::StrCat(id.ToString(), " ", t.asked_again, " but did not register within ",
                          absl::FormatDuration(options_.spec.timeouts.registration)),
             out);
    }
  }
}

// A lingering task whose time is up is stopped; the job succeeds once the last one ended.
void JobState::CheckLinger(absl::Time now, JobActions* out) {
  if (outcome_ || !tracked_done_) return;
  for (const auto& [id, task] : TimedTasks()) {
    Task& t = *task;
    if (!t.linger_until || now < *t.linger_until || t.finished() || t.container_ended ||
        t.phase == TaskPhase::kStopping) {
      continue;
    }
    const JobTypeSpec* jt = options_.spec.FindJobType(t.spec.job_name);
    std::string warning = absl::StrCat(
        "warning: ", id.ToString(), " still ran ",
        absl::FormatDuration(jt == nullptr ? absl::ZeroDuration() : jt->linger),
        " after the tracked tasks finished; stopped (jobs.", t.spec.job_name, ".linger)");
    TONY_DEFER_LOG(out->log, WARNING) << warning;
    diagnostics_.AddWarning(std::move(warning));
    out->records.push_back({"task_linger_expired", id.ToString(), {}});
    MoveTo(t, TaskPhase::kStopping, out);
    out->kills.emplace_back(id, options_.spec.timeouts.stop_grace);
  }
}

}  // namespace tony::am
