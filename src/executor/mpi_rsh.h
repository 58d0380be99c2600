// Copyright libtony authors.
//
// The executor's mpi-rsh mode: Open MPI's rsh agent in an MPI job (--framework mpi,
// docs/mpi.md). mpirun, in the launcher task, runs `tony-executor mpi-rsh <host> <command...>`
// for each daemon (orted) instead of `ssh <host> <command...>`; <host> is a task's name from
// TONY_MPI_HOSTS (spec/mpi_env.h). The agent hands the command to that task's executor through
// the AM's broker (MpiLaunch, authenticated with the job secret from the launcher's container,
// as the executor's own calls are) and lives as long as the daemon does, exiting with its exit
// code, as ssh would. The daemon connects back to mpirun over TCP by itself.

#ifndef TONY_EXECUTOR_MPI_RSH_H_
#define TONY_EXECUTOR_MPI_RSH_H_

#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace tony::executor {

// Exit code of the agent's own failures (ssh's).
inline constexpr int kMpiRshFailure = 255;

struct MpiRshOptions {
  // Between two MpiLaunch calls while the daemon runs. Default: 500 ms.
  absl::Duration poll = absl::Milliseconds(500);
  // The task's executor must take the command within this, and the AM answer again within
  // this when unreachable. Default: 2 minutes.
  absl::Duration deadline = absl::Minutes(2);
};

// The command line to hand over: `words` joined by spaces (ssh's rule: the remote shell parses
// them again), without a `--daemonize` word (the daemon must stay the task's process).
std::string MpiDaemonCommand(const std::vector<std::string>& words);

// `args` are the words after "mpi-rsh"; `env` the launcher task's environment. Returns the exit
// code for the agent's process.
int RunMpiRsh(const std::vector<std::string>& args, const std::map<std::string, std::string>& env,
              const MpiRshOptions& options = {});

}  // namespace tony::executor

#endif  // TONY_EXECUTOR_MPI_RSH_H_
