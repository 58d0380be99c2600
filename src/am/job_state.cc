// Copyright libtony authors.

#include "am/job_state.h"

#include <algorithm>
#include <csignal>

#include "absl/random/random.h"
#include "absl/strings/str_cat.h"
#include "am/restart_policy.h"

namespace tony::am {
namespace {

std::function<double()> DefaultJitter() {
  auto random = std::make_shared<absl::BitGen>();
  return [random] { return absl::Uniform(*random, 0.5, 1.5); };
}

bool IsSidecar(const TaskSpec& spec) { return spec.job_name == kTensorBoardJobName; }

// "<8192 MB, 1 vcore>": what a task asks for, as the pending line shows it.
std::string ShapeOf(const TaskSpec& spec) {
  std::string shape = absl::StrCat("<", spec.memory_mb, " MB, ", spec.vcores,
                                   spec.vcores == 1 ? " vcore" : " vcores");
  if (spec.gpus > 0) absl::StrAppend(&shape, ", ", spec.gpus, spec.gpus == 1 ? " GPU" : " GPUs");
  if (!spec.node_label.empty()) absl::StrAppend(&shape, ", label ", spec.node_label);
  return shape + ">";
}

// YARN's ContainerExitStatus.PREEMPTED: restart policies retry it, nodes never count it.
constexpr int kPreemptedStatus = -102;

}  // namespace

void JobActions::Append(JobActions&& o) {
  auto move_all = [](auto& to, auto& from) {
    for (auto& x : from) to.push_back(std::move(x));
  };
  move_all(reopen, o.reopen);
  move_all(requests, o.requests);
  move_all(relaunches, o.relaunches);
  move_all(kills, o.kills);
  move_all(excuses, o.excuses);
  move_all(preempt_notices, o.preempt_notices);
  move_all(exclude_nodes, o.exclude_nodes);
  move_all(rejoin, o.rejoin);
  move_all(admit, o.admit);
  move_all(records, o.records);
  if (o.outcome) outcome = o.outcome;
  if (!o.probe_tensorboard.empty()) probe_tensorboard = std::move(o.probe_tensorboard);
  if (o.tensorboard_url) tensorboard_url = std::move(o.tensorboard_url);
  done = done || o.done;
  log.Append(std::move(o.log));
}

bool JobState::Task::finished() const {
  return phase == TaskPhase::kEnded || phase == TaskPhase::kStopped ||
         phase == TaskPhase::kRestartPending;
}

bool JobState::Task::MayBeDue() const {
  return phase == TaskPhase::kRestartPending || phase == TaskPhase::kExitHeld ||
         register_by.has_value() || linger_until.has_value() || preempt_stop_at.has_value();
}

std::optional<absl::Time> JobState::Task::NextDeadline() const {
  std::optional<absl::Time> next;
  auto consider = [&next](absl::Time t) { next = next ? std::min(*next, t) : t; };
  // A relaunch waits for the old container's end, then for its time.
  if (phase == TaskPhase::kRestartPending && container_ended) consider(relaunch_at);
  if (register_by) consider(*register_by);
  if (phase == TaskPhase::kExitHeld) consider(held_until);
  if (linger_until && phase != TaskPhase::kStopping && !finished()) consider(*linger_until);
  if (preempt_stop_at) consider(*preempt_stop_at);
  return next;
}

JobState::JobState(JobStateOptions options)
    : options_(std::move(options)),
      gang_(options_.spec.timeouts.allocation, options_.allocation_backoff,
            options_.jitter ? options_.jitter : DefaultJitter()),
      exclusion_([this] {
        NodeExclusionOptions o;
        o.max_node_failures = options_.spec.max_node_failures;
        o.initial = options_.spec.exclude_nodes;
        o.initial.insert(o.initial.end(), options_.excluded_nodes.begin(),
                         options_.excluded_nodes.end());
        return o;
      }()) {
  bool any_tracked = false;
  for (TaskSpec& spec : ResolveTasks(options_.spec)) {
    any_tracked |= spec.tracked;
    TaskId id = TaskId::Of(spec);
    Task& t = tasks_[id];
    t.spec = std::move(spec);
    t.ordinal = order_.size();
    order_.emplace_back(id, &t);
  }
  if (options_.spec.client_mode) {
    // Runs on the submitting machine (ytf-submit --client), which reports its start and exit.
    TaskSpec client = ResolveClientTask(options_.spec);
    any_tracked = true;
    TaskId id = TaskId::Of(client);
    Task& t = tasks_[id];
    t.ordinal = order_.size();
    order_.emplace_back(id, &t);
    t.spec = std::move(client);
    t.outside = true;
    t.allocated = true;  // nothing to allocate; it "registers" by starting
    t.container_ended = true;
  }
  if (!any_tracked) {
    // Nothing would ever decide success: every task counts (TensorBoard never ends by itself).
    for (auto& [id, t] : tasks_) t.spec.tracked = !IsSidecar(t.spec);
  }
  for (const auto& [role, tasks] : options_.scale_targets) {
    if (CheckScaleRequest(role, tasks).ok()) scale_target_[role] = tasks;
  }
  round_ = DependencyRounds(options_.spec);
  in_phase_.assign(static_cast<size_t>(TaskPhase::kReleased) + 1, 0);
  for (const auto& [id, task] : order_) {
    const std::string shape = ShapeOf(task->spec);
    auto known = std::find(shapes_.begin(), shapes_.end(), shape);
    task->shape = static_cast<size_t>(known - shapes_.begin());
    if (known == shapes_.end()) shapes_.push_back(shape);
  }
  pending_.resize(shapes_.size());
  for (auto& [id, t] : tasks_) {
    Enter(t, FirstPhase(t));
    tracked_needed_ += t.spec.tracked && ElasticOf(t.spec) == nullptr;
  }
}

TaskPhase JobState::FirstPhase(Task& t) {
  auto target = scale_target_.find(t.spec.job_name);
  if (target != scale_target_.end() && t.spec.index >= target->second) {
    // As a task a scale down stopped: never asked for, until CheckScale's scale up.
    t.scaled_down = true;
    t.container_ended = true;
    return TaskPhase::kStopped;
  }
  const JobTypeSpec* jt = options_.spec.FindJobType(t.spec.job_name);
  if (jt != nullptr && !jt->depends_on.empty()) {
    t.container_ended = true;  // it has none
    return TaskPhase::kBlocked;
  }
  return t.outside ? TaskPhase::kAllocated : TaskPhase::kWaiting;
}

void JobState::Enter(Task& t, TaskPhase first) {
  if (!PhaseChangeAllowed(std::nullopt, first)) {
    ++refused_phase_changes_;
    TONY_LOG(ERROR) << "internal error: " << t.spec.id() << " may not start "
                    << TaskPhaseName(first);
  } else {
    t.phase = first;
  }
  ++in_phase_[static_cast<size_t>(t.phase)];
}

bool JobState::MoveTo(Task& t, TaskPhase to, JobActions* out) {
  Touch(t);  // its other facts change with its phase, or were changed just before
  if (!PhaseChangeAllowed(t.phase, to)) {
    ++refused_phase_changes_;
    TONY_DEFER_LOG(out->log, ERROR)
        << "internal error: refused to move " << t.spec.id() << " from " << TaskPhaseName(t.phase)
        << " to " << TaskPhaseName(to) << " (docs/am-state-machine.md)";
    return false;
  }
  --in_phase_[static_cast<size_t>(t.phase)];
  ++in_phase_[static_cast<size_t>(to)];
  t.phase = to;
  if (t.MayBeDue()) Watch(t);  // a backoff, a held exit
  return true;
}

void JobState::Touch(Task& t) {
  if (t.dirty) return;
  t.dirty = true;
  dirty_.push_back(t.ordinal);
}

JobActions JobState::Start(absl::Time now) {
  JobActions out;
  started_ = true;
  if (options_.spec.timeouts.job != absl::InfiniteDuration()) {
    job_deadline_ = now + options_.spec.timeouts.job;
  }
  gang_.Asked(now);
  ApplyExclusion(exclusion_.Start(), &out);  // before the first requests
  if (outcome_) return out;
  for (const auto& [id, task] : order_) {
    Task& t = *task;
    if (t.outside || t.phase == TaskPhase::kBlocked || t.scaled_down) continue;
    out.requests.push_back(t.spec);
    asked_at_.emplace(t.spec.job_name, now);
  }
  return out;
}

void JobState::StopQuietly(Task& t, const TaskId& id, JobActions* out) {
  const bool live = t.allocated && !t.container_ended;
  out->kills.emplace_back(id, options_.spec.timeouts.stop_grace);
  t.register_by.reset();
  t.linger_until.reset();
  if (live) {
    MoveTo(t, TaskPhase::kStopping, out);  // stopped when its container ends
  } else {
    MoveTo(t, TaskPhase::kStopped, out);  // its request is withdrawn; nothing comes back
    t.container_ended = true;
  }
}

void JobState::Renew(Task& t, TaskPhase to, JobActions* out) {
  Task fresh;
  fresh.spec = std::move(t.spec);
  fresh.ordinal = t.ordinal;
  fresh.shape = t.shape;
  fresh.counted = t.counted;
  fresh.dirty = t.dirty;
  fresh.phase = t.phase;
  fresh.restarts = t.restarts;
  fresh.in_place_restarts = t.in_place_restarts;
  fresh.scaled_down = t.scaled_down;
  t = std::move(fresh);
  MoveTo(t, to, out);
}

JobState::Task* JobState::Find(const TaskId& id) {
  auto it = tasks_.find(id);
  return it == tasks_.end() ? nullptr : &it->second;
}

const TaskPhase* JobState::PhaseOf(const TaskId& id) const {
  auto it = tasks_.find(id);
  return it == tasks_.end() ? nullptr : &it->second.phase;
}

JobActions JobState::On(const JobEvent& e, absl::Time now) {
  JobActions out = Handle(e, now);
  out.Append(Tick(now));
  return out;
}

JobActions JobState::Handle(const JobEvent& e, absl::Time now) {
  using Kind = JobEvent::Kind;
  JobActions out;
  Task* t = Find(e.task);
  if (t != nullptr) Touch(*t);
  switch (e.kind) {
    case Kind::kAllocated:
    case Kind::kLaunchFailed:
    case Kind::kCompleted:
    case Kind::kBackendFailed:
      OnBackendEvent(e, now, &out);
      break;
    case Kind::kBackendGone:
      BackendGone(e.text, &out);
      break;
    case Kind::kToldJobOver:
      if (t != nullptr) t->told_over = true;
      break;
    case Kind::kRegistered:
      if (t != nullptr) OnRegistered(*t, e, &out);
      break;
    case Kind::kPublished:
      OnPublished(now, &out);
      break;
    case Kind::kStarted:
    case Kind::kRestarted:
      if (t == nullptr) break;
      t->executor_ended = false;  // an in-place restart runs the command again
      OnStarted(*t, e, &out);
      break;
    case Kind::kExited:
      if (t == nullptr) break;
      t->executor_ended = true;
      OnExited(*t, e, now, &out);
      break;
    case Kind::kRegistrationTimeout:
    case Kind::kHeartbeatTimeout:
      OnTimeout(e, now, &out);
      break;
    case Kind::kKill:
      Finish(AppState::kKilled, e.text.empty() ? "killed" : e.text, &out);
      break;
    case Kind::kTensorBoardListening:
      OnTensorBoardListening(e.text, &out);
      break;
    case Kind::kNodeState:
      if (!outcome_) ApplyExclusion(exclusion_.OnNodeState(e.node, e.text), &out);
      break;
    case Kind::kClusterNodes:
      if (!outcome_) ApplyExclusion(exclusion_.OnClusterNodes(e.code), &out);
      break;
    case Kind::kPreemptNotice:
      OnPreemptNotice(e, now, &out);
      break;
    case Kind::kScale:
    case Kind::kSuspend:
    case Kind::kResume:
      OnRequest(e, now, &out);
      break;
  }
  return out;
}

void JobState::OnPreemptNotice(const JobEvent& e, absl::Time now, JobActions* out) {
  // The scheduler repeats its notice in every answer until it took the container: each
  // container is news once. Bounded: a scheduler naming ever new containers cannot grow the AM
  // without end (past the bound, unknown ones are ignored without a line).
  constexpr size_t kMaxRemembered = 4096;
  if (preempt_seen_.count(e.container) > 0) return;
  const bool remembered =
      preempt_seen_.size() < kMaxRemembered && preempt_seen_.insert(e.container).second;
  Task* t = e.task.job.empty() ? nullptr : Find(e.task);
  // Its current container only: one of an earlier incarnation is no news to the new one.
  const bool running = t != nullptr && t->allocated && !t->container_ended &&
                       !t->container.empty() && t->container == e.container;
  if (!running) {
    if (remembered) {
      TONY_DEFER_LOG(out->log, WARNING)
          << "YARN's preemption notice names container " << e.container
          << ", which runs no task of this job; ignored";
    }
    return;
  }
  if (t->preempt_noticed) return;
  t->preempt_noticed = true;
  TONY_DEFER_LOG(out->log, INFO) << e.task.ToString() << ": YARN is about to preempt container "
                                 << e.container << " (" << e.text << "); telling its executor";
  out->preempt_notices.emplace_back(e.task, e.container);
  out->records.push_back({"task_preempt_notice",
                          e.task.ToString(),
                          {{"container", e.container}, {"contract", e.text}}});
  const absl::Duration grace = PreemptionGrace(*t);
  if (grace > absl::ZeroDuration()) {
    t->preempt_stop_at = now + grace;
    Watch(*t);
  }
}

absl::Duration JobState::PreemptionGrace(const Task& t) const {
  const JobTypeSpec* jt = options_.spec.FindJobType(t.spec.job_name);
  return jt != nullptr && jt->preemption_grace ? *jt->preemption_grace
                                               : options_.spec.preemption_grace;
}

void JobState::OnPublished(absl::Time now, JobActions* out) {
  TONY_DEFER_LOG(out->log, INFO) << "every task registered; cluster spec published";
  published_ = true;
  gang_.Settle();
  for (const auto& [id, task] : tasks_) {
    // The client (client mode) starts now; if its ytf-submit is gone, it never will.
    if (task.outside && !task.registered) {
      client_start_deadline_ = now + options_.spec.timeouts.registration;
    }
  }
}

// kStarted, kRestarted (in place).
void JobState::OnStarted(Task& t, const JobEvent& e, JobActions* out) {
  if (t.finished() || t.Idle()) return;
  t.started = true;
  if (t.outside) t.registered = true;  // it never registers with the broker
  if (t.phase != TaskPhase::kExitHeld && t.phase != TaskPhase::kStopping) {
    MoveTo(t, TaskPhase::kRunning, out);
  }
  if (e.kind != JobEvent::Kind::kRestarted) return;
  t.in_place_restarts = std::max(t.in_place_restarts, e.restart);
  std::string warning = diagnostics_.WithTail(
      absl::StrCat("warning: ", e.task.ToString(), " exited with code ", e.code,
                   " and was restarted (", e.restart, " of at most 3); training goes on"),
      e.text, false);
  TONY_DEFER_LOG(out->log, WARNING) << warning;
  diagnostics_.SidecarWarning(e.task, std::move(warning));
}

// kRegistrationTimeout (the broker's), kHeartbeatTimeout.
void JobState::OnTimeout(const JobEvent& e, absl::Time now, JobActions* out) {
  if (e.kind == JobEvent::Kind::kRegistrationTimeout) {
    std::string message = absl::StrCat("registration deadline of ",
                                       absl::FormatDuration(options_.spec.timeouts.registration),
                                       " passed; never registered: ", SummarizeTasks(e.missing));
    if (std::string pending = Pending(now); !pending.empty()) {
      absl::StrAppend(&message, "; containers never allocated: ", pending);
    }
    Finish(AppState::kFailed, message, out);
    return;
  }
  const Task* t = Find(e.task);
  if (t == nullptr || t->finished()) return;
  Finish(AppState::kFailed,
         absl::StrCat(e.task.ToString(), " sent no heartbeat for ",
                      absl::FormatDuration(options_.heartbeat_timeout),
                      t->outside ? " (the client task of client mode: its ytf-submit was "
                                   "killed or lost the cluster)"
                                 : ""),
         out);
}

// kScale, kSuspend, kResume: the AM's requests, refused with a warning when they may not be.
void JobState::OnRequest(const JobEvent& e, absl::Time now, JobActions* out) {
  if (e.kind == JobEvent::Kind::kScale) {
    if (absl::Status s = CheckScaleRequest(e.task.job, e.code); !s.ok()) {
      TONY_DEFER_LOG(out->log, WARNING) << "scale refused: " << s.message();
      return;
    }
    TONY_DEFER_LOG(out->log, INFO) << "scaling " << e.task.job << " to " << e.code << " tasks";
    scale_target_[e.task.job] = e.code;
    return;
  }
  const bool suspend = e.kind == JobEvent::Kind::kSuspend;
  if (absl::Status s = CheckSuspendRequest(suspend); !s.ok()) {
    TONY_DEFER_LOG(out->log, WARNING) << "suspend/resume refused: " << s.message();
  } else if (suspend) {
    Suspend(now, out);
  } else {
    Resume(now, out);
  }
}

void JobState::ApplyExclusion(ExclusionDecision d, JobActions* out) {
  for (size_t i = 0; i < d.records.size(); ++i) {
    const std::string host = d.records[i].fields.value("node", "");
    const std::string reason = d.records[i].fields.value("reason", "");
    if (d.records[i].event == "node_included") {
      TONY_DEFER_LOG(out->log, INFO) << "node " << host << " is back in use: " << reason;
    } else {
      std::string warning = absl::StrCat("warning: node ", host, " excluded: ", reason);
      TONY_DEFER_LOG(out->log, WARNING) << warning;
      diagnostics_.AddWarning(std::move(warning));
    }
    out->records.push_back(std::move(d.records[i]));
  }
  for (std::string& host : d.excluded) out->exclude_nodes.push_back(std::move(host));
  for (std::string& host : d.included) out->include_nodes.push_back(std::move(host));
  if (!d.fail.empty()) Finish(AppState::kFailed, d.fail, out);
}

void JobState::OnBackendEvent(const JobEvent& e, absl::Time now, JobActions* out) {
  if (e.kind == JobEvent::Kind::kBackendFailed) {
    Finish(AppState::kFailed, absl::StrCat("the resource manager failed: ", e.text), out);
    return;
  }
  Task* t = Find(e.task);
  if (t == nullptr) {
    TONY_DEFER_LOG(out->log, WARNING) << "event for unknown task " << e.task.ToString();
    return;
  }
  if (t->phase == TaskPhase::kReleased) {
    // Released for all-or-nothing allocation: its end is no failure.
    if (e.kind != JobEvent::Kind::kAllocated) t->container_ended = true;
    return;
  }
  if (t->phase == TaskPhase::kBlocked) return;  // not asked for: no container to hear about
  switch (e.kind) {
    case JobEvent::Kind::kAllocated:
      t->allocated = true;
      t->node = e.node;
      t->container = e.container;
      if (t->phase == TaskPhase::kWaiting) MoveTo(*t, TaskPhase::kAllocated, out);
      return;
    case JobEvent::Kind::kLaunchFailed:
      t->container_ended = true;
      if (t->finished()) return;
      t->exit_code = -1;
      if (t->phase == TaskPhase::kStopping || outcome_) {
        MoveTo(*t, TaskPhase::kStopped, out);
        return;
      }
      MoveTo(*t, TaskPhase::kEnded, out);
      if (IsSidecar(t->spec)) {
        std::string warning = absl::StrCat("warning: could not launch ", e.task.ToString(), ": ",
                                           e.text, "; training goes on without it");
        TONY_DEFER_LOG(out->log, WARNING) << warning;
        diagnostics_.SidecarWarning(e.task, std::move(warning));
        if (!t->registered) out->excuses.push_back(e.task);
        return;
      }
      Finish(AppState::kFailed, absl::StrCat("could not launch ", e.task.ToString(), ": ", e.text),
             out);
      return;
    default:
      OnCompleted(*t, e, now, out);
      return;
  }
}

void JobState::BackendGone(const std::string& why, JobActions* out) {
  backend_gone_ = true;
  for (auto& [id, t] : tasks_) {
    if (t.container_ended || t.outside) continue;
    t.container_ended = true;
    t.end_unconfirmed = true;
    if (!t.finished()) {
      MoveTo(t, TaskPhase::kStopped, out);
      t.exit_code = -1;
    }
  }
  Finish(AppState::kFailed, absl::StrCat("the resource manager ended this attempt: ", why), out);
}

void JobState::OnCompleted(Task& t, const JobEvent& e, absl::Time now, JobActions* out) {
  t.container_ended = true;
  // YARN's ABORTED: released, or its node lost (the NodeManager may not have stopped it).
  t.end_unconfirmed = e.code == -100;
  if (t.preempt_stopped && !t.finished()) {
    // The AM stopped it at the end of its preemption grace: YARN says "killed by the AM".
    TaskEnded(t, kPreemptedStatus, e.text, EndKind::kContainerEnded, now, out);
  } else if (t.phase == TaskPhase::kExitHeld) {
    // The container says why the executor saw a SIGTERM: a preemption or a lost node is the
    // cluster's doing (restart policies retry those); anything else, the executor's code stands.
    const int s = e.code;
    if (s == -100 || s == -101 || s == -102) {
      TaskEnded(t, s, t.held_tail, EndKind::kContainerEnded, now, out);
    } else {
      TaskEnded(t, t.held_code, t.held_tail, EndKind::kExited, now, out);
    }
  } else if (!t.finished()) {
    TaskEnded(t, e.code, e.text, EndKind::kContainerEnded, now, out);
  }
}

void JobState::OnRegistered(Task& t, const JobEvent& e, JobActions* out) {
  if (t.Idle()) return;
  TONY_DEFER_LOG(out->log, INFO) << e.task.ToString() << " registered at " << e.text;
  t.registered = true;
  t.address = e.text;
  if (t.phase == TaskPhase::kWaiting || t.phase == TaskPhase::kAllocated) {
    MoveTo(t, TaskPhase::kRegistered, out);
  }
  if (IsSidecar(t.spec) && tensorboard_address_.empty()) {
    tensorboard_address_ = e.text;
    out->probe_tensorboard = e.text;  // announced once it answers, never while it refuses
  }
  if (t.previous_address.empty()) return;
  // A relaunched task is back.
  const std::string previous = std::exchange(t.previous_address, "");
  const bool same = previous == e.text;
  diagnostics_.AppendToRestart(
      t.restart_line,
      same ? absl::StrCat("; back at ", e.text)
           : absl::StrCat("; back at a new address ", e.text, " (was ", previous, ")"));
  const JobTypeSpec* jt = options_.spec.FindJobType(t.spec.job_name);
  if (same || outcome_ || jt == nullptr || !jt->restart) return;
  std::string message = absl::StrCat(
      t.spec.id(), " was relaunched but came back at ", e.text, " instead of ", previous,
      "; the broker published the new address, which the running tasks do not follow");
  switch (jt->restart->on_address_change) {
    case AddressChange::kAccept:
      TONY_DEFER_LOG(out->log, WARNING)
          << message << "; going on (restart policy: on_address_change accept)";
      return;
    case AddressChange::kFail:
      job_restart_allowed_ = false;
      Finish(AppState::kFailed, absl::StrCat(message, " (restart policy: on_address_change fail)"),
             out);
      return;
    case AddressChange::kRestartJob:
      Finish(AppState::kFailed,
             absl::StrCat(message,
                          " (restart policy: on_address_change restart-job; the whole job "
                          "restarts if attempts remain)"),
             out);
      return;
  }
}

void JobState::OnExited(Task& t, const JobEvent& e, absl::Time now, JobActions* out) {
  if (t.finished() || t.Idle()) return;
  if (t.outside) t.registered = true;  // its start report may have been lost
  if (t.preempt_stopped && !outcome_) {
    // Stopped by the AM at the end of its preemption grace: whatever its exit code (a task
    // that checkpoints on SIGTERM may exit 0), the preemption ended it, not the task.
    TaskEnded(t, kPreemptedStatus, e.text, EndKind::kExited, now, out);
    return;
  }
  const bool by_signal = e.code == 128 + SIGTERM || e.code == 128 + SIGKILL;
  // A task told of its container's preemption may end by itself first (a checkpoint, then an
  // exit, or the notice's signal uncaught by a child): the container's end says whether YARN
  // took it, and a preemption is no failure of the task.
  const bool preempted_first = t.preempt_noticed && e.code != 0;
  if ((by_signal || preempted_first) && !t.outside && !t.container_ended &&
      t.phase != TaskPhase::kStopping && t.phase != TaskPhase::kExitHeld && !outcome_) {
    // YARN ends a container it preempts (or whose node it gives up) with SIGTERM: the
    // executor's report comes first, the reason with the container's completion.
    MoveTo(t, TaskPhase::kExitHeld, out);
    t.held_until = now + options_.exit_cause_wait;
    t.held_code = e.code;
    t.held_tail = e.text;
    return;
  }
  TaskEnded(t, e.code, e.text, EndKind::kExited, now, out);
}

void JobState::OnTensorBoardListening(const std::string& url, JobActions* out) {
  const Task* tb = Find(TaskId{kTensorBoardJobName, 0});
  // Died meanwhile (or the job is over): the tracking URL stays the AM's page.
  if (tb == nullptr || tb->finished() || outcome_ || !tensorboard_url_.empty()) return;
  tensorboard_url_ = url;
  TONY_DEFER_LOG(out->log, INFO) << "TensorBoard at " << url;
  out->tensorboard_url = url;
}

void JobState::TaskEnded(Task& t, int code, const std::string& tail, EndKind how, absl::Time now,
                         JobActions* out) {
  const std::string id = t.spec.id();
  t.exit_code = code;
  if (outcome_ || t.phase == TaskPhase::kStopping) {
    MoveTo(t, TaskPhase::kStopped, out);
    TONY_DEFER_LOG(out->log, INFO) << id << " stopped (exit code " << code << ")";
    if (tracked_done_ && !outcome_) CheckSuccess(now, out);  // the last lingering one is gone
    return;
  }
  MoveTo(t, TaskPhase::kEnded, out);
  const bool from_container = how == EndKind::kContainerEnded;
  TONY_DEFER_LOG(out->log, INFO) << id << " "
                                 << (from_container ? "ended (its container completed)" : "exited")
                                 << " with code " << code;
  if (IsSidecar(t.spec) && (code != 0 || !t.registered)) {
    SidecarEnded(t, code, tail, from_container, out);
    return;
  }
  if (!t.registered && code == 0) {
    Finish(AppState::kFailed,
           diagnostics_.WithTail(absl::StrCat(id, " exited with code 0 before registering"), tail,
                                 from_container),
           out);
  } else if (!t.registered) {
    TaskFailed(t, code, absl::StrCat(id, " exited with code ", code, " before registering"), tail,
               from_container, now, out);
  } else if (t.spec.tracked && code == 0) {
    CheckSuccess(now, out);
  } else if (t.spec.tracked) {
    TaskFailed(t, code, absl::StrCat(id, " failed with exit code ", code), tail, from_container,
               now, out);
  } else if (code != 0) {
    TaskFailed(t, code,
               absl::StrCat(id, " (untracked) died with exit code ", code,
                            tracked_done_ ? " while lingering after the tracked tasks finished"
                                          : " before the tracked tasks finished"),
               tail, from_container, now, out);
  } else if (tracked_done_) {
    CheckSuccess(now, out);  // a lingering task ended by itself
  }
}

// A sidecar: training never depends on it. Said in the diagnostics, whatever the outcome.
void JobState::SidecarEnded(Task& t, int code, const std::string& tail, bool from_container,
                            JobActions* out) {
  const int restarts = t.in_place_restarts;
  std::string warning = diagnostics_.WithTail(
      absl::StrCat("warning: ", t.spec.id(), " died with exit code ", code,
                   t.registered ? "" : " before registering",
                   restarts > 0 ? absl::StrCat(" after ", restarts, " restarts") : "",
                   "; training goes on without it (is `tensorboard` in the --python_env, on the "
                   "nodes' PATH, or given by --tensorboard_command?)"),
      tail, from_container);
  TONY_DEFER_LOG(out->log, WARNING) << warning;
  diagnostics_.SidecarWarning(TaskId::Of(t.spec), std::move(warning));
  if (!t.registered) out->excuses.push_back(TaskId::Of(t.spec));
  if (!tensorboard_url_.empty()) {
    tensorboard_url_.clear();
    out->tensorboard_url = "";  // the tracking URL goes back to the AM's page
  }
}

void JobState::TaskFailed(Task& t, int code, const std::string& message, const std::string& tail,
                          bool from_container, absl::Time now, JobActions* out) {
  const JobTypeSpec* jt = options_.spec.FindJobType(t.spec.job_name);
  RestartInput in;
  in.policy = t.outside || jt == nullptr || !jt->restart ? nullptr : &*jt->restart;
  in.task = t.spec.id();
  in.exit_code = code;
  in.restarts_so_far = t.restarts;
  in.attempt = options_.attempt;
  in.max_backoff = options_.max_backoff;
  in.now = now;
  const RestartDecision d = DecideRestart(in);
  if (!d.job_restart_allowed) job_restart_allowed_ = false;
  // A preemption is the scheduler's doing, never the node's. Excluding every node fails the
  // job only when the task would run again; otherwise its own failure is the cause.
  ExclusionDecision x =
      code == -102 ? ExclusionDecision{} : exclusion_.OnTaskFailure(t.node, t.spec.id());
  const bool relaunch = d.verdict == RestartDecision::Verdict::kRelaunch;
  if (!relaunch) x.fail.clear();
  if (!x.fail.empty()) x.fail = absl::StrCat(message, "; ", x.fail);
  ApplyExclusion(std::move(x), out);
  if (outcome_) return;
  if (relaunch) {
    ++t.restarts;
    MoveTo(t, TaskPhase::kRestartPending, out);
    t.relaunch_at = now + d.backoff;
    t.previous_address = t.registered ? t.address : "";
    t.avoid_host = d.avoid_host || exclusion_.Excluded(t.node);
    t.restart_line = diagnostics_.AddRestart(d.line);
    TONY_DEFER_LOG(out->log, WARNING) << message << d.note;
    out->records.push_back({"task_restart_scheduled",
                            t.spec.id(),
                            {{"reason", message + d.note},
                             {"restart", t.restarts},
                             {"backoff_ms", absl::ToInt64Milliseconds(d.backoff)},
                             {"stderr_tail", tail}}});
    return;
  }
  if (d.verdict == RestartDecision::Verdict::kJobRestart) diagnostics_.AddRestart(d.line);
  Finish(AppState::kFailed, diagnostics_.WithTail(message + d.note, tail, from_container), out);
}

void JobState::CheckSuccess(absl::Time now, JobActions* out) {
  // Each of those tasks must have ended: until as many have, no need to look at them.
  if (in_phase_[static_cast<size_t>(TaskPhase::kEnded)] < tracked_needed_) return;
  for (const auto& [id, t] : tasks_) {
    if (t.spec.tracked && !(t.phase == TaskPhase::kEnded && t.exit_code == 0) && !ElasticDone(t)) {
      return;
    }
  }
  if (!LingerDone(now, out)) return;
  Finish(AppState::kSucceeded, "", out);
}

// Untracked roles without a linger stop now; those with one run on until it passes
// (CheckLinger). Done once none of them is still running.
bool JobState::LingerDone(absl::Time now, JobActions* out) {
  const bool first = !tracked_done_;
  tracked_done_ = true;
  bool lingering = false;
  for (const auto& [id, task] : order_) {
    Task& t = *task;
    if (t.spec.tracked || t.outside || t.container_ended || t.finished() ||
        t.phase == TaskPhase::kStopping) {
      continue;
    }
    const JobTypeSpec* jt = options_.spec.FindJobType(t.spec.job_name);
    const absl::Duration linger = jt == nullptr ? absl::ZeroDuration() : jt->linger;
    if (linger <= absl::ZeroDuration()) {
      if (!first) continue;  // stopped by Finish, with the rest
      t.linger_until = now;  // stopped below unless another role lingers
      Watch(t);
      continue;
    }
    if (first) {
      t.linger_until = now + linger;
      Watch(t);
      TONY_DEFER_LOG(out->log, INFO)
          << id.ToString() << " may run on for " << absl::FormatDuration(linger) << " (linger)";
    }
    lingering = true;
  }
  if (!lingering) return true;
  for (const auto& [id, task] : order_) {
    Task& t = *task;
    if (first && t.linger_until == now && !t.container_ended && !t.finished()) {
      MoveTo(t, TaskPhase::kStopping, out);
      out->kills.emplace_back(id, options_.spec.timeouts.stop_grace);
    }
  }
  return false;
}

void JobState::Finish(AppState state, const std::string& cause, JobActions* out) {
  if (outcome_) return;  // the first decision wins
  outcome_ = state;
  final_diagnostics_ = diagnostics_.Final(cause);
  out->outcome = state;
  out->records.push_back({"job_outcome",
                          "",
                          {{"state", std::string(AppStateName(state))},
                           {"diagnostics", final_diagnostics_},
                           {"job_restart_allowed", job_restart_allowed_}}});
  if (state != AppState::kSucceeded) {
    TONY_DEFER_LOG(out->log, WARNING) << "job failing: " << cause;
  }
}

}  // namespace tony::am
