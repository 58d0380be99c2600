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
// Thread-compatible: one cache per submission; the warning flag is process-wide and atomic.

#ifndef TONY_SUBMIT_ARTIFACT_CACHE_H_
#define TONY_SUBMIT_ARTIFACT_CACHE_H_

#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "hdfs/webhdfs_client.h"
#include "yarn/records.h"

namespace tony::submit {

// The configuration key naming the cache directory.
inline constexpr char kCacheDirKey[] = "tony.cache.dir";
// /user/<user>/.tony-cache: beside the private ~/.tony (0700), which PUBLIC could not use.
std::string DefaultCacheDir(const std::string& user);

struct CachedArtifact {
  yarn::LocalResource resource;
  std::string path;       // in HDFS
  bool uploaded = false;  // false: it was in the cache already
};

class ArtifactCache {
 public:
  // `fs` is not owned and must outlive the cache.
  ArtifactCache(const hdfs::WebHdfsClient* fs, std::string dir);

  // The cached copy of `local_path` (uploaded unless there with the same size), named
  // `<name>-<content key><ext>`. `content_key`: the file's key when already known
  // (common/content_key.h), else computed here.
  absl::StatusOr<CachedArtifact> Put(const std::string& local_path, absl::string_view name,
                                     absl::string_view ext, yarn::LocalResourceType type,
                                     std::string content_key = "");

 private:
  // PUBLIC where the directory's ancestors allow it; the first answer is kept.
  yarn::LocalResourceVisibility VisibilityFor(const hdfs::FileStatus& file);

  const hdfs::WebHdfsClient* fs_;
  const std::string dir_;
  bool dir_ready_ = false;
  std::optional<std::string> not_public_;  // why the directory cannot serve PUBLIC ("" if it can)
};

}  // namespace tony::submit

#endif  // TONY_SUBMIT_ARTIFACT_CACHE_H_
