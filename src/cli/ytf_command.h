// Copyright libtony authors.
//
// `ytf`: follow and control jobs already on YARN — status, kill, list, logs, events. Each
// subcommand is a unit of its own in src/cli/ytf/ (cli/ytf/subcommand.h).

#ifndef TONY_CLI_YTF_COMMAND_H_
#define TONY_CLI_YTF_COMMAND_H_

#include <ostream>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace tony::cli {

// The text of `ytf --help`, or of `ytf <command> --help` for one of its commands.
std::string YtfUsage(absl::string_view command = "");

// `args` excludes the program name. Returns the exit code (0 ok, 1 the job failed or was
// killed for `status`, 2 bad usage, 3 the cluster could not be reached or the job not found).
int RunYtf(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

// `text` fit for a terminal: valid UTF-8, every C0/C1 control character and DEL replaced by '?'
// (other users' application names, queues and user names may carry escape sequences).
std::string TerminalSafe(absl::string_view text);

}  // namespace tony::cli

#endif  // TONY_CLI_YTF_COMMAND_H_
