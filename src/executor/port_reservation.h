// Copyright libtony authors.
//
// PortReservation: a port reserved for a task without a race. The socket is bound (0.0.0.0,
// SO_REUSEADDR + SO_REUSEPORT) and never listen()s, so no connection can land on it, while the
// task's own server (TensorFlow's gRPC server sets SO_REUSEPORT) can bind the same port. Holding
// it until the task is listening keeps every other process from taking the port meanwhile.
//
// Thread-compatible.

#ifndef TONY_EXECUTOR_PORT_RESERVATION_H_
#define TONY_EXECUTOR_PORT_RESERVATION_H_

#include <sys/types.h>

#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/unique_fd.h"

namespace tony::executor {

class PortReservation {
 public:
  // Binds `preferred` when it is free (nothing else bound to or listening on it), else a port the
  // kernel picks; 0 for the kernel's pick at once.
  static absl::StatusOr<PortReservation> Reserve(int preferred = 0);

  PortReservation(PortReservation&& other) noexcept = default;
  PortReservation& operator=(PortReservation&& other) noexcept = default;
  ~PortReservation() = default;  // closes the socket

  int port() const { return port_; }
  bool held() const { return fd_.valid(); }
  // Closes the socket; the port is free for anyone. Idempotent.
  void Release();

  // Whether some other socket listens on the port (IPv4 or IPv6): asks the kernel's sock_diag,
  // or reads /proc/net/tcp{,6} where that is unavailable.
  bool ListenedOnByOther() const;

 private:
  static absl::StatusOr<PortReservation> ReserveOne(int port);
  PortReservation(UniqueFd fd, int port, ino_t inode)
      : fd_(std::move(fd)), port_(port), inode_(inode) {}
  UniqueFd fd_;
  int port_ = 0;
  ino_t inode_ = 0;
};

// Whether a TCP socket of `family` (AF_INET, AF_INET6) listens on `port` in this network
// namespace, other than inode `self`, from the kernel's sock_diag netlink interface.
absl::StatusOr<bool> DiagHasListener(int family, int port, ino_t self);

// Whether /proc/net/tcp-format `table` has a LISTEN socket on `port` other than inode `self`.
bool TableHasListener(const std::string& table, int port, ino_t self);

}  // namespace tony::executor

#endif  // TONY_EXECUTOR_PORT_RESERVATION_H_
