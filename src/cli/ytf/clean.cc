// Copyright libtony authors.
//
// ytf clean: remove the HDFS staging finished or abandoned jobs left.

#include "cli/submit_command.h"
#include "cli/ytf/subcommand.h"
#include "submit/contract.h"

namespace tony::cli::ytf {
namespace {

int RunClean(const Args& args, std::ostream& out, std::ostream& err) {
  int code = kExitOk;
  std::shared_ptr<submit::YarnCluster> cluster = ConnectCluster(args, err, &code);
  if (cluster == nullptr) return code;
  submit::StagingSweepOptions o;
  o.max_entries = 100000;  // asked for: all of them
  auto swept = submit::SweepStaging(*cluster, o);
  if (!swept.ok()) {
    err << "ytf: " << swept.status().message() << "\n";
    return kExitInternal;
  }
  for (const std::string& app : swept->removed) out << "removed the staging of " << app << "\n";
  out << swept->removed.size() << " staging directories removed, " << swept->kept
      << " kept (jobs still running or being submitted)\n";
  return kExitOk;
}

}  // namespace

const Command& CleanCommand() {
  static const Command kCommand = {
      "clean",
      "ytf clean                   remove the HDFS staging your finished or abandoned jobs left\n",
      R"(ytf clean - remove what your finished or abandoned jobs left in HDFS

Usage: ytf clean

Removes the staging directories (/user/<you>/.tony/staging/<cluster>/<app>) that nothing else will
remove: those of jobs YARN reports finished whose ApplicationMaster was killed before it could
clean up, and those of submissions that never reached YARN (their client died while uploading):
at once when the client that made it ran on this machine and is gone, else once an hour old
(-D tony.staging.orphan-age=<duration> changes that). ytf-submit does the same after each
submission. Prints what it removed.
Exit codes: 0 ok, 2 bad usage, 3 cluster not reachable.
)",
      {},
      NoOperands,
      RunClean};
  return kCommand;
}

}  // namespace tony::cli::ytf
