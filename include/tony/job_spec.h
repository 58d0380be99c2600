// Copyright libtony authors.
//
// JobSpec: the complete, backend-independent description of a distributed job — its job types
// (roles such as ps, worker, chief), how many tasks each has, what each task needs and runs.
// Built from ytf-submit's options, from a YAML file (docs/job-spec.md), or directly in C++.
//
// Resources resolve from the most specific level that sets them:
//   task level (JobTypeSpec::task_resources[i]) > job level (JobTypeSpec::resources)
//   > general (JobSpec::task_defaults) > built-in defaults (kDefault* below).
//
// Stability: stable API (tony/version.h); fields are added with defaults that keep a job's
// meaning, and the YAML form accepts every earlier version's keys.
//
// Plain value types: not thread-safe to mutate concurrently; const access is safe.

#ifndef TONY_JOB_SPEC_H_
#define TONY_JOB_SPEC_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>
#include "absl/strings/string_view.h"

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "tony/export.h"

namespace tony {

inline constexpr int kDefaultVcores = 1;
inline constexpr int64_t kDefaultMemoryMb = 8192;  // as in ytf-submit's original design
inline constexpr int kDefaultGpus = 0;

enum class Framework { kTensorFlow, kPyTorch, kHorovod, kCustom, kJax, kMpi };

// "tensorflow", "pytorch", "horovod", "custom", "jax", "mpi".
TONY_EXPORT absl::string_view FrameworkName(Framework framework);
TONY_EXPORT absl::StatusOr<Framework> ParseFramework(absl::string_view name);

// A partially specified resource set: unset fields come from the less specific level.
struct Resources {
  std::optional<int> vcores;
  std::optional<int64_t> memory_mb;
  std::optional<int> gpus;

  bool empty() const { return !vcores && !memory_mb && !gpus; }
  friend bool operator==(const Resources& a, const Resources& b) {
    return a.vcores == b.vcores && a.memory_mb == b.memory_mb && a.gpus == b.gpus;
  }
};

// What happens when a task of a job type fails (docs/job-spec.md, "Restart policy").
enum class RestartPolicy {
  kNever,      // a failure is final
  kOnFailure,  // every failure is retried
  kExitCode,   // Kubeflow's semantics: exit codes 1-127 are final, 128-255 (signals) are retried;
               // YARN's lost node (-100), failed disks (-101), preemption (-102) and containers
               // the ResourceManager or its scheduler killed (-106, -108) are always retried
};
enum class RestartScope {
  kTask,  // relaunch just the failed task, at its old address where possible
  kJob,   // end the attempt; YARN's next attempt restarts the whole job (max_attempts)
};
// A task relaunched in scope task that cannot get its old address back: the broker publishes
// the new address (the next cluster-spec version), and then the job fails, escalates to a
// whole-job restart, or goes on (for frameworks that find their peers again by themselves, such
// as PyTorch elastic's rendezvous, or tasks that need no peers).
enum class AddressChange { kFail, kRestartJob, kAccept };

// "never", "on-failure", "exit-code"; "task", "job"; "fail", "restart-job", "accept".
TONY_EXPORT absl::string_view RestartPolicyName(RestartPolicy policy);
TONY_EXPORT absl::string_view RestartScopeName(RestartScope scope);
TONY_EXPORT absl::string_view AddressChangeName(AddressChange change);

struct RestartSpec {
  RestartPolicy policy = RestartPolicy::kNever;  // Default: never
  // Restarts per task (scope task) or whole-job restarts (scope job). Default: 3.
  int max_restarts = 3;
  // Wait before the first restart of a task; doubled for each further one, at most 5 minutes.
  // Default: 10 seconds.
  absl::Duration backoff = absl::Seconds(10);
  RestartScope scope = RestartScope::kJob;                 // Default: job
  AddressChange on_address_change = AddressChange::kFail;  // Default: fail

  friend bool operator==(const RestartSpec& a, const RestartSpec& b) {
    return a.policy == b.policy && a.max_restarts == b.max_restarts && a.backoff == b.backoff &&
           a.scope == b.scope && a.on_address_change == b.on_address_change;
  }
};

// Whether `policy` retries a task that ended with `exit_code` (the command's, 128 + signal, or
// YARN's negative container exit status).
TONY_EXPORT bool IsRetryableExit(RestartPolicy policy, int exit_code);

// When a role's tasks start, relative to another role (docs/job-spec.md, "Dependencies").
enum class DependencyCondition {
  kRegistered,  // once every task of the other role registered: an order of container requests;
                // both roles are in the one cluster spec and start together
  kRunning,     // once every task of the other role runs its command; this role joins later
  kFinished,    // once every task of the other role exited 0 (a preparation stage)
};
// "registered", "running", "finished".
TONY_EXPORT absl::string_view DependencyConditionName(DependencyCondition condition);

// A role that depends on another (TonY's tony.<role>.depends-on). Its tasks are not asked for
// until `when` holds for `role`; a role that joins later (running, finished) gets the cluster
// spec's next version, listing it and every task not yet exited, while the tasks already
// running keep theirs.
struct RoleDependency {
  std::string role;
  DependencyCondition when = DependencyCondition::kFinished;  // Default: finished
  // Waiting longer than this, from when `role` was asked for, fails the job naming both roles.
  // Default: 30 minutes.
  absl::Duration timeout = absl::Minutes(30);

  friend bool operator==(const RoleDependency& a, const RoleDependency& b) {
    return a.role == b.role && a.when == b.when && a.timeout == b.timeout;
  }
};

// An elastic role (PyTorch, docs/elastic.md): its tasks run under torchrun's elastic agent,
// which trains with whichever of them are up, from `min` to `max` (JobTypeSpec::instances).
struct ElasticRange {
  int min = 1;
  int max = 1;

  friend bool operator==(const ElasticRange& a, const ElasticRange& b) {
    return a.min == b.min && a.max == b.max;
  }
};

// One job type (a TensorFlow "job"): a role with `instances` identical tasks.
struct JobTypeSpec {
  std::string name;  // [a-z][a-z0-9_]*, unique within the JobSpec
  int instances = 1;
  Resources resources;                      // job level
  std::map<int, Resources> task_resources;  // task level, by task index
  std::string node_label;                   // Default: "" (the queue's default partition)
  std::string docker_image;                 // Default: "" (JobSpec::docker_image)
  std::string command;                      // Default: "" (JobSpec::command)
  std::map<std::string, std::string> env;   // added to JobSpec::env, overriding it
  // Whether the job's outcome waits for this job type. Default: unset, meaning
  // IsTrackedByDefault(spec, name).
  std::optional<bool> tracked;
  // Default: unset, today's behaviour: a failure fails the attempt (YARN retries the whole job
  // while max_attempts allows).
  std::optional<RestartSpec> restart;
  // Roles whose tasks must be registered, running or finished before this role's start. No
  // cycles. Default: none.
  std::vector<RoleDependency> depends_on;
  // Untracked roles only: once the tracked tasks are done, this role's tasks may run on this
  // long to end by themselves (an evaluator evaluating the last checkpoint) and are stopped
  // after it, the job still succeeding with a warning; one that fails meanwhile fails the job.
  // Default: 0 (stopped at once).
  absl::Duration linger = absl::ZeroDuration();
  // PyTorch only, one role per job: the job trains once `min` of its tasks run, grows to `max`
  // (= instances) as containers come, and survives losing tasks (they are asked for again).
  // Default: unset (every task is needed).
  std::optional<ElasticRange> elastic;
  // At most one task of this role per node (YARN placement constraint, anti-affinity to the
  // role's own allocation tag): a worker's node failing takes one worker with it, and tasks
  // do not share a node's network and disks. Needs a ResourceManager with
  // yarn.resourcemanager.placement-constraints.handler=scheduler; a role may then wait for as
  // many nodes as it has tasks. YAML: anti_affinity: true. Default: false.
  bool anti_affinity = false;
  // Only on nodes whose YARN node attribute matches: "<name>=<value>" or "<name>!=<value>",
  // the name as YARN shows it ("nm.yarn.io/pool=a" for an attribute NodeManagers report;
  // "rm.yarn.io/" when unprefixed). A placement constraint like anti_affinity (same cluster
  // setting; not both on one role yet). YAML: node_attribute. Default: empty (any node).
  std::string node_attribute;
  // This role's preemption grace (JobSpec::preemption_grace), overriding the job's. YAML:
  // jobs.<role>.preemption.grace. Default: unset (the job's).
  std::optional<absl::Duration> preemption_grace;
};

struct JobTimeouts {
  // From job start until every executor has registered; then the job fails naming the missing
  // tasks. Default: 10 minutes.
  absl::Duration registration = absl::Minutes(10);
  // Whole job, from submission. Default: infinite.
  absl::Duration job = absl::InfiniteDuration();
  // SIGTERM to SIGKILL when a task is stopped. Default: 10 seconds.
  absl::Duration stop_grace = absl::Seconds(10);
  // An executor whose ApplicationMaster has not answered a heartbeat for this long (its node
  // died, or it did and nobody is left to stop the task) stops its task and exits, so that
  // nothing of the job runs on without it. Default: 1 minute.
  absl::Duration am_unreachable = absl::Minutes(1);
  // All-or-nothing allocation: when not every task has a container this long after they were
  // asked for, the job releases every container it holds (a partial gang would only keep
  // another job from running), waits (5 s, doubling, at most 1 minute) and asks again, until
  // the registration deadline. Default: 2 minutes.
  absl::Duration allocation = absl::Minutes(2);
};

struct JobSpec {
  std::string name = "TensorFlow";  // YARN application name
  std::string queue = "default";
  std::vector<std::string> tags;
  std::string application_type = "TENSORFLOW";
  // Who besides the job's owner and the cluster's admins may view the job: its history page
  // (diagnostics and stderr tails included) and, through YARN's proxy, its AM page. YARN's ACL
  // syntax: "*" (everyone), or "user1,user2 group1,group2" (" group1" for groups only). Passed to
  // YARN as the application's VIEW_APP ACL. YAML: view_acls. Default: "" (no one else).
  std::string view_acls;
  int max_attempts = 1;  // YARN AM attempts
  // YARN application priority: within a queue, the scheduler serves higher numbers first. The
  // ResourceManager caps it at yarn.cluster.max-application-priority (0 unless a platform team
  // raised it; ytf-submit warns when it was capped) and a queue's ACL may refuse it. YAML:
  // priority. Default: unset (the queue's default-application-priority).
  std::optional<int> priority;
  // With max_attempts >= 2, an AM that crashes leaves the tasks running: YARN keeps their
  // containers, the next attempt adopts them and the executors re-register with it (work-
  // preserving AM restart, docs/yarn-protocol.md). False: every attempt starts every task
  // afresh. YAML: am.work_preserving_restart. Default: true.
  bool work_preserving_restart = true;
  // Task failures on one node after which the job's later containers avoid it (YARN's
  // blacklist); 0 never excludes a node for failures (one YARN reports unhealthy or lost still
  // is). YAML: max_node_failures. Default: 2.
  int max_node_failures = 2;
  // Hosts the job's containers never run on (the user's own knowledge of bad nodes). YAML:
  // exclude_nodes. Default: none.
  std::vector<std::string> exclude_nodes;
  // After YARN's preemption notice for a task's container, the task runs this long (to cut a
  // checkpoint at a point the job chose) and then the AM stops it (SIGTERM, SIGKILL after
  // timeouts.stop_grace) and releases the container; the task is relaunched as after a
  // preemption. YARN still takes the container at its own max_wait_before_kill, whatever this
  // says. 0: the AM never stops it (YARN alone does). YAML: preemption.grace. Default: 0.
  absl::Duration preemption_grace = absl::ZeroDuration();
  Framework framework = Framework::kTensorFlow;

  std::vector<JobTypeSpec> job_types;  // in the order given; must not be empty
  Resources task_defaults;             // general level for every task
  std::string command;                 // the task command, run with /bin/bash -c
  std::map<std::string, std::string> env;
  std::string docker_image;

  std::string input_path;             // DTF_INPUT_PATH
  std::string output_path;            // DTF_OUTPUT_PATH; required with tensorboard
  std::string script_file;            // local file shipped to every task as DTF_TASK_SCRIPT
  std::vector<std::string> files;     // extra local files shipped to every task
  std::vector<std::string> archives;  // extra local archives, unpacked for every task
  // Local directory whose files and subdirectories every task finds in its working directory
  // under their own names (TonY's --src_dir); packed into one archive at submission. In the
  // spec a container reads, where it was unpacked. Default: "" (none).
  std::string source_dir;
  bool tensorboard = false;  // adds an untracked "tensorboard" task
  // What starts TensorBoard; it gets `--logdir <output> --host 0.0.0.0 --port <port>`.
  // Default: "" (`tensorboard`, from the python_env's bin/ when there is one, else the node's
  // PATH).
  std::string tensorboard_command;
  // Local archive (.tar.gz or .zip) of a relocatable Python env, unpacked in every task's
  // container with its bin/ first on PATH (docs/python-env.md). In the spec a container reads,
  // the name of the unpacked env in its working directory. Default: "" (the node's Python).
  std::string python_env;
  bool client_mode = false;  // runs an extra "client" task on the submitting machine
  // A template of the cluster's site file (tony-site.yaml, docs/site-settings.md) the job is
  // built on: the submitter fills from it what the job leaves at its built-in default. YAML:
  // template. Default: "" (the site's defaults alone).
  std::string site_template;

  int am_vcores = 1;           // Default: 1
  int64_t am_memory_mb = 256;  // Default: 256
  std::string am_node_label;   // Default: "" (the queue's default partition)
  JobTimeouts timeouts;

  TONY_EXPORT const JobTypeSpec* FindJobType(absl::string_view name) const;
  TONY_EXPORT JobTypeSpec* FindJobType(absl::string_view name);
  TONY_EXPORT int TotalTasks() const;
};

// One task with everything resolved.
struct TaskSpec {
  std::string job_name;
  int index = 0;
  int vcores = kDefaultVcores;
  int64_t memory_mb = kDefaultMemoryMb;
  int gpus = kDefaultGpus;
  std::string node_label;
  std::string docker_image;
  std::string command;
  std::map<std::string, std::string> env;
  bool tracked = true;
  bool anti_affinity = false;  // JobTypeSpec::anti_affinity
  std::string node_attribute;  // JobTypeSpec::node_attribute

  std::string id() const { return job_name + ":" + std::to_string(index); }
};

// The success policy. In client mode the client task alone decides (it drives the cluster);
// in an MPI job the launcher alone decides (mpirun); otherwise, with a "chief" job type the chief
// alone decides (it is TensorFlow's coordinator: with ParameterServerStrategy workers never exit
// on their own); without one every job type but "ps", "evaluator" and "tensorboard" is tracked.
// Untracked tasks are stopped once the tracked ones are done, and fail the job if they die before
// that.
TONY_EXPORT bool IsTrackedByDefault(const JobSpec& spec, absl::string_view job_name);

// The job name of the client task (JobSpec::client_mode): it runs on the submitting machine,
// gets the cluster's addresses but is no member of the cluster.
inline constexpr char kClientJobName[] = "client";
// The job type of the TensorBoard sidecar (`-t`): untracked, and its death never fails the job.
inline constexpr char kTensorBoardJobName[] = "tensorboard";
// The job type of an MPI job's (--framework mpi) one task that runs `mpirun`: the only tracked
// role, so the job ends with mpirun's exit. The other roles' tasks run Open MPI's daemons
// (docs/mpi.md).
inline constexpr char kMpiLauncherJobName[] = "launcher";
// The job type ExpandElastic adds: one untracked task hosting torch's c10d store, the
// rendezvous of the elastic role's agents, so that it dies with none of them.
inline constexpr char kRendezvousJobName[] = "rendezvous";

// The spec a valid job runs with: unchanged without an elastic role. With one, adds the
// rendezvous role (unless the spec has one), makes the elastic role depend on it running,
// relaunch lost tasks (restart policy on-failure, scope task, accept address changes, unless
// set) and sets torchrun's PET_* variables (docs/elastic.md). A jax job with max_attempts >= 2:
// every role without a restart policy (but ps, evaluator and tensorboard) gets on-failure, scope
// job, max_restarts max_attempts - 1: JAX ends every process when one dies, so the gang restarts
// whole (docs/task-environment.md#jax). Idempotent.
TONY_EXPORT JobSpec ExpandElastic(const JobSpec& spec);

// The client task "client:0" of a spec in client mode: the job's command and environment.
TONY_EXPORT TaskSpec ResolveClientTask(const JobSpec& spec);

// InvalidArgument naming the offending field (as ytf-submit's flag or the YAML key) and how to
// fix it, for the first problem found.
TONY_EXPORT absl::Status ValidateJobSpec(const JobSpec& spec);

// Things in a valid spec that may not do what the user hopes (e.g. scope task for the workers
// of a MultiWorkerMirroredStrategy job, whose collectives do not survive a lost peer), one line
// each, naming the field.
TONY_EXPORT std::vector<std::string> JobSpecWarnings(const JobSpec& spec);

// Every task of a valid spec, job types in order, indices ascending. Adds the tensorboard task
// when `spec.tensorboard` is set and the spec has no "tensorboard" job type of its own.
TONY_EXPORT std::vector<TaskSpec> ResolveTasks(const JobSpec& spec);

// YAML form (docs/job-spec.md). Errors name the key with line and column, e.g.
// "job.yaml:3:5: jobs.worker.instances: expected a positive integer, got 'two'".
TONY_EXPORT absl::StatusOr<JobSpec> ParseJobSpecYaml(absl::string_view yaml,
                                                     absl::string_view source_name);
// Relative `script`, `files` and `archives` in the file are relative to the file's directory
// (the result names them by that path).
TONY_EXPORT absl::StatusOr<JobSpec> LoadJobSpecFile(const std::string& path);

// What JobSpecToYaml() writes besides the spec. Both extra sections are ignored on input.
enum class YamlDetail {
  kSpec,         // the spec alone
  kRoleSummary,  // `summary:` per job type: resources (and the tasks that differ), tracking,
                 // command and its first task's environment, long values shortened; its size
                 // grows linearly with the number of tasks (`ytf-submit --dry-run`)
  kEveryTask,    // `resolved:` every task with its whole environment; each environment lists
                 // every task, so the size grows with the square of the number of tasks
                 // (`ytf-submit --dry-run-tasks`)
};

// Canonical YAML; ParseJobSpecYaml(JobSpecToYaml(s, d)) == s for every valid spec and detail.
TONY_EXPORT std::string JobSpecToYaml(const JobSpec& spec, YamlDetail detail = YamlDetail::kSpec);

TONY_EXPORT bool operator==(const JobTypeSpec& a, const JobTypeSpec& b);
TONY_EXPORT bool operator==(const JobSpec& a, const JobSpec& b);

}  // namespace tony

#endif  // TONY_JOB_SPEC_H_
