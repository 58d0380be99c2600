// Copyright libtony authors.
//
// YarnTaskLauncher: the ApplicationMaster's hands on YARN. It asks the ResourceManager for one
// container per task (one request each, so an allocation names its task), heartbeats the
// scheduler, starts tony-executor in each container through its NodeManager — several at once,
// so large jobs do not launch one by one — and reports what happens to each task's container.
//
// Thread-safe. Start() starts the heartbeat thread and the launch threads; Stop() joins them.
// Events are delivered on those threads and must not block.

#ifndef TONY_YARNAM_TASK_LAUNCHER_H_
#define TONY_YARNAM_TASK_LAUNCHER_H_

#include <deque>
#include <functional>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "ipc/credentials.h"
#include "submit/contract.h"
#include "submit/wait_reason.h"
#include "tony/job_spec.h"
#include "yarn/am_rm_client.h"
#include "yarn/nm_client.h"
#include "yarn/records.h"
#include "yarnam/scheduler_answer.h"

namespace tony::yarnam {

struct TaskContainerEvent {
  enum class Kind {
    kAllocated,      // a container was assigned to the task
    kLaunched,       // its NodeManager started the executor
    kLaunchFailed,   // starting it failed (diagnostics say why); the container is released
    kCompleted,      // the container ended; exit_status is YARN's (-100.. for lost, killed, ...)
    kAttemptGone,    // the ResourceManager ended this attempt (it no longer knows it, or
                     // ordered it to shut down): YARN released every container; no more
                     // events follow (task_id empty)
    kRmError,        // the scheduler could not be reached for too long, or refused the
                     // requests (task_id empty), or gave up placing task_id's
    kNodeState,      // the scheduler reported `node` in state `diagnostics` (task_id empty)
    kClusterNodes,   // the cluster's number of running nodes changed: exit_status
    kPreemptNotice,  // the scheduler is about to preempt `container_id` (task_id: its task, or
                     // empty when the launcher does not know the container); diagnostics:
                     // "strict" or "contract". Repeated while the scheduler repeats it.
  };
  Kind kind;
  std::string task_id;
  std::string container_id;
  int exit_status = 0;
  std::string diagnostics;
  std::string node;       // kAllocated: the container's NodeId, "host:port"
  std::string node_http;  // kAllocated: the NodeManager's web address (its log pages)
};

struct TaskLauncherOptions {
  yarn::AmRmClient* rm = nullptr;  // not owned; required
  yarn::NmClient* nm = nullptr;    // not owned; required
  // Localized into every executor's container (runtime bundle, job spec, script, files).
  std::map<std::string, yarn::LocalResource> local_resources;
  // Environment of every executor; the launcher adds TONY_JOB_NAME and TONY_TASK_INDEX.
  std::map<std::string, std::string> environment;
  // Credentials of every executor's container (the job secret; never the AMRMToken). The
  // NodeManager writes them to the container's token file. Default: none.
  ipc::Credentials tokens;
  // Between scheduler heartbeats while containers are pending or being stopped: YARN hands out
  // containers only in answers to heartbeats. A new request or a kill sends one at once.
  // Default: 100 ms.
  absl::Duration heartbeat = absl::Milliseconds(100);
  // Between scheduler heartbeats once every container is allocated (completions of running
  // containers are also reported by their executors, so nothing waits on this). Default: 1 s.
  absl::Duration idle_heartbeat = absl::Seconds(1);
  // Containers started concurrently. A NodeManager under load answers a start call in about
  // 0.5-1 s, so 8 made a 200-task job's last start call wait 24 s behind the others
  // (bench/scale.py); a NodeManager serves 20 calls at once by default. Default: 32.
  int launch_threads = 32;
  // How long heartbeats may fail in a row before kRmError (an answer that the attempt is gone
  // ends it at once: scheduler_answer.h). Default: 10 s.
  absl::Duration rm_unreachable = absl::Seconds(10);
  // A relaunch asks for its old node only (strict locality) this long, then for any node:
  // YARN's own relaxed locality gives up on a node after a few missed scheduling opportunities,
  // which on a small cluster is a few heartbeats of the other nodes. Default: 10 seconds.
  absl::Duration relaunch_locality_wait = absl::Seconds(10);
  // Receives every event. Required.
  std::function<void(const TaskContainerEvent&)> on_event;
  // Job progress reported to the RM with each heartbeat (0..1). Default: none (0).
  std::function<float()> progress;
  // Host paths mounted (read-write, same place) into tasks that run in a Docker image: the
  // job's local input and output paths. Default: none.
  std::vector<std::string> docker_mounts;
};

// YARN's Docker runtime variables for `task` when it has a Docker image (none without): the
// image, the host network (tasks reach each other on the ports their executors reserved on the
// host) and `mounts`. The cluster's own read-only mounts (HADOOP_HOME, HADOOP_CONF_DIR,
// JAVA_HOME) are its yarn.nodemanager.runtime.linux.docker.default-ro-mounts.
std::map<std::string, std::string> DockerRuntimeEnvironment(const TaskSpec& task,
                                                            const std::vector<std::string>& mounts);

// The paths among `paths` that are on the nodes' local file systems ("/data", "file:///data"),
// as plain paths; HDFS and other URIs are left out.
std::vector<std::string> LocalPaths(const std::vector<std::string>& paths);

class YarnTaskLauncher {
 public:
  explicit YarnTaskLauncher(TaskLauncherOptions options);
  ~YarnTaskLauncher();  // Stop()s
  YarnTaskLauncher(const YarnTaskLauncher&) = delete;
  YarnTaskLauncher& operator=(const YarnTaskLauncher&) = delete;

  absl::Status Start();
  void Stop();

  // Asks for a container for `task` at `priority` (lower is served first); again for a task
  // whose container ended (a relaunch), then on `host` only for relaunch_locality_wait, on any
  // node after, and with TONY_TASK_PORT_HINT=`port` for its executor (0: none). A `relaunch`
  // (its restart policy) counts: its executor, and so its task, gets TONY_RESUMED=1 and
  // TONY_TASK_RESTARTS, the number of relaunches so far.
  void Request(const TaskSpec& task, int priority, const std::string& host = "", int port = 0,
               bool relaunch = false);
  // Takes over `container`, which an earlier attempt of this AM launched for `task` and YARN
  // kept (work-preserving AM restart): reported as allocated and launched at once, and from then
  // on the task's container as if this attempt had started it.
  void Adopt(const TaskSpec& task, int priority, const yarn::Container& container);
  // Stops the task's container, or withdraws its request if none was allocated yet.
  void Kill(const std::string& task_id);
  // The job's outcome is decided: every container's end is awaited now, so the heartbeat is
  // fast until YARN has reported each one completed (the AM ends on the last of them).
  void WindDown();
  // Every task's container so far, for `ytf logs`.
  std::vector<submit::TaskContainer> Containers() const;
  // Keeps later containers off these hosts (YARN's blacklist).
  void ExcludeNodes(const std::vector<std::string>& hosts) { options_.rm->AddToBlacklist(hosts); }
  // Lets later containers use these hosts again.
  void IncludeNodes(const std::vector<std::string>& hosts) {
    options_.rm->RemoveFromBlacklist(hosts);
  }
  // Tasks whose containers have not been allocated yet.
  std::vector<std::string> PendingTasks() const;
  // What those tasks ask for, one entry per task.
  std::vector<submit::PendingAsk> PendingAsks() const;
  // The headroom of the last scheduler answer, "<4096 MB, 3 vcores>" (GPUs too when there are
  // any); empty before the first.
  std::string Headroom() const;

 private:
  struct TaskState {
    TaskSpec spec;
    int64_t request_id = -1;
    bool allocated = false;
    bool completed = false;
    bool kill_requested = false;
    int port_hint = 0;
    int relaunches = 0;  // by its restart policy, so far
    // A relaunch's old node, asked for strictly until `strict_until` ("" once relaxed).
    std::string strict_host;
    absl::Time strict_until = absl::InfinitePast();
    int priority = 0;
    yarn::Container container;
  };

  // Withdraws the strict requests whose locality wait passed and asks for any node instead.
  void RelaxOverdueRequests() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Whether containers are pending, being stopped or, winding down, still running: the heartbeat
  // is then fast.
  bool Busy() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  void HeartbeatLoop();
  // What the scheduler's answer (or its failure) means; false when the attempt is gone.
  bool HeedVerdict(SchedulerAnswerRule& rule, const absl::StatusOr<yarn::AllocateResult>& result);
  // An answer's headroom, node changes, allocations and completions.
  void OnAllocateAnswer(const yarn::AllocateResult& result);
  void TakeAllocated(const yarn::Container& c);
  void TakeCompleted(const yarn::ContainerStatus& s);
  // Requests the scheduler gave up placing (anti-affinity): the job cannot have those tasks.
  void ReportRejected(const std::vector<std::pair<int64_t, std::string>>& rejected);
  // Containers the scheduler is about to preempt: one kPreemptNotice each, every answer that
  // names them (the AM core hears each container once).
  void ReportPreemption(const yarn::PreemptionNotice& notice);
  void LaunchLoop();
  void Launch(const std::string& task_id, const yarn::Container& container);
  void Emit(TaskContainerEvent event);

  const TaskLauncherOptions options_;
  mutable absl::Mutex headroom_mu_;  // leaf lock
  std::string headroom_ ABSL_GUARDED_BY(headroom_mu_);
  int cluster_nodes_ = 0;  // the last count reported; the heartbeat thread's own
  mutable absl::Mutex mu_;
  std::map<std::string, TaskState> tasks_ ABSL_GUARDED_BY(mu_);
  std::map<int64_t, std::string> by_request_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, std::string> by_container_ ABSL_GUARDED_BY(mu_);
  std::deque<std::string> launch_queue_ ABSL_GUARDED_BY(mu_);
  // Entries of launch_queue_ per task: Kill() asks without scanning the queue (a scan per task
  // made stopping a job whose containers wait for their start calls quadratic).
  std::map<std::string, int> queued_ ABSL_GUARDED_BY(mu_);
  std::vector<std::pair<yarn::ContainerId, yarn::NodeId>> stop_queue_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  // Something for the scheduler now (a request, a container to stop): heartbeat at once.
  bool wake_ ABSL_GUARDED_BY(mu_) = false;
  bool winding_down_ ABSL_GUARDED_BY(mu_) = false;
  bool started_ = false;
  std::thread heartbeat_thread_;
  std::vector<std::thread> launch_threads_;
};

}  // namespace tony::yarnam

#endif  // TONY_YARNAM_TASK_LAUNCHER_H_
