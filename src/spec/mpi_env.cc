// Copyright libtony authors.

#include "spec/mpi_env.h"

#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"

namespace tony {
namespace {

constexpr absl::string_view kHostPrefix = "tony-";

}  // namespace

std::string MpiHostName(absl::string_view job, int index) {
  return absl::StrCat(kHostPrefix, job, "-", index);
}

std::optional<std::pair<std::string, int>> ParseMpiHostName(absl::string_view host) {
  if (!absl::ConsumePrefix(&host, kHostPrefix)) return std::nullopt;
  const size_t dash = host.rfind('-');
  if (dash == absl::string_view::npos || dash == 0) return std::nullopt;
  int index = -1;
  if (!absl::SimpleAtoi(host.substr(dash + 1), &index) || index < 0) return std::nullopt;
  const absl::string_view job = host.substr(0, dash);
  if (job.find('-') != absl::string_view::npos) return std::nullopt;
  return std::make_pair(std::string(job), index);
}

void AddMpiEnv(const JobSpec& spec, const TaskSpec& task, std::map<std::string, std::string>* env) {
  if (spec.framework != Framework::kMpi || task.job_name != kMpiLauncherJobName) return;
  std::vector<std::string> hosts;
  for (const JobTypeSpec& jt : spec.job_types) {
    if (jt.name == kMpiLauncherJobName || jt.name == kTensorBoardJobName) continue;
    for (int i = 0; i < jt.instances; ++i) hosts.push_back(MpiHostName(jt.name, i) + ":1");
  }
  const std::string list = absl::StrJoin(hosts, ",");
  (*env)["TONY_MPI_HOSTS"] = list;
  // mpirun's --host when the command gives none; -np defaults to every slot.
  (*env)["OMPI_MCA_orte_default_dash_host"] = list;
  (*env)["OMPI_ALLOW_RUN_AS_ROOT"] = "1";
  (*env)["OMPI_ALLOW_RUN_AS_ROOT_CONFIRM"] = "1";
}

void ApplyMpiAgent(absl::string_view executor, std::map<std::string, std::string>* env) {
  // Open MPI splits the agent at spaces: the path, then the mode argument.
  (*env)["OMPI_MCA_plm_rsh_agent"] = absl::StrCat(executor, " ", kMpiRshMode);
}

}  // namespace tony
