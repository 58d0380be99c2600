// Copyright libtony authors.
//
// ApplicationMaster: runs one job, wherever its tasks run. It drives a JobState (job_state.h,
// where the rules of the job's life are) with the events of the ClusterSpecBroker it serves and
// of its ResourceManager, and with the time of its clock; and carries out what JobState decides:
// asks the backend for containers, relaunches and stops them, tells the broker, announces the
// outcome and the TensorBoard URL, serves the status page (status_page.h).
//
// Thread-safe. Run() is called once, on the caller's thread, which runs the event loop; Kill(),
// AddWarning() and Status() may be called from any thread. The broker's and the backend's
// threads only queue events; every callback of the options runs on Run()'s thread with no lock
// of the AM held, and so do its log lines.

#ifndef TONY_AM_APPLICATION_MASTER_H_
#define TONY_AM_APPLICATION_MASTER_H_

#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "am/gpu_watch.h"
#include "am/job_state.h"
#include "am/launch_latency.h"
#include "am/resource_manager.h"
#include "am/status_page.h"
#include "am/task_usage.h"
#include "common/clock.h"
#include "httpd/status_route.h"
#include "tony/cluster_spec_broker.h"
#include "tony/job_spec.h"
#include "tony/submitter.h"

namespace tony::am {

// A page beside the status page at the tracking URL (e.g. the job's live view).
using httpd::StatusRoute;

struct ApplicationMasterOptions {
  JobSpec spec;        // required, valid
  std::string app_id;  // shown in the status
  std::string user;    // who runs the job, for the event log. Default: "" (not recorded)
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
  // More pages served beside it (linked from it). Default: none.
  std::vector<StatusRoute> status_routes;
  // The only peers (IP addresses: YARN's web proxy) the status page answers, and where it sends
  // anyone else (the proxy's URL for the application). Default: empty (anyone; a local job's page
  // listens on loopback only).
  std::vector<std::string> status_page_allowed_peers;
  std::string status_page_redirect_url;
  // Whether the viewer YARN's proxy names may see the status page (StatusPage::SetViewerCheck).
  // Default: null (everyone the peers rule lets through).
  std::function<bool(absl::string_view viewer)> status_page_may_view;
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
  // After the outcome, how long the job stays up at most for executors that may outlive their
  // containers (a lost node) to hear from their next heartbeat that it is over
  // (JobStateOptions::orphan_notice). Default: 7 seconds.
  absl::Duration orphan_notice = absl::Seconds(7);
  // After the outcome, the broker keeps answering status calls until a client has seen the final
  // status or this long has passed; not when the backend ended every container itself (YARN
  // ended the attempt and shows it). Default: 10 seconds.
  absl::Duration final_status_linger = absl::Seconds(10);
  // Called once the broker listens, with its port and the tracking URL (e.g. to register with
  // YARN). An error ends Run() with it at once: no task is asked for (an AM the ResourceManager
  // refused has no job to run). Default: null.
  std::function<absl::Status(int port, const std::string& tracking_url)> on_broker_started;
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
  // Receives the job's event log (docs/events.md): JSON objects, one per line, in order, from
  // Run()'s thread with no lock held. Must not block (history::EventLog buffers). Default: null.
  std::function<void(std::vector<std::string> lines)> on_event_lines;
  // How often each task's usage goes to the event log (TaskUsageOptions::record_every).
  // Default: 1 minute.
  absl::Duration usage_record_every = absl::Minutes(1);
  // YARN's attempt of this AM, 1 for the first: restart policies of scope job count the
  // attempts before it as restarts. Default: 1.
  int attempt = 1;
  // Elastic roles' sizes an earlier attempt was scaled to (JobStateOptions::scale_targets).
  // Default: none.
  std::map<std::string, int> scale_targets;
  // Hosts earlier attempts excluded (JobStateOptions::excluded_nodes). Default: none.
  std::vector<std::string> excluded_nodes;
  // For tests: JobState checks its counts at every step (JobStateOptions::verify_counts).
  // Default: false.
  bool verify_job_counts = false;
  // The attempts the backend makes: a failed attempt before the last leaves the job to the next
  // one (NextAttemptFollows) unless a restart policy found the failure final. Default: 1.
  int max_attempts = 1;
  // The longest wait between a task's restarts (its backoff doubles each time). Default: 5 min.
  absl::Duration max_backoff = absl::Minutes(5);
  // All-or-nothing allocation: the wait after releasing a partial gang, doubled each time, at
  // most a minute, and randomised by +-50%. Default: 5 seconds.
  absl::Duration allocation_backoff = absl::Seconds(5);
  // The gang backoff's random factor (tests: a constant). Default: null (random in [0.5, 1.5)).
  std::function<double()> gang_jitter;
  // Where the AM reads the time and waits (tests: a SimulatedClock). Not owned. Default: null
  // (RealClock()).
  Clock* clock = nullptr;
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
  // After the outcome: it is FAILED, and the backend's next attempt runs the job again.
  bool NextAttemptFollows() const;
  // The broker's port once Run() has started it; 0 before.
  int broker_port() const;

  // Asks for elastic `role` to have `tasks` tasks: the refusal at once (JobState::
  // CheckScaleRequest), or OK and the change follows on the AM's loop. Thread-safe.
  absl::Status Scale(const std::string& role, int tasks);
  // Suspends the job (`suspend`) or resumes it: the refusal at once (JobState::
  // CheckSuspendRequest), or OK and the change follows on the AM's loop. Thread-safe.
  absl::Status Suspend(bool suspend);

  // The sink of executor events (what the broker learns). Embedders with their own transport
  // and tests feed events here directly.
  ClusterSpecBrokerObserver* executor_events();

 private:
  class BrokerEvents;

  void Post(JobEvent event);
  // A heartbeat's sample of what a task's processes use (any thread).
  void RecordUsage(TaskId task, int64_t rss_bytes, double cpu_seconds, int processes);
  void RecordGpuUsage(TaskId task, const std::vector<GpuUsage>& gpus);
  absl::Status StartBrokerAndStatusPage(std::string* host, int* port);
  absl::Status StartBackend(const std::string& host, int port);
  // What the queued events (or, without any, the time) lead to.
  JobActions StepLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Carries `actions` out, with no lock held: the backend and the broker may call back into
  // Post().
  void Apply(JobActions& actions);
  // After the loop: stops the backend and publishes the final status.
  ApplicationStatus Conclude();
  ApplicationStatus StatusLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  ApplicationStatus StatusForBroker();
  std::string RenderMetrics() const;
  std::string RenderStatusPage() const;
  // Probes TensorBoard at `address` (for up to 5 minutes, until stopped) and posts
  // kTensorBoardListening once it accepts connections. Runs on tensorboard_probe_.
  void ProbeTensorBoard(const std::string& address);
  void StopTensorBoardProbe();
  // Stamps `records` (time, attempt, sequence) and hands them to on_event_lines.
  void EmitRecords(std::vector<JobRecord> records);

  const ApplicationMasterOptions options_;
  Clock* const clock_;
  ResourceManager* const rm_;
  std::unique_ptr<BrokerEvents> broker_events_;
  std::unique_ptr<ClusterSpecBroker> broker_;

  mutable absl::Mutex mu_;
  JobState job_ ABSL_GUARDED_BY(mu_);
  std::deque<JobEvent> events_ ABSL_GUARDED_BY(mu_);
  // The AM's own tracking URL (its status page, or the options'); set before Run()'s loop.
  std::string tracking_url_ ABSL_GUARDED_BY(mu_);
  bool final_status_seen_ ABSL_GUARDED_BY(mu_) = false;
  int broker_port_ ABSL_GUARDED_BY(mu_) = 0;
  bool probe_stop_ ABSL_GUARDED_BY(mu_) = false;
  bool probe_running_ ABSL_GUARDED_BY(mu_) = false;  // until ProbeTensorBoard returns
  TaskUsageStore usage_;                             // thread-safe
  LaunchLatencies launch_latencies_;                 // thread-safe
  GpuWatch gpus_;                                    // thread-safe
  // task_usage entries for the event log, from the broker's threads; Run()'s loop writes them.
  std::vector<JobRecord> usage_records_ ABSL_GUARDED_BY(mu_);
  std::thread tensorboard_probe_;  // started by Run()'s thread, joined by it
  std::unique_ptr<StatusPage> status_page_;
  int64_t event_seq_ = 0;  // Run()'s thread only
};

}  // namespace tony::am

#endif  // TONY_AM_APPLICATION_MASTER_H_
