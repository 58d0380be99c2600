// Copyright libtony authors.
//
// JobState's role dependencies (depends_on, docs/job-spec.md "Dependencies"): which round each
// role starts in, when a blocked role is asked for, and when waiting fails the job.
//
// A role that needs another role registered starts in that role's round (the broker publishes
// one spec for both); one that needs another running or finished cannot be in its spec (the
// other's tasks start only once the spec is out), so it starts a round later. The broker
// expects round 0 at its start and each later round once it is admitted.

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "am/job_state.h"

namespace tony::am {

std::map<std::string, int> DependencyRounds(const JobSpec& spec) {
  std::map<std::string, int> round;
  for (const JobTypeSpec& jt : spec.job_types) round[jt.name] = 0;
  // Validation rules out cycles: one pass per role settles every round.
  for (size_t pass = 0; pass < spec.job_types.size(); ++pass) {
    for (const JobTypeSpec& jt : spec.job_types) {
      int r = 0;
      for (const RoleDependency& d : jt.depends_on) {
        const int after = d.when == DependencyCondition::kRegistered ? 0 : 1;
        r = std::max(r, round[d.role] + after);
      }
      round[jt.name] = r;
    }
  }
  return round;
}

std::vector<std::string> LaterRoundRoles(const JobSpec& spec) {
  std::vector<std::string> out;
  for (const auto& [role, round] : DependencyRounds(spec)) {
    if (round > 0) out.push_back(role);
  }
  return out;
}

bool JobState::Task::Reached(DependencyCondition when) const {
  if (phase == TaskPhase::kEnded && exit_code == 0) return true;
  switch (when) {
    case DependencyCondition::kRegistered:
      return registered;
    case DependencyCondition::kRunning:
      return started && !finished();
    case DependencyCondition::kFinished:
      return false;
  }
  return false;
}

bool JobState::RoleReached(const std::string& role, DependencyCondition when) const {
  bool any = false;
  for (const auto& [id, t] : tasks_) {
    if (t.spec.job_name != role) continue;
    if (!t.Reached(when)) return false;
    any = true;
  }
  return any;
}

// Whether `jt`'s dependencies that decide its round hold (and with `registered_too`, those
// that only order its container requests as well).
bool JobState::RoleReady(const JobTypeSpec& jt, bool registered_too) const {
  for (const RoleDependency& d : jt.depends_on) {
    if (d.when == DependencyCondition::kRegistered && !registered_too) continue;
    if (!RoleReached(d.role, d.when)) return false;
  }
  return true;
}

void JobState::AskForRole(const std::string& role, absl::Time now, JobActions* out) {
  const bool later_round = round_[role] > 0;
  for (const auto& [id, task] : order_) {
    Task& t = *task;
    if (t.spec.job_name != role || t.phase != TaskPhase::kBlocked) continue;
    MoveTo(t, TaskPhase::kWaiting, out);
    t.container_ended = false;
    // The broker's own registration deadline covers round 0 only; elastic tasks have none.
    if (later_round && ElasticOf(t.spec) == nullptr) {
      t.register_by = now + options_.spec.timeouts.registration;
      t.asked_again = "joined later (depends_on)";
      Watch(t);
    }
    out->requests.push_back(t.spec);
  }
  asked_at_.emplace(role, now);
  if (const JobTypeSpec* jt = options_.spec.FindJobType(role); jt != nullptr && jt->elastic) {
    elastic_start_by_ = now + options_.spec.timeouts.registration;
  }
  TONY_DEFER_LOG(out->log, INFO) << "its dependencies hold: asking for " << role;
  out->records.push_back({"role_dependencies_met", "", {{"role", role}, {"round", round_[role]}}});
}

void JobState::CheckDependencies(absl::Time now, JobActions* out) {
  if (outcome_ || !started_ || suspension_ != Suspension::kNone) return;
  // The next round starts once each of its roles may (registered-only waits come below).
  const int last_round =
      round_.empty()
          ? 0
          : std::max_element(round_.begin(), round_.end(), [](const auto& a, const auto& b) {
              return a.second < b.second;
            })->second;
  while (admitted_round_ < last_round) {
    const int next = admitted_round_ + 1;
    bool ready = true;
    std::vector<std::string> roles;
    for (const JobTypeSpec& jt : options_.spec.job_types) {
      if (round_[jt.name] != next) continue;
      roles.push_back(jt.name);
      ready = ready && RoleReady(jt, /*registered_too=*/false);
    }
    if (!ready) break;
    admitted_round_ = next;
    for (std::string& role : roles) out->admit.push_back(std::move(role));
  }
  for (const JobTypeSpec& jt : options_.spec.job_types) {
    if (round_[jt.name] > admitted_round_ || asked_at_.count(jt.name) > 0) continue;
    if (RoleReady(jt, /*registered_too=*/true)) AskForRole(jt.name, now, out);
  }
  for (const auto& [deadline, message] : DependencyDeadlines()) {
    if (now >= deadline) {
      Finish(AppState::kFailed, message, out);
      return;
    }
  }
}

// For each role not yet asked for, its first unmet dependency whose role was asked for: the
// time it fails the job, and the message.
std::vector<std::pair<absl::Time, std::string>> JobState::DependencyDeadlines() const {
  std::vector<std::pair<absl::Time, std::string>> out;
  for (const JobTypeSpec& jt : options_.spec.job_types) {
    if (asked_at_.count(jt.name) > 0) continue;
    for (const RoleDependency& d : jt.depends_on) {
      auto asked = asked_at_.find(d.role);
      if (asked == asked_at_.end() || RoleReached(d.role, d.when)) continue;
      int total = 0;
      int missing = 0;
      for (const auto& [id, t] : tasks_) {
        if (t.spec.job_name != d.role) continue;
        ++total;
        missing += !t.Reached(d.when);
      }
      out.emplace_back(
          asked->second + d.timeout,
          absl::StrCat(jt.name, " waited longer than ", absl::FormatDuration(d.timeout), " for ",
                       d.role, " to be ", DependencyConditionName(d.when), " (jobs.", jt.name,
                       ".depends_on); ", missing, " of ", total, " ", d.role, " tasks are not"));
      break;
    }
  }
  return out;
}

std::string JobState::WaitingNote() const {
  std::vector<std::string> waits;
  for (const JobTypeSpec& jt : options_.spec.job_types) {
    if (asked_at_.count(jt.name) > 0 || jt.depends_on.empty()) continue;
    std::vector<std::string> deps;
    for (const RoleDependency& d : jt.depends_on) {
      if (!RoleReached(d.role, d.when)) {
        deps.push_back(absl::StrCat(d.role, " to be ", DependencyConditionName(d.when)));
      }
    }
    if (!deps.empty()) {
      waits.push_back(absl::StrCat(jt.name, " waits for ", absl::StrJoin(deps, " and ")));
    }
  }
  return waits.empty() ? "" : absl::StrCat("; ", absl::StrJoin(waits, "; "));
}

const ElasticRange* JobState::ElasticOf(const TaskSpec& spec) const {
  const JobTypeSpec* jt = options_.spec.FindJobType(spec.job_name);
  return jt != nullptr && jt->elastic ? &*jt->elastic : nullptr;
}

void JobState::CheckElasticStart(absl::Time now, JobActions* out) {
  if (!elastic_start_by_ || outcome_) return;
  for (const JobTypeSpec& jt : options_.spec.job_types) {
    if (!jt.elastic) continue;
    int registered = 0;
    for (const auto& [id, t] : tasks_) {
      registered += t.spec.job_name == jt.name && (t.registered || t.finished());
    }
    if (registered >= jt.elastic->min) {
      elastic_start_by_.reset();  // training runs: from now on tasks may come and go
    } else if (now >= *elastic_start_by_) {
      Finish(AppState::kFailed,
             absl::StrCat("only ", registered, " of at least ", jt.elastic->min, " ", jt.name,
                          " tasks (elastic ", jt.elastic->min, "-", jt.elastic->max,
                          ") registered within ",
                          absl::FormatDuration(options_.spec.timeouts.registration)),
             out);
    }
  }
}

bool JobState::ElasticDone(const Task& t) const {
  // A running agent finishes with the others; one not running (waiting for a container,
  // registering, or failed and waiting for its relaunch) would only join a finished rendezvous.
  if (ElasticOf(t.spec) == nullptr || t.phase == TaskPhase::kRunning ||
      t.phase == TaskPhase::kExitHeld) {
    return false;
  }
  for (const auto& [id, other] : tasks_) {
    if (other.spec.job_name == t.spec.job_name && other.phase == TaskPhase::kEnded &&
        other.exit_code == 0) {
      return true;
    }
  }
  return false;
}

absl::Status JobState::CheckScaleRequest(const std::string& role, int tasks) const {
  const JobTypeSpec* jt = options_.spec.FindJobType(role);
  if (jt == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat("the job has no role '", role, "'"));
  }
  if (!jt->elastic) {
    return absl::FailedPreconditionError(
        absl::StrCat(role, " is not elastic: its ", jt->instances,
                     " tasks are all needed (--elastic makes a PyTorch role elastic)"));
  }
  if (tasks < jt->elastic->min || tasks > jt->elastic->max) {
    return absl::InvalidArgumentError(absl::StrCat(role, " may have ", jt->elastic->min, " to ",
                                                   jt->elastic->max, " tasks, not ", tasks));
  }
  if (outcome_) return absl::FailedPreconditionError("the job is over");
  if (suspension_ != Suspension::kNone) {
    return absl::FailedPreconditionError("the job is suspended: resume it first");
  }
  return absl::OkStatus();
}

bool JobState::RoleBlocked(const std::string& role) const {
  for (const auto& [id, t] : tasks_) {
    if (t.spec.job_name == role && t.phase == TaskPhase::kBlocked) return true;
  }
  return false;
}

void JobState::CheckScale(JobActions* out) {
  // Applied on resume; nothing to do for a job never scaled.
  if (outcome_ || suspension_ != Suspension::kNone || scale_target_.empty()) return;
  for (const auto& [id, task] : order_) {
    Task& t = *task;
    auto target = scale_target_.find(t.spec.job_name);
    if (target == scale_target_.end()) continue;
    if (t.spec.index >= target->second && !t.scaled_down) {
      t.scaled_down = true;
      Touch(t);
      if (t.phase == TaskPhase::kStopping || t.phase == TaskPhase::kStopped ||
          t.phase == TaskPhase::kEnded) {
        continue;
      }
      StopQuietly(t, id, out);
      TONY_DEFER_LOG(out->log, INFO) << "scaled down: stopping " << id.ToString();
    } else if (t.spec.index < target->second && t.scaled_down && t.phase == TaskPhase::kStopped &&
               t.container_ended) {
      if (RoleBlocked(t.spec.job_name)) {
        // Its role is not asked for yet (the broker refuses its tasks until it is admitted): it
        // waits with the others, and AskForRole asks for it.
        Renew(t, TaskPhase::kBlocked, out);
        t.container_ended = true;
        t.scaled_down = false;
        continue;
      }
      Renew(t, TaskPhase::kWaiting, out);
      t.scaled_down = false;
      out->reopen.push_back(id);
      out->requests.push_back(t.spec);
      TONY_DEFER_LOG(out->log, INFO) << "scaled up: asking for " << id.ToString();
    }
  }
}

}  // namespace tony::am
