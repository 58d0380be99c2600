// Copyright libtony authors.

#include "submit/artifact_cache.h"

#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <utility>

#include "absl/random/random.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/content_key.h"
#include "common/logging.h"
#include "common/status_macros.h"

namespace tony::submit {
namespace {

std::atomic<bool> warned_not_public{false};

}  // namespace

std::string DefaultCacheDir(const std::string& user) {
  return absl::StrCat("/user/", user, "/.tony-cache");
}

ArtifactCache::ArtifactCache(const hdfs::WebHdfsClient* fs, std::string dir)
    : fs_(fs), dir_(std::move(dir)) {}

yarn::LocalResourceVisibility ArtifactCache::VisibilityFor(const hdfs::FileStatus& file) {
  if (!not_public_) {
    not_public_ = "";
    // Every ancestor of the file, the cache directory included, must be o+x.
    std::string dir = dir_;
    while (!dir.empty()) {
      absl::StatusOr<hdfs::FileStatus> st = fs_->Stat(dir.empty() ? "/" : dir);
      if (!st.ok()) {
        not_public_ = absl::StrCat("cannot check ", dir, ": ", st.status().message());
        break;
      }
      if ((st->permission & 01) == 0) {
        not_public_ = absl::StrFormat(
            "%s has mode %04o, not executable by others (hdfs dfs -chmod o+x %s, or set %s to a "
            "directory whose ancestors are)",
            dir, st->permission & 07777, dir, kCacheDirKey);
        break;
      }
      if (dir == "/") break;
      size_t slash = dir.rfind('/');
      dir = slash == 0 ? "/" : dir.substr(0, slash);
    }
  }
  std::string why = *not_public_;
  if (why.empty() && (file.permission & 04) == 0) {
    why = absl::StrFormat("%s has mode %04o, not readable by others", file.path,
                          file.permission & 07777);
  }
  if (why.empty()) return yarn::LocalResourceVisibility::kPublic;
  if (!warned_not_public.exchange(true)) {
    TONY_LOG(WARNING) << "the HDFS cache cannot be localized PUBLIC (" << why
                      << "): every job's containers download the runtime and Python env again";
  }
  return yarn::LocalResourceVisibility::kApplication;
}

absl::StatusOr<CachedArtifact> ArtifactCache::Put(const std::string& local_path,
                                                  absl::string_view name, absl::string_view ext,
                                                  yarn::LocalResourceType type,
                                                  std::string content_key) {
  if (content_key.empty()) {
    TONY_ASSIGN_OR_RETURN(content_key, FileContentKey(local_path));
  }
  struct stat st;
  if (::stat(local_path.c_str(), &st) != 0) {
    return absl::NotFoundError(absl::StrCat("cannot read ", local_path));
  }
  CachedArtifact out;
  out.path = absl::StrCat(dir_, "/", name, "-", content_key, ext);
  absl::StatusOr<hdfs::FileStatus> cached = fs_->Stat(out.path);
  if (cached.ok() && cached->length != st.st_size) {
    // A copy of other bytes under this name (or a torn one from an old version): replace it.
    TONY_LOG(WARNING) << out.path << " has " << cached->length << " bytes instead of " << st.st_size
                      << "; uploading it again";
    (void)fs_->Delete(out.path, false);
    cached = absl::NotFoundError("replaced");
  }
  if (!cached.ok()) {
    if (!absl::IsNotFound(cached.status())) return cached.status();
    if (!dir_ready_) {
      TONY_RETURN_IF_ERROR(fs_->Mkdirs(dir_, 0755));
      dir_ready_ = true;
    }
    // Our own temporary name, then an atomic rename: readers never see a partial file, and of
    // two clients uploading the same content one rename wins, the other finds it there.
    const std::string tmp = absl::StrCat(dir_, "/.", name, "-", content_key, ext, ".", ::getpid(),
                                         "-", absl::Uniform<uint64_t>(absl::BitGen()), ".tmp");
    hdfs::UploadOptions upload;
    upload.overwrite = false;
    upload.permission = 0644;
    absl::StatusOr<hdfs::FileStatus> put = fs_->Upload(local_path, tmp, upload);
    if (!put.ok()) {
      (void)fs_->Delete(tmp, false);
      return put.status();
    }
    absl::StatusOr<bool> renamed = fs_->Rename(tmp, out.path);
    if (!renamed.ok() || !*renamed) (void)fs_->Delete(tmp, false);
    if (!renamed.ok()) return renamed.status();
    out.uploaded = *renamed;
    cached = fs_->Stat(out.path);
    if (!cached.ok()) return cached.status();
  }
  std::string fs = fs_->options().default_fs;
  while (absl::EndsWith(fs, "/")) fs.pop_back();
  out.resource.url = fs + out.path;
  out.resource.size = cached->length;
  out.resource.timestamp_ms = cached->modification_time_ms;
  out.resource.type = type;
  out.resource.visibility = VisibilityFor(*cached);
  return out;
}

}  // namespace tony::submit
