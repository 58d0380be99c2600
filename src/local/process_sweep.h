// Copyright libtony authors.
//
// Finds (and ends) the processes of a local job by what they carry: every process the local
// backend starts, and everything those start, inherits TONY_APP_ID=<id> in its environment. The
// last line of defence against orphans, and how tests check that nothing was left running.
//
// Thread-safe: free functions without shared state.

#ifndef TONY_LOCAL_PROCESS_SWEEP_H_
#define TONY_LOCAL_PROCESS_SWEEP_H_

#include <sys/types.h>

#include <string>
#include <vector>

namespace tony::local {

inline constexpr char kAppIdEnv[] = "TONY_APP_ID";

// Live (not zombie) processes other than this one whose environment holds TONY_APP_ID=`app_id`,
// or, with `match_cmdline`, whose command line mentions `app_id`.
std::vector<pid_t> FindJobProcesses(const std::string& app_id, bool match_cmdline = false);

// SIGKILLs every process whose environment holds TONY_APP_ID=`app_id` (the command line is not
// enough: a user's `tail -f` of the job's logs must survive); returns how many there were.
int KillJobProcesses(const std::string& app_id);

}  // namespace tony::local

#endif  // TONY_LOCAL_PROCESS_SWEEP_H_
