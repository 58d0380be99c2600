// Copyright libtony authors.
//
// A non-blocking TCP socket whose every blocking operation takes a deadline.

#ifndef TONY_IPC_SOCKET_H_
#define TONY_IPC_SOCKET_H_

#include <cstddef>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "common/unique_fd.h"

namespace tony::ipc {

struct HostPort {
  std::string host;
  int port = 0;
  std::string ToString() const;
};

// Parses "host:port" or "[v6addr]:port".
absl::StatusOr<HostPort> ParseHostPort(absl::string_view address);

// Owns one file descriptor. Not thread-safe, except that Shutdown() may be called from any
// thread to wake a thread blocked in Wait/Read/Write.
class Socket {
 public:
  Socket() = default;
  ~Socket() = default;  // closes the socket
  Socket(Socket&& other) noexcept = default;
  Socket& operator=(Socket&& other) noexcept = default;
  Socket(const Socket&) = delete;
  Socket& operator=(const Socket&) = delete;

  // Connects to the first address of `host` that accepts before the deadline. Failures are
  // ConnectionFailureStatus(kConnect) (see rpc_errors.h).
  static absl::StatusOr<Socket> Connect(const HostPort& address, absl::Time deadline);

  // Writes every byte or fails (Unavailable; DeadlineExceeded at the deadline).
  absl::Status WriteAll(absl::string_view data, absl::Time deadline);
  // Reads exactly n bytes or fails; EOF is OutOfRange, other failures Unavailable.
  absl::Status ReadFull(char* buf, size_t n, absl::Time deadline);
  // Waits until readable (true) or the deadline passes (false).
  absl::StatusOr<bool> WaitReadable(absl::Time deadline);
  // Reads what is available without blocking. `eof` is set when the peer closed; zero bytes
  // without eof means nothing was available.
  struct ReadResult {
    size_t bytes = 0;
    bool eof = false;
  };
  absl::StatusOr<ReadResult> ReadSome(char* buf, size_t n);

  // Shuts both directions down: blocked and later operations fail promptly.
  void Shutdown();
  bool valid() const { return fd_.valid(); }

 private:
  explicit Socket(int fd) : fd_(fd) {}
  absl::Status WaitFor(short events, absl::Time deadline, absl::string_view what);

  UniqueFd fd_;
};

}  // namespace tony::ipc

#endif  // TONY_IPC_SOCKET_H_
