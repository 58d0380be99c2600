// Copyright libtony authors.

#include "common/tcp_connect.h"

#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/egress.h"

namespace tony {
namespace {

int RemainingMs(absl::Time deadline) {
  return static_cast<int>(
      std::clamp<int64_t>(absl::ToInt64Milliseconds(deadline - absl::Now()), 0, 24 * 3600 * 1000));
}

// 0, or the errno of a failed connect of `fd` to `a` by the deadline.
int ConnectOne(int fd, const addrinfo* a, absl::Time deadline) {
  int err = ::connect(fd, a->ai_addr, a->ai_addrlen) == 0 ? 0 : errno;
  if (err != EINPROGRESS) return err;
  pollfd p = {fd, POLLOUT, 0};
  int n;
  do {
    n = ::poll(&p, 1, RemainingMs(deadline));
  } while (n < 0 && errno == EINTR);
  if (n != 1) return ETIMEDOUT;
  socklen_t len = sizeof(err);
  if (::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0) err = errno;
  return err;
}

}  // namespace

absl::StatusOr<UniqueFd> ConnectTcp(const std::string& host, const std::string& port,
                                    absl::Time deadline) {
  const std::string peer = absl::StrCat(host, ":", port);
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  if (int rc = ::getaddrinfo(host.c_str(), port.c_str(), &hints, &res); rc != 0) {
    return absl::UnavailableError(absl::StrCat("cannot resolve ", host, ": ", gai_strerror(rc)));
  }
  absl::Status last = absl::UnavailableError(absl::StrCat("no address for ", host));
  for (const addrinfo* a = res; a != nullptr; a = a->ai_next) {
    if (absl::Status allowed = CheckEgress(a->ai_addr, peer); !allowed.ok()) {
      ::freeaddrinfo(res);
      return allowed;
    }
  }
  for (const addrinfo* a = res; a != nullptr; a = a->ai_next) {
    UniqueFd fd(::socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
    if (!fd.valid()) continue;
    if (int err = ConnectOne(fd.get(), a, deadline); err != 0) {
      last = absl::UnavailableError(
          absl::StrCat("cannot connect to ", peer, ": ", std::strerror(err)));
      continue;
    }
    ::freeaddrinfo(res);
    return fd;
  }
  ::freeaddrinfo(res);
  return last;
}

}  // namespace tony
