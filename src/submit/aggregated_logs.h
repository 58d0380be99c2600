// Copyright libtony authors.
//
// Task logs from YARN's aggregated log files in HDFS: with yarn.log-aggregation-enable, each
// NodeManager uploads an application's container logs once it ends (one TFile per node,
// yarn/aggregated_log.h) and deletes its own copy, so FetchContainerLog finds nothing.
//
// Where (the TFile controller's layouts; yarn.log-aggregation.TFile.* override the NodeManager's
// keys): <remote-app-log-dir>/<owner>/bucket-<suffix>-tfile/<app number % 10000, 4 digits>/<app>
// (Hadoop 3.3 and later), <remote-app-log-dir>/<owner>/<suffix>-tfile/<app> and, from older
// releases, <remote-app-log-dir>/<owner>/<suffix>/<app>; remote-app-log-dir defaults to
// /tmp/logs, suffix to "logs". Files still being written end in ".tmp" and are skipped.

#ifndef TONY_SUBMIT_AGGREGATED_LOGS_H_
#define TONY_SUBMIT_AGGREGATED_LOGS_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "conf/configuration.h"
#include "submit/contract.h"
#include "submit/yarn_submitter.h"
#include "yarn/aggregated_log.h"
#include "yarn/records.h"

namespace tony::submit {

// The directories an application's aggregated logs may be in, the newest layout first.
std::vector<std::string> AggregatedLogDirs(const conf::Configuration& conf, absl::string_view owner,
                                           const yarn::ApplicationId& id);

// The name of a task's log file in its container's log directory: the AM's stdout and stderr
// are tony-am.stdout and tony-am.stderr (its launch command names them).
std::string ContainerLogFileName(const TaskContainer& container, absl::string_view file);

// Reads the logs of one application's containers from its aggregated log files, each node's
// file fetched and parsed once.
//
// Thread-safety: not thread-safe (it caches what it read).
class AggregatedLogReader {
 public:
  struct Options {
    // The largest node file read (the whole file is parsed in memory). Default: 256 MiB.
    int64_t max_file_bytes = int64_t{256} << 20;
  };

  struct Log {
    std::string contents;
    // The file read, as a URI: "hdfs://nn:8020/tmp/logs/alice/.../nm1_45454".
    std::string source;
  };

  // `owner`: the application's user (the directory is theirs); empty: asked of the
  // ResourceManager.
  AggregatedLogReader(const YarnCluster& cluster, const yarn::ApplicationId& id, std::string owner,
                      Options options);

  // `file` of `container` (as FetchContainerLog names it). NotFound when the application has
  // no aggregated logs (aggregation off, or still running) or they hold no such file;
  // DataLoss naming the file when it is not a readable aggregated log. Ends by `deadline`.
  absl::StatusOr<Log> Read(const TaskContainer& container, absl::string_view file,
                           absl::Time deadline);

 private:
  // Lists the application's directory: the node files, once.
  absl::Status FindNodeFiles(absl::Time deadline);
  absl::StatusOr<const yarn::AggregatedLog*> Parsed(const std::string& path, absl::Time deadline);
  std::string Uri(absl::string_view path) const;

  const YarnCluster& cluster_;
  yarn::ApplicationId id_;
  std::string owner_;
  Options options_;
  std::optional<std::string> dir_;
  absl::Status find_error_;              // no directory with node files
  std::vector<std::string> node_files_;  // full paths
  std::map<std::string, yarn::AggregatedLog> parsed_;
};

}  // namespace tony::submit

#endif  // TONY_SUBMIT_AGGREGATED_LOGS_H_
