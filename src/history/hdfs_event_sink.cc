// Copyright libtony authors.

#include "history/hdfs_event_sink.h"

#include <memory>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/logging.h"
#include "common/status_macros.h"

namespace tony::history {

absl::Status PrepareHistoryDir(const hdfs::WebHdfsClient& hdfs, const std::string& dir) {
  TONY_ASSIGN_OR_RETURN(bool exists, hdfs.Exists(dir));
  if (exists) return absl::OkStatus();
  // Every user's AM writes here: world-writable, and sticky so that none removes another's.
  TONY_RETURN_IF_ERROR(hdfs.Mkdirs(dir, 01777));
  // MKDIRS applies the NameNode's umask; the mode is meant as given.
  return hdfs.SetPermission(dir, 01777);
}

absl::StatusOr<hdfs::FileStatus> InitHistoryDir(const hdfs::WebHdfsClient& hdfs,
                                                const std::string& dir, const std::string& group) {
  TONY_RETURN_IF_ERROR(hdfs.Mkdirs(dir, 01777));
  TONY_RETURN_IF_ERROR(hdfs.SetPermission(dir, 01777));
  // HDFS's superuser's (the owner of "/"), whoever made it: an AM trusts no other owner.
  TONY_ASSIGN_OR_RETURN(hdfs::FileStatus root, hdfs.Stat("/"));
  absl::Status owned = hdfs.SetOwner(dir, root.owner, group);
  if (!owned.ok()) {
    return absl::Status(owned.code(),
                        absl::StrCat("making ", dir, " the superuser's (", root.owner,
                                     "): ", owned.message(), "; run it as ", root.owner));
  }
  return hdfs.Stat(dir);
}

std::string UntrustedHistoryDir(const hdfs::FileStatus& dir) {
  if (!dir.is_directory()) return absl::StrCat(dir.path, " is not a directory");
  if ((dir.permission & 022) != 0 && (dir.permission & 01000) == 0) {
    return absl::StrFormat(
        "%s (mode %04o) may be written by others and is not sticky: they could replace a log",
        dir.path, dir.permission);
  }
  return "";
}

std::string UntrustedEventLog(const hdfs::FileStatus& log, absl::string_view user) {
  if (log.is_directory()) return absl::StrCat(log.path, " is a directory");
  if (log.owner != user) {
    return absl::StrCat(log.path, " belongs to ", log.owner, ", not to ", user,
                        " (made before this job's AM could make it)");
  }
  if ((log.permission & 022) != 0) {
    return absl::StrFormat("%s (mode %04o) may be written by others", log.path, log.permission);
  }
  return "";
}

namespace {

// Why the shared directory is not to be written to (also when its owner is neither this user nor
// HDFS's superuser, the owner of "/": a directory's owner may rename any log in it), or "".
absl::StatusOr<std::string> CheckSharedDir(const hdfs::WebHdfsClient& hdfs, const std::string& dir,
                                           absl::string_view user) {
  absl::StatusOr<hdfs::FileStatus> st = hdfs.Stat(dir);
  if (absl::IsNotFound(st.status())) {
    TONY_RETURN_IF_ERROR(PrepareHistoryDir(hdfs, dir));
    st = hdfs.Stat(dir);
  }
  if (!st.ok()) return st.status();
  if (std::string why = UntrustedHistoryDir(*st); !why.empty()) return why;
  if (st->owner == user) return std::string();
  TONY_ASSIGN_OR_RETURN(hdfs::FileStatus root, hdfs.Stat("/"));
  if (st->owner == root.owner) return std::string();
  return absl::StrCat(dir, " belongs to ", st->owner,
                      ", who could rename the logs in it; an HDFS admin makes it with `ytf "
                      "history-server --init_dir ",
                      dir, "`");
}

hdfs::UploadOptions LogFileOptions(int permission) {
  hdfs::UploadOptions options;
  options.overwrite = false;
  options.permission = permission;
  return options;
}

}  // namespace

HdfsEventSink::HdfsEventSink(const hdfs::WebHdfsClient* hdfs, HdfsEventSinkOptions options)
    : hdfs_(hdfs),
      options_(std::move(options)),
      path_(EventLogPath(options_.history_dir, options_.app_id)) {}

absl::Status HdfsEventSink::Append(const std::string& bytes) {
  switch (phase_) {
    case Phase::kUnchecked:
      return Open(bytes);
    case Phase::kShared:
      // Ours and in a directory where no one else can replace it (checked by Open).
      return hdfs_->AppendString(bytes, path_, LogFileOptions(0640));
    case Phase::kFallback:
      return fallback_->Append(bytes);
  }
  return absl::InternalError("unreachable");
}

namespace {

// A failure the next flush may not meet again (the NameNode restarting, a timeout): the shared
// log is tried again then. Anything else (no permission, a file another client holds open)
// would fail every flush, and the log goes to the fallback instead.
bool Transient(const absl::Status& s) {
  return absl::IsUnavailable(s) || absl::IsDeadlineExceeded(s) || absl::IsInternal(s);
}

}  // namespace

absl::Status HdfsEventSink::Open(const std::string& bytes) {
  absl::StatusOr<std::string> why = CheckSharedDir(*hdfs_, options_.history_dir, options_.user);
  if (!why.ok()) {
    if (Transient(why.status())) return why.status();
    return MoveToFallback(std::string(why.status().message()), bytes);
  }
  if (!why->empty()) return MoveToFallback(*why, bytes);
  // Created by us, or an earlier attempt's (or a retried CREATE's) log that is ours.
  absl::StatusOr<hdfs::FileStatus> created =
      hdfs_->UploadString(bytes, path_, LogFileOptions(0640));
  if (created.ok()) {
    phase_ = Phase::kShared;
    return absl::OkStatus();
  }
  if (Transient(created.status())) return created.status();
  // Taken (AlreadyExists), or held open by another client (its lease): whose it is decides.
  absl::StatusOr<hdfs::FileStatus> existing = hdfs_->Stat(path_);
  if (!existing.ok()) {
    return MoveToFallback(std::string(created.status().message()), bytes);
  }
  std::string untrusted = UntrustedEventLog(*existing, options_.user);
  if (untrusted.empty() && !absl::IsAlreadyExists(created.status())) {
    untrusted = std::string(created.status().message());
  }
  if (!untrusted.empty()) return MoveToFallback(untrusted, bytes);
  phase_ = Phase::kShared;
  return hdfs_->AppendString(bytes, path_, LogFileOptions(0640));
}

absl::Status HdfsEventSink::MoveToFallback(const std::string& why, const std::string& bytes) {
  if (options_.fallback_path.empty()) {
    return absl::PermissionDeniedError(absl::StrCat("the event log: ", why));
  }
  TONY_LOG(WARNING) << "the event log goes to " << options_.fallback_path << " instead of " << path_
                    << ": " << why
                    << " (the history server will not show this job; `ytf events` reads it)";
  phase_ = Phase::kFallback;
  path_ = options_.fallback_path;
  fallback_ = std::make_unique<PrivateHdfsEventSink>(hdfs_, path_);
  return fallback_->Append(bytes);
}

PrivateHdfsEventSink::PrivateHdfsEventSink(const hdfs::WebHdfsClient* hdfs, std::string path)
    : hdfs_(hdfs), path_(std::move(path)) {}

absl::Status PrivateHdfsEventSink::Append(const std::string& bytes) {
  if (!dir_ready_) {
    const std::string dir = path_.substr(0, path_.rfind('/'));
    TONY_RETURN_IF_ERROR(hdfs_->Mkdirs(dir, 0700));
    // MKDIRS applies the NameNode's umask and leaves an existing directory's mode as it was.
    TONY_RETURN_IF_ERROR(hdfs_->SetPermission(dir, 0700));
    dir_ready_ = true;
  }
  return hdfs_->AppendString(bytes, path_, LogFileOptions(0600));
}

}  // namespace tony::history
