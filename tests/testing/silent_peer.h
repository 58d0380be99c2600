// Copyright libtony authors.
//
// Loopback peers for deadline tests: SilentPeer accepts connections (into the kernel's
// backlog) and never answers; ClosedPort() is a port nothing listens on.
//
// Thread-compatible.

#ifndef TONY_TESTS_TESTING_SILENT_PEER_H_
#define TONY_TESTS_TESTING_SILENT_PEER_H_

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>

#include "absl/strings/str_cat.h"

namespace tony::testing {

class SilentPeer {
 public:
  SilentPeer() {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof(addr);
    if (fd_ < 0 || ::bind(fd_, reinterpret_cast<sockaddr*>(&addr), len) != 0 ||
        ::listen(fd_, 16) != 0 ||
        ::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
      return;
    }
    port_ = ntohs(addr.sin_port);
  }
  ~SilentPeer() {
    if (fd_ >= 0) ::close(fd_);
  }
  SilentPeer(const SilentPeer&) = delete;
  SilentPeer& operator=(const SilentPeer&) = delete;

  int port() const { return port_; }  // 0 when the socket could not be made
  std::string address() const { return absl::StrCat("127.0.0.1:", port_); }

 private:
  int fd_ = -1;
  int port_ = 0;
};

// A loopback port that was free a moment ago: connections to it are refused at once.
inline int ClosedPort() {
  SilentPeer p;
  return p.port();
}

}  // namespace tony::testing

#endif  // TONY_TESTS_TESTING_SILENT_PEER_H_
