// Copyright libtony authors.
//
// ClusterSpecBroker: the registry through which the tasks of a distributed job find each other
// (the seed design's "Registry"). Each task's executor reserves a port, registers
// (job name, index, host, port) and receives the complete cluster spec the moment the last
// expected task registers. Executors then report heartbeats, the start of their command and its
// exit; the submitting client reads the job status and may ask for the job to be killed.
//
// The broker is a gRPC service (libtony's tony-executor is its client) that any C++ orchestrator
// can embed:
//
//   tony::ClusterSpecBrokerOptions options;
//   options.secret = secret;         // tony::GenerateBrokerSecret(), made at submission
//   options.expected_tasks = {{"ps", 1}, {"worker", 2}};
//   options.observer = &observer;    // registration, exits, timeouts, kill
//   tony::ClusterSpecBroker broker(options);
//   if (absl::Status s = broker.Start(); !s.ok()) return s;
//   // ... launch executors with TONY_AM_ADDRESS=<host>:<broker.port()> and the secret ...
//   broker.Stop();
//   return absl::OkStatus();
//
// (tests/consumer compiles this example, as the body of a function of `secret` and `observer`,
// against the installed package.)
//
// Every call must carry the secret (gRPC metadata "tony-secret"); other calls fail with
// UNAUTHENTICATED. Registration is idempotent: a task registering again replaces its address
// until the spec is published; afterwards the same address gets the spec again and another
// address is an error. When `registration_timeout` passes before every task registered, the
// broker fails every waiting and later registration (ABORTED) and tells the observer exactly
// which tasks are missing.
//
// Stability: stable API (tony/version.h); the wire protocol (proto/tony/broker.proto) keeps
// old executors working with a newer AM within a major version.
//
// Thread-safe. Owns gRPC's server threads and one timer thread, started by Start() and joined by
// Stop(). Observer methods run on those threads, possibly concurrently.

#ifndef TONY_CLUSTER_SPEC_BROKER_H_
#define TONY_CLUSTER_SPEC_BROKER_H_

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "tony/cluster_spec.h"
#include "tony/export.h"
#include "tony/submitter.h"

namespace tony {
namespace broker {
class BrokerClockSeam;
}  // namespace broker

// What the broker learns, as it learns it. Called on the broker's threads, possibly
// concurrently: implementations must be thread-safe and must not block (queue the event).
// One GPU of a task as its executor last sampled it (nvidia-smi, every heartbeat).
struct GpuUsage {
  int index = 0;                  // the device's index on its node, as nvidia-smi numbers it
  double utilization = 0;         // 0..1: the share of the sample period a kernel ran
  int64_t memory_used_bytes = 0;  // device memory in use (by every process on it)
  int64_t memory_total_bytes = 0;
};

class TONY_EXPORT ClusterSpecBrokerObserver {
 public:
  virtual ~ClusterSpecBrokerObserver() = default;

  // A task registered (or re-registered) its address "host:port".
  virtual void OnRegistered(absl::string_view job_name, int index, absl::string_view address) {}
  // The last expected task registered: every waiting task now has `cluster`.
  virtual void OnClusterSpecPublished(const ClusterSpec& cluster) {}
  // The task's user command started.
  virtual void OnTaskStarted(absl::string_view job_name, int index) {}
  // The task's command exited with `exit_code` and its executor started it again in place, for
  // the `restart`-th time (the TensorBoard sidecar). Instead of OnTaskStarted.
  virtual void OnTaskRestarted(absl::string_view job_name, int index, int restart, int exit_code,
                               absl::string_view stderr_tail) {}
  // The task's command exited (128 + signal when killed), with the end of its stderr.
  virtual void OnTaskExited(absl::string_view job_name, int index, int exit_code,
                            absl::string_view stderr_tail) {}
  // The registration deadline passed; `missing` lists the tasks never registered ("worker:1").
  virtual void OnRegistrationTimeout(const std::vector<std::string>& missing) {}
  // A registered, not yet exited task sent no heartbeat for `heartbeat_timeout` since the cluster
  // spec was published (a task waiting for the spec is not watched).
  virtual void OnHeartbeatTimeout(absl::string_view job_name, int index) {}
  // A heartbeat said what the task's processes use: resident memory, CPU seconds used so far
  // (by the processes alive and the children they reaped) and how many processes it has.
  virtual void OnTaskUsage(absl::string_view job_name, int index, int64_t rss_bytes,
                           double cpu_seconds, int processes) {}
  // The same heartbeat's GPUs, for a task that asked for GPUs on a node with nvidia-smi; called
  // just before OnTaskUsage.
  virtual void OnTaskGpuUsage(absl::string_view job_name, int index,
                              const std::vector<GpuUsage>& gpus) {}
  // The client asked for the job to be killed.
  virtual void OnKillRequested(absl::string_view reason) {}
  // After Abort(), the task's executor heartbeated and was answered that the job is over (it
  // stops its task): e.g. to stay up until every executor heard it.
  virtual void OnTaskToldJobOver(absl::string_view job_name, int index) {}
};

struct ClusterSpecBrokerOptions {
  // Address to listen on. Default: "0.0.0.0:0" (every interface, a port the system picks).
  std::string listen_address = "0.0.0.0:0";
  // The application secret every call must carry. Required: at least 16 characters.
  std::string secret;
  // Serve TLS with this PEM key and certificate (the job's, see docs/security.md) instead of
  // plaintext. Both or neither. Default: empty (plaintext).
  std::string tls_key_pem;
  std::string tls_cert_pem;
  // Number of tasks per job type; the spec is published when all of them have registered.
  // Required, not empty.
  std::map<std::string, int> expected_tasks;
  // Job types (of expected_tasks) not expected until Admit(): roles that start after others
  // run or finish (JobTypeSpec::depends_on). The first spec is published without them.
  // Default: none.
  std::vector<std::string> deferred_job_types;
  // Deferred job types whose tasks come and go (an elastic role, JobTypeSpec::elastic): once
  // admitted, each task gets the published spec as it registers, never waits for the others
  // and is no part of the spec (torchrun's rendezvous finds its peers). Default: none.
  std::vector<std::string> elastic_job_types;
  // Tasks that run outside the cluster, as "job:index" (ytf-submit --client's "client:0"): they
  // never register and are no part of the spec, but may report their start and exit, and wait
  // for the spec as observers. Default: none.
  std::vector<std::string> outside_tasks;
  // An MPI job's tasks that run an Open MPI daemon (all but the launcher), as "job:index": the
  // launcher's rsh agent hands each its daemon's command (MpiLaunch). Default: none (the MPI
  // calls fail FAILED_PRECONDITION).
  std::vector<std::string> mpi_daemon_tasks;
  // From Start() until every task has registered. Default: 10 minutes.
  absl::Duration registration_timeout = absl::Minutes(10);
  // A registered task that sends no heartbeat for this long is reported to the observer.
  // Default: infinite (not watched).
  absl::Duration heartbeat_timeout = absl::InfiniteDuration();
  // Receives events; not owned, must outlive the broker. Default: null (none).
  ClusterSpecBrokerObserver* observer = nullptr;
  // Answers the GetStatus call (and NotifyStatusChanged). Called on gRPC's threads and the
  // notifier's, one call at a time. Default: null (the broker answers
  // with its own view: RUNNING, and per job type how many tasks registered and exited).
  std::function<ApplicationStatus()> status_provider;
  // Answers the Scale call (ytf scale: an elastic role's new number of tasks), on gRPC's
  // threads; must not block. Default: null (the call fails UNIMPLEMENTED).
  std::function<absl::Status(absl::string_view job_name, int tasks)> scale_handler;
  // Answers the Suspend call (ytf suspend: `suspend` true; ytf resume: false), on gRPC's
  // threads; must not block. Default: null (the call fails UNIMPLEMENTED).
  std::function<absl::Status(bool suspend)> suspend_handler;

  // Limits that keep a flood of connections from exhausting the process (the AM's container is
  // small). A connection that has not completed gRPC's handshake this long after it was accepted
  // is closed. Default: 10 seconds.
  absl::Duration handshake_timeout = absl::Seconds(10);
  // A connection without a call for this long is closed; clients reconnect on their next call
  // (executors heartbeat every few seconds, so theirs stay). Default: 2 minutes.
  absl::Duration idle_timeout = absl::Minutes(2);
  // The broker pings a connection silent for this long and closes it when the ping is not
  // answered within `keepalive_timeout` (a peer whose host vanished). Default: 30 s and 10 s.
  absl::Duration keepalive_time = absl::Seconds(30);
  absl::Duration keepalive_timeout = absl::Seconds(10);
  // Memory gRPC may take for connections and calls; under pressure it sheds connections instead
  // of growing (every task holds a connection with its buffers: a fixed cap starves big jobs).
  // Default: 0, meaning 64 MiB + 256 KiB per expected task.
  int64_t max_memory_bytes = 0;
  // Largest request accepted. Default: 1 MiB (a registration or exit report is a few KB).
  int max_request_bytes = 1 << 20;
  // Connections held at once; at the limit a new connection displaces the oldest one that has
  // not yet made an authenticated call, so a flood cannot crowd out the job's tasks. Never more
  // than the descriptor limit allows. Default: 0, meaning 2 per expected task + 64.
  int max_connections = 0;
};

class TONY_EXPORT ClusterSpecBroker {
 public:
  explicit ClusterSpecBroker(ClusterSpecBrokerOptions options);
  ~ClusterSpecBroker();  // Stop()s
  ClusterSpecBroker(const ClusterSpecBroker&) = delete;
  ClusterSpecBroker& operator=(const ClusterSpecBroker&) = delete;

  // Validates the options, binds and starts serving; the registration deadline starts now.
  // A failed Start() leaves nothing running and the broker as before (port() 0): it may be
  // started again, e.g. once the address is free. FailedPrecondition after a successful Start()
  // or after Stop().
  absl::Status Start();
  // Fails waiting registrations (UNAVAILABLE), stops the server and joins its threads.
  // Idempotent.
  void Stop();

  // The port bound by Start(); 0 before, and after a failed Start().
  int port() const;

  // The job is over (failed or killed): every waiting and later registration fails with ABORTED
  // and `reason`'s message; the registration deadline no longer applies. From then on a task's
  // heartbeat is answered FAILED_PRECONDITION ("the job is over"), on which libtony's executors
  // stop their tasks: those whose NodeManager can no longer kill them (a lost node) stop within
  // a heartbeat while the AM lives, not after their own AM-unreachable timeout. Tasks outside
  // the cluster (outside_tasks) are not told. Idempotent (the first reason stays).
  void Abort(const absl::Status& reason);

  // What `status_provider` returns may have changed: clients waiting in a status long poll get
  // the new status at once if it differs. Call it without holding any lock status_provider
  // takes. Without a provider the broker notices its own changes.
  void NotifyStatusChanged();

  // The ApplicationMaster relaunches the task (its restart policy, scope task): it may register
  // again, also after publication. At its old address it gets the published spec; at a new one
  // the broker publishes the spec again with the new address and the next version (tasks that
  // registered earlier keep theirs; the observer hears of the registration and decides). Its
  // heartbeats are not watched until it registers. Before publication its earlier registration
  // no longer counts. Unknown tasks are ignored.
  void ReopenTask(absl::string_view job_name, int index);

  // The ApplicationMaster resumes a suspended job: the task (stopped, and reopened then) starts
  // afresh. After publication the tasks rejoined before their executors register wait for each
  // other, like admitted ones: all get the spec's next version once every one of them has
  // registered. An elastic task is reopened instead (it never waits). Before publication, or
  // for an unknown task, the same as ReopenTask.
  void Rejoin(absl::string_view job_name, int index);

  // A task that will never register (a sidecar such as TensorBoard that died first) no longer
  // holds the others back: the spec is published without it once the rest have registered.
  // No-op for a registered or unknown task, after publication or an abort.
  void Excuse(absl::string_view job_name, int index);

  // The scheduler is about to preempt the task's container `container`: from now on each of its
  // heartbeats is answered with that notice (libtony's executor then signals the task and
  // writes its notice file, once per container), until ReopenTask or Rejoin. Unknown tasks are
  // ignored.
  void NoticePreemption(absl::string_view job_name, int index, absl::string_view container);

  // The tasks of these deferred job types are now expected. Before the first publication they
  // join it; after it, their registrations wait until every admitted task has registered, and
  // then all of them get the spec's next version: every job type with a task not yet exited
  // (tasks that registered earlier keep theirs). Their heartbeats are watched from then on.
  // Unknown or already admitted job types are ignored.
  void Admit(const std::vector<std::string>& job_names);
  // The published spec, once every task has registered.
  std::optional<ClusterSpec> cluster_spec() const;
  bool IsRegistered(absl::string_view job_name, int index) const;
  // Tasks not registered yet, as "job:index", job types in name order, indices ascending.
  std::vector<std::string> UnregisteredTasks() const;

 private:
  class Impl;
  friend class broker::BrokerClockSeam;  // tests drive the broker's deadlines
  std::unique_ptr<Impl> impl_;
};

}  // namespace tony

#endif  // TONY_CLUSTER_SPEC_BROKER_H_
