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
// Not thread-safe: one thread calls Step() regularly (ytf-submit's wait loop does).

#ifndef TONY_CLI_CLIENT_TASK_H_
#define TONY_CLI_CLIENT_TASK_H_

#include <memory>
#include <optional>
#include <ostream>

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

  // Advances: waits up to `wait` for the cluster spec and starts the client once it is known,
  // reports its liveness and exit, and stops it when `job_over`.
  void Step(bool job_over, absl::Duration wait);

  bool running() const { return process_ != nullptr && !exit_code_; }

 private:
  void Start(const ClusterSpec& cluster);
  void Stop();

  const JobSpec spec_;
  Application* const app_;
  std::ostream& err_;
  const absl::Time deadline_;  // for the cluster spec
  bool gave_up_ = false;
  std::unique_ptr<Subprocess> process_;
  std::optional<int> exit_code_;
  absl::Time next_heartbeat_ = absl::InfinitePast();
};

}  // namespace tony::cli

#endif  // TONY_CLI_CLIENT_TASK_H_
