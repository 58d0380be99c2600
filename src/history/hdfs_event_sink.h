// Copyright libtony authors.
//
// The job's event log in HDFS: `<tony.history.dir>/<application id>.jsonl`, appended to by each
// flush of the AM's EventLog (WebHDFS APPEND) and continued by its later attempts. The directory
// is shared by every user of the cluster (made 1777 when libtony creates it, like HDFS's /tmp;
// `ytf history-server --init_dir` makes it for an admin); each log is readable by its owner and
// the directory's group (0640), where a history server runs.
//
// Application ids are predictable, so another user can create a job's log name first. A log is
// therefore created only by its own AM (CREATE without overwrite) and appended to only while HDFS
// says this user owns it and nobody else may write it; a directory others may write must be
// sticky (else they could swap the log after the check). When either does not hold, the log goes
// to the user's private fallback path instead, with one warning naming why: the job goes on.
//
// Thread-compatible (EventLog calls it from one thread at a time).

#ifndef TONY_HISTORY_HDFS_EVENT_SINK_H_
#define TONY_HISTORY_HDFS_EVENT_SINK_H_

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "conf/history_keys.h"
#include "hdfs/webhdfs_client.h"
#include "history/event_log.h"

namespace tony::history {

// Creates the history directory (1777) unless it exists.
absl::Status PrepareHistoryDir(const hdfs::WebHdfsClient& hdfs, const std::string& dir);
// What an HDFS admin runs once (`ytf history-server --init_dir`): makes `dir` (or mends an
// existing one) 1777 (every user's AM creates its log there; sticky, so none removes another's),
// owned by HDFS's superuser (the owner of "/", the one owner besides themselves AMs trust: the
// caller must be the superuser), and of `group` unless empty (the history server's: logs are 0640
// and take the directory's group). Returns the directory's status afterwards.
absl::StatusOr<hdfs::FileStatus> InitHistoryDir(const hdfs::WebHdfsClient& hdfs,
                                                const std::string& dir, const std::string& group);

// Why a shared directory or an existing log is not to be written to, or "" when it may be:
// `dir` must be a directory that no one but its owner may write, or sticky; `log` (when it
// exists) must be a regular file owned by `user` that no one else may write.
std::string UntrustedHistoryDir(const hdfs::FileStatus& dir);
std::string UntrustedEventLog(const hdfs::FileStatus& log, absl::string_view user);

// A private log (the fallback, or another file in the user's 0700 directory): its directory is
// made 0700 on the first append, the file 0600. Thread-compatible.
class PrivateHdfsEventSink : public EventSink {
 public:
  PrivateHdfsEventSink(const hdfs::WebHdfsClient* hdfs, std::string path);
  absl::Status Append(const std::string& bytes) override;

 private:
  const hdfs::WebHdfsClient* const hdfs_;
  const std::string path_;
  bool dir_ready_ = false;
};

struct HdfsEventSinkOptions {
  // The shared history directory. Required.
  std::string history_dir;
  std::string app_id;  // Required.
  // The HDFS user this AM writes as: the owner its own log has. Required.
  std::string user;
  // Where the log goes when the shared one cannot be trusted: a file in a directory private to
  // the user (made 0700), e.g. submit::PrivateEventLogPath. Default: "" (no fallback: the
  // appends fail, with the reason).
  std::string fallback_path;
};

class HdfsEventSink : public EventSink {
 public:
  // `hdfs` is not owned and must outlive the sink. The directory is checked (or made) on the
  // first append, on the EventLog's thread: the AM's start does not wait on HDFS for it.
  HdfsEventSink(const hdfs::WebHdfsClient* hdfs, HdfsEventSinkOptions options);
  absl::Status Append(const std::string& bytes) override;

  // The path the lines go to: the shared log, or the fallback once the shared one was refused.
  const std::string& path() const { return path_; }

 private:
  enum class Phase { kUnchecked, kShared, kFallback };

  // The first append: decides where the log goes and writes `bytes` there.
  absl::Status Open(const std::string& bytes);
  // Appends to the fallback path, after a warning that names `why` the shared log was refused.
  absl::Status MoveToFallback(const std::string& why, const std::string& bytes);

  const hdfs::WebHdfsClient* const hdfs_;
  const HdfsEventSinkOptions options_;
  std::string path_;
  Phase phase_ = Phase::kUnchecked;
  std::unique_ptr<PrivateHdfsEventSink> fallback_;  // in kFallback
};

}  // namespace tony::history

#endif  // TONY_HISTORY_HDFS_EVENT_SINK_H_
