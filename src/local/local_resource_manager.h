// Copyright libtony authors.
//
// LocalResourceManager: the AM core's backend for local jobs. Every task's "container" is a
// directory `<job_dir>/<job>-<index>/` (its working directory, with the job's script and files
// copied in, the task's `stdout` and `stderr`, and `executor.log`) and one tony-executor process
// started in it. Allocation is immediate; a stopped task gets SIGTERM, then SIGKILL after the
// grace (plus a margin, since the executor escalates to its task itself). Stop() kills what is
// left and sweeps every process that carries the job's TONY_APP_ID, so nothing outlives the job.
//
// Thread-safe. Start() starts one monitor thread (reaps executors, escalates kills, delivers
// kCompleted); Stop() joins it.

#ifndef TONY_LOCAL_LOCAL_RESOURCE_MANAGER_H_
#define TONY_LOCAL_LOCAL_RESOURCE_MANAGER_H_

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "am/resource_manager.h"
#include "common/subprocess.h"

namespace tony::local {

struct LocalResourceManagerOptions {
  std::string executor_path;  // tony-executor; required
  std::string job_dir;        // parent of the task directories; required
  std::string app_id;         // exported as TONY_APP_ID to every process; required
  // Copied into every task directory under their base names (the job's script and files).
  // Default: none.
  std::vector<std::string> files;
  // The environment every executor starts from (PATH, HOME, ...), before the AM's variables.
  // Default: empty.
  std::map<std::string, std::string> base_env;
  // Added to a stopped executor's grace before SIGKILL. Default: 2 seconds.
  absl::Duration kill_margin = absl::Seconds(2);
};

class LocalResourceManager : public am::ResourceManager {
 public:
  explicit LocalResourceManager(LocalResourceManagerOptions options);
  ~LocalResourceManager() override;  // Stop()s

  absl::Status Start(const std::map<std::string, std::string>& executor_env,
                     EventCallback on_event) override;
  void Request(const TaskSpec& task) override;
  // Locally the host is this machine; the executor is asked to reserve `port` again.
  void Relaunch(const TaskSpec& task, const std::string& host, int port) override;
  void Kill(const std::string& task_id, absl::Duration grace) override;
  void Stop() override;

 private:
  struct Task {
    std::unique_ptr<Subprocess> process;
    std::optional<absl::Time> kill_at;
    bool done = false;
  };
  void MonitorLoop();
  void Emit(const am::ContainerEvent& event);

  const LocalResourceManagerOptions options_;
  std::map<std::string, std::string> executor_env_;
  EventCallback on_event_;
  absl::Mutex emit_mu_;  // one event at a time
  absl::Mutex mu_;
  std::map<std::string, Task> tasks_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, int> port_hints_ ABSL_GUARDED_BY(mu_);  // relaunched tasks' old ports
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::thread monitor_;
};

}  // namespace tony::local

#endif  // TONY_LOCAL_LOCAL_RESOURCE_MANAGER_H_
