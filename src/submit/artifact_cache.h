// Copyright libtony authors.
//
// The content-addressed HDFS cache of what jobs ship unchanged from one job to the next (the
// runtime bundle, Python environments): each file is uploaded once, as <dir>/<name>-<key><ext>,
// and localized with PUBLIC visibility where YARN allows it, so that every NodeManager
// downloads and unpacks it once for all jobs that use it.
//
// YARN localizes a resource PUBLIC only when the file is readable by others and every ancestor
// directory is executable by others (FSDownload.isPublic); otherwise the cache still saves the
// upload, and the resource is localized per application (APPLICATION visibility), which is said
// once per process as a warning.
//
// Concurrent first uploads of the same content never corrupt it: each client writes its own
// temporary name and renames it into place; a rename that finds the file there already drops
// the temporary copy.
//
// A cached copy is trusted only as far as its writer: it is reused only when it belongs to this
// user (or to an owner tony.cache.trusted-owners names), nobody else may write it, and its
// SHA-256, recorded at upload as the extended attribute user.tony.sha256, equals the local
// file's. Someone else's copy in a shared cache directory is never used: this user's own goes
// under `<name>-<key>-<user><ext>` beside it. (Name and size alone once let another user of a
// shared tony.cache.dir substitute tony-am.)
//
// Checking a file is worth nothing if someone else can rename it away and put another in its
// place before YARN localizes it (HDFS lets a file's owner set its modification time, the one
// thing YARN compares). So the cache directory and every ancestor must belong to this user, a
// trusted owner or the superuser (the owner of "/"), and be writable by nobody else unless
// sticky (mode 1777, as HDFS's /tmp). A directory that fails is not used at all: the files go
// to `fallback_dir` (the job's private staging), with a warning naming the directory and why.
//
// Thread-compatible: one cache per submission; the warning flag is process-wide and atomic.

#ifndef TONY_SUBMIT_ARTIFACT_CACHE_H_
#define TONY_SUBMIT_ARTIFACT_CACHE_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "hdfs/webhdfs_client.h"
#include "yarn/records.h"

namespace tony::submit {

// The configuration key naming the cache directory.
inline constexpr char kCacheDirKey[] = "tony.cache.dir";
// Users whose cached copies may be reused besides this user's own (comma-separated), e.g. the
// account a platform team pre-populates a shared cache with.
inline constexpr char kTrustedOwnersKey[] = "tony.cache.trusted-owners";
// The extended attribute holding a cached file's SHA-256 (32 raw bytes).
inline constexpr char kSha256XAttr[] = "user.tony.sha256";

// The SHA-256 (32 raw bytes) of a local file's content; remembered for the process by the file's
// identity (device, inode, size, modification time).
absl::StatusOr<std::string> FileSha256(const std::string& path);
// /user/<user>/.tony-cache: beside the private ~/.tony (0700), which PUBLIC could not use.
std::string DefaultCacheDir(const std::string& user);

struct CachedArtifact {
  yarn::LocalResource resource;
  std::string path;       // in HDFS
  bool uploaded = false;  // false: it was in the cache already
};

class ArtifactCache {
 public:
  // `fs` is not owned and must outlive the cache; its user is this user. `fallback_dir`: where
  // files go when `dir` fails the check above; "" makes that FailedPrecondition.
  ArtifactCache(const hdfs::WebHdfsClient* fs, std::string dir,
                std::vector<std::string> trusted_owners = {}, std::string fallback_dir = "");

  // The cached copy of `local_path` (uploaded unless a trusted copy of the same SHA-256 is
  // there), named `<name>-<content key><ext>`. `content_key`: the file's key when already known
  // (common/content_key.h), else computed here.
  absl::StatusOr<CachedArtifact> Put(const std::string& local_path, absl::string_view name,
                                     absl::string_view ext, yarn::LocalResourceType type,
                                     std::string content_key = "");

 private:
  // OK if nobody but this user, a trusted owner or the superuser can replace what is in `dir`
  // (made here, 0755, when missing); else why not.
  absl::Status CheckDirectoryChain(const std::string& dir) const;
  // Picks dir_ on the first call: the configured directory or the fallback.
  absl::Status ChooseDirectory();
  // PUBLIC where the directory's ancestors allow it; the first answer is kept.
  yarn::LocalResourceVisibility VisibilityFor(const hdfs::FileStatus& file);
  // OK if `cached` may stand for a local file of `size` bytes and this SHA-256; else why not.
  absl::Status Reusable(const hdfs::FileStatus& cached, const std::string& sha256,
                        int64_t size) const;
  // Uploads to `path` through a temporary name with the SHA-256 recorded; *uploaded is false
  // when another client's identical copy won the rename.
  absl::StatusOr<hdfs::FileStatus> Upload(const std::string& local_path, const std::string& path,
                                          const std::string& sha256, bool* uploaded);

  const hdfs::WebHdfsClient* fs_;
  std::string dir_;  // the configured directory, or the fallback once it failed the check
  const absl::flat_hash_set<std::string> trusted_owners_;
  const std::string fallback_dir_;
  std::optional<absl::Status> chosen_;  // set by ChooseDirectory
  bool dir_ready_ = false;
  std::optional<std::string> not_public_;  // why the directory cannot serve PUBLIC ("" if it can)
};

}  // namespace tony::submit

#endif  // TONY_SUBMIT_ARTIFACT_CACHE_H_
