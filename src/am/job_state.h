// Copyright libtony authors.
//
// JobState: the life of one job, as a model with no threads and no clock. Events and the time
// go in (On, Tick); what to do comes out (JobActions): containers to ask for, relaunch or kill,
// the broker's tasks to reopen or excuse, the outcome once decided, log lines. The driver
// (ApplicationMaster) owns the threads, the clock, the broker and the backend and carries the
// actions out; tests feed tables of events and times and compare the actions.
//
// Each task is in exactly one phase (TaskPhase), changed only through the table of task_phase.h;
// the transitions and their causes are in docs/am-state-machine.md.
// The rules (docs/executor.md, "Life cycle"):
//   - Tracked tasks decide: the job SUCCEEDS when every tracked task has exited 0 and FAILS as
//     soon as one fails for good. Untracked ones (ps, evaluator) fail it if they die non-zero
//     before that; the TensorBoard sidecar never does (a warning).
//   - A task ending before it registers, the registration deadline, a silent task, a container
//     that cannot be launched, the backend's failure and the job timeout FAIL it; a kill ends it
//     KILLED.
//   - Restart policies (restart_policy.h) turn a failure into a relaunch of the task or a new
//     attempt; all-or-nothing allocation (gang_schedule.h) releases a partial gang and asks again.
//   - A role with depends_on is asked for once its dependencies hold (registered, running,
//     finished); waiting past a dependency's timeout FAILS the job. Roles that need another
//     role running or finished form a later round the broker publishes separately.
//   - Once the tracked tasks are done, untracked roles with a linger may run on for it; the job
//     SUCCEEDS once they ended (one failing fails it) or were stopped at its end.
//   - Suspending stops every task that has not finished, without failure, and releases its
//     container; resuming asks for them again as one gang (the broker publishes the spec's next
//     version once all registered). Deadlines (job timeout, dependencies) do not run meanwhile.
//   - Bad nodes (node_exclusion.h): a node where tasks failed max_node_failures times, or that
//     YARN reports unhealthy or lost, is excluded from the job's later requests; the spec's
//     exclude_nodes and earlier attempts' exclusions from the start. Excluding every node the
//     cluster runs FAILS the job, naming them.
//   - YARN's preemption notice for a task's container is passed to its executor; with a
//     preemption grace (JobSpec::preemption_grace), the AM stops the task once it is over,
//     unless the task ended or YARN took the container first, and its end is the preemption's.
//   - Once decided, every task still running is stopped; the job is over when every container
//     has ended, or the stop deadline has passed, and every executor that may outlive its
//     container (a lost node) heard that it is over, or orphan_notice has passed. When the
//     backend ends every container itself (YARN ended the attempt), nothing is stopped.
//
// Thread-compatible: the driver serialises every call.

#ifndef TONY_AM_JOB_STATE_H_
#define TONY_AM_JOB_STATE_H_

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/time/time.h"
#include "am/gang_schedule.h"
#include "am/job_diagnostics.h"
#include "am/job_record.h"
#include "am/node_exclusion.h"
#include "am/task_id.h"
#include "am/task_phase.h"
#include "common/logging.h"
#include "tony/job_spec.h"
#include "tony/submitter.h"

namespace tony::am {

struct JobEvent {
  enum class Kind {
    // From the backend (the ResourceManager).
    kAllocated,
    kLaunchFailed,   // text: why
    kCompleted,      // code: the container's exit status; text: the backend's diagnostics
    kBackendFailed,  // text: why
    kBackendGone,    // text: why; the backend ended every container itself (YARN ended the
                     // AM's attempt) and reports nothing more
    // From the broker (the executors).
    kRegistered,  // text: host:port
    kPublished,   // every task registered; the cluster spec is out
    kStarted,
    kRestarted,            // in place, by its executor; code, text: the exit and stderr tail
    kExited,               // code, text: exit code and stderr tail
    kRegistrationTimeout,  // missing: the tasks that never registered
    kHeartbeatTimeout,
    kToldJobOver,  // after the outcome, the task's executor heard that the job is over
    // From the AM.
    kKill,                  // text: the reason
    kTensorBoardListening,  // text: its URL
    kScale,                 // task.job: an elastic role; code: its new number of tasks
    kSuspend,
    kResume,
    // From the backend, about the cluster's nodes.
    kNodeState,     // node: "host:port"; text: YARN's node state ("UNHEALTHY", "LOST", ...)
    kClusterNodes,  // code: the number of running nodes, as the ResourceManager counts them
    // The scheduler is about to preempt `container` (task: its task, or empty when the backend
    // does not know it); text: "strict" or "contract". May repeat.
    kPreemptNotice,
  };
  Kind kind = Kind::kKill;
  TaskId task;
  int code = 0;
  int restart = 0;  // kRestarted: which one
  std::string text;
  std::vector<std::string> missing;
  std::string container;  // kAllocated, kCompleted: its container, where known
  std::string node;       // kAllocated: its node ("host:port"), where known
  std::string node_http;  // kAllocated: its node's web address, where known (the event log's)

  static JobEvent Allocated(TaskId t, std::string container = "", std::string node = "",
                            std::string node_http = "") {
    JobEvent e{Kind::kAllocated, std::move(t)};
    e.container = std::move(container);
    e.node = std::move(node);
    e.node_http = std::move(node_http);
    return e;
  }
  static JobEvent LaunchFailed(TaskId t, std::string why) {
    return {Kind::kLaunchFailed, std::move(t), 0, 0, std::move(why)};
  }
  static JobEvent Completed(TaskId t, int status, std::string diagnostics = "") {
    return {Kind::kCompleted, std::move(t), status, 0, std::move(diagnostics)};
  }
  static JobEvent BackendFailed(std::string why) {
    return {Kind::kBackendFailed, {}, 0, 0, std::move(why)};
  }
  static JobEvent BackendGone(std::string why) {
    return {Kind::kBackendGone, {}, 0, 0, std::move(why)};
  }
  static JobEvent ToldJobOver(TaskId t) { return {Kind::kToldJobOver, std::move(t)}; }
  static JobEvent Registered(TaskId t, std::string address) {
    return {Kind::kRegistered, std::move(t), 0, 0, std::move(address)};
  }
  static JobEvent Published() { return {Kind::kPublished}; }
  static JobEvent Started(TaskId t) { return {Kind::kStarted, std::move(t)}; }
  static JobEvent Restarted(TaskId t, int restart, int code, std::string tail) {
    return {Kind::kRestarted, std::move(t), code, restart, std::move(tail)};
  }
  static JobEvent Exited(TaskId t, int code, std::string tail = "") {
    return {Kind::kExited, std::move(t), code, 0, std::move(tail)};
  }
  static JobEvent RegistrationTimeout(std::vector<std::string> missing) {
    JobEvent e{Kind::kRegistrationTimeout};
    e.missing = std::move(missing);
    return e;
  }
  static JobEvent HeartbeatTimeout(TaskId t) { return {Kind::kHeartbeatTimeout, std::move(t)}; }
  static JobEvent Kill(std::string reason) { return {Kind::kKill, {}, 0, 0, std::move(reason)}; }
  static JobEvent Scale(std::string role, int tasks) {
    return {Kind::kScale, TaskId{std::move(role), 0}, tasks};
  }
  static JobEvent NodeState(std::string node, std::string state) {
    JobEvent e{Kind::kNodeState, {}, 0, 0, std::move(state)};
    e.node = std::move(node);
    return e;
  }
  static JobEvent ClusterNodes(int running) { return {Kind::kClusterNodes, {}, running}; }
  static JobEvent PreemptNotice(TaskId t, std::string container, std::string contract) {
    JobEvent e{Kind::kPreemptNotice, std::move(t), 0, 0, std::move(contract)};
    e.container = std::move(container);
    return e;
  }
  static JobEvent Suspend() { return {Kind::kSuspend}; }
  static JobEvent Resume() { return {Kind::kResume}; }
  static JobEvent TensorBoardListening(std::string url) {
    return {Kind::kTensorBoardListening, {}, 0, 0, std::move(url)};
  }
};

struct JobActions {
  struct Relaunch {
    TaskSpec spec;
    std::string host;  // preferably there ("" anywhere)
    int port = 0;      // its executor reserves this port again (0 any)
  };
  std::vector<TaskId> reopen;        // the broker forgets their registration (first)
  std::vector<TaskSpec> requests;    // ask for a container
  std::vector<Relaunch> relaunches;  // ask for a container again (restart policy)
  std::vector<std::pair<TaskId, absl::Duration>> kills;  // stop, SIGKILL after the grace
  std::vector<TaskId> excuses;  // the broker stops waiting for them (dead sidecars)
  // The scheduler is about to preempt their containers (the second: its id): their executors
  // are told (the broker's heartbeat answers), which signal the task and write its notice file.
  std::vector<std::pair<TaskId, std::string>> preempt_notices;
  // Hosts the job's later containers avoid (YARN's blacklist); before this step's requests.
  std::vector<std::string> exclude_nodes;
  // Hosts excluded before that may be used again (removed from YARN's blacklist).
  std::vector<std::string> include_nodes;
  // Resumed: the broker expects them afresh, as one gang (ClusterSpecBroker::Rejoin), before
  // their containers are asked for.
  std::vector<TaskId> rejoin;
  // Roles that join the cluster spec later (depends_on running/finished) and are now asked
  // for: the broker expects them and publishes the spec's next version once they registered.
  std::vector<std::string> admit;
  // The outcome, decided by this step: the broker aborts with `diagnostics`, the backend hears.
  std::optional<AppState> outcome;
  // TensorBoard registered at this address: probe it until it listens.
  std::string probe_tensorboard;
  // The tracking URL should change: to TensorBoard's URL, or (empty) back to the AM's own.
  std::optional<std::string> tensorboard_url;
  // True once the job is over: every container ended, or the stop deadline passed.
  bool done = false;
  DeferredLog log;  // emitted by the driver with no lock held
  // The event log's entries for the decisions of this step (why a task restarts, a gang
  // release, the outcome); the driver adds those of the events and actions (RecordOf,
  // ActionRecords).
  std::vector<JobRecord> records;

  void Append(JobActions&& other);
};

// The event log's entry for an event the AM core took in, and those for the actions it asked
// for (containers, relaunches, stops): docs/events.md.
std::optional<JobRecord> RecordOf(const JobEvent& e);
std::vector<JobRecord> ActionRecords(const JobActions& a);

// Each role's round (depends_on): 0 unless it needs a role running or finished, then one more
// than that role's; a registered dependency keeps the round of the role it waits for.
std::map<std::string, int> DependencyRounds(const JobSpec& spec);
// The roles of round 1 and later: the broker's deferred job types.
std::vector<std::string> LaterRoundRoles(const JobSpec& spec);

struct JobStateOptions {
  JobSpec spec;  // valid
  // YARN's attempt of this AM, 1 for the first: restarts of scope job count those before it.
  // Default: 1.
  int attempt = 1;
  // For the messages: a registered task silent this long fails the job. Default: 1 minute.
  absl::Duration heartbeat_timeout = absl::Minutes(1);
  // Extra time, beyond the job's stop grace, that stopped tasks get before the job is over
  // without them. Default: 10 seconds.
  absl::Duration stop_margin = absl::Seconds(10);
  // After the outcome, how long the job stays up for the executors that may outlive their
  // containers (their node was lost, or the backend ended them without a word) to hear from
  // their next heartbeat that the job is over; at least the executors' heartbeat interval
  // (TONY_HEARTBEAT_INTERVAL). Default: 7 seconds (that interval's default, 5 s, and a margin).
  absl::Duration orphan_notice = absl::Seconds(7);
  // How long an unexplained SIGTERM/SIGKILL end waits for its container's completion.
  // Default: 5 seconds.
  absl::Duration exit_cause_wait = absl::Seconds(5);
  // The longest backoff between a task's relaunches. Default: 5 minutes.
  absl::Duration max_backoff = absl::Minutes(5);
  // All-or-nothing allocation's first backoff. Default: 5 seconds.
  absl::Duration allocation_backoff = absl::Seconds(5);
  // The gang backoff's random factor, in [0.5, 1.5). Default: null (uniformly random).
  std::function<double()> jitter;
  // What the scheduler last said the job could still get ("<4096 MB, 3 vcores>"), for the
  // pending tasks' line. Default: null (unknown).
  std::function<std::string()> headroom;
  // Elastic roles' numbers of tasks an earlier attempt was scaled to (ytf scale): tasks beyond
  // are never asked for until a scale up. Entries for other roles, or out of a role's range,
  // are ignored. Default: none (every role at its full size).
  std::map<std::string, int> scale_targets;
  // Hosts earlier attempts excluded (NodeExclusion), excluded again from the start with the
  // spec's exclude_nodes. Default: none.
  std::vector<std::string> excluded_nodes;
  // For tests: every Status() and Tick() also recounts every task and checks the running
  // counts, the pending set and the set of tasks with deadlines against it, aborting on a
  // difference (O(tasks) per call, as before they were kept). Default: false.
  bool verify_counts = false;
};

class JobState {
 public:
  explicit JobState(JobStateOptions options);
  JobState(const JobState&) = delete;  // order_ points into tasks_
  JobState& operator=(const JobState&) = delete;

  // The backend runs: every task is asked for; the job timeout runs from `now`.
  JobActions Start(absl::Time now);
  // Handle(event, now), then Tick(now).
  JobActions On(const JobEvent& event, absl::Time now);
  // What `event` leads to, without Tick(): a caller with several events at the same `now` (the
  // AM's queue) handles each and then calls Tick(now) once, so that a step costs one pass over
  // the tasks however many events it has (a Tick per event made a launch quadratic).
  JobActions Handle(const JobEvent& event, absl::Time now);
  // Whatever is due by `now`: deadlines, backoffs, held exits.
  JobActions Tick(absl::Time now);
  // When Tick() next has something to do (InfiniteFuture when only events can move the job).
  absl::Time NextWake() const;

  // The status, without what the driver knows (id, tracking URL, log directory).
  ApplicationStatus Status(absl::Time now) const;
  // One line per task for the status page: "worker:0  host:port  RUNNING".
  std::vector<std::string> TaskLines() const;
  // Status(now).diagnostics for the status page: no stderr quoted.
  std::string PublicDiagnostics(const std::string& diagnostics) const {
    return diagnostics_.WithoutTails(diagnostics);
  }

  // Set once decided.
  std::optional<AppState> outcome() const { return outcome_; }
  const std::string& final_diagnostics() const { return final_diagnostics_; }
  // Whether a failed job may run again as YARN's next attempt (false when a restart policy
  // found the failure final).
  bool job_restart_allowed() const { return job_restart_allowed_; }
  // The backend ended every container itself (JobEvent::kBackendGone).
  bool backend_gone() const { return backend_gone_; }
  // Every task has stopped (and the outcome, if any, may show).
  bool AllContainersEnded() const;
  // The backend has ended every container (its Stop() returned).
  void BackendStopped();
  void AddWarning(std::string warning) { diagnostics_.AddWarning(std::move(warning)); }

  // OK if elastic `role` may have `tasks` tasks now (JobEvent::Scale); the refusal otherwise
  // (InvalidArgument outside its range, FailedPrecondition for a role that is not elastic or
  // a job that is over), naming the range.
  absl::Status CheckScaleRequest(const std::string& role, int tasks) const;
  // OK if the job may be suspended (`suspend`) or resumed now (also when it already is);
  // FailedPrecondition otherwise, saying why (over, not running yet, finishing, client mode).
  absl::Status CheckSuspendRequest(bool suspend) const;

  // The state of one task, for tests. Null if unknown.
  const TaskPhase* PhaseOf(const TaskId& task) const;
  // How many phase changes AllowedPhaseChanges() refused (each an internal error), for tests.
  int refused_phase_changes() const { return refused_phase_changes_; }

 private:
  // What a task adds to its role's progress and the pending tasks (Status, Pending), as last
  // counted.
  struct Counted {
    JobTypeProgress share;  // 0 or 1 in each field but restarts
    bool pending = false;
    bool operator==(const Counted& o) const;
  };
  struct Task {
    size_t ordinal = 0;  // its place in order_
    size_t shape = 0;    // what it asks for: its index in shapes_
    // Counted: its share of the counts; dirty: changed since (Recount).
    mutable Counted counted;
    mutable bool dirty = false;
    TaskSpec spec;
    TaskPhase phase = TaskPhase::kWaiting;
    // The facts of this incarnation.
    bool allocated = false;
    bool registered = false;
    bool started = false;
    bool container_ended = false;  // or it never had one (the client task)
    // Its container's end is the backend's word only (a lost node, the backend gone): its
    // executor may still run.
    bool end_unconfirmed = false;
    bool executor_ended = false;  // its executor reported the command's exit
    bool told_over = false;       // its executor heard that the job is over
    bool outside = false;         // the client of client mode: no container, never registers
    int exit_code = 0;
    std::string address;           // host:port it registered
    std::string node;              // its container's node ("host:port"), where known
    std::string container;         // its container's id, where known
    bool preempt_noticed = false;  // its executor was told its container is to be preempted
    // The preemption grace (JobSpec::preemption_grace): the AM stops it then, unless it ended.
    std::optional<absl::Time> preempt_stop_at;
    // The AM stopped it for a preemption: its end, however it comes, is the preemption's.
    bool preempt_stopped = false;
    int in_place_restarts = 0;
    // Restart policy, scope task.
    int restarts = 0;
    absl::Time relaunch_at;
    std::string previous_address;  // where it was before its relaunch
    bool avoid_host = false;       // its node was lost: not asked for there again
    size_t restart_line = 0;
    // Asked for again (relaunched, resumed, or joining later): fails the job unless registered
    // by then; `asked_again` says how ("was relaunched").
    std::optional<absl::Time> register_by;
    std::string asked_again;
    // kExitHeld.
    absl::Time held_until;
    int held_code = 0;
    std::string held_tail;

    std::optional<absl::Time> linger_until;  // lingering after the tracked tasks finished
    bool scaled_down = false;                // stopped by Scale: no failure, revived by it

    bool finished() const;
    // Whether Tick() may have to act on it at some time (a deadline, a backoff, a held exit):
    // such a task is in timed_.
    bool MayBeDue() const;
    // No incarnation that events could be about: not asked for yet (blocked) or released.
    bool Idle() const { return phase == TaskPhase::kBlocked || phase == TaskPhase::kReleased; }
    // Whether it is (or was, exiting 0) `when`, for the roles that depend on its role.
    bool Reached(DependencyCondition when) const;
    std::optional<absl::Time> NextDeadline() const;
  };
  enum class EndKind { kExited, kContainerEnded };

  // Where a suspension is. kSuspending: its tasks are stopping; kSuspended: all stopped.
  enum class Suspension { kNone, kSuspending, kSuspended };

  Task* Find(const TaskId& id);
  // Every step looks at the tasks an event or a deadline is about, not at every task: a large
  // launch has as many steps as tasks. Touch() marks a task whose counts may have changed (every
  // phase change does); Watch() one that has a deadline or a backoff now.
  void Touch(Task& t);
  void Watch(const Task& t) { timed_.insert(t.ordinal); }
  // Brings the counts up to date with the touched tasks (all of them after a suspension
  // changed what counts).
  void Recount() const;
  Counted CountOf(const Task& t) const;
  static void AddCount(const Counted& c, int sign, JobTypeProgress& p);
  // The tasks in timed_, in task order: a copy, since acting on them may add others.
  std::vector<std::pair<TaskId, Task*>> TimedTasks() const;
  // verify_counts: aborts unless the counts and timed_ agree with every task.
  void VerifyCounts() const;
  // Stops `t` without failure until it is asked for again (Scale, Suspend): at once when it has
  // no live container (its request is withdrawn), else when its container ends.
  // The first phase of `t`, setting its facts to match: a role scaled below it
  // (scale_targets) has it stopped, a role with depends_on blocked.
  TaskPhase FirstPhase(Task& t);
  void StopQuietly(Task& t, const TaskId& id, JobActions* out);
  // `t` as a new incarnation, asked for again in phase `to`: only its spec and restart counts
  // stay.
  void Renew(Task& t, TaskPhase to, JobActions* out);
  // Every phase change goes through here: one AllowedPhaseChanges() refuses stays undone, is
  // logged as an internal error and counted. Returns whether `t` is now in `to`.
  bool MoveTo(Task& t, TaskPhase to, JobActions* out);
  // The first phase of a task, when the job is built.
  void Enter(Task& t, TaskPhase first);
  // On()'s events, by kind.
  void OnPublished(absl::Time now, JobActions* out);
  void OnStarted(Task& t, const JobEvent& e, JobActions* out);
  void OnTimeout(const JobEvent& e, absl::Time now, JobActions* out);
  void OnRequest(const JobEvent& e, absl::Time now, JobActions* out);
  void OnBackendEvent(const JobEvent& e, absl::Time now, JobActions* out);
  void OnRegistered(Task& t, const JobEvent& e, JobActions* out);
  void OnExited(Task& t, const JobEvent& e, absl::Time now, JobActions* out);
  void OnCompleted(Task& t, const JobEvent& e, absl::Time now, JobActions* out);
  void OnTensorBoardListening(const std::string& url, JobActions* out);
  // A notice for a running task's container tells its executor, once per container, and
  // starts its preemption grace; one for a container no task runs now is logged once and
  // ignored.
  void OnPreemptNotice(const JobEvent& e, absl::Time now, JobActions* out);
  // The role's preemption grace, else the job's (0: none).
  absl::Duration PreemptionGrace(const Task& t) const;
  void TaskEnded(Task& t, int code, const std::string& tail, EndKind how, absl::Time now,
                 JobActions* out);
  void SidecarEnded(Task& t, int code, const std::string& tail, bool from_container,
                    JobActions* out);
  void TaskFailed(Task& t, int code, const std::string& message, const std::string& tail,
                  bool from_container, absl::Time now, JobActions* out);
  void CheckSuccess(absl::Time now, JobActions* out);
  // Once the tracked tasks are done: false while untracked tasks may still linger.
  bool LingerDone(absl::Time now, JobActions* out);
  void Finish(AppState state, const std::string& cause, JobActions* out);
  // Carries out an exclusion decision: the hosts to the backend, a warning and the records;
  // the job fails when nothing is left to run on.
  void ApplyExclusion(ExclusionDecision d, JobActions* out);

  // Tick()'s rules.
  void CheckClientStart(absl::Time now, JobActions* out);
  void CheckGang(absl::Time now, JobActions* out);
  void DueRelaunches(absl::Time now, JobActions* out);
  void ReleaseHeldExits(absl::Time now, JobActions* out);
  void CheckRelaunchedRegistrations(absl::Time now, JobActions* out);
  void CheckLinger(absl::Time now, JobActions* out);
  // Stops the tasks whose preemption grace is over (the AM's checkpoint point, before YARN's).
  void StopPreempted(absl::Time now, JobActions* out);

  // Role dependencies (job_state_dependencies.cc).
  // Whether every task of `role` is (or was) `when`.
  bool RoleReached(const std::string& role, DependencyCondition when) const;
  bool RoleReady(const JobTypeSpec& jt, bool registered_too) const;
  // Admits the next round when it may start; asks for blocked roles whose dependencies hold;
  // fails the job for a dependency past its timeout.
  void CheckDependencies(absl::Time now, JobActions* out);
  void AskForRole(const std::string& role, absl::Time now, JobActions* out);
  // When each waiting role's unmet dependency times out.
  std::vector<std::pair<absl::Time, std::string>> DependencyDeadlines() const;
  // An elastic role (docs/elastic.md): its tasks come and go, with no deadline to register;
  // fewer than `min` registered within the registration timeout of its request fails the job.
  const ElasticRange* ElasticOf(const TaskSpec& spec) const;
  void CheckElasticStart(absl::Time now, JobActions* out);
  // Stops an elastic role's tasks beyond its target (Scale) and revives those within it.
  void CheckScale(JobActions* out);
  // Whether `role` is not asked for yet: a task of it waits for its dependencies (BLOCKED).
  bool RoleBlocked(const std::string& role) const;

  // Suspend and resume (job_state_suspend.cc).
  void Suspend(absl::Time now, JobActions* out);
  void Resume(absl::Time now, JobActions* out);
  // kSuspending becomes kSuspended once every task has stopped (then a resume asked for
  // meanwhile follows).
  void CheckSuspended(absl::Time now, JobActions* out);

  // Whether the tracked task `t` no longer holds the job's success back: an elastic task that
  // never started once another of its role finished training.
  bool ElasticDone(const Task& t) const;
  // "; worker waits for prep to be finished" for the pending line.
  std::string WaitingNote() const;
  void StopEverything(absl::Time now, JobActions* out);
  // The backend ended every container on its own: the job fails, nothing is stopped.
  void BackendGone(const std::string& why, JobActions* out);
  // Whether the job stays up at `now` for an executor that may outlive its container and has
  // not heard yet that the job is over (orphan_notice).
  bool AwaitingOrphanNotice(absl::Time now) const;
  // Registered tasks whose executors may outlive their containers and have not heard that the
  // job is over (nor reported their exit).
  bool UninformedOrphans() const;
  // "2 × <8192 MB, 1 vcore> (worker:0-1) pending; queue headroom ...", "" when nothing is.
  std::string Pending(absl::Time now) const;
  // Its first part, "2 × <8192 MB, 1 vcore> (worker:0-1)": made again only when the pending
  // tasks changed.
  const std::string& PendingTasks() const;
  // The pending tasks of one shape, as runs of neighbours in task order (first ordinal -> last)
  // that the pending line shows as one range ("worker:3-9").
  struct PendingGroup {
    std::map<size_t, size_t> runs;
    int tasks = 0;
  };
  // Whether the tasks at ordinals a and a + 1 are one range when both are pending.
  bool Neighbours(size_t a) const;
  void AddPending(size_t ordinal) const;
  void RemovePending(size_t ordinal) const;
  // The pending line's first part made from every task, as before the runs (verify_counts).
  std::string PendingTasksFromScratch() const;

  const JobStateOptions options_;
  std::map<TaskId, Task> tasks_;
  // As ResolveTasks lists them, then the client task; each with its entry in tasks_ (whose
  // nodes never move): the scans of every Tick() look nothing up.
  std::vector<std::pair<TaskId, Task*>> order_;
  // The counts (Recount): tasks per phase, each role's progress (by role, with the tasks that
  // count towards its total), the pending tasks (ordinals), and the tasks touched since.
  std::vector<int> in_phase_;
  mutable std::map<std::string, JobTypeProgress> progress_;
  std::vector<std::string> shapes_;                  // "<8192 MB, 1 vcore>", each once
  mutable std::vector<PendingGroup> pending_;        // by shape
  mutable uint64_t pending_changes_ = 0;             // each change of pending_ counts one
  mutable std::optional<uint64_t> pending_text_of_;  // PendingTasks() as of that change
  mutable std::string pending_text_;
  mutable std::vector<size_t> dirty_;
  mutable bool recount_all_ = true;
  // Ordinals of the tasks that may have a deadline (a superset: pruned at the end of Tick).
  std::set<size_t> timed_;
  // Tracked tasks that must end with 0 for the job to succeed (not elastic ones).
  int tracked_needed_ = 0;
  bool started_ = false;
  int refused_phase_changes_ = 0;  // see refused_phase_changes()
  absl::Time job_deadline_ = absl::InfiniteFuture();
  std::optional<AppState> outcome_;
  std::string final_diagnostics_;
  bool job_restart_allowed_ = true;
  bool backend_gone_ = false;
  std::optional<absl::Time> stop_deadline_;
  std::optional<absl::Time> notice_deadline_;  // set with stop_deadline_
  std::optional<absl::Time> client_start_deadline_;
  GangSchedule gang_;
  NodeExclusion exclusion_;
  JobDiagnostics diagnostics_;
  std::string tensorboard_address_;   // as registered
  std::string tensorboard_url_;       // once it listens
  std::map<std::string, int> round_;  // by role
  int admitted_round_ = 0;
  std::map<std::string, absl::Time> asked_at_;  // by role: when its tasks were first asked for
  bool tracked_done_ = false;                   // every tracked task exited 0
  std::optional<absl::Time> elastic_start_by_;  // min elastic tasks registered by then
  std::map<std::string, int> scale_target_;     // elastic roles scaled: their number of tasks
  // Containers preemption notices named (bounded): each is news once.
  std::set<std::string> preempt_seen_;
  bool published_ = false;  // the broker published the first spec
  Suspension suspension_ = Suspension::kNone;
  absl::Time suspend_requested_at_;  // while suspending or suspended
  absl::Time suspended_since_;       // kSuspended: when the last task stopped
  bool resume_requested_ = false;    // while kSuspending: resume once all stopped
};

}  // namespace tony::am

#endif  // TONY_AM_JOB_STATE_H_
