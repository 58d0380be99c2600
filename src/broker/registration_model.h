// Copyright libtony authors.
//
// RegistrationModel: the broker's registration protocol as a model with no threads, no clock and
// no gRPC. Calls and the time go in (Register, Heartbeat, Exit, Reopen, Tick, ...); decisions
// come out ("reply now", "park", "refuse with ...", "publish the next version", "these tasks are
// lost"). ClusterSpecBroker's gRPC shell owns the lock, the clock, the parked calls and the
// encoded spec, and carries the decisions out; tests feed tables of calls and times.
//
// Each task is in exactly one phase (TaskPhase). Every change of phase goes through one table
// (Transitions(), and docs/broker-state-machine.md, which a test compares with it); an event
// the table has no row for leaves the phase as it is.
//
// Thread-compatible: the shell serialises every call.

#ifndef TONY_BROKER_REGISTRATION_MODEL_H_
#define TONY_BROKER_REGISTRATION_MODEL_H_

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "tony/cluster_spec.h"
#include "tony/cluster_spec_broker.h"

namespace tony::broker {

// Where one task's registration is.
enum class TaskPhase {
  kDeferred,    // of a deferred job type not admitted yet: expected by nobody
  kExpected,    // expected; its executor has not registered
  kParked,      // registered before the first publication; its call waits for the spec
  kRegistered,  // registered and has the spec (an outside task: reported its start)
  kExited,      // its command exited
  kExcused,     // will never register; no part of the spec
  kStandby,     // of an admitted elastic role, no executor registered: holds nothing back
  kReopened,    // relaunched by the ApplicationMaster; its new executor has not registered
  kJoining,     // admitted or rejoined after publication; its executor has not registered
  kJoined,      // joining and registered: waits until every joining task has registered
};

// What moves a task.
enum class TaskEvent {
  kRegister,         // its executor registers (a task of a role that is not elastic)
  kRegisterElastic,  // its executor registers (a task of an elastic role)
  kPublish,          // the spec (or its next version) goes out to the waiting tasks
  kExit,             // its executor reports the command's exit
  kReopen,           // ReopenTask (and Rejoin of an elastic task or before publication)
  kRejoin,           // Rejoin after publication
  kExcuse,           // Excuse
  kAdmit,            // Admit of its deferred role
  kAdmitElastic,     // Admit of its deferred elastic role
  kOutsideStart,     // a task outside the cluster reports its start (or a heartbeat)
  kOutsideExit,      // a task outside the cluster reports its exit
};

// When a row applies: before the first publication, after it, or either.
enum class Stage { kGathering, kPublished, kAny };

struct Transition {
  TaskPhase from;
  TaskEvent event;
  Stage when;
  TaskPhase to;
};

// The one table of allowed phase changes.
absl::Span<const Transition> Transitions();
// The names docs/broker-state-machine.md uses: "EXPECTED", "register", "before publication".
absl::string_view TaskPhaseName(TaskPhase phase);
absl::string_view TaskEventName(TaskEvent event);
absl::string_view StageName(Stage stage);

// What the shell does with a call.
struct Decision {
  enum class Reply { kNone, kNow, kPark, kRefuse };
  Reply reply = Reply::kNone;
  absl::Status status;       // kRefuse: the answer
  bool news = false;         // the observer hears of the registration (OnRegistered)
  bool new_version = false;  // the current spec changed (spec()): encode it again
  // The current spec goes to every parked registration and to the observer
  // (OnClusterSpecPublished).
  bool release = false;
  std::string log;  // a line to log (INFO), once no lock is held; empty: none
};

// What the timer does at a time.
struct TickDecision {
  // The registration deadline passed: the job is aborted with this message (fail the parked
  // calls with ABORTED) and the observer hears which tasks never registered.
  std::optional<std::string> timeout;
  std::vector<std::string> missing;
  // Tasks silent for the heartbeat timeout, reported once per timeout period.
  std::vector<std::pair<std::string, int>> lost;
};

// Per job type, as the broker's own status counts them.
struct Progress {
  int total = 0;
  int registered = 0;
  int exited = 0;
};

class RegistrationModel {
 public:
  explicit RegistrationModel(const ClusterSpecBrokerOptions& options);

  int total_tasks() const { return total_tasks_; }
  // Serving from `now`: the registration deadline counts from then.
  void Start(absl::Time now) { start_time_ = now; }
  // The broker stops: later calls are refused UNAVAILABLE.
  void Stop() { stopping_ = true; }
  // The job is over: parked and later registrations fail with the returned ABORTED status
  // (nullopt: aborted before, the first reason stays).
  std::optional<absl::Status> Abort(const absl::Status& reason);
  const absl::Status& aborted() const { return aborted_; }
  bool published() const { return published_; }
  const ClusterSpec& spec() const { return spec_; }

  Decision Register(absl::string_view job, int index, const std::string& address, absl::Time now);
  // A registration with `observe`: waits for the spec without being a task.
  Decision Observe() const;
  Decision Excuse(absl::string_view job, int index, absl::Time now);
  void Admit(const std::vector<std::string>& job_names);
  void Reopen(absl::string_view job, int index);
  void Rejoin(absl::string_view job, int index);
  // The task's container is about to be preempted: its heartbeats say so until it is reopened
  // (or rejoins).
  void NoticePreemption(absl::string_view job, int index, absl::string_view container);
  // A heartbeat (a task of the cluster or outside it); `told_over`: the answer tells the
  // executor that the job is over. `preempt_container` (optional): the container a preemption
  // notice names for the task, empty without one.
  absl::Status Heartbeat(absl::string_view job, int index, const std::string& address,
                         absl::Time now, bool* told_over, std::string* preempt_container = nullptr);
  absl::Status Started(absl::string_view job, int index, absl::Time now);
  // FAILED_PRECONDITION when a relaunch superseded the executor at `address`: no news then.
  absl::Status Exit(absl::string_view job, int index, const std::string& address);
  TickDecision Tick(absl::Time now);
  // When Tick next has something to do but for heartbeats (which the shell ticks).
  absl::Time NextDeadline() const;

  bool IsRegistered(absl::string_view job, int index) const;
  // The tasks the broker waits for, as "job:index", job types in name order.
  std::vector<std::string> Unregistered() const;
  std::map<std::string, Progress> progress() const;
  std::optional<TaskPhase> phase(absl::string_view job, int index) const;

 private:
  struct Task {
    TaskPhase phase = TaskPhase::kExpected;
    bool elastic = false;
    bool outside = false;  // in outside_: never holds the publication back
    std::string address;
    absl::Time last_seen;
    std::string preempt_container;  // NoticePreemption, until Reopen or Rejoin
  };
  using TaskMap = std::map<std::string, std::vector<Task>, std::less<>>;

  Task* Find(absl::string_view job, int index);
  const Task* Find(absl::string_view job, int index) const;
  Task* FindOutside(absl::string_view job, int index);
  // Moves `task` by the table; false (phase kept) when the table has no row.
  bool Move(Task& task, TaskEvent event) const;
  absl::Status Superseded(const Task& task, const std::string& address) const;
  Decision RegisterGathering(Task& task, const std::string& address, absl::Time now);
  // The refusal of a task whose job type is not admitted yet: UNAVAILABLE, to be retried.
  Decision NotAdmittedYet(const Task& task) const;
  Decision RegisterPublished(Task& task, absl::string_view job, int index,
                             const std::string& address, absl::Time now);
  Decision Join(Task& task, const std::string& address, absl::Time now);
  // The first publication, once no task holds it back.
  Decision PublishIfComplete(absl::Time now);
  // The spec's next version: job types with a live task, with `without_exited` not counting
  // exited tasks as live.
  ClusterSpec NextSpec(bool without_exited) const;
  void CheckHeartbeats(absl::Time now, std::vector<std::pair<std::string, int>>* lost);

  const absl::Duration registration_timeout_;
  const absl::Duration heartbeat_timeout_;
  int total_tasks_ = 0;
  TaskMap tasks_;
  // How many of tasks_ are in a phase that holds the first publication back, kept by Move():
  // the check at every registration was a pass over every task (quadratic in all).
  mutable int holding_back_ = 0;
  std::map<std::pair<std::string, int>, Task> outside_;  // outside_tasks, by (job, index)
  absl::Time start_time_ = absl::InfinitePast();
  bool published_ = false;
  bool stopping_ = false;
  absl::Status aborted_;
  ClusterSpec spec_;
};

}  // namespace tony::broker

#endif  // TONY_BROKER_REGISTRATION_MODEL_H_
