// Copyright libtony authors.
//
// The tony-am process on YARN (TONY_AM_BACKEND=yarn, set by the YARN submitter): the AM core over
// YarnResourceManager. Registers with the ResourceManager as soon as the broker listens (the
// broker's port is the AM's RPC port in the application report), unregisters with the job's
// outcome and diagnostics, and logs `TONY_PHASE <name> <unix ms>` lines for bench/.
//
// SIGTERM, SIGINT and SIGHUP end the job KILLED (every task stopped first).

#ifndef TONY_YARNAM_RUN_YARN_AM_H_
#define TONY_YARNAM_RUN_YARN_AM_H_

#include <map>
#include <string>

namespace tony::yarnam {

// Returns the process exit code: 0 once unregistered (whatever the job's outcome, which YARN
// reports), 3 when the AM could not run or unregister.
int RunYarnApplicationMaster(const std::map<std::string, std::string>& env);

}  // namespace tony::yarnam

#endif  // TONY_YARNAM_RUN_YARN_AM_H_
