// Copyright libtony authors.

#include "tony/job_spec.h"

#include <algorithm>
#include <map>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace tony {

absl::string_view FrameworkName(Framework framework) {
  switch (framework) {
    case Framework::kTensorFlow:
      return "tensorflow";
    case Framework::kPyTorch:
      return "pytorch";
    case Framework::kHorovod:
      return "horovod";
    case Framework::kCustom:
      return "custom";
    case Framework::kJax:
      return "jax";
    case Framework::kMpi:
      return "mpi";
  }
  return "custom";
}

absl::StatusOr<Framework> ParseFramework(absl::string_view name) {
  for (Framework f : {Framework::kTensorFlow, Framework::kPyTorch, Framework::kHorovod,
                      Framework::kCustom, Framework::kJax, Framework::kMpi}) {
    if (name == FrameworkName(f)) return f;
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "unknown framework '", name, "'; use tensorflow, pytorch, jax, mpi, horovod or custom"));
}

const JobTypeSpec* JobSpec::FindJobType(absl::string_view job_name) const {
  for (const JobTypeSpec& jt : job_types) {
    if (jt.name == job_name) return &jt;
  }
  return nullptr;
}

JobTypeSpec* JobSpec::FindJobType(absl::string_view job_name) {
  for (JobTypeSpec& jt : job_types) {
    if (jt.name == job_name) return &jt;
  }
  return nullptr;
}

int JobSpec::TotalTasks() const {
  int total = 0;
  for (const JobTypeSpec& jt : job_types) total += jt.instances;
  if (tensorboard && FindJobType("tensorboard") == nullptr) ++total;
  return total;
}

bool IsTrackedByDefault(const JobSpec& spec, absl::string_view job_name) {
  if (spec.client_mode) return job_name == kClientJobName;
  // mpirun decides: the daemons' tasks are stopped once it ended, and fail the job if they die
  // non-zero before that.
  if (spec.framework == Framework::kMpi) return job_name == kMpiLauncherJobName;
  if (spec.FindJobType("chief") != nullptr) return job_name == "chief";
  return job_name != "ps" && job_name != "tensorboard" && job_name != "evaluator" &&
         job_name != kRendezvousJobName;
}

absl::string_view RestartPolicyName(RestartPolicy policy) {
  switch (policy) {
    case RestartPolicy::kNever:
      return "never";
    case RestartPolicy::kOnFailure:
      return "on-failure";
    case RestartPolicy::kExitCode:
      return "exit-code";
  }
  return "never";
}

absl::string_view RestartScopeName(RestartScope scope) {
  return scope == RestartScope::kTask ? "task" : "job";
}

absl::string_view AddressChangeName(AddressChange change) {
  switch (change) {
    case AddressChange::kFail:
      return "fail";
    case AddressChange::kRestartJob:
      return "restart-job";
    case AddressChange::kAccept:
      return "accept";
  }
  return "fail";
}

absl::string_view DependencyConditionName(DependencyCondition condition) {
  switch (condition) {
    case DependencyCondition::kRegistered:
      return "registered";
    case DependencyCondition::kRunning:
      return "running";
    case DependencyCondition::kFinished:
      return "finished";
  }
  return "finished";
}

bool IsRetryableExit(RestartPolicy policy, int exit_code) {
  if (exit_code == 0) return false;
  switch (policy) {
    case RestartPolicy::kNever:
      return false;
    case RestartPolicy::kOnFailure:
      return true;
    case RestartPolicy::kExitCode:
      // YARN's ContainerExitStatus: ABORTED (lost node, released), DISKS_FAILED, PREEMPTED,
      // KILLED_BY_RESOURCEMANAGER, KILLED_BY_CONTAINER_SCHEDULER. Memory limits (-103, -104)
      // would only recur.
      if (exit_code == -100 || exit_code == -101 || exit_code == -102 || exit_code == -106 ||
          exit_code == -108) {
        return true;
      }
      return exit_code >= 128 && exit_code <= 255;
  }
  return false;
}

std::vector<std::string> JobSpecWarnings(const JobSpec& spec) {
  std::vector<std::string> out;
  if (spec.framework != Framework::kTensorFlow || spec.FindJobType("ps") != nullptr) return out;
  for (const JobTypeSpec& jt : spec.job_types) {
    if ((jt.name == "worker" || jt.name == "chief") && jt.restart &&
        jt.restart->policy != RestartPolicy::kNever && jt.restart->scope == RestartScope::kTask) {
      out.push_back(absl::StrCat(
          "jobs.", jt.name,
          ".restart.scope: task on a TensorFlow job without ps (MultiWorkerMirroredStrategy?): "
          "its collectives do not survive a lost peer, so the other workers may fail or hang "
          "until it is back; scope job restarts them together"));
    }
  }
  return out;
}

namespace {

// TensorBoard serves the output directory on the port the executor reserved for it.
constexpr char kTensorBoardArgs[] =
    " --logdir \"$DTF_OUTPUT_PATH\" --host 0.0.0.0 --port \"$TONY_TASK_PORT\"";

TaskSpec ResolveTask(const JobSpec& spec, const JobTypeSpec& jt, int index) {
  TaskSpec t;
  t.job_name = jt.name;
  t.index = index;
  const Resources* task = nullptr;
  if (auto it = jt.task_resources.find(index); it != jt.task_resources.end()) task = &it->second;
  auto pick = [&](auto member, auto fallback) {
    if (task != nullptr && (task->*member)) return *(task->*member);
    if (jt.resources.*member) return *(jt.resources.*member);
    if (spec.task_defaults.*member) return *(spec.task_defaults.*member);
    return fallback;
  };
  t.vcores = pick(&Resources::vcores, kDefaultVcores);
  t.memory_mb = pick(&Resources::memory_mb, kDefaultMemoryMb);
  t.gpus = pick(&Resources::gpus, kDefaultGpus);
  t.node_label = jt.node_label;
  t.docker_image = jt.docker_image.empty() ? spec.docker_image : jt.docker_image;
  t.command = jt.command.empty() ? spec.command : jt.command;
  t.env = spec.env;
  for (const auto& [k, v] : jt.env) t.env[k] = v;
  t.tracked = jt.tracked.value_or(IsTrackedByDefault(spec, jt.name));
  t.anti_affinity = jt.anti_affinity;
  t.node_attribute = jt.node_attribute;
  return t;
}

}  // namespace

std::vector<TaskSpec> ResolveTasks(const JobSpec& spec) {
  std::vector<TaskSpec> tasks;
  tasks.reserve(spec.TotalTasks());
  for (const JobTypeSpec& jt : spec.job_types) {
    for (int i = 0; i < jt.instances; ++i) tasks.push_back(ResolveTask(spec, jt, i));
  }
  if (spec.tensorboard && spec.FindJobType("tensorboard") == nullptr) {
    JobTypeSpec tb;
    tb.name = "tensorboard";
    tb.instances = 1;
    tb.resources.vcores = 1;
    tb.resources.memory_mb = 1024;
    tb.resources.gpus = 0;
    tb.command =
        absl::StrCat(spec.tensorboard_command.empty() ? "tensorboard" : spec.tensorboard_command,
                     kTensorBoardArgs);
    tasks.push_back(ResolveTask(spec, tb, 0));
  }
  return tasks;
}

namespace {

// Hosts torch's TCPStore on the port the executor reserved, for as long as the job runs.
constexpr char kRendezvousCommand[] =
    "exec \"${TONY_RENDEZVOUS_PYTHON:-python}\" -c 'import os, time; "
    "import torch.distributed as d; "
    "port = int(os.environ[\"TONY_TASK_PORT\"]); "
    "store = d.TCPStore(\"0.0.0.0\", port, is_master=True, wait_for_workers=False, "
    "multi_tenant=True); "
    "print(\"libtony rendezvous: c10d store on port\", port, flush=True); "
    "time.sleep(10 ** 9)'";

// JAX ends every process when one dies: a JAX role restarts as a whole gang, as a new YARN
// attempt, while max_attempts allows (TONY_RESUMED tells the script to resume).
void ApplyJaxRestartDefault(JobSpec* spec) {
  if (spec->framework != Framework::kJax || spec->max_attempts < 2) return;
  for (JobTypeSpec& jt : spec->job_types) {
    if (jt.restart || jt.name == "ps" || jt.name == "evaluator" || jt.name == kTensorBoardJobName) {
      continue;
    }
    RestartSpec r;
    r.policy = RestartPolicy::kOnFailure;
    r.scope = RestartScope::kJob;
    r.max_restarts = spec->max_attempts - 1;
    jt.restart = r;
  }
}

}  // namespace

JobSpec ExpandElastic(const JobSpec& input) {
  JobSpec spec = input;
  ApplyJaxRestartDefault(&spec);
  JobTypeSpec* elastic = nullptr;
  for (JobTypeSpec& jt : spec.job_types) {
    if (jt.elastic) elastic = &jt;
  }
  if (elastic == nullptr) return spec;
  const bool needs_depends =
      std::none_of(elastic->depends_on.begin(), elastic->depends_on.end(),
                   [](const RoleDependency& d) { return d.role == kRendezvousJobName; });
  if (needs_depends) {
    elastic->depends_on.push_back(
        {kRendezvousJobName, DependencyCondition::kRunning, spec.timeouts.registration});
  }
  if (!elastic->restart) {
    RestartSpec r;
    r.policy = RestartPolicy::kOnFailure;
    r.scope = RestartScope::kTask;
    r.max_restarts = 5;
    r.backoff = absl::Seconds(2);
    r.on_address_change = AddressChange::kAccept;
    elastic->restart = r;
  }
  // torchrun reads its options from PET_<OPTION>; the endpoint comes with the cluster spec
  // (BuildTaskEnvironment). The store serves this job alone: one run id is enough.
  const std::map<std::string, std::string> pet = {
      {"PET_NNODES", absl::StrCat(elastic->elastic->min, ":", elastic->elastic->max)},
      {"PET_NPROC_PER_NODE", "1"},
      {"PET_RDZV_BACKEND", "c10d"},
      {"PET_RDZV_ID", "libtony"},
      {"PET_RDZV_CONF", "is_host=false,last_call_timeout=5"},
      {"PET_MAX_RESTARTS", "100"},
      // torch >= 2.4 caches each agent's view of the store it shares between rounds, so an
      // agent joining a running group (a grown or replaced task) waits forever for a key the
      // others never write again; per-round stores avoid that.
      {"TORCH_DISABLE_SHARE_RDZV_TCP_STORE", "1"},
  };
  for (const auto& [k, v] : pet) elastic->env.emplace(k, v);  // the user's win
  if (spec.FindJobType(kRendezvousJobName) == nullptr) {
    JobTypeSpec r;
    r.name = kRendezvousJobName;
    r.resources.vcores = 1;
    r.resources.memory_mb = 512;
    r.resources.gpus = 0;
    r.command = kRendezvousCommand;
    r.tracked = false;
    spec.job_types.insert(spec.job_types.begin(), std::move(r));
  }
  return spec;
}

TaskSpec ResolveClientTask(const JobSpec& spec) {
  TaskSpec t;
  t.job_name = kClientJobName;
  t.index = 0;
  t.vcores = 0;  // it runs outside the cluster: no container
  t.memory_mb = 0;
  t.gpus = 0;
  t.command = spec.command;
  t.env = spec.env;
  t.tracked = true;
  return t;
}

bool operator==(const JobTypeSpec& a, const JobTypeSpec& b) {
  return a.name == b.name && a.instances == b.instances && a.resources == b.resources &&
         a.task_resources == b.task_resources && a.node_label == b.node_label &&
         a.docker_image == b.docker_image && a.command == b.command && a.env == b.env &&
         a.tracked == b.tracked && a.restart == b.restart && a.depends_on == b.depends_on &&
         a.linger == b.linger && a.elastic == b.elastic && a.anti_affinity == b.anti_affinity &&
         a.node_attribute == b.node_attribute && a.preemption_grace == b.preemption_grace;
}

bool operator==(const JobSpec& a, const JobSpec& b) {
  return a.name == b.name && a.queue == b.queue && a.tags == b.tags &&
         a.application_type == b.application_type && a.view_acls == b.view_acls &&
         a.max_attempts == b.max_attempts && a.priority == b.priority &&
         a.max_node_failures == b.max_node_failures && a.exclude_nodes == b.exclude_nodes &&
         a.preemption_grace == b.preemption_grace && a.framework == b.framework &&
         a.job_types == b.job_types && a.task_defaults == b.task_defaults &&
         a.command == b.command && a.env == b.env && a.docker_image == b.docker_image &&
         a.input_path == b.input_path && a.output_path == b.output_path &&
         a.script_file == b.script_file && a.files == b.files && a.archives == b.archives &&
         a.source_dir == b.source_dir && a.tensorboard == b.tensorboard &&
         a.tensorboard_command == b.tensorboard_command && a.python_env == b.python_env &&
         a.client_mode == b.client_mode && a.site_template == b.site_template &&
         a.am_vcores == b.am_vcores && a.am_memory_mb == b.am_memory_mb &&
         a.am_node_label == b.am_node_label &&
         a.work_preserving_restart == b.work_preserving_restart &&
         a.timeouts.registration == b.timeouts.registration && a.timeouts.job == b.timeouts.job &&
         a.timeouts.stop_grace == b.timeouts.stop_grace &&
         a.timeouts.am_unreachable == b.timeouts.am_unreachable &&
         a.timeouts.allocation == b.timeouts.allocation;
}

}  // namespace tony
