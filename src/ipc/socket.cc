// Copyright libtony authors.

#include "ipc/socket.h"

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/egress.h"
#include "ipc/rpc_errors.h"

namespace tony::ipc {
namespace {

int PollTimeoutMs(absl::Time deadline) {
  if (deadline == absl::InfiniteFuture()) return -1;
  absl::Duration left = deadline - absl::Now();
  if (left <= absl::ZeroDuration()) return 0;
  // Round up so we never spin with a zero timeout before the deadline.
  int64_t ms = absl::ToInt64Milliseconds(left + absl::Milliseconds(1) - absl::Nanoseconds(1));
  return ms > 60000 ? 60000 : static_cast<int>(ms);
}

std::string Errno(int err) { return std::strerror(err); }

}  // namespace

std::string HostPort::ToString() const {
  if (host.find(':') != std::string::npos) return absl::StrCat("[", host, "]:", port);
  return absl::StrCat(host, ":", port);
}

absl::StatusOr<HostPort> ParseHostPort(absl::string_view address) {
  HostPort hp;
  absl::string_view port_text;
  if (!address.empty() && address.front() == '[') {
    size_t close = address.find(']');
    if (close == absl::string_view::npos || close + 1 >= address.size() ||
        address[close + 1] != ':') {
      return absl::InvalidArgumentError(absl::StrCat("bad address '", address, "'"));
    }
    hp.host = std::string(address.substr(1, close - 1));
    port_text = address.substr(close + 2);
  } else {
    size_t colon = address.rfind(':');
    if (colon == absl::string_view::npos || colon == 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("bad address '", address, "': want host:port"));
    }
    hp.host = std::string(address.substr(0, colon));
    port_text = address.substr(colon + 1);
  }
  if (!absl::SimpleAtoi(port_text, &hp.port) || hp.port <= 0 || hp.port > 65535) {
    return absl::InvalidArgumentError(absl::StrCat("bad port in address '", address, "'"));
  }
  return hp;
}

absl::StatusOr<Socket> Socket::Connect(const HostPort& address, absl::Time deadline) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  std::string port = std::to_string(address.port);
  int gai = ::getaddrinfo(address.host.c_str(), port.c_str(), &hints, &res);
  if (gai != 0) {
    return ConnectionFailureStatus(ConnectionFailure::kConnect,
                                   absl::StrCat("resolve ", address.host, ": ", gai_strerror(gai)));
  }
  // The egress guard refuses the whole connect if any address is outside it (not retried).
  for (addrinfo* ai = res; ai != nullptr; ai = ai->ai_next) {
    if (absl::Status allowed = CheckEgress(ai->ai_addr, address.ToString()); !allowed.ok()) {
      ::freeaddrinfo(res);
      return allowed;
    }
  }
  std::string last_error = "no addresses";
  for (addrinfo* ai = res; ai != nullptr; ai = ai->ai_next) {
    int fd =
        ::socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, ai->ai_protocol);
    if (fd < 0) {
      last_error = Errno(errno);
      continue;
    }
    Socket s(fd);
    int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    ::setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof(one));
    int rc = ::connect(fd, ai->ai_addr, ai->ai_addrlen);
    if (rc != 0 && errno != EINPROGRESS) {
      last_error = Errno(errno);
      continue;
    }
    if (rc != 0) {
      pollfd p{fd, POLLOUT, 0};
      int n;
      do {
        n = ::poll(&p, 1, PollTimeoutMs(deadline));
      } while (n < 0 && errno == EINTR);
      if (n == 0) {
        last_error = "connect timed out";
        continue;
      }
      int err = 0;
      socklen_t len = sizeof(err);
      ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
      if (n < 0 || err != 0) {
        last_error = Errno(n < 0 ? errno : err);
        continue;
      }
    }
    ::freeaddrinfo(res);
    return s;
  }
  ::freeaddrinfo(res);
  return ConnectionFailureStatus(ConnectionFailure::kConnect,
                                 absl::StrCat("connect to ", address.ToString(), ": ", last_error));
}

absl::Status Socket::WaitFor(short events, absl::Time deadline, absl::string_view what) {
  while (true) {
    pollfd p{fd_.get(), events, 0};
    int timeout = PollTimeoutMs(deadline);
    int n = ::poll(&p, 1, timeout);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return absl::UnavailableError(absl::StrCat(what, ": poll: ", Errno(errno)));
    if (n > 0) return absl::OkStatus();
    if (absl::Now() >= deadline) {
      return absl::DeadlineExceededError(absl::StrCat(what, ": deadline exceeded"));
    }
  }
}

absl::Status Socket::WriteAll(absl::string_view data, absl::Time deadline) {
  while (!data.empty()) {
    ssize_t n = ::send(fd_.get(), data.data(), data.size(), MSG_NOSIGNAL);
    if (n > 0) {
      data.remove_prefix(static_cast<size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      absl::Status s = WaitFor(POLLOUT, deadline, "write");
      if (!s.ok()) return s;
      continue;
    }
    return absl::UnavailableError(absl::StrCat("write: ", Errno(errno)));
  }
  return absl::OkStatus();
}

absl::Status Socket::ReadFull(char* buf, size_t n, absl::Time deadline) {
  while (n > 0) {
    ssize_t got = ::recv(fd_.get(), buf, n, 0);
    if (got > 0) {
      buf += got;
      n -= static_cast<size_t>(got);
      continue;
    }
    if (got == 0) return absl::OutOfRangeError("connection closed by peer");
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) {
      absl::Status s = WaitFor(POLLIN, deadline, "read");
      if (!s.ok()) return s;
      continue;
    }
    return absl::UnavailableError(absl::StrCat("read: ", Errno(errno)));
  }
  return absl::OkStatus();
}

absl::StatusOr<bool> Socket::WaitReadable(absl::Time deadline) {
  absl::Status s = WaitFor(POLLIN, deadline, "read");
  if (s.ok()) return true;
  if (absl::IsDeadlineExceeded(s)) return false;
  return s;
}

absl::StatusOr<Socket::ReadResult> Socket::ReadSome(char* buf, size_t n) {
  while (true) {
    ssize_t got = ::recv(fd_.get(), buf, n, 0);
    if (got > 0) return ReadResult{static_cast<size_t>(got), false};
    if (got == 0) return ReadResult{0, true};
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) return ReadResult{};
    return absl::UnavailableError(absl::StrCat("read: ", Errno(errno)));
  }
}

void Socket::Shutdown() {
  if (fd_.valid()) ::shutdown(fd_.get(), SHUT_RDWR);
}

}  // namespace tony::ipc
