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
#include "absl/strings/string_view.h"
#include "hdfs/webhdfs_client.h"
#include "history/event_log.h"

namespace tony::history {

// The Hadoop configuration key, its default, and the environment variable that carries it from
// the client to the AM. An empty value turns the event log off.
inline constexpr char kHistoryDirKey[] = "tony.history.dir";
inline constexpr char kDefaultHistoryDir[] = "/tmp/tony-history";
inline constexpr char kEnvHistoryDir[] = "TONY_HISTORY_DIR";

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
