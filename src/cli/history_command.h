// Copyright libtony authors.
//
// `ytf history` (finished and running jobs from the history directory, or from a history
// server) and `ytf history-server` (the server over that directory, history/history_server.h).
//
// Thread-compatible: each call runs one command.

#ifndef TONY_CLI_HISTORY_COMMAND_H_
#define TONY_CLI_HISTORY_COMMAND_H_

#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "absl/time/time.h"
#include "history/usage_report.h"
#include "submit/yarn_submitter.h"

namespace tony::cli {

struct HistoryArgs {
  // The list's filters and paging as the server's query parameters: user, queue, state, name,
  // tag, from, to, offset, limit.
  std::vector<std::pair<std::string, std::string>> filters;
  bool json = false;
  std::string server;       // http://host:port of a history server; empty: read the directory
  std::string history_dir;  // instead of tony.history.dir
  bool local = false;       // the local backend's jobs (ytf-submit --local) instead: no cluster
  // usage: the grouping and the dates (--by, --from, --to), and --csv (--json above)
  history::UsageOptions usage;
  bool csv = false;
  // history-server
  std::string listen_host = "127.0.0.1";
  int port = 18890;
  absl::Duration scan_interval = absl::Seconds(10);
  absl::Duration max_age = absl::InfiniteDuration();
  int max_jobs = 0;
  std::string index_file;
  bool init_dir = false;            // make the history directory (an admin's step) and exit
  std::string group;                // with init_dir: the directory's group
  std::string spnego_keytab;        // SPNEGO: the server's keys; empty: no authentication
  std::string spnego_principal;     // "HTTP/_HOST@REALM"; empty: any in the keytab
  std::string admin_acl;            // with sign-in: who sees every job; empty: as YARN says
  std::string tensorboard_command;  // TensorBoard on demand; empty: none
  absl::Duration tensorboard_idle = absl::Minutes(30);
  int tensorboard_max = 4;
};

// The cluster's history directory (tony.history.dir, default /tmp/tony-history);
// FailedPrecondition when it is set empty (no event logs).
absl::StatusOr<std::string> ClusterHistoryDir(const submit::YarnCluster& cluster);

// The filters as a query string, each value escaped; InvalidArgument naming the flag for a
// value the server would refuse.
absl::StatusOr<std::string> HistoryQueryString(const HistoryArgs& args);

// Both print to `out`/`err` and return the exit code. Neither needs a ResourceManager: `cluster`
// gives the configuration and HDFS; null with `--server` or `--local`.
int RunHistory(const HistoryArgs& args, submit::YarnCluster* cluster, std::ostream& out,
               std::ostream& err);
// `ytf usage`'s options that do not fit together (--json with --csv, --from not before --to):
// InvalidArgument saying which. RunUsage checks them first too.
absl::Status CheckUsageArgs(const HistoryArgs& args);
// `ytf usage`: what the jobs in the history directory (or --local) held and used, grouped.
int RunUsage(const HistoryArgs& args, submit::YarnCluster* cluster, std::ostream& out,
             std::ostream& err);
// Runs until SIGINT or SIGTERM.
int RunHistoryServer(const HistoryArgs& args, submit::YarnCluster* cluster, std::ostream& out,
                     std::ostream& err);

}  // namespace tony::cli

#endif  // TONY_CLI_HISTORY_COMMAND_H_
