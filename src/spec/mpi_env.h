// Copyright libtony authors.
//
// MPI without SSH (--framework mpi, docs/mpi.md). The launcher task runs `mpirun` (Open MPI 4.1)
// over the job's other tasks, which mpirun knows by names of their own ("tony-<job>-<index>",
// one slot each): names that resolve nowhere, so mpirun never takes a task for its own host
// and starts every daemon (orted) through its rsh agent. The agent is the executor in its
// `mpi-rsh` mode (executor/mpi_rsh.h), which hands the daemon's command to the named task's
// executor through the AM's broker instead of over SSH.

#ifndef TONY_SPEC_MPI_ENV_H_
#define TONY_SPEC_MPI_ENV_H_

#include <map>
#include <optional>
#include <string>
#include <utility>

#include "absl/strings/string_view.h"
#include "tony/job_spec.h"

namespace tony {

// The executor's first argument that makes it the rsh agent.
inline constexpr char kMpiRshMode[] = "mpi-rsh";

// "tony-<job>-<index>": the name mpirun knows task `job`:`index` by. Job names have no '-'.
std::string MpiHostName(absl::string_view job, int index);
// The task a name of MpiHostName stands for; nullopt for any other name.
std::optional<std::pair<std::string, int>> ParseMpiHostName(absl::string_view host);

// The launcher's variables in an MPI job (none for other tasks or frameworks): the tasks
// mpirun runs on (every task of the other roles but TensorBoard's, one slot each) and leave to
// run as root (YARN containers of the DefaultContainerExecutor run as the NodeManager's user).
void AddMpiEnv(const JobSpec& spec, const TaskSpec& task, std::map<std::string, std::string>* env);

// Makes `executor` (an absolute path without spaces) in its mpi-rsh mode mpirun's rsh agent.
void ApplyMpiAgent(absl::string_view executor, std::map<std::string, std::string>* env);

}  // namespace tony

#endif  // TONY_SPEC_MPI_ENV_H_
