// Copyright libtony authors.
//
// The tony-am process of a local job: reads its configuration from the environment the local
// submitter sets, runs the ApplicationMaster core over LocalResourceManager, publishes the
// broker's port in `<job_dir>/am.port` and the final status in `<job_dir>/status.pb`.
//
//   TONY_SPEC_FILE    the resolved job spec (YAML). Required.
//   TONY_SECRET_FILE  the application secret's file (or TONY_SECRET). Required.
//   TONY_JOB_DIR      the job directory. Required.
//   TONY_APP_ID       the application id. Required.
//   TONY_BIN_DIR      where tony-executor is. Default: next to this program.
//
// SIGTERM, SIGINT and SIGHUP end the job KILLED (every task stopped first).

#ifndef TONY_LOCAL_LOCAL_AM_H_
#define TONY_LOCAL_LOCAL_AM_H_

#include <map>
#include <string>

namespace tony::local {

inline constexpr char kAmPortFile[] = "am.port";
inline constexpr char kStatusFile[] = "status.pb";

// Where local jobs live by default: $TMPDIR (else /tmp) / "tony-jobs-<uid>", this user's alone
// (0700, owned by this user: in a shared /tmp another user could otherwise make it first and
// read or replace a job's secret and spec).
std::string DefaultWorkRoot();

// Returns the process exit code: 0 succeeded, 1 failed or killed, 3 could not run.
int RunLocalApplicationMaster(const std::map<std::string, std::string>& env);

}  // namespace tony::local

#endif  // TONY_LOCAL_LOCAL_AM_H_
