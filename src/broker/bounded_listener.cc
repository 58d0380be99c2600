// Copyright libtony authors.

#include "broker/bounded_listener.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/logging.h"
#include "common/unique_fd.h"

namespace tony::broker {
namespace {

absl::Status Errno(absl::string_view what) {
  return absl::UnavailableError(absl::StrCat(what, ": ", strerror(errno)));
}

// "address:port" of a socket address, IPv6 addresses in brackets (as gRPC writes peers).
std::string PeerName(const sockaddr_storage& addr) {
  char host[INET6_ADDRSTRLEN] = "";
  if (addr.ss_family == AF_INET6) {
    const auto* a = reinterpret_cast<const sockaddr_in6*>(&addr);
    inet_ntop(AF_INET6, &a->sin6_addr, host, sizeof(host));
    return absl::StrCat("[", host, "]:", ntohs(a->sin6_port));
  }
  const auto* a = reinterpret_cast<const sockaddr_in*>(&addr);
  inet_ntop(AF_INET, &a->sin_addr, host, sizeof(host));
  return absl::StrCat(host, ":", ntohs(a->sin_port));
}

}  // namespace

BoundedListener::BoundedListener(BoundedListenerOptions options) : options_(std::move(options)) {}

BoundedListener::~BoundedListener() { Stop(); }

absl::Status BoundedListener::Bind() {
  const std::string& address = options_.listen_address;
  size_t colon = address.rfind(':');
  if (colon == std::string::npos) {
    return absl::InvalidArgumentError(
        absl::StrCat("listen address '", address, "' is not host:port"));
  }
  std::string host = address.substr(0, colon);
  const std::string port = address.substr(colon + 1);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  if (int rc = getaddrinfo(host.empty() ? nullptr : host.c_str(), port.c_str(), &hints, &found);
      rc != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("listen address '", address, "': ", gai_strerror(rc)));
  }
  absl::Status status = absl::UnavailableError(absl::StrCat("cannot listen on ", address));
  for (addrinfo* a = found; a != nullptr; a = a->ai_next) {
    UniqueFd fd(::socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
    if (!fd.valid()) {
      status = Errno(absl::StrCat("socket for ", address));
      continue;
    }
    int one = 1;
    ::setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (::bind(fd.get(), a->ai_addr, a->ai_addrlen) != 0 || ::listen(fd.get(), 1024) != 0) {
      status = Errno(absl::StrCat("listening on ", address));
      continue;
    }
    sockaddr_storage bound{};
    socklen_t len = sizeof(bound);
    ::getsockname(fd.get(), reinterpret_cast<sockaddr*>(&bound), &len);
    port_ = ntohs(bound.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port
                                              : reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
    listen_fd_ = std::move(fd);
    status = absl::OkStatus();
    break;
  }
  freeaddrinfo(found);
  if (!status.ok()) return status;
  wake_fd_.Reset(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  if (!wake_fd_.valid()) return Errno("eventfd");
  return absl::OkStatus();
}

absl::Status BoundedListener::Start() {
  if (!listen_fd_.valid()) return absl::FailedPreconditionError("BoundedListener: Bind() first");
  if (thread_.joinable()) return absl::FailedPreconditionError("BoundedListener: started");
  thread_ = std::thread([this] { Loop(); });
  return absl::OkStatus();
}

void BoundedListener::Stop() {
  if (thread_.joinable()) {
    uint64_t one = 1;
    if (::write(wake_fd_.get(), &one, sizeof(one)) < 0) {
      TONY_LOG(WARNING) << "waking the listener: " << strerror(errno);
    }
    thread_.join();
  }
  {
    absl::MutexLock lock(&mu_);
    by_peer_.clear();
    live_.clear();  // our duplicates; the sockets stay with their owner
  }
  listen_fd_.Reset();
  wake_fd_.Reset();
}

int64_t BoundedListener::shed() const {
  absl::MutexLock lock(&mu_);
  return shed_;
}

void BoundedListener::MarkTrusted(absl::string_view peer) {
  // gRPC names peers "ipv4:1.2.3.4:5" / "ipv6:[::1]:5".
  if (size_t colon = peer.find(':');
      colon != absl::string_view::npos &&
      (peer.substr(0, colon) == "ipv4" || peer.substr(0, colon) == "ipv6")) {
    peer.remove_prefix(colon + 1);
  }
  absl::MutexLock lock(&mu_);
  auto it = by_peer_.find(peer);
  if (it == by_peer_.end()) return;
  auto conn = live_.find(it->second);
  if (conn != live_.end()) conn->second.trusted = true;
}

void BoundedListener::Forget(int own) {
  auto it = live_.find(own);
  if (it == live_.end()) return;
  auto peer = by_peer_.find(it->second.peer);
  if (peer != by_peer_.end() && peer->second == own) by_peer_.erase(peer);
  live_.erase(it);  // closes the duplicate
}

int BoundedListener::Prune() {
  std::vector<pollfd> fds;
  fds.reserve(live_.size());
  for (const auto& [own, conn] : live_) fds.push_back({own, POLLRDHUP, 0});
  if (::poll(fds.data(), fds.size(), 0) < 0) return static_cast<int>(live_.size());
  for (const pollfd& p : fds) {
    if ((p.revents & (POLLHUP | POLLRDHUP | POLLERR | POLLNVAL)) != 0) Forget(p.fd);
  }
  return static_cast<int>(live_.size());
}

bool BoundedListener::MakeRoom() {
  if (static_cast<int>(live_.size()) < options_.max_connections) return true;
  if (Prune() < options_.max_connections) return true;
  int oldest = -1;
  int64_t oldest_sequence = INT64_MAX;
  for (const auto& [own, conn] : live_) {
    if (!conn.trusted && conn.sequence < oldest_sequence) {
      oldest = own;
      oldest_sequence = conn.sequence;
    }
  }
  ++shed_;
  absl::Time now = absl::Now();
  if (now - last_warning_ > absl::Seconds(10)) {
    last_warning_ = now;
    TONY_LOG(WARNING) << "broker: " << options_.max_connections << " connections open; "
                      << (oldest < 0 ? "refusing new ones" : "closing the oldest unauthenticated")
                      << " (" << shed_ << " closed so far)";
  }
  if (oldest < 0) return false;
  // Through our own duplicate, so never another file that reuses gRPC's number. gRPC sees the
  // end of the stream and closes its descriptor itself.
  ::shutdown(oldest, SHUT_RDWR);
  Forget(oldest);
  return true;
}

// Admits the accepted `fd` if there is room, keeping a duplicate of it; false: close it.
bool BoundedListener::Admit(int fd, const sockaddr_storage& peer) {
  absl::MutexLock lock(&mu_);
  if (!MakeRoom()) return false;
  UniqueFd own(::fcntl(fd, F_DUPFD_CLOEXEC, 0));
  if (!own.valid()) {
    ++shed_;  // out of descriptors: untracked, the connection would escape the bound
    return false;
  }
  const int key = own.get();
  Connection& conn = live_[key];
  conn.own = std::move(own);
  conn.peer = PeerName(peer);
  conn.sequence = accepted_++;
  by_peer_[conn.peer] = key;
  return true;
}

void BoundedListener::Loop() {
  pollfd fds[2] = {{listen_fd_.get(), POLLIN, 0}, {wake_fd_.get(), POLLIN, 0}};
  int pause_ms = -1;  // after running out of descriptors, try again a little later
  while (true) {
    int n = ::poll(fds, 2, pause_ms);
    if (n < 0 && errno != EINTR) {
      TONY_LOG(ERROR) << "broker listener: poll: " << strerror(errno);
      return;
    }
    if (fds[1].revents != 0) return;
    pause_ms = -1;
    while (true) {
      sockaddr_storage peer{};
      socklen_t peer_len = sizeof(peer);
      int fd = ::accept4(listen_fd_.get(), reinterpret_cast<sockaddr*>(&peer), &peer_len,
                         SOCK_NONBLOCK | SOCK_CLOEXEC);
      if (fd < 0) {
        int err = errno;
        if (err == EMFILE || err == ENFILE || err == ENOBUFS || err == ENOMEM) {
          // The connection stays in the backlog; the process may have room again soon.
          TONY_LOG(WARNING) << "broker listener: accept: " << strerror(err);
          pause_ms = 100;
          break;
        }
        // EAGAIN: done for now; ECONNABORTED, EPROTO, EINTR...: that one connection is gone.
        if (err == EAGAIN || err == EWOULDBLOCK) break;
        continue;
      }
      if (!Admit(fd, peer)) {
        UniqueFd refused(fd);  // closed here: never handed to gRPC
        continue;
      }
      int one = 1;
      ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
      options_.handler(listen_fd_.get(), fd);
    }
  }
}

}  // namespace tony::broker
