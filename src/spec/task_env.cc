// Copyright libtony authors.

#include "spec/task_env.h"

#include "spec/jax_env.h"
#include "spec/mpi_env.h"
#include "spec/python_env.h"

#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "nlohmann/json.hpp"

namespace tony {
namespace {

constexpr char kUnassigned[] = "<assigned at run time>";

// Job types of the cluster, in the spec's order, with the implicit TensorBoard task last (the
// order ResolveTasks uses).
std::vector<std::pair<std::string, int>> JobTypesOf(const JobSpec& spec) {
  std::vector<std::pair<std::string, int>> out;
  for (const JobTypeSpec& jt : spec.job_types) out.emplace_back(jt.name, jt.instances);
  if (spec.tensorboard && spec.FindJobType("tensorboard") == nullptr) {
    out.emplace_back("tensorboard", 1);
  }
  return out;
}

// "host:port" of every task of `job`, or placeholders when the cluster is not known yet.
std::vector<std::string> AddressesOf(const std::string& job, int instances,
                                     const ClusterSpec* cluster) {
  std::vector<std::string> out(instances, kUnassigned);
  if (cluster == nullptr) return out;
  auto it = cluster->jobs.find(job);
  for (int i = 0; i < instances; ++i) {
    out[i] = (it != cluster->jobs.end() && i < static_cast<int>(it->second.size())) ? it->second[i]
                                                                                    : std::string();
  }
  return out;
}

std::string HostOf(const std::string& address) {
  size_t colon = address.rfind(':');
  return colon == std::string::npos ? address : address.substr(0, colon);
}

std::string PortOf(const std::string& address) {
  size_t colon = address.rfind(':');
  return colon == std::string::npos ? address : address.substr(colon + 1);
}

// {"job": ["host:port", ...], ...} in the given order.
nlohmann::ordered_json ClusterJson(
    const std::vector<std::pair<std::string, std::vector<std::string>>>& jobs) {
  nlohmann::ordered_json out = nlohmann::ordered_json::object();
  for (const auto& [name, addresses] : jobs) out[name] = addresses;
  return out;
}

// Job types that join a PyTorch process group: all but the TensorFlow-only roles; the chief
// (rank 0) first.
bool InProcessGroup(absl::string_view job) {
  return job != "ps" && job != "evaluator" && job != "tensorboard" && job != kRendezvousJobName;
}

using Cluster = std::vector<std::pair<std::string, std::vector<std::string>>>;

// The processes of a PyTorch process group or a JAX job, in rank order.
struct ProcessGroup {
  std::vector<std::string> addresses;  // of rank 0, 1, ...
  int rank = -1;                       // this task's; -1 when it is no member
  bool chief_leads = false;            // rank 0 is the chief job's first task
};

// Rank 0 is the chief (or worker 0); then every other member, job types in the spec's order.
ProcessGroup Group(const Cluster& cluster, const std::string& chief_job, const TaskSpec& task) {
  std::vector<const std::pair<std::string, std::vector<std::string>>*> members;
  for (const auto& entry : cluster) {
    if (entry.first == chief_job) members.insert(members.begin(), &entry);
  }
  for (const auto& entry : cluster) {
    if (entry.first != chief_job && InProcessGroup(entry.first)) members.push_back(&entry);
  }
  ProcessGroup group;
  group.chief_leads =
      !members.empty() && members[0]->first == chief_job && !members[0]->second.empty();
  for (const auto* member : members) {
    const auto& [name, addresses] = *member;
    if (name == task.job_name && task.index >= 0 &&
        task.index < static_cast<int>(addresses.size())) {
      group.rank = static_cast<int>(group.addresses.size()) + task.index;
    }
    group.addresses.insert(group.addresses.end(), addresses.begin(), addresses.end());
  }
  return group;
}

// torch.distributed's variables (init_method="env://").
void AddPyTorchEnv(const ProcessGroup& group, bool known, std::map<std::string, std::string>* env) {
  const std::string master = group.chief_leads ? group.addresses[0] : kUnassigned;
  (*env)["MASTER_ADDR"] = known ? HostOf(master) : kUnassigned;
  (*env)["MASTER_PORT"] = known ? PortOf(master) : kUnassigned;
  (*env)["WORLD_SIZE"] = std::to_string(group.addresses.size());
  if (group.rank >= 0) {
    (*env)["RANK"] = std::to_string(group.rank);
    // What torchrun also sets: one process per container, so each is alone on its node.
    (*env)["LOCAL_RANK"] = "0";
    (*env)["LOCAL_WORLD_SIZE"] = "1";
  }
  (*env)["INIT_METHOD"] =
      known ? absl::StrCat("tcp://", HostOf(master), ":", PortOf(master)) : kUnassigned;
}

// What jax.distributed.initialize() and keras.distribution.initialize() need without
// arguments: JAX 0.10 reads only the coordinator from the environment; the process count and
// id reach it through the cluster detector of jax_env.h, Keras 3 reads its own variables.
void AddJaxEnv(const ProcessGroup& group, bool known, std::map<std::string, std::string>* env) {
  const std::string coordinator =
      known && !group.addresses.empty() ? group.addresses[0] : kUnassigned;
  const std::string count = std::to_string(group.addresses.size());
  (*env)["JAX_COORDINATOR_ADDRESS"] = coordinator;
  (*env)["JAX_NUM_PROCESSES"] = count;
  (*env)["KERAS_DISTRIBUTION_JOB_ADDRESSES"] =
      known ? absl::StrJoin(group.addresses, ",") : kUnassigned;
  (*env)["KERAS_DISTRIBUTION_NUM_PROCESSES"] = count;
  if (group.rank >= 0) {
    (*env)["JAX_PROCESS_ID"] = std::to_string(group.rank);
    (*env)["KERAS_DISTRIBUTION_PROCESS_ID"] = std::to_string(group.rank);
  }
}

}  // namespace

std::map<std::string, std::string> BuildTaskEnvironment(const JobSpec& spec, const TaskSpec& task,
                                                        const ClusterSpec* cluster) {
  // The user's variables (the spec's, overridden by the job type's: ResolveTasks merged them)
  // first; the variables below are libtony's contract with the task and win over them.
  std::map<std::string, std::string> env = task.env;
  const auto job_types = JobTypesOf(spec);

  std::vector<std::pair<std::string, std::vector<std::string>>> all;
  for (const auto& [name, instances] : job_types) {
    // A published spec leaves out roles that start in a later round or finished before it
    // (depends_on): they are no part of this task's cluster.
    if (cluster != nullptr && cluster->jobs.count(name) == 0) continue;
    all.emplace_back(name, AddressesOf(name, instances, cluster));
  }

  // The seed design's variables.
  env["DTF_TASK_JOB_NAME"] = task.job_name;
  env["DTF_TASK_INDEX"] = std::to_string(task.index);
  for (const auto& [name, addresses] : all) {
    std::string var = absl::AsciiStrToUpper(name);
    for (char& c : var) {
      if (c == '-') c = '_';
    }
    env[absl::StrCat("DTF_", var, "_HOSTS")] = absl::StrJoin(addresses, ",");
  }
  if (!spec.script_file.empty()) {
    size_t slash = spec.script_file.rfind('/');
    env["DTF_TASK_SCRIPT"] =
        slash == std::string::npos ? spec.script_file : spec.script_file.substr(slash + 1);
  }
  if (!spec.input_path.empty()) env["DTF_INPUT_PATH"] = spec.input_path;
  if (!spec.output_path.empty()) env["DTF_OUTPUT_PATH"] = spec.output_path;
  if (!task.docker_image.empty()) env["DTF_DOCKER_IMAGE"] = task.docker_image;

  // The task's own port, e.g. for TensorBoard's --port.
  std::string own_address = kUnassigned;
  for (const auto& [name, addresses] : all) {
    if (name == task.job_name && task.index >= 0 &&
        task.index < static_cast<int>(addresses.size())) {
      own_address = addresses[task.index];
    }
  }
  // The client (client mode) is no member of the cluster: no port, no place in TF_CONFIG.
  const bool is_client = task.job_name == kClientJobName && spec.client_mode;
  if (!is_client) env["TONY_TASK_PORT"] = cluster == nullptr ? kUnassigned : PortOf(own_address);

  // TensorFlow's view: TensorBoard is no task of the cluster, and an evaluator is left out of
  // every cluster but its own (TensorFlow rejects an evaluator in the workers' cluster).
  std::vector<std::pair<std::string, std::vector<std::string>>> tf_cluster;
  std::vector<std::pair<std::string, std::vector<std::string>>> full_cluster;
  for (const auto& entry : all) {
    if (entry.first == "tensorboard") continue;
    full_cluster.push_back(entry);
    if (entry.first == "evaluator" && task.job_name != "evaluator") continue;
    tf_cluster.push_back(entry);
  }
  if (is_client) {
    nlohmann::ordered_json tf_config = {{"cluster", ClusterJson(tf_cluster)}};
    env["TF_CONFIG"] = tf_config.dump();
  } else if (task.job_name != "tensorboard") {
    nlohmann::ordered_json tf_config = {
        {"cluster", ClusterJson(tf_cluster)},
        {"task", {{"type", task.job_name}, {"index", task.index}}},
    };
    env["TF_CONFIG"] = tf_config.dump();
  }

  // TonY's variables.
  int task_num = 0;
  std::string chief_job = "worker";  // TensorFlow's rule: chief:0, else worker:0
  for (const auto& [name, addresses] : full_cluster) {
    task_num += static_cast<int>(addresses.size());
    if ((name == "chief" || name == "master") && !addresses.empty()) chief_job = name;
  }
  const JobTypeSpec* own_type = spec.FindJobType(task.job_name);
  const bool elastic = own_type != nullptr && own_type->elastic.has_value();
  env["CLUSTER_SPEC"] = ClusterJson(full_cluster).dump();
  // An elastic role's agents find each other through the rendezvous task's store.
  if (elastic) {
    for (const auto& [name, addresses] : all) {
      if (name == kRendezvousJobName && !addresses.empty()) {
        env["PET_RDZV_ENDPOINT"] = addresses[0];
      }
    }
  }
  env["JOB_NAME"] = task.job_name;
  env["TASK_INDEX"] = std::to_string(task.index);
  env["TASK_NUM"] = std::to_string(task_num);
  env["IS_CHIEF"] = (task.job_name == chief_job && task.index == 0) ? "true" : "false";

  // An elastic role's ranks and master come from torchrun's rendezvous, not from here.
  if (spec.framework == Framework::kPyTorch && !elastic) {
    AddPyTorchEnv(Group(full_cluster, chief_job, task), cluster != nullptr, &env);
  }
  if (spec.framework == Framework::kJax) {
    AddJaxEnv(Group(full_cluster, chief_job, task), cluster != nullptr, &env);
  }
  AddMpiEnv(spec, task, &env);
  if (cluster == nullptr && !spec.python_env.empty() && !is_client) {
    // A dry run shows what the executor will do in the container (python_env.h).
    if (env.find("PATH") == env.end()) env["PATH"] = "<the node's PATH>";
    ApplyPythonEnv(absl::StrCat("<container dir>/", kPythonEnvLink), false, &env);
    env["PYTHONHOME"] = "<unset>";
  }
  if (cluster == nullptr && spec.framework == Framework::kJax && !is_client) {
    ApplyJaxPlugin(absl::StrCat("<container dir>/", kJaxPluginDir), &env);
  }
  if (cluster == nullptr && spec.framework == Framework::kMpi &&
      task.job_name == kMpiLauncherJobName) {
    ApplyMpiAgent("<the executor>", &env);
  }
  return env;
}

}  // namespace tony
