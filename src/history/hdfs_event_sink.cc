// Copyright libtony authors.

#include "history/hdfs_event_sink.h"

#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "common/status_macros.h"

namespace tony::history {

absl::StatusOr<absl::Duration> UsageIntervalFromConf(const conf::Configuration& conf) {
  TONY_ASSIGN_OR_RETURN(
      absl::Duration every,
      conf.GetDuration(kUsageIntervalKey, kDefaultUsageInterval, absl::Seconds(1)));
  if (every < absl::Seconds(1)) {
    return absl::InvalidArgumentError(absl::StrCat(kUsageIntervalKey, " is ",
                                                   absl::FormatDuration(every),
                                                   "; give at least 1s (e.g. 15s or 1m)"));
  }
  return every;
}

absl::Duration UsageIntervalFromEnv(const char* value) {
  int64_t seconds = 0;
  if (value == nullptr || !absl::SimpleAtoi(value, &seconds) || seconds < 1) {
    return kDefaultUsageInterval;
  }
  return absl::Seconds(seconds);
}

std::string EventLogPath(absl::string_view history_dir, absl::string_view app_id) {
  return absl::StrCat(absl::StripSuffix(history_dir, "/"), "/", app_id, ".jsonl");
}

absl::Status PrepareHistoryDir(const hdfs::WebHdfsClient& hdfs, const std::string& dir) {
  TONY_ASSIGN_OR_RETURN(bool exists, hdfs.Exists(dir));
  if (exists) return absl::OkStatus();
  // Every user's AM writes here: world-writable, and sticky so that none removes another's.
  TONY_RETURN_IF_ERROR(hdfs.Mkdirs(dir, 01777));
  // MKDIRS applies the NameNode's umask; the mode is meant as given.
  return hdfs.SetPermission(dir, 01777);
}

HdfsEventSink::HdfsEventSink(const hdfs::WebHdfsClient* hdfs, std::string history_dir,
                             std::string app_id)
    : hdfs_(hdfs), dir_(std::move(history_dir)), path_(EventLogPath(dir_, app_id)) {}

absl::Status HdfsEventSink::Append(const std::string& bytes) {
  if (!dir_ready_) {
    TONY_RETURN_IF_ERROR(PrepareHistoryDir(*hdfs_, dir_));
    dir_ready_ = true;
  }
  hdfs::UploadOptions options;
  options.permission = 0640;
  return hdfs_->AppendString(bytes, path_, options);
}

}  // namespace tony::history
