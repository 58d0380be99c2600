// Copyright libtony authors.
//
// ClientTask: the client task of client mode (`ytf-submit --client`, the seed design's
// "Client-mode"). Once every task of the job has registered it runs the job's command here, on
// the submitting machine, as "client:0": the same task environment as the others (the cluster's
// addresses, DTF_TASK_JOB_NAME=client, DTF_TASK_INDEX=0) but no member of the cluster and no
// port of its own. It inherits the terminal, so it may be interactive. The ApplicationMaster
// learns of its start, liveness and exit, and its exit decides the job's outcome; when the job
// ends first, the client is stopped.
//
// Not thread-safe: one thread calls Step() regularly (ytf-submit's wait loop does). Heartbeats
// go from a thread of its own (slow status calls, e.g. during a ResourceManager failover, must
// not starve them); it is joined when the client ends or in the destructor.

#ifndef TONY_CLI_CLIENT_TASK_H_
#define TONY_CLI_CLIENT_TASK_H_

#include <functional>
#include <memory>
#include <optional>
#include <ostream>
#include <thread>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/subprocess.h"
#include "tony/job_spec.h"
#include "tony/submitter.h"

namespace tony::cli {

class ClientTask {
 public:
  // `app` is not owned and must outlive this. Messages go to `err`.
  ClientTask(const JobSpec& spec, Application* app, std::ostream& err);
  ~ClientTask();  // stops a client still running

  // Advances: waits up to `wait` for the cluster spec and starts the client once it is known
  // (for as long as the job lives: the AM's deadlines bound that), reports its exit, and stops it
  // without reporting when `job_over` (ended, or being killed by the user).
  void Step(bool job_over, absl::Duration wait);

  bool running() const { return process_ != nullptr && !exit_code_; }

 private:
  void Start(const ClusterSpec& cluster);
  void Stop();
  // Retries `report` a few times: the AM decides the outcome from these reports.
  absl::Status Report(const std::function<absl::Status()>& report);
  void StopHeartbeats();

  const JobSpec spec_;
  Application* const app_;
  std::ostream& err_;
  bool gave_up_ = false;
  std::unique_ptr<Subprocess> process_;
  std::optional<int> exit_code_;
  absl::Mutex mu_;
  bool stop_heartbeats_ ABSL_GUARDED_BY(mu_) = false;
  std::thread heartbeats_;
};

}  // namespace tony::cli

#endif  // TONY_CLI_CLIENT_TASK_H_
