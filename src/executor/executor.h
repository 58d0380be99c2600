// Copyright libtony authors.
//
// Executor: the seed design's "Task Starter", run once per task in its container (or as a
// local process). It reserves a port without a race, registers (job name, index, host, port)
// with the ApplicationMaster's ClusterSpecBroker, waits for the cluster spec, sets the task
// environment (spec/task_env.h), runs the task command with `/bin/bash -c` in its own process
// group, heartbeats, forwards SIGTERM/SIGINT to the group (SIGKILL after the job's stop grace),
// keeps the last lines of the task's stderr, reports the exit code with them, and exits with the
// task's exit code. With a shipped Python env (JobSpec::python_env) the task's PATH, VIRTUAL_ENV
// and PYTHONHOME are set for it (spec/python_env.h).
//
// Configuration, from the environment (docs/executor.md):
//   TONY_AM_ADDRESS          host:port of the broker. Required.
//   HADOOP_TOKEN_FILE_LOCATION  on YARN: the container's token file, whose secret key
//                            "tony.job.secret" is the application secret; or
//   TONY_SECRET_FILE         a 0600 file holding the secret (local mode). One is required. The
//                            secret never travels in the environment; TONY_SECRET_FILE does not
//                            reach the task (the token file does: Hadoop clients need it).
//   TONY_JOB_NAME            this task's job type, e.g. "worker". Required.
//   TONY_TASK_INDEX          this task's index within it. Required.
//   TONY_SPEC_FILE           the job spec (YAML) the task's command and env come from. Required.
//   TONY_TASK_LOG_DIR        directory for the task's `stdout` and `stderr` files. Default: the
//                            executor's own stdout/stderr (YARN sends those to files).
//   TONY_TASK_HOST           host to register. Default: $NM_HOST (YARN), else the hostname.
//   TONY_HEARTBEAT_INTERVAL  between heartbeats, e.g. "5s". Default: 5s.
//   TONY_AM_ADDRESS_DIR      HDFS directory where each attempt of a YARN AM publishes its broker's
//                            address (work-preserving AM restart, broker/am_address.h), listed
//                            through WebHDFS at TONY_NAMENODE_WEB as $HADOOP_USER_NAME (or with
//                            the token file's HDFS delegation token). Default: unset (an AM that
//                            stops answering is gone for good).
//   TONY_HOLD_PORT           "1": hold the reserved port until the task listens on it (needs
//                            SO_REUSEPORT in the task's server, as TensorFlow's gRPC server has);
//                            "0": release it just before the task starts. Default: 1 for
//                            TensorFlow tasks, 0 for TensorBoard and other frameworks.
//
// Exit code: the task's (128 + signal when killed by one); 125 when the executor itself failed
// before the task started (bad configuration, broker refused or unreachable, registration
// deadline).
//
// Thread-compatible: Run() once per process. It owns one heartbeat thread and one registration
// thread, both joined before Run() returns (except on a signal during registration, when the
// process exits at once).

#ifndef TONY_EXECUTOR_EXECUTOR_H_
#define TONY_EXECUTOR_EXECUTOR_H_

#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/clock.h"

namespace tony::executor {

// Every process of a task carries this variable, unique per executor run: how the executor
// finds what left the task's process group and tree (setsid, a double fork) to stop it.
inline constexpr char kTaskInstanceEnv[] = "TONY_TASK_INSTANCE";

inline constexpr int kExecutorFailure = 125;
// A TensorBoard task (job type "tensorboard") whose command exits non-zero is started again, on
// the same port, up to this many times (after 1 s, 2 s, 4 s), each start reported to the AM;
// only the last exit is reported as the task's.
inline constexpr int kMaxTensorBoardRestarts = 3;

struct ExecutorConfig {
  std::string am_address;
  std::string secret;
  // The broker's certificate (PEM) when the job's broker serves TLS: the only one trusted.
  std::string tls_cert_pem;
  std::string job_name;
  int task_index = 0;
  // The job spec YAML; when empty (YARN), the secret key submit::kSpecCredentialAlias of
  // `token_file`, written to ./tony-job.yaml.
  std::string spec_file;
  std::string token_file;  // $HADOOP_TOKEN_FILE_LOCATION. Default: ""
  std::string log_dir;     // Default: "" (own stdout/stderr)
  std::string host;        // Default: "" ($NM_HOST, else the hostname)
  absl::Duration heartbeat_interval = absl::Seconds(5);  // Default: 5s
  // The time heartbeats, the AM's silence and the stop rule (executor/stop_rule.h) are measured
  // by. Default: RealClock().
  Clock* clock = RealClock();
  int hold_port = -1;  // Default: -1 (by framework and job type; see above)
  // The port to reserve when it is free (TONY_TASK_PORT_HINT: a relaunched task's old port, so
  // that it comes back at its old address). Default: 0 (any).
  int port_hint = 0;
  // The task stays in the executor's process group instead of leading its own: in a YARN
  // container (CONTAINER_ID set), whose whole group the NodeManager kills, so that the task
  // cannot outlive a container killed faster than the executor can stop it. Signals then go to
  // the group's processes below the executor. Default: false (own group, as locally).
  bool share_process_group = false;
  // Work-preserving AM restart: where a new AM attempt's address appears, and how to read it.
  // Default: empty (none).
  std::string am_address_dir;
  // The AM attempt that launched this container (from CONTAINER_ID): only later attempts are
  // followed. Default: 0 (unknown: the attempt of the first address published at am_address).
  int am_attempt = 0;
  std::vector<std::string> namenodes;  // WebHDFS "host:port"
  std::string hdfs_user;               // Default: "" (conf::HadoopUserName())
  std::string hdfs_delegation;         // EncodeTokenUrlString form; Default: "" (user.name)
  // HTTPS NameNodes: the CA certificates (PEM) and the names their certificates must carry.
  // Default: empty (plain HTTP).
  std::string namenode_ca_pem;
  std::vector<std::string> namenode_hosts;
};

// Reads the variables above from `env`. InvalidArgument naming the variable when one is missing
// or malformed.
absl::StatusOr<ExecutorConfig> ConfigFromEnvironment(const std::map<std::string, std::string>& env);

// Runs the task; returns the exit code for the executor process.
int RunExecutor(const ExecutorConfig& config);

}  // namespace tony::executor

#endif  // TONY_EXECUTOR_EXECUTOR_H_
