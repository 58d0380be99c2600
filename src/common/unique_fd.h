// Copyright libtony authors.
//
// An owned file descriptor, closed when it goes out of scope, and a write loop that finishes
// short writes and retries EINTR.
//
// Thread-compatible: a UniqueFd is one owner's; WriteAll has no shared state.

#ifndef TONY_COMMON_UNIQUE_FD_H_
#define TONY_COMMON_UNIQUE_FD_H_

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace tony {

// Move-only owner of one descriptor (-1: none). The destructor closes it and ignores close(2)'s
// error; where that error matters (the last chance a written file reports a full disk), call
// Close() and check its status.
class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  ~UniqueFd() { Reset(); }
  UniqueFd(UniqueFd&& other) noexcept : fd_(other.Release()) {}
  UniqueFd& operator=(UniqueFd&& other) noexcept {
    if (this != &other) Reset(other.Release());
    return *this;
  }
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;

  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  // Gives up ownership: the caller closes the returned descriptor.
  [[nodiscard]] int Release() {
    int fd = fd_;
    fd_ = -1;
    return fd;
  }
  // Closes the held descriptor, if any, and holds `fd` instead.
  void Reset(int fd = -1);
  // Closes now and holds none afterwards. A failed close(2) is a deferred write error (EIO,
  // ENOSPC on NFS): InternalError "cannot write `what`: <errno text>".
  absl::Status Close(absl::string_view what);

 private:
  int fd_ = -1;
};

// Writes all of `data` to `fd`, retrying EINTR and finishing short writes. InternalError naming
// `what` (e.g. the path) and errno's text on failure; the descriptor must be blocking.
absl::Status WriteAll(int fd, absl::string_view data, absl::string_view what);

}  // namespace tony

#endif  // TONY_COMMON_UNIQUE_FD_H_
