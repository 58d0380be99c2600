// Copyright libtony authors.
//
// The task environment (README "Task environment"): the seed's DTF_* variables, TF_CONFIG,
// TonY's CLUSTER_SPEC/JOB_NAME/TASK_INDEX/TASK_NUM/IS_CHIEF, and PyTorch's rendezvous variables.

#include "spec/task_env.h"

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "nlohmann/json.hpp"

namespace tony {
namespace {

constexpr char kUnassigned[] = "<assigned at run time>";

// TensorFlow expects the evaluator outside everyone else's cluster, and TensorBoard in nobody's.
bool InClusterOf(const std::string& job, const TaskSpec& viewer) {
  if (job == "tensorboard") return false;
  if (job == "evaluator") return viewer.job_name == "evaluator";
  return true;
}

// The cluster as this task sees it: job -> addresses, from `cluster` or placeholders.
std::map<std::string, std::vector<std::string>> ClusterView(const JobSpec& spec,
                                                            const TaskSpec& task,
                                                            const ClusterSpec* cluster) {
  std::map<std::string, std::vector<std::string>> view;
  for (const TaskSpec& t : ResolveTasks(spec)) {
    if (!InClusterOf(t.job_name, task)) continue;
    std::string address = kUnassigned;
    if (cluster != nullptr) {
      auto it = cluster->jobs.find(t.job_name);
      if (it != cluster->jobs.end() && t.index < static_cast<int>(it->second.size())) {
        address = it->second[t.index];
      }
    }
    view[t.job_name].push_back(address);
  }
  return view;
}

std::string ChiefJob(const std::map<std::string, std::vector<std::string>>& view) {
  if (view.count("chief")) return "chief";
  if (view.count("master")) return "master";
  if (view.count("worker")) return "worker";
  return "";
}

}  // namespace

std::map<std::string, std::string> BuildTaskEnvironment(const JobSpec& spec, const TaskSpec& task,
                                                        const ClusterSpec* cluster) {
  std::map<std::string, std::string> env = task.env;
  const auto view = ClusterView(spec, task, cluster);
  const std::string index = std::to_string(task.index);

  env["DTF_TASK_JOB_NAME"] = task.job_name;
  env["DTF_TASK_INDEX"] = index;
  // Every job's hosts, whatever the viewer's cluster: the seed's variables are plain lists.
  std::map<std::string, std::vector<std::string>> all;
  for (const TaskSpec& t : ResolveTasks(spec)) {
    std::string address = kUnassigned;
    if (cluster != nullptr) {
      auto it = cluster->jobs.find(t.job_name);
      if (it != cluster->jobs.end() && t.index < static_cast<int>(it->second.size())) {
        address = it->second[t.index];
      }
    }
    all[t.job_name].push_back(address);
  }
  for (const auto& [job, hosts] : all) {
    std::string name = absl::AsciiStrToUpper(job);
    std::replace(name.begin(), name.end(), '-', '_');
    env[absl::StrCat("DTF_", name, "_HOSTS")] = absl::StrJoin(hosts, ",");
  }
  if (!spec.script_file.empty()) {
    size_t slash = spec.script_file.rfind('/');
    env["DTF_TASK_SCRIPT"] =
        slash == std::string::npos ? spec.script_file : spec.script_file.substr(slash + 1);
  }
  if (!spec.input_path.empty()) env["DTF_INPUT_PATH"] = spec.input_path;
  if (!spec.output_path.empty()) env["DTF_OUTPUT_PATH"] = spec.output_path;
  if (!task.docker_image.empty()) env["DTF_DOCKER_IMAGE"] = task.docker_image;

  nlohmann::ordered_json cluster_json = nlohmann::ordered_json::object();
  for (const auto& [job, hosts] : view) cluster_json[job] = hosts;
  nlohmann::ordered_json tf_config = {
      {"cluster", cluster_json},
      {"task", {{"type", task.job_name}, {"index", task.index}}},
  };
  env["TF_CONFIG"] = tf_config.dump();

  int task_num = 0;
  for (const auto& [job, hosts] : view) task_num += static_cast<int>(hosts.size());
  const std::string chief = ChiefJob(view);
  env["CLUSTER_SPEC"] = cluster_json.dump();
  env["JOB_NAME"] = task.job_name;
  env["TASK_INDEX"] = index;
  env["TASK_NUM"] = std::to_string(task_num);
  env["IS_CHIEF"] = (task.job_name == chief && task.index == 0) ? "true" : "false";

  if (spec.framework == Framework::kPyTorch) {
    // Global rank: chief first, then workers, then the other jobs in spec order.
    std::vector<std::pair<std::string, int>> order;
    std::vector<std::string> jobs;
    if (!chief.empty()) jobs.push_back(chief);
    for (const auto& [job, hosts] : view) {
      if (job != chief) jobs.push_back(job);
    }
    int rank = 0, world = 0;
    for (const std::string& job : jobs) {
      for (int i = 0; i < static_cast<int>(view.at(job).size()); ++i) {
        if (job == task.job_name && i == task.index) rank = world;
        ++world;
      }
    }
    std::string master = chief.empty() ? kUnassigned : view.at(chief).front();
    std::string addr = master, port;
    if (size_t colon = master.rfind(':'); colon != std::string::npos && cluster != nullptr) {
      addr = master.substr(0, colon);
      port = master.substr(colon + 1);
    } else {
      port = kUnassigned;
    }
    env["MASTER_ADDR"] = addr;
    env["MASTER_PORT"] = port;
    env["RANK"] = std::to_string(rank);
    env["WORLD_SIZE"] = std::to_string(world);
    env["INIT_METHOD"] = absl::StrCat("tcp://", addr, ":", port);
  }
  return env;
}

}  // namespace tony
