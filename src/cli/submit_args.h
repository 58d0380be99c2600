// Copyright libtony authors.
//
// ytf-submit's command line: parsed into a JobSpec (merged over --spec FILE) plus the options
// that steer the submission itself. Parsing never touches the cluster.

#ifndef TONY_CLI_SUBMIT_ARGS_H_
#define TONY_CLI_SUBMIT_ARGS_H_

#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "tony/job_spec.h"

namespace tony::cli {

enum class Backend { kAuto, kLocal, kYarn };

struct SubmitArgs {
  JobSpec spec;
  Backend backend = Backend::kAuto;  // Default: YARN when a Hadoop configuration is found
  bool dry_run = false;
  bool dry_run_tasks = false;  // --dry-run-tasks: every task's whole environment
  bool detach = false;
  bool help = false;
  bool version = false;
  bool show_site = false;  // --show_site: print the site file's settings and exit
  bool quiet = false;
  std::string conf_dir;     // --conf_dir; Default: "" (conf::FindConfDirs' search)
  std::string principal;    // --principal; Default: "" (Kerberos: the ticket cache)
  std::string keytab;       // --keytab; Default: ""
  bool broker_tls = false;  // --broker_tls; Default: false (on anyway for Kerberos clusters)
  std::map<std::string, std::string> conf_overrides;  // -D key=value
};

// `args` excludes the program name. InvalidArgument names the flag (or YAML key) and the fix.
// With --help, --version or --show_site nothing else is checked (but --conf_dir is read).
absl::StatusOr<SubmitArgs> ParseSubmitArgs(const std::vector<std::string>& args);

// The text of `ytf-submit --help`.
std::string SubmitUsage();

}  // namespace tony::cli

#endif  // TONY_CLI_SUBMIT_ARGS_H_
