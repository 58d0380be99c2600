// Copyright libtony authors.
//
// The job's event log in HDFS: `<tony.history.dir>/<application id>.jsonl`, appended to by each
// flush of the AM's EventLog (WebHDFS APPEND) and continued by its later attempts. The directory
// is shared by every user of the cluster (made 1777 when libtony creates it, like HDFS's /tmp);
// each log is readable by its owner and the directory's group (0640), where a history server runs.
//
// Thread-compatible (EventLog calls it from one thread at a time).

#ifndef TONY_HISTORY_HDFS_EVENT_SINK_H_
#define TONY_HISTORY_HDFS_EVENT_SINK_H_

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "conf/configuration.h"
#include "hdfs/webhdfs_client.h"
#include "history/event_log.h"

namespace tony::history {

// The Hadoop configuration key, its default, and the environment variable that carries it from
// the client to the AM. An empty value turns the event log off.
inline constexpr char kHistoryDirKey[] = "tony.history.dir";
inline constexpr char kDefaultHistoryDir[] = "/tmp/tony-history";
inline constexpr char kEnvHistoryDir[] = "TONY_HISTORY_DIR";

// How often each task's CPU and memory go into the event log (the history's usage charts get a
// point each time): a Hadoop duration ("15s", "1m"; a bare number is seconds), at least 1 s.
inline constexpr char kUsageIntervalKey[] = "tony.history.usage-interval";
inline constexpr absl::Duration kDefaultUsageInterval = absl::Minutes(1);
inline constexpr char kEnvUsageInterval[] = "TONY_HISTORY_USAGE_INTERVAL";  // whole seconds

// kUsageIntervalKey of `conf` (default kDefaultUsageInterval); InvalidArgument naming the key for
// a value that does not parse or is under a second.
absl::StatusOr<absl::Duration> UsageIntervalFromConf(const conf::Configuration& conf);
// kEnvUsageInterval's value as the AM gets it; kDefaultUsageInterval when unset or invalid.
absl::Duration UsageIntervalFromEnv(const char* value);

std::string EventLogPath(absl::string_view history_dir, absl::string_view app_id);

// Creates the history directory (1777) unless it exists.
absl::Status PrepareHistoryDir(const hdfs::WebHdfsClient& hdfs, const std::string& dir);

class HdfsEventSink : public EventSink {
 public:
  // `hdfs` is not owned and must outlive the sink. The directory is made on the first append
  // (on the EventLog's thread: the AM's start does not wait on HDFS for it).
  HdfsEventSink(const hdfs::WebHdfsClient* hdfs, std::string history_dir, std::string app_id);
  absl::Status Append(const std::string& bytes) override;

 private:
  const hdfs::WebHdfsClient* const hdfs_;
  const std::string dir_;
  const std::string path_;
  bool dir_ready_ = false;
};

}  // namespace tony::history

#endif  // TONY_HISTORY_HDFS_EVENT_SINK_H_
