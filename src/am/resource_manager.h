// Copyright libtony authors.
//
// ResourceManager: how the ApplicationMaster core gets and stops the processes its tasks run in,
// whatever provides them: local processes (local/local_resource_manager.h), YARN containers, or
// a fake in tests (tests/am/fake_resource_manager.h). One container per task; the AM core never
// sees anything backend-specific.
//
// Implementations are thread-safe; events are delivered on the implementation's threads, one
// at a time per task, and the callback must not block.

#ifndef TONY_AM_RESOURCE_MANAGER_H_
#define TONY_AM_RESOURCE_MANAGER_H_

#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "tony/job_spec.h"

namespace tony::am {

struct ContainerEvent {
  enum class Kind {
    kAllocated,      // the task got a container (or local process slot)
    kLaunched,       // its executor started
    kLaunchFailed,   // starting the executor failed; `diagnostics` says why
    kCompleted,      // the container ended with `exit_status` (the executor's exit code, or the
                     // backend's own code such as YARN's -100 for a lost node)
    kFatal,          // the backend itself failed (task_id empty)
    kAllEnded,       // the backend ended every container itself and reports nothing more
                     // (YARN ended the AM's attempt); `diagnostics` say why (task_id empty)
    kNodeState,      // a node changed state: `node`, its state in `diagnostics` ("UNHEALTHY",
                     // "LOST", "RUNNING", ...) (task_id empty)
    kClusterNodes,   // the number of running nodes changed: `exit_status` (task_id empty)
    kPreemptNotice,  // the scheduler is about to take `container_id` back (YARN's
                     // PreemptionMessage): task_id its task, or empty when the backend does not
                     // know it; `diagnostics` "strict" or "contract". May repeat.
  };
  Kind kind = Kind::kAllocated;
  std::string task_id;  // "worker:1"
  std::string container_id;
  int exit_status = 0;
  std::string diagnostics;
  std::string node;       // kAllocated: the node, "host:port", where known
  std::string node_http;  // kAllocated: the node's web address (its log pages), where known
};

class ResourceManager {
 public:
  using EventCallback = std::function<void(const ContainerEvent&)>;

  virtual ~ResourceManager() = default;

  // Every executor gets `executor_env` plus TONY_JOB_NAME and TONY_TASK_INDEX (and whatever the
  // backend adds, such as TONY_TASK_LOG_DIR). Events go to `on_event`.
  virtual absl::Status Start(const std::map<std::string, std::string>& executor_env,
                             EventCallback on_event) = 0;
  // Asks for a container for `task` and launches its executor there once allocated.
  virtual void Request(const TaskSpec& task) = 0;
  // Asks again for a container for `task`, whose previous one has ended (its restart policy,
  // scope task): preferably on `host` (empty: anywhere) and with its executor reserving `port`
  // again (0: any), so that it comes back at its old address. Default: Request(task).
  virtual void Relaunch(const TaskSpec& task, const std::string& host, int port) { Request(task); }
  // Stops the task: SIGTERM to its executor (which forwards it to the task), SIGKILL after
  // `grace`; kCompleted follows. Withdraws the request when nothing was allocated yet (then
  // kCompleted follows at once, with exit status 0 and container_id empty).
  virtual void Kill(const std::string& task_id, absl::Duration grace) = 0;
  // Keeps the job's later containers off these hosts (YARN's blacklist). Default: nothing (a
  // backend with one machine has nowhere else to go).
  virtual void ExcludeNodes(const std::vector<std::string>& hosts) {}
  // Lets later containers use these hosts again (removes them from YARN's blacklist). Default:
  // nothing.
  virtual void IncludeNodes(const std::vector<std::string>& hosts) {}
  // What the scheduler last said the job could still get, for the user ("<4096 MB, 3 vcores>");
  // empty where unknown. Default: empty.
  virtual std::string Headroom() const { return ""; }
  // Why the pending containers wait, in the scheduler's terms: {kind, one line} as
  // ApplicationStatus::wait_kind/wait_reason; empty where unknown. Default: unknown.
  virtual std::pair<std::string, std::string> WhyWaiting() const { return {}; }
  // Releases everything still held (killing what still runs) and joins the backend's threads.
  virtual void Stop() = 0;
};

}  // namespace tony::am

#endif  // TONY_AM_RESOURCE_MANAGER_H_
