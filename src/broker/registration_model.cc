// Copyright libtony authors.

#include "broker/registration_model.h"

#include <algorithm>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace tony::broker {

namespace {

using P = TaskPhase;
using E = TaskEvent;

constexpr Stage kG = Stage::kGathering;
constexpr Stage kP = Stage::kPublished;
constexpr Stage kA = Stage::kAny;

// docs/broker-state-machine.md shows this table; broker_test compares the two.
constexpr Transition kTransitions[] = {
    // Admission of deferred roles.
    {P::kDeferred, E::kAdmit, kG, P::kExpected},
    {P::kDeferred, E::kAdmit, kP, P::kJoining},
    {P::kDeferred, E::kAdmitElastic, kA, P::kStandby},
    // Registration before the first publication: the call waits for the spec.
    {P::kExpected, E::kRegister, kG, P::kParked},
    {P::kReopened, E::kRegister, kG, P::kParked},
    {P::kExited, E::kRegister, kG, P::kParked},
    {P::kStandby, E::kRegisterElastic, kG, P::kParked},
    {P::kReopened, E::kRegisterElastic, kG, P::kParked},
    {P::kExited, E::kRegisterElastic, kG, P::kParked},
    {P::kExpected, E::kExcuse, kG, P::kExcused},
    {P::kReopened, E::kExcuse, kG, P::kExcused},
    // Publication: the first one, and each round of joining tasks.
    {P::kParked, E::kPublish, kG, P::kRegistered},
    {P::kJoined, E::kPublish, kP, P::kRegistered},
    // Registration after publication.
    {P::kJoining, E::kRegister, kP, P::kJoined},
    {P::kReopened, E::kRegister, kP, P::kRegistered},
    {P::kStandby, E::kRegisterElastic, kP, P::kRegistered},
    {P::kReopened, E::kRegisterElastic, kP, P::kRegistered},
    {P::kExited, E::kRegisterElastic, kP, P::kRegistered},
    // Exits.
    {P::kParked, E::kExit, kG, P::kExited},
    {P::kRegistered, E::kExit, kP, P::kExited},
    // Relaunches by the ApplicationMaster.
    {P::kExpected, E::kReopen, kG, P::kReopened},
    {P::kParked, E::kReopen, kG, P::kReopened},
    {P::kRegistered, E::kReopen, kP, P::kReopened},
    {P::kExited, E::kReopen, kA, P::kReopened},
    {P::kExcused, E::kReopen, kA, P::kReopened},
    {P::kJoined, E::kReopen, kP, P::kJoining},
    // Resumption: the tasks wait for each other again.
    {P::kRegistered, E::kRejoin, kP, P::kJoining},
    {P::kExited, E::kRejoin, kP, P::kJoining},
    {P::kReopened, E::kRejoin, kP, P::kJoining},
    {P::kExcused, E::kRejoin, kP, P::kJoining},
    {P::kJoined, E::kRejoin, kP, P::kJoining},
    // Tasks outside the cluster.
    {P::kExpected, E::kOutsideStart, kA, P::kRegistered},
    {P::kExpected, E::kOutsideExit, kA, P::kExited},
    {P::kRegistered, E::kOutsideExit, kA, P::kExited},
};

std::string TaskName(absl::string_view job, int index) { return absl::StrCat(job, ":", index); }

// Holds the first publication back.
bool HoldsBack(TaskPhase p) { return p == P::kExpected || p == P::kReopened; }

}  // namespace

absl::Span<const Transition> Transitions() { return kTransitions; }

absl::string_view TaskPhaseName(TaskPhase phase) {
  switch (phase) {
    case P::kDeferred:
      return "DEFERRED";
    case P::kExpected:
      return "EXPECTED";
    case P::kParked:
      return "PARKED";
    case P::kRegistered:
      return "REGISTERED";
    case P::kExited:
      return "EXITED";
    case P::kExcused:
      return "EXCUSED";
    case P::kStandby:
      return "STANDBY";
    case P::kReopened:
      return "REOPENED";
    case P::kJoining:
      return "JOINING";
    case P::kJoined:
      return "JOINED";
  }
  return "?";
}

absl::string_view TaskEventName(TaskEvent event) {
  switch (event) {
    case E::kRegister:
      return "register";
    case E::kRegisterElastic:
      return "register (elastic)";
    case E::kPublish:
      return "publish";
    case E::kExit:
      return "exit";
    case E::kReopen:
      return "reopen";
    case E::kRejoin:
      return "rejoin";
    case E::kExcuse:
      return "excuse";
    case E::kAdmit:
      return "admit";
    case E::kAdmitElastic:
      return "admit (elastic)";
    case E::kOutsideStart:
      return "outside start";
    case E::kOutsideExit:
      return "outside exit";
  }
  return "?";
}

absl::string_view StageName(Stage stage) {
  switch (stage) {
    case Stage::kGathering:
      return "before publication";
    case Stage::kPublished:
      return "after publication";
    case Stage::kAny:
      return "any";
  }
  return "?";
}

RegistrationModel::RegistrationModel(const ClusterSpecBrokerOptions& options)
    : registration_timeout_(options.registration_timeout),
      heartbeat_timeout_(options.heartbeat_timeout) {
  for (const auto& [name, count] : options.expected_tasks) {
    tasks_[name].resize(count > 0 ? count : 0);
    total_tasks_ += count > 0 ? count : 0;
  }
  auto each_task = [this](const std::vector<std::string>& names, auto&& f) {
    for (const std::string& name : names) {
      auto it = tasks_.find(name);
      if (it == tasks_.end()) continue;
      for (Task& t : it->second) f(t);
    }
  };
  each_task(options.elastic_job_types, [](Task& t) {
    t.elastic = true;
    t.phase = P::kStandby;  // never waited for
  });
  each_task(options.deferred_job_types, [](Task& t) { t.phase = P::kDeferred; });
  for (const std::string& name : options.outside_tasks) {
    size_t colon = name.rfind(':');
    int index = 0;
    if (colon == std::string::npos || !absl::SimpleAtoi(name.substr(colon + 1), &index)) {
      continue;  // ClusterSpecBroker::Start() refuses it
    }
    outside_[{name.substr(0, colon), index}].outside = true;
  }
  for (const auto& [name, tasks] : tasks_) {
    for (const Task& t : tasks) holding_back_ += HoldsBack(t.phase) ? 1 : 0;
  }
}

bool RegistrationModel::Move(Task& task, TaskEvent event) const {
  for (const Transition& t : kTransitions) {
    if (t.from != task.phase || t.event != event) continue;
    if (t.when == Stage::kAny || (t.when == Stage::kPublished) == published_) {
      if (!task.outside) {
        holding_back_ += (HoldsBack(t.to) ? 1 : 0) - (HoldsBack(task.phase) ? 1 : 0);
      }
      task.phase = t.to;
      return true;
    }
  }
  return false;
}

RegistrationModel::Task* RegistrationModel::Find(absl::string_view job, int index) {
  auto it = tasks_.find(job);
  if (it == tasks_.end() || index < 0 || index >= static_cast<int>(it->second.size())) {
    return nullptr;
  }
  return &it->second[index];
}

const RegistrationModel::Task* RegistrationModel::Find(absl::string_view job, int index) const {
  return const_cast<RegistrationModel*>(this)->Find(job, index);
}

RegistrationModel::Task* RegistrationModel::FindOutside(absl::string_view job, int index) {
  auto it = outside_.find({std::string(job), index});
  return it == outside_.end() ? nullptr : &it->second;
}

std::optional<absl::Status> RegistrationModel::Abort(const absl::Status& reason) {
  if (!aborted_.ok()) return std::nullopt;
  aborted_ = reason.ok() ? absl::AbortedError("the job is over") : reason;
  return absl::AbortedError(aborted_.message());
}

absl::Status RegistrationModel::Superseded(const Task& task, const std::string& address) const {
  if (address.empty() || (task.phase != P::kReopened && task.address == address)) {
    return absl::OkStatus();
  }
  return absl::FailedPreconditionError(
      task.phase == P::kReopened
          ? std::string("superseded: the ApplicationMaster relaunched this task")
          : absl::StrCat("superseded: the ApplicationMaster relaunched this task, now at ",
                         task.address));
}

Decision RegistrationModel::Register(absl::string_view job, int index, const std::string& address,
                                     absl::Time now) {
  Decision d;
  d.reply = Decision::Reply::kRefuse;
  Task* task = Find(job, index);
  if (task == nullptr) {
    d.status = absl::NotFoundError(absl::StrCat("the job has no task ", TaskName(job, index)));
  } else if (!aborted_.ok()) {
    d.status = absl::AbortedError(aborted_.message());
  } else if (stopping_) {
    d.status = absl::UnavailableError("the broker is stopping");
  } else {
    return published_ ? RegisterPublished(*task, job, index, address, now)
                      : RegisterGathering(*task, address, now);
  }
  return d;
}

// UNAVAILABLE, which executors retry within their registration's deadline: a new AM attempt
// admits a later round only once the roles it depends on are back, and the executors of that
// round, still running from the earlier attempt, register before (ALREADY_EXISTS made them give
// up at once and count the wait as the AM's silence, toward am_unreachable).
Decision RegistrationModel::NotAdmittedYet(const Task& task) const {
  Decision d;
  d.reply = Decision::Reply::kRefuse;
  d.status = absl::UnavailableError(
      absl::StrCat("the task is ", TaskPhaseName(task.phase),
                   ": its job type is not admitted yet (it waits for the roles it depends on); "
                   "register again"));
  return d;
}

Decision RegistrationModel::RegisterGathering(Task& task, const std::string& address,
                                              absl::Time now) {
  Decision d;
  if (task.phase == P::kDeferred) return NotAdmittedYet(task);
  // A relaunched task is news even back at its old address.
  d.news = task.phase != P::kParked || task.address != address;
  if (task.phase != P::kParked && !Move(task, task.elastic ? E::kRegisterElastic : E::kRegister)) {
    d.reply = Decision::Reply::kRefuse;
    d.news = false;
    d.status = absl::AlreadyExistsError(absl::StrCat("the task is ", TaskPhaseName(task.phase),
                                                     " and cannot register: the ApplicationMaster "
                                                     "excused it"));
    return d;
  }
  task.address = address;  // a registration again replaces the address
  task.last_seen = now;
  d.reply = Decision::Reply::kPark;
  Decision published = PublishIfComplete(now);
  published.reply = d.reply;
  published.news = d.news;
  return published;
}

Decision RegistrationModel::RegisterPublished(Task& task, absl::string_view job, int index,
                                              const std::string& address, absl::Time now) {
  Decision d;
  if (task.phase == P::kJoining || task.phase == P::kJoined) return Join(task, address, now);
  if (task.phase == P::kDeferred) return NotAdmittedYet(task);
  const TaskPhase before = task.phase;
  if (Move(task, task.elastic ? E::kRegisterElastic : E::kRegister)) {
    // Relaunched (or elastic, coming and going): welcome back, wherever it is.
    d.news = true;
    task.last_seen = now;
    d.reply = Decision::Reply::kNow;
    if (task.address != address) {
      task.address = address;
      if (!task.elastic && before == P::kReopened) {
        spec_ = NextSpec(/*without_exited=*/false);
        d.new_version = true;
        d.log = absl::StrCat(TaskName(job, index), " came back at ", address,
                             ": cluster spec version ", spec_.version, " published");
      }
    }
    return d;
  }
  const bool again = task.address == address;
  if ((task.phase == P::kRegistered && (again || task.elastic)) ||
      (task.phase == P::kExited && again)) {
    // The same executor asking again, or an elastic one that moved (it is in no spec).
    d.news = !again;
    task.address = address;
    task.last_seen = now;
    d.reply = Decision::Reply::kNow;
    return d;
  }
  d.reply = Decision::Reply::kRefuse;
  d.status = absl::AlreadyExistsError(
      task.phase == P::kRegistered || task.phase == P::kExited
          ? absl::StrCat(TaskName(job, index), " is registered as ", task.address,
                         " and the cluster spec is published; cannot re-register as ", address)
          : absl::StrCat(TaskName(job, index), " is ", TaskPhaseName(task.phase),
                         " and the cluster spec is published; cannot register as ", address));
  return d;
}

Decision RegistrationModel::Join(Task& task, const std::string& address, absl::Time now) {
  Decision d;
  d.news = task.phase == P::kJoining || task.address != address;
  Move(task, E::kRegister);  // kJoining -> kJoined; kJoined stays
  task.address = address;
  d.reply = Decision::Reply::kPark;
  for (const auto& [name, tasks] : tasks_) {
    for (const Task& t : tasks) {
      if (t.phase == P::kJoining) return d;  // the round waits for it
    }
  }
  // The next version: every job type with a task not yet exited (a finished preparation stage
  // is gone; indices within a job type stay as they were).
  spec_ = NextSpec(/*without_exited=*/true);
  for (auto& [name, tasks] : tasks_) {
    for (Task& t : tasks) {
      if (Move(t, E::kPublish)) t.last_seen = now;
    }
  }
  d.new_version = d.release = true;
  d.log = absl::StrCat("the admitted tasks registered: cluster spec version ", spec_.version,
                       " published");
  return d;
}

Decision RegistrationModel::PublishIfComplete(absl::Time now) {
  Decision d;
  if (holding_back_ > 0) return d;
  for (auto& [name, tasks] : tasks_) {
    std::vector<std::string> addresses;
    for (Task& t : tasks) {
      // Every parked task waited on its Register call until now: it was alive. Its heartbeats
      // are watched from the spec on, so the first registrant of a slow gang is not lost.
      if (Move(t, E::kPublish)) t.last_seen = now;
      if (!t.elastic && t.phase != P::kExcused && t.phase != P::kDeferred) {
        addresses.push_back(t.address);
      }
    }
    if (!addresses.empty()) spec_.jobs[name] = std::move(addresses);
  }
  published_ = true;
  d.new_version = d.release = true;
  d.log = absl::StrCat("all ", total_tasks_, " tasks registered: cluster spec published");
  return d;
}

ClusterSpec RegistrationModel::NextSpec(bool without_exited) const {
  ClusterSpec next;
  next.version = spec_.version + 1;
  for (const auto& [name, tasks] : tasks_) {
    bool live = false;
    std::vector<std::string> addresses;
    for (const Task& t : tasks) {
      live = live || (!t.elastic && t.phase != P::kDeferred && t.phase != P::kExcused &&
                      !(without_exited && t.phase == P::kExited));
      addresses.push_back(t.address);
    }
    if (live) next.jobs[name] = std::move(addresses);
  }
  return next;
}

Decision RegistrationModel::Observe() const {
  Decision d;
  d.reply = Decision::Reply::kRefuse;
  if (!aborted_.ok()) {
    d.status = absl::AbortedError(aborted_.message());
  } else if (stopping_) {
    d.status = absl::UnavailableError("the broker is stopping");
  } else {
    d.reply = published_ ? Decision::Reply::kNow : Decision::Reply::kPark;
  }
  return d;
}

Decision RegistrationModel::Excuse(absl::string_view job, int index, absl::Time now) {
  Task* task = Find(job, index);
  if (task == nullptr || published_ || !aborted_.ok() || !Move(*task, E::kExcuse)) return {};
  Decision d = PublishIfComplete(now);
  if (d.release)
    d.log = absl::StrCat("all tasks registered (", TaskName(job, index),
                         " excused): cluster spec published");
  return d;
}

void RegistrationModel::Admit(const std::vector<std::string>& job_names) {
  for (const std::string& name : job_names) {
    auto it = tasks_.find(name);
    if (it == tasks_.end()) continue;
    for (Task& t : it->second) Move(t, t.elastic ? E::kAdmitElastic : E::kAdmit);
  }
}

void RegistrationModel::Reopen(absl::string_view job, int index) {
  Task* task = Find(job, index);
  if (task == nullptr) return;
  task->preempt_container.clear();  // its next container is a new one
  Move(*task, E::kReopen);
}

void RegistrationModel::NoticePreemption(absl::string_view job, int index,
                                         absl::string_view container) {
  if (Task* task = Find(job, index)) task->preempt_container = std::string(container);
}

void RegistrationModel::Rejoin(absl::string_view job, int index) {
  Task* task = Find(job, index);
  if (task == nullptr) return;
  task->preempt_container.clear();
  Move(*task, published_ && !task->elastic ? E::kRejoin : E::kReopen);
}

absl::Status RegistrationModel::Heartbeat(absl::string_view job, int index,
                                          const std::string& address, absl::Time now,
                                          bool* told_over, std::string* preempt_container) {
  Task* outside = FindOutside(job, index);
  Task* task = outside != nullptr ? outside : Find(job, index);
  if (task == nullptr) {
    return absl::NotFoundError(absl::StrCat("the job has no task ", TaskName(job, index)));
  }
  if (absl::Status s = Superseded(*task, address); !s.ok()) return s;
  task->last_seen = now;
  if (preempt_container != nullptr) *preempt_container = task->preempt_container;
  if (outside != nullptr) {
    Move(*task, E::kOutsideStart);  // alive, even if its start report was lost
    return absl::OkStatus();
  }
  if (!aborted_.ok()) {
    // The AM tells whoever still reaches it: an executor whose NodeManager is gone would
    // otherwise run its task until its own AM-unreachable timeout after the AM exits.
    *told_over = true;
    return absl::FailedPreconditionError(
        absl::StrCat("the job is over (", aborted_.message(), ")"));
  }
  return absl::OkStatus();
}

absl::Status RegistrationModel::Started(absl::string_view job, int index, absl::Time now) {
  Task* outside = FindOutside(job, index);
  Task* task = outside != nullptr ? outside : Find(job, index);
  if (task == nullptr) {
    return absl::NotFoundError(absl::StrCat("the job has no task ", TaskName(job, index)));
  }
  task->last_seen = now;
  if (outside != nullptr) Move(*task, E::kOutsideStart);  // watched from now on
  return absl::OkStatus();
}

absl::Status RegistrationModel::Exit(absl::string_view job, int index, const std::string& address) {
  Task* outside = FindOutside(job, index);
  Task* task = outside != nullptr ? outside : Find(job, index);
  if (task == nullptr) {
    return absl::NotFoundError(absl::StrCat("the job has no task ", TaskName(job, index)));
  }
  // The AM gave up on a superseded executor already: its exit is no news.
  if (absl::Status s = Superseded(*task, address); !s.ok()) return s;
  Move(*task, outside != nullptr ? E::kOutsideExit : E::kExit);
  return absl::OkStatus();
}

TickDecision RegistrationModel::Tick(absl::Time now) {
  TickDecision d;
  if (!published_ && aborted_.ok() && now >= start_time_ + registration_timeout_) {
    d.missing = Unregistered();
    d.timeout =
        absl::StrCat("registration deadline of ", absl::FormatDuration(registration_timeout_),
                     " passed; never registered: ", absl::StrJoin(d.missing, ", "));
    aborted_ = absl::DeadlineExceededError(*d.timeout);
  }
  if (heartbeat_timeout_ != absl::InfiniteDuration() && aborted_.ok())
    CheckHeartbeats(now, &d.lost);
  return d;
}

void RegistrationModel::CheckHeartbeats(absl::Time now,
                                        std::vector<std::pair<std::string, int>>* lost) {
  // Only REGISTERED tasks are watched: a parked one waits on its Register call, not
  // heartbeating (a dead one is YARN's news: its container completes).
  auto check = [&](Task& t, const std::string& name, int index) {
    if (t.phase == P::kRegistered && now - t.last_seen > heartbeat_timeout_) {
      lost->emplace_back(name, index);
      t.last_seen = now;  // report once per timeout period
    }
  };
  for (auto& [name, tasks] : tasks_) {
    for (size_t i = 0; i < tasks.size(); ++i) check(tasks[i], name, static_cast<int>(i));
  }
  for (auto& [key, t] : outside_) check(t, key.first, key.second);
}

absl::Time RegistrationModel::NextDeadline() const {
  if (published_ || !aborted_.ok()) return absl::InfiniteFuture();
  return start_time_ + registration_timeout_;
}

bool RegistrationModel::IsRegistered(absl::string_view job, int index) const {
  const Task* t = Find(job, index);
  return t != nullptr && (t->phase == P::kParked || t->phase == P::kRegistered ||
                          t->phase == P::kJoined || t->phase == P::kExited);
}

std::vector<std::string> RegistrationModel::Unregistered() const {
  std::vector<std::string> out;
  for (const auto& [name, tasks] : tasks_) {
    for (size_t i = 0; i < tasks.size(); ++i) {
      if (HoldsBack(tasks[i].phase) || tasks[i].phase == P::kJoining) {
        out.push_back(TaskName(name, static_cast<int>(i)));
      }
    }
  }
  return out;
}

std::map<std::string, Progress> RegistrationModel::progress() const {
  std::map<std::string, Progress> out;
  for (const auto& [name, tasks] : tasks_) {
    Progress& p = out[name];
    p.total = static_cast<int>(tasks.size());
    for (size_t i = 0; i < tasks.size(); ++i) {
      p.registered += IsRegistered(name, static_cast<int>(i));
      p.exited += tasks[i].phase == P::kExited;
    }
  }
  return out;
}

std::optional<TaskPhase> RegistrationModel::phase(absl::string_view job, int index) const {
  const Task* t = Find(job, index);
  if (t == nullptr) {
    auto it = outside_.find({std::string(job), index});
    if (it == outside_.end()) return std::nullopt;
    return it->second.phase;
  }
  return t->phase;
}

}  // namespace tony::broker
