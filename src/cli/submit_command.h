// Copyright libtony authors.
//
// What `ytf-submit` does once its arguments are parsed: dry run, pick the backend, submit,
// follow progress, forward Ctrl-C as a kill, and map the outcome to an exit code.

#ifndef TONY_CLI_SUBMIT_COMMAND_H_
#define TONY_CLI_SUBMIT_COMMAND_H_

#include <ostream>

#include "cli/submit_args.h"

namespace tony::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitJobFailed = 1;
inline constexpr int kExitUsage = 2;
inline constexpr int kExitInternal = 3;

// Exit code for a parse/validation failure or a submission error.
int ExitCodeFor(const absl::Status& status);

// The backend a submission uses: --local/--yarn as given; otherwise YARN when the Hadoop
// configuration loader finds a directory (conf::FindConfDirs, which ytf and the Submitter's
// loader use too), local processes when it finds none.
Backend ChooseBackend(const SubmitArgs& args);

// `ytf-submit --show_site`: where the site file was looked for and each of its settings with
// its line. Exit 2 for a site file that does not parse.
int RunShowSite(const SubmitArgs& args, std::ostream& out, std::ostream& err);

// Runs the submission, over the cluster's site file (spec/site_config.h) first. `out` gets the
// results a script may read (application id, YAML of a dry run); `err` gets progress and
// diagnostics. Installs SIGINT/SIGTERM handlers while it waits.
int RunSubmit(const SubmitArgs& args, std::ostream& out, std::ostream& err);

}  // namespace tony::cli

#endif  // TONY_CLI_SUBMIT_COMMAND_H_
