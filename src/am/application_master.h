// Copyright libtony authors.
//
// ApplicationMaster: the job's life cycle, independent of where tasks run. It serves the
// ClusterSpecBroker, asks its ResourceManager for one container per task, and decides the job's
// outcome (docs/executor.md, "Life cycle"):
//
//   - Tracked tasks (TaskSpec::tracked) decide the outcome: the job SUCCEEDS when every tracked
//     task has exited 0, and FAILS as soon as one exits non-zero.
//   - Untracked tasks (ps, evaluator, tensorboard by default) are stopped once the tracked ones
//     are done; one that dies with a non-zero code before then FAILS the job (one that exits 0,
//     such as an evaluator that is done, does not).
//   - The TensorBoard sidecar never decides the outcome: its death, even before registering
//     (then the cluster spec is published without it) or as a container that could not be
//     launched, is a warning in the diagnostics; its executor restarts it in place a few times
//     (TaskStarted again), counted as restarts in the progress.
//   - A task that ends before registering FAILS the job at once; so do the registration
//     deadline (naming every task that never registered), a task silent past the heartbeat
//     timeout, a container that cannot be launched, the backend's fatal errors and the job
//     timeout. The client's kill ends it KILLED.
//   - A job type with a restart policy (JobTypeSpec::restart) changes what a non-zero exit does:
//     a failure the policy retries in scope task relaunches just that task after its backoff
//     (up to max_restarts per task), on its old node and port where YARN allows; one it retries
//     in scope job fails the attempt for YARN's next one; one it does not retry fails the job for
//     good (job_restart_allowed() turns false). Every restart and its cause is in the
//     diagnostics, while the job runs and after.
//   - All-or-nothing allocation: when not every task has a container `timeouts.allocation` after
//     they were asked for, every container is released and every request withdrawn; after a
//     backoff (5 s, doubling, at most 1 minute) they are asked for again, until the registration
//     deadline. Meanwhile the status's `pending` says what is missing and the queue's headroom.
//   - When the outcome is decided every remaining task is stopped (SIGTERM, SIGKILL after the
//     job's stop grace) and the AM waits for them before Run() returns. Diagnostics name the task
//     ("worker:1"), its exit code and the last lines of its stderr.
//
// Thread-safe. Run() is called once, on the caller's thread, which runs the event loop; Kill()
// and Status() may be called from any thread. The broker's and the backend's threads only queue
// events.

#ifndef TONY_AM_APPLICATION_MASTER_H_
#define TONY_AM_APPLICATION_MASTER_H_

#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "am/resource_manager.h"
#include "am/status_page.h"
#include "tony/cluster_spec_broker.h"
#include "tony/job_spec.h"
#include "tony/submitter.h"

namespace tony::am {

struct ApplicationMasterOptions {
  JobSpec spec;        // required, valid
  std::string app_id;  // shown in the status
  std::string secret;  // required; every broker call must carry it
  // The job's TLS key and certificate (PEM): the broker serves TLS. Default: empty (plaintext).
  std::string tls_key_pem;
  std::string tls_cert_pem;
  // Where the broker listens. Default: "0.0.0.0:0" (every interface, a port the system picks).
  std::string broker_listen_address = "0.0.0.0:0";
  // Host the executors use to reach the broker. Default: "" (this machine's host name).
  std::string advertised_host;
  // Added to every executor's environment, e.g. TONY_SPEC_FILE and TONY_SECRET_FILE (the AM
  // itself adds TONY_AM_ADDRESS). Default: empty.
  std::map<std::string, std::string> executor_env;
  // The job's tracking URL. Default: "" (the AM's own status page, when serve_status_page).
  std::string tracking_url;
  // Serve the status page (am/status_page.h) on a port the system picks. Default: true.
  bool serve_status_page = true;
  // The only peers (IP addresses: YARN's web proxy) the status page answers, and where it sends
  // anyone else (the proxy's URL for the application). Default: empty (anyone; a local job's page
  // listens on loopback only).
  std::vector<std::string> status_page_allowed_peers;
  std::string status_page_redirect_url;
  std::string log_dir;  // where task logs are, for the status. Default: "" (unknown)
  // A registered task silent for this long fails the job. Default: 1 minute.
  absl::Duration heartbeat_timeout = absl::Minutes(1);
  // Extra time, over the job's stop grace, that stopped tasks get to end before they are
  // abandoned to the backend's Stop(). Default: 10 seconds.
  absl::Duration stop_margin = absl::Seconds(10);
  // How long a task's end by a SIGTERM or SIGKILL the AM did not send waits for its container's
  // completion to say whether YARN preempted it or lost its node (restart policies treat those
  // as retryable, and the diagnostics name them). Default: 5 seconds.
  absl::Duration exit_cause_wait = absl::Seconds(5);
  // After the outcome, the broker keeps answering status calls until a client has seen the final
  // status or this long has passed. Default: 10 seconds.
  absl::Duration final_status_linger = absl::Seconds(10);
  // Called once the broker listens, with its port and the tracking URL (e.g. to register with
  // YARN). Default: null.
  std::function<void(int port, const std::string& tracking_url)> on_broker_started;
  // Called once, from an AM thread, when the TensorBoard task has registered and answers on its
  // port, with its URL (YARN's tracking URL then leads to it, as the seed design has it); and
  // again with the AM's own tracking URL if TensorBoard then dies for good, so that the tracking
  // URL never leads to a dead TensorBoard. Default: null.
  std::function<void(const std::string& url)> on_tensorboard_ready;
  // Called once, from Run()'s thread, the moment the outcome is decided, after the remaining
  // tasks were told to stop and before they have: e.g. to unregister from YARN without waiting
  // for them. job_restart_allowed() already has its final value. Default: null.
  std::function<void(AppState state, const std::string& diagnostics)> on_outcome;
  // Called from Run()'s thread after each round that may have changed the status (allocations,
  // registrations, starts, exits) and once the final status shows, with no lock held: e.g. to
  // wake a thread that follows the launch instead of polling Status(). Must not block.
  // Default: null.
  std::function<void()> on_status_changed;
  // YARN's attempt of this AM, 1 for the first: restart policies of scope job count the
  // attempts before it as restarts. Default: 1.
  int attempt = 1;
  // The longest wait between a task's restarts (its backoff doubles each time). Default: 5 min.
  absl::Duration max_backoff = absl::Minutes(5);
  // All-or-nothing allocation: the wait after releasing a partial gang, doubled each time, at
  // most a minute, and randomised by +-50%. Default: 5 seconds.
  absl::Duration allocation_backoff = absl::Seconds(5);
};

class ApplicationMaster {
 public:
  // `rm` is not owned and must outlive the AM.
  ApplicationMaster(ApplicationMasterOptions options, ResourceManager* rm);
  ~ApplicationMaster();
  ApplicationMaster(const ApplicationMaster&) = delete;
  ApplicationMaster& operator=(const ApplicationMaster&) = delete;

  // Runs the job to its end and returns the final status. Errors only when the job could not be
  // started at all (broker or backend failed to start). The broker and the status page keep
  // answering (with the final status) until the ApplicationMaster is destroyed.
  absl::StatusOr<ApplicationStatus> Run();

  // Ends the job KILLED (e.g. on SIGTERM to the AM). Harmless after the outcome.
  void Kill(const std::string& reason);

  // A line for the diagnostics, while the job runs and after, that fails nothing (e.g. that this
  // attempt took over the tasks of an earlier one). Any thread.
  void AddWarning(std::string warning);

  ApplicationStatus Status() const;
  // After Run(): whether a failed job may run again as a new attempt. False when a restart
  // policy found the failure final (or its whole-job restarts used up).
  bool job_restart_allowed() const;
  // The broker's port once Run() has started it; 0 before.
  int broker_port() const;

  // The sink of executor events (what the broker learns). Embedders with their own transport
  // and tests feed events here directly.
  ClusterSpecBrokerObserver* executor_events();

 private:
  struct Event;
  class BrokerEvents;
  struct TaskState {
    TaskSpec spec;
    bool allocated = false;
    bool registered = false;
    bool running = false;
    bool finished = false;  // its command (or executor) ended
    bool container_done = false;
    bool stop_requested = false;
    int exit_code = 0;
    std::string stderr_tail;
    std::string address;        // host:port it registered
    int in_place_restarts = 0;  // times its executor started the command again in place
    bool outside = false;       // the client of client mode: no container, never registers
    // Restart policy, scope task.
    int restarts = 0;
    bool restart_pending = false;  // failed; relaunched once its container ended and at:
    absl::Time relaunch_at;
    std::string previous_address;  // where it was before the restart
    bool avoid_host = false;       // its node was lost or its disks failed: not asked for again
    size_t restart_line = 0;       // its last line in restarts_
    std::optional<absl::Time> register_by;  // relaunched: fails the job unless registered by then
    bool regang = false;  // released for all-or-nothing allocation; asked for again later
    // Its executor reported an end by SIGTERM or SIGKILL the AM did not send: held until its
    // container's completion says why (YARN preempted it, lost its node...) or until then.
    std::optional<absl::Time> exit_held_until;
    int held_exit_code = 0;
    std::string held_tail;
    // The earliest of this task's deadlines above (relaunch, register_by, exit_held_until) that
    // Run() must wake up for; none when it waits on nothing but events.
    std::optional<absl::Time> NextDeadline() const;
  };
  // What a failure of a task leads to under its job type's restart policy.
  enum class Verdict { kNoPolicy, kRelaunch, kFinal, kJobRestart };
  Verdict ApplyRestartPolicy(TaskState& t, int exit_code, std::string* note)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Fails the job over `message`, with the restart policy's say.
  void TaskFailed(TaskState& t, int exit_code, const std::string& message, const std::string& tail,
                  bool from_container) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  void Post(Event event);
  void Handle(const Event& event) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void TaskFinished(TaskState& task, int exit_code, const std::string& tail, const std::string& how)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void CheckSuccess() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Records (or updates) the one warning line of a sidecar task.
  void SidecarWarning(const TaskState& t, std::string warning) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // `message` with the last lines of `tail`, which the status page leaves out.
  std::string WithTail(std::string message, const std::string& tail, bool from_container)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Decides the outcome (first decision wins); Run()'s loop then stops every task.
  void Finish(AppState state, const std::string& diagnostics) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  bool AllContainersDone() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  TaskState* Find(absl::string_view job, int index) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  TaskState* Find(const std::string& task_id) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  ApplicationStatus StatusLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // When Run() must look again without an event: the earliest of `job_deadline`, the job's own
  // deadlines and every task's NextDeadline().
  absl::Time NextWakeLocked(absl::Time job_deadline) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Run()'s steps. What one round of the loop decided under the lock and Apply() carries out
  // outside it (the backend and the broker may call back into Post()).
  struct Relaunch {
    TaskSpec spec;
    std::string host;
    int port = 0;
  };
  struct Actions {
    std::vector<std::pair<std::string, absl::Duration>> kills;
    std::vector<Relaunch> relaunches;
    std::vector<TaskSpec> requests;  // all-or-nothing allocation: asked for again
    std::vector<std::pair<std::string, int>> excuses;
    bool abort_broker = false;
    std::string abort_reason;
    std::string tensorboard_ready;  // registered: announce once it answers
    bool tensorboard_gone = false;
  };
  absl::Status StartBrokerAndStatusPage(std::string* host, int* port, std::string* tracking_url);
  absl::Status StartBackend(const std::string& host, int port);
  // Handles the queued events and every deadline due; true once the job is over and every
  // container done (or given up on).
  bool DecideLocked(absl::Time job_deadline, Actions* actions) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // A `ytf-submit --client` task that never started fails the job.
  void CheckClientStartLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // All-or-nothing allocation: a gang not complete by its deadline is released, asked again
  // after a randomised backoff (AskAgainForGangLocked) once every container has ended.
  void CheckAllocationLocked(Actions* actions) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void AskAgainForGangLocked(Actions* actions) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Tasks to restart whose old container has ended and whose backoff has passed.
  void DueRelaunchesLocked(Actions* actions) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // An executor's exit report held for its container's completion (to learn of a preemption or
  // a lost node) stands once the wait is over.
  void ReleaseHeldExitsLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // A relaunched task that did not register by its deadline fails the job.
  void CheckRelaunchedRegistrationsLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void Apply(const Actions& actions, const std::string& tracking_url);
  // After the loop: stops the backend and publishes the final status.
  ApplicationStatus Conclude();
  ApplicationStatus StatusForBroker();
  std::string RenderStatusPage() const;
  // Waits (up to 5 minutes, until stopped) for TensorBoard at `address` to accept connections,
  // then publishes its URL and calls on_tensorboard_ready. Runs on tensorboard_probe_.
  void AnnounceTensorBoard(const std::string& address);
  void StopTensorBoardProbe();

  const ApplicationMasterOptions options_;
  ResourceManager* const rm_;
  std::unique_ptr<BrokerEvents> broker_events_;
  std::unique_ptr<ClusterSpecBroker> broker_;

  mutable absl::Mutex mu_;
  std::deque<Event> events_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, TaskState> tasks_ ABSL_GUARDED_BY(mu_);  // by "job:index"
  std::vector<std::string> order_;                               // task ids in ResolveTasks order
  AppState state_ ABSL_GUARDED_BY(mu_) = AppState::kAccepted;
  std::string diagnostics_ ABSL_GUARDED_BY(mu_);
  // What went wrong without failing the job (a TensorBoard sidecar that died), in diagnostics.
  std::vector<std::string> warnings_ ABSL_GUARDED_BY(mu_);
  // Every stderr tail the diagnostics quote (WithTail), which the status page leaves out.
  std::set<std::string> tails_ ABSL_GUARDED_BY(mu_);
  // Sidecars that ended before registering: the broker stops waiting for them (Run()'s loop
  // tells it, outside the lock).
  std::vector<std::pair<std::string, int>> to_excuse_ ABSL_GUARDED_BY(mu_);
  std::string tracking_url_ ABSL_GUARDED_BY(mu_);
  std::string tensorboard_address_ ABSL_GUARDED_BY(mu_);  // as registered
  std::string tensorboard_url_ ABSL_GUARDED_BY(mu_);      // once it answers
  bool tensorboard_gone_ ABSL_GUARDED_BY(mu_) = false;    // died for good after announcing
  bool probe_stop_ ABSL_GUARDED_BY(mu_) = false;
  std::thread tensorboard_probe_;  // started by Run()'s thread, joined by it
  std::unique_ptr<StatusPage> status_page_;
  std::optional<absl::Time> stop_deadline_ ABSL_GUARDED_BY(mu_);
  std::optional<absl::Time> client_start_deadline_ ABSL_GUARDED_BY(mu_);
  bool final_status_seen_ ABSL_GUARDED_BY(mu_) = false;
  int broker_port_ ABSL_GUARDED_BY(mu_) = 0;
  // One line per restart, with its cause, in the order they happened.
  std::vector<std::string> restarts_ ABSL_GUARDED_BY(mu_);
  bool job_restart_allowed_ ABSL_GUARDED_BY(mu_) = true;
  // All-or-nothing allocation.
  bool published_ ABSL_GUARDED_BY(mu_) = false;  // the cluster spec, at least once
  std::optional<absl::Time> allocation_deadline_ ABSL_GUARDED_BY(mu_);
  std::optional<absl::Time> regang_at_ ABSL_GUARDED_BY(mu_);  // released; ask again then
  int gang_rounds_ ABSL_GUARDED_BY(mu_) = 0;                  // releases so far
  // "2 × <8192 MB, 1 vcore> (worker:0-1); queue headroom <4096 MB, 3 vcores>", "" when nothing
  // is pending.
  std::string PendingLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
};

// "worker:0-4999 (5000 tasks), ps:1" for a list of "job:index" ids: consecutive indices of a job
// as ranges, at most about `max_chars` characters ("..., and N more" beyond).
std::string SummarizeTasks(const std::vector<std::string>& tasks, size_t max_chars = 1000);

}  // namespace tony::am

#endif  // TONY_AM_APPLICATION_MASTER_H_
