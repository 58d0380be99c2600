// Copyright libtony authors.
//
// tony-executor: runs one task of a distributed job (see src/executor/executor.h and
// docs/executor.md). Configured by environment variables only, so the secret never appears on a
// command line. Exits with the task's exit code, or 125 when it could not run the task.

#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include "common/subprocess.h"
#include "executor/executor.h"
#include "executor/mpi_rsh.h"
#include "spec/mpi_env.h"
#include "tony/version.h"

int main(int argc, char** argv) {
  if (argc > 1 && std::strcmp(argv[1], "--version") == 0) {
    std::cout << "tony-executor " << TONY_VERSION_STRING << "\n";
    return 0;
  }
  if (argc > 1 && (std::strcmp(argv[1], "--help") == 0 || std::strcmp(argv[1], "-h") == 0)) {
    std::cout << "usage: tony-executor   (configured by TONY_* environment variables; see "
                 "docs/executor.md)\n";
    return 0;
  }
#ifdef TONY_STATIC_EXECUTOR
  // A static glibc cannot load the node's NSS modules reliably: resolve with c-ares.
  setenv("GRPC_DNS_RESOLVER", "ares", /*overwrite=*/0);
#endif
  if (argc > 1 && std::strcmp(argv[1], tony::kMpiRshMode) == 0) {
    // Open MPI's rsh agent in an MPI job's launcher (executor/mpi_rsh.h).
    return tony::executor::RunMpiRsh(std::vector<std::string>(argv + 2, argv + argc),
                                     tony::CurrentEnvironment());
  }
  if (argc > 1) {
    std::cerr << "tony-executor: takes no arguments; configure it through the environment "
                 "(docs/executor.md)\n";
    return 2;
  }
  auto config = tony::executor::ConfigFromEnvironment(tony::CurrentEnvironment());
  if (!config.ok()) {
    std::cerr << config.status().message() << "\n";
    return tony::executor::kExecutorFailure;
  }
  return tony::executor::RunExecutor(*config);
}
