// Copyright libtony authors.

#include "executor/source_links.h"

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/logging.h"

namespace tony::executor {

absl::Status LinkSourceEntries(const std::string& source_dir, const std::string& work_dir) {
  const std::string dir = source_dir[0] == '/' ? source_dir : work_dir + "/" + source_dir;
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) {
    return absl::FailedPreconditionError(
        absl::StrCat("source_dir: cannot read ", dir, ": ", strerror(errno)));
  }
  std::vector<std::string> names;
  while (dirent* e = ::readdir(d)) {
    const std::string name = e->d_name;
    if (name != "." && name != "..") names.push_back(name);
  }
  ::closedir(d);
  for (const std::string& name : names) {
    // Relative targets keep the links valid wherever the container's directory is seen from.
    const std::string target = absl::StrCat(source_dir, "/", name);
    const std::string link = absl::StrCat(work_dir, "/", name);
    if (::symlink(target.c_str(), link.c_str()) == 0) continue;
    if (errno != EEXIST) {
      return absl::InternalError(absl::StrCat("source_dir: linking ", link, ": ", strerror(errno)));
    }
    char existing[4096];
    ssize_t n = ::readlink(link.c_str(), existing, sizeof(existing));
    if (n >= 0 && std::string(existing, n) == target) continue;  // an earlier run's
    TONY_LOG(WARNING) << "source_dir: " << name
                      << " is taken in the working directory (a shipped file?); "
                         "the sources' one is left out";
  }
  return absl::OkStatus();
}

}  // namespace tony::executor
