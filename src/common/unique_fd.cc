// Copyright libtony authors.

#include "common/unique_fd.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "absl/strings/str_cat.h"

namespace tony {

void UniqueFd::Reset(int fd) {
  // Linux frees the descriptor even when close fails (EINTR included): never retry.
  if (fd_ >= 0 && fd_ != fd) ::close(fd_);
  fd_ = fd;
}

absl::Status UniqueFd::Close(absl::string_view what) {
  if (fd_ < 0) return absl::OkStatus();
  if (::close(Release()) != 0) {
    return absl::InternalError(absl::StrCat("cannot write ", what, ": ", strerror(errno)));
  }
  return absl::OkStatus();
}

absl::Status WriteAll(int fd, absl::string_view data, absl::string_view what) {
  while (!data.empty()) {
    ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return absl::InternalError(absl::StrCat("cannot write ", what, ": ", strerror(errno)));
    }
    data.remove_prefix(static_cast<size_t>(n));
  }
  return absl::OkStatus();
}

}  // namespace tony
