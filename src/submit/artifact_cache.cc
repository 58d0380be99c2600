// Copyright libtony authors.

#include "submit/artifact_cache.h"

#include <fcntl.h>
#include <openssl/evp.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <map>
#include <memory>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/random/random.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/synchronization/mutex.h"
#include "common/content_key.h"
#include "common/logging.h"
#include "common/status_macros.h"
#include "common/unique_fd.h"

namespace tony::submit {
namespace {

std::atomic<bool> warned_not_public{false};

}  // namespace

std::string DefaultCacheDir(const std::string& user) {
  return absl::StrCat("/user/", user, "/.tony-cache");
}

ArtifactCache::ArtifactCache(const hdfs::WebHdfsClient* fs, std::string dir,
                             std::vector<std::string> trusted_owners, std::string fallback_dir)
    : fs_(fs),
      dir_(std::move(dir)),
      trusted_owners_(trusted_owners.begin(), trusted_owners.end()),
      fallback_dir_(std::move(fallback_dir)) {}

absl::Status ArtifactCache::CheckDirectoryChain(const std::string& dir) const {
  if (absl::IsNotFound(fs_->Stat(dir).status())) TONY_RETURN_IF_ERROR(fs_->Mkdirs(dir, 0755));
  TONY_ASSIGN_OR_RETURN(const hdfs::FileStatus root, fs_->Stat("/"));
  // The owner of "/" is HDFS's superuser, who can replace anything anyway.
  for (std::string d = dir;;) {
    TONY_ASSIGN_OR_RETURN(const hdfs::FileStatus st, fs_->Stat(d));
    if (st.owner != fs_->options().user && st.owner != root.owner &&
        !trusted_owners_.contains(st.owner)) {
      return absl::PermissionDeniedError(absl::StrCat(d, " belongs to ", st.owner,
                                                      ", who could replace the files in it (",
                                                      kTrustedOwnersKey, " does not name them)"));
    }
    if ((st.permission & 022) != 0 && (st.permission & 01000) == 0) {
      return absl::PermissionDeniedError(absl::StrFormat(
          "%s has mode %04o: others may rename the files in it (hdfs dfs -chmod +t %s, or o-w)", d,
          st.permission & 07777, d));
    }
    if (d == "/") return absl::OkStatus();
    const size_t slash = d.rfind('/');
    d = slash == 0 || slash == std::string::npos ? "/" : d.substr(0, slash);
  }
}

absl::Status ArtifactCache::ChooseDirectory() {
  if (chosen_) return *chosen_;
  absl::Status checked = CheckDirectoryChain(dir_);
  if (!checked.ok() && !absl::IsPermissionDenied(checked)) {
    chosen_ = checked;  // HDFS could not answer: nothing learned about the directory
    return *chosen_;
  }
  if (!checked.ok()) {
    if (fallback_dir_.empty()) {
      chosen_ = absl::FailedPreconditionError(
          absl::StrCat(kCacheDirKey, "=", dir_, " cannot be trusted: ", checked.message()));
      return *chosen_;
    }
    TONY_LOG(WARNING) << kCacheDirKey << "=" << dir_ << " is not used: " << checked.message()
                      << "; this job's files are uploaded to its private staging instead";
    dir_ = fallback_dir_;
    checked = CheckDirectoryChain(dir_);
    if (!checked.ok()) {
      chosen_ = absl::FailedPreconditionError(
          absl::StrCat("the staging directory ", dir_, " cannot be trusted: ", checked.message()));
      return *chosen_;
    }
  }
  dir_ready_ = true;
  chosen_ = absl::OkStatus();
  return *chosen_;
}

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

absl::StatusOr<std::string> FileSha256(const std::string& path) {
  // Remembered for the process by the file's identity: a multi-GB Python env is hashed once.
  using Identity = std::tuple<dev_t, ino_t, off_t, int64_t, int64_t>;
  ABSL_CONST_INIT static absl::Mutex mu(absl::kConstInit);
  static auto* memo = new std::map<Identity, std::string>();
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  struct stat st;
  if (!fd.valid() || ::fstat(fd.get(), &st) != 0) {
    return absl::NotFoundError(absl::StrCat("cannot read ", path, ": ", std::strerror(errno)));
  }
  const Identity id{st.st_dev, st.st_ino, st.st_size, st.st_mtim.tv_sec, st.st_mtim.tv_nsec};
  {
    absl::MutexLock lock(&mu);
    if (auto it = memo->find(id); it != memo->end()) return it->second;
  }
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  std::unique_ptr<EVP_MD_CTX, void (*)(EVP_MD_CTX*)> owned(ctx, EVP_MD_CTX_free);
  if (ctx == nullptr || EVP_DigestInit_ex(ctx, EVP_sha256(), nullptr) != 1) {
    return absl::InternalError("SHA-256 is not available");
  }
  std::vector<char> buf(1 << 20);
  while (true) {
    const ssize_t n = ::read(fd.get(), buf.data(), buf.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0)
      return absl::DataLossError(absl::StrCat("reading ", path, ": ", std::strerror(errno)));
    if (n == 0) break;
    EVP_DigestUpdate(ctx, buf.data(), static_cast<size_t>(n));
  }
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_DigestFinal_ex(ctx, digest, &len);
  std::string out(reinterpret_cast<char*>(digest), len);
  absl::MutexLock lock(&mu);
  (*memo)[id] = out;
  return out;
}

absl::Status ArtifactCache::Reusable(const hdfs::FileStatus& cached, const std::string& sha256,
                                     int64_t size) const {
  if (cached.length != size) {
    return absl::FailedPreconditionError(
        absl::StrCat("has ", cached.length, " bytes instead of ", size));
  }
  // Whoever may write the file decides what every job that reuses it runs.
  if (cached.owner != fs_->options().user && !trusted_owners_.contains(cached.owner)) {
    return absl::PermissionDeniedError(absl::StrCat("belongs to ", cached.owner, ", not to ",
                                                    fs_->options().user, " (", kTrustedOwnersKey,
                                                    " does not name them)"));
  }
  if ((cached.permission & 022) != 0) {
    return absl::PermissionDeniedError(
        absl::StrFormat("is writable by others (mode %04o)", cached.permission & 07777));
  }
  TONY_ASSIGN_OR_RETURN(std::optional<std::string> recorded,
                        fs_->GetXAttr(cached.path, kSha256XAttr));
  if (!recorded.has_value() || *recorded != sha256) {
    return absl::DataLossError(recorded.has_value() ? "holds other bytes (its SHA-256 differs)"
                                                    : "has no SHA-256 recorded at its upload");
  }
  return absl::OkStatus();
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
  TONY_ASSIGN_OR_RETURN(const std::string sha256, FileSha256(local_path));
  TONY_RETURN_IF_ERROR(ChooseDirectory());
  CachedArtifact out;
  out.path = absl::StrCat(dir_, "/", name, "-", content_key, ext);
  absl::StatusOr<hdfs::FileStatus> cached = fs_->Stat(out.path);
  if (cached.ok()) {
    absl::Status reusable = Reusable(*cached, sha256, st.st_size);
    if (!reusable.ok() && cached->owner != fs_->options().user) {
      // Someone else's copy (a shared cache directory): never used, never touched; ours goes
      // under a name of our own.
      TONY_LOG(WARNING) << out.path << " " << reusable.message() << "; using a copy of "
                        << fs_->options().user << "'s own";
      out.path = absl::StrCat(dir_, "/", name, "-", content_key, "-", fs_->options().user, ext);
      cached = fs_->Stat(out.path);
      if (cached.ok()) reusable = Reusable(*cached, sha256, st.st_size);
    }
    if (cached.ok() && !reusable.ok()) {
      // Our own copy of other bytes (a torn upload of an old version): replaced.
      TONY_LOG(WARNING) << out.path << " " << reusable.message() << "; uploading it again";
      (void)fs_->Delete(out.path, false);
      cached = absl::NotFoundError("replaced");
    }
  }
  if (!cached.ok()) {
    if (!absl::IsNotFound(cached.status())) return cached.status();
    TONY_ASSIGN_OR_RETURN(cached, Upload(local_path, out.path, sha256, &out.uploaded));
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

absl::StatusOr<hdfs::FileStatus> ArtifactCache::Upload(const std::string& local_path,
                                                       const std::string& path,
                                                       const std::string& sha256, bool* uploaded) {
  if (!dir_ready_) {
    TONY_RETURN_IF_ERROR(fs_->Mkdirs(dir_, 0755));
    dir_ready_ = true;
  }
  // Our own temporary name, then an atomic rename: readers never see a partial file, and of two
  // clients uploading the same content one rename wins, the other finds it there. The SHA-256
  // is recorded before the rename, so a file under the final name always has it.
  const size_t slash = path.rfind('/');
  const std::string tmp = absl::StrCat(dir_, "/.", path.substr(slash + 1), ".", ::getpid(), "-",
                                       absl::Uniform<uint64_t>(absl::BitGen()), ".tmp");
  hdfs::UploadOptions upload;
  upload.overwrite = false;
  upload.permission = 0644;
  absl::StatusOr<hdfs::FileStatus> put = fs_->Upload(local_path, tmp, upload);
  absl::Status recorded = put.ok() ? fs_->SetXAttr(tmp, kSha256XAttr, sha256) : put.status();
  if (!recorded.ok()) {
    (void)fs_->Delete(tmp, false);
    return recorded;
  }
  absl::StatusOr<bool> renamed = fs_->Rename(tmp, path);
  if (!renamed.ok() || !*renamed) (void)fs_->Delete(tmp, false);
  if (!renamed.ok()) return renamed.status();
  *uploaded = *renamed;
  TONY_ASSIGN_OR_RETURN(hdfs::FileStatus cached, fs_->Stat(path));
  if (!*renamed) {
    // Another client's rename won: its copy is used only if it passes the same checks.
    TONY_RETURN_IF_ERROR(Reusable(cached, sha256, cached.length));
  }
  return cached;
}

}  // namespace tony::submit
