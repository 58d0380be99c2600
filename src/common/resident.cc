// Copyright libtony authors.

#include "common/resident.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdio>
#include <string>

namespace tony {

void ReleaseReadOnlyFilePages(bool own_binary_only) {
  std::string exe;
  if (own_binary_only) {
    char buf[4096];
    ssize_t n = ::readlink("/proc/self/exe", buf, sizeof(buf) - 1);
    if (n <= 0) return;
    exe.assign(buf, static_cast<size_t>(n));
  }
  // Not an ifstream: this runs in a static executor that keeps its footprint small.
  FILE* smaps = ::fopen("/proc/self/smaps", "re");
  if (smaps == nullptr) return;
  char line[4096 + 256];
  unsigned long start = 0, end = 0;
  bool candidate = false;  // the current mapping: a file's, read-only and private
  while (::fgets(line, sizeof(line), smaps) != nullptr) {
    unsigned long s = 0, e = 0;
    char perms[8] = {0};
    int path_at = 0;
    if (std::sscanf(line, "%lx-%lx %7s %*s %*s %*s %n", &s, &e, perms, &path_at) >= 3 &&
        path_at > 0) {
      std::string path(line + path_at);
      while (!path.empty() && (path.back() == '\n' || path.back() == ' ')) path.pop_back();
      start = s;
      end = e;
      candidate = !path.empty() && path[0] == '/' && (exe.empty() || path == exe) &&
                  perms[1] == '-' && perms[3] == 'p';
      continue;
    }
    // Each mapping's "Anonymous:" line comes after its header: decide there.
    long anon_kb = 0;
    if (candidate && std::sscanf(line, "Anonymous: %ld kB", &anon_kb) == 1) {
      if (anon_kb == 0) ::madvise(reinterpret_cast<void*>(start), end - start, MADV_DONTNEED);
      candidate = false;
    }
  }
  ::fclose(smaps);
}

}  // namespace tony
