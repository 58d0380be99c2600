// Copyright libtony authors.
//
// ytf kill: stop a job.

#include "cli/submit_command.h"
#include "cli/ytf/subcommand.h"

namespace tony::cli::ytf {
namespace {

int RunKill(const Args& args, std::ostream& out, std::ostream& err) {
  int code = kExitOk;
  std::unique_ptr<Application> app = OpenApplication(args, err, &code);
  if (app == nullptr) return code;
  if (!StatusBeforeChange(args, *app, err, &code).ok()) return code;
  if (absl::Status s = app->Kill(); !s.ok()) {
    err << "ytf: kill " << args.app << ": " << s.message() << "\n";
    return kExitInternal;
  }
  auto s = app->Status();
  out << args.app << " " << (s.ok() ? AppStateName(s->state) : "KILLED") << "\n";
  return kExitOk;
}

}  // namespace

const Command& KillCommand() {
  static const Command kCommand = {"kill",
                                   "ytf kill APP                stop the job (it ends KILLED)\n",
                                   R"(ytf kill - stop a job

Usage: ytf kill APP

The ApplicationMaster stops every task and the job ends KILLED (YARN kills it when its AM does
not answer). Exit codes: 0 killed, 1 the job had already finished (its final state is
printed), 2 bad usage, 3 cluster or job not found.
)",
                                   {},
                                   AppOperand,
                                   RunKill};
  return kCommand;
}

}  // namespace tony::cli::ytf
