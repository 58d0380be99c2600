// Copyright libtony authors.

#include "yarn/local_resource.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace tony::yarn {

absl::StatusOr<LocalResource> LocalFileResource(const std::string& absolute_path,
                                                LocalResourceType type,
                                                LocalResourceVisibility visibility) {
  if (absolute_path.empty() || absolute_path[0] != '/') {
    return absl::InvalidArgumentError(
        absl::StrCat("local resource path must be absolute: '", absolute_path, "'"));
  }
  struct stat st;
  if (::stat(absolute_path.c_str(), &st) != 0) {
    return absl::NotFoundError(absl::StrCat("stat ", absolute_path, ": ", std::strerror(errno)));
  }
  LocalResource r;
  r.url = absl::StrCat("file://", absolute_path);
  r.size = static_cast<int64_t>(st.st_size);
  r.timestamp_ms = static_cast<int64_t>(st.st_mtim.tv_sec) * 1000 + st.st_mtim.tv_nsec / 1000000;
  r.type = type;
  r.visibility = visibility;
  return r;
}

}  // namespace tony::yarn
