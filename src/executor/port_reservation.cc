// Copyright libtony authors.

#include "executor/port_reservation.h"

#include <arpa/inet.h>
#include <errno.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace tony::executor {

absl::StatusOr<PortReservation> PortReservation::Reserve(int preferred) {
  if (preferred > 0) {
    absl::StatusOr<PortReservation> r = ReserveOne(preferred);
    // SO_REUSEPORT lets the bind succeed beside another socket of ours (uid): a listener there
    // means the port is taken after all.
    if (r.ok() && !r->ListenedOnByOther()) return r;
  }
  return ReserveOne(0);
}

absl::StatusOr<PortReservation> PortReservation::ReserveOne(int port) {
  UniqueFd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!fd.valid()) return absl::InternalError(absl::StrCat("socket: ", strerror(errno)));
  int one = 1;
  if (::setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) != 0 ||
      ::setsockopt(fd.get(), SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one)) != 0) {
    return absl::InternalError(absl::StrCat("setsockopt: ", strerror(errno)));
  }
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_ANY);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  socklen_t len = sizeof(addr);
  if (::bind(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
      ::getsockname(fd.get(), reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    return absl::UnavailableError(absl::StrCat("cannot reserve a port: ", strerror(errno)));
  }
  struct stat st;
  ino_t inode = ::fstat(fd.get(), &st) == 0 ? st.st_ino : 0;
  return PortReservation(std::move(fd), ntohs(addr.sin_port), inode);
}

void PortReservation::Release() { fd_.Reset(); }

bool TableHasListener(const std::string& table, int port, ino_t self) {
  // "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout
  //  inode": local_address is HEX_IP:HEX_PORT, st 0A is LISTEN.
  std::istringstream in(table);
  std::string line;
  std::getline(in, line);  // header
  while (std::getline(in, line)) {
    std::vector<absl::string_view> f = absl::StrSplit(line, ' ', absl::SkipEmpty());
    if (f.size() < 10 || f[3] != "0A") continue;
    size_t colon = f[1].rfind(':');
    if (colon == absl::string_view::npos) continue;
    int p = 0;
    if (!absl::SimpleHexAtoi(f[1].substr(colon + 1), &p) || p != port) continue;
    uint64_t inode = 0;
    if (absl::SimpleAtoi(f[9], &inode) && inode == self) continue;
    return true;
  }
  return false;
}

absl::StatusOr<bool> DiagHasListener(int family, int port, ino_t self) {
  const UniqueFd fd(::socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG));
  if (!fd.valid()) return absl::UnavailableError(absl::StrCat("sock_diag: ", strerror(errno)));
  struct {
    nlmsghdr header;
    inet_diag_req_v2 request;
  } message{};
  message.header.nlmsg_len = sizeof(message);
  message.header.nlmsg_type = SOCK_DIAG_BY_FAMILY;
  message.header.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
  message.request.sdiag_family = static_cast<uint8_t>(family);
  message.request.sdiag_protocol = IPPROTO_TCP;
  message.request.idiag_states = 1u << 10;  // TCP_LISTEN only: the kernel walks no other table
  sockaddr_nl kernel{};
  kernel.nl_family = AF_NETLINK;
  if (::sendto(fd.get(), &message, sizeof(message), 0, reinterpret_cast<sockaddr*>(&kernel),
               sizeof(kernel)) < 0) {
    return absl::UnavailableError(absl::StrCat("sock_diag request: ", strerror(errno)));
  }
  alignas(nlmsghdr) char buf[16384];
  absl::StatusOr<bool> found = false;
  bool done = false;
  while (!done) {
    ssize_t n = ::recv(fd.get(), buf, sizeof(buf), 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      found = absl::UnavailableError(absl::StrCat("sock_diag reply: ", strerror(errno)));
      break;
    }
    for (auto* h = reinterpret_cast<nlmsghdr*>(buf); NLMSG_OK(h, n); h = NLMSG_NEXT(h, n)) {
      if (h->nlmsg_type == NLMSG_DONE) {
        done = true;
        break;
      }
      if (h->nlmsg_type == NLMSG_ERROR) {
        const auto* e = static_cast<const nlmsgerr*>(NLMSG_DATA(h));
        found = absl::UnavailableError(absl::StrCat("sock_diag: ", strerror(-e->error)));
        done = true;
        break;
      }
      const auto* m = static_cast<const inet_diag_msg*>(NLMSG_DATA(h));
      if (ntohs(m->id.idiag_sport) == port && m->idiag_inode != self) {
        found = true;
        done = true;  // the rest of the dump is dropped with the socket
        break;
      }
    }
  }
  return found;
}

bool PortReservation::ListenedOnByOther() const {
  // sock_diag costs in proportion to the node's listening sockets, in binary; /proc/net/tcp
  // formats every socket of the node as text (27 ms for 1,500 sockets), which 500 executors on
  // a node checking every second or two turn into more CPU than the node has.
  absl::StatusOr<bool> v4 = DiagHasListener(AF_INET, port_, inode_);
  absl::StatusOr<bool> v6 = v4.ok() && !*v4 ? DiagHasListener(AF_INET6, port_, inode_) : v4;
  if (v6.ok()) return *v6;
  // No sock_diag (a kernel without inet_diag, or a sandbox that forbids the netlink family).
  for (const char* path : {"/proc/net/tcp", "/proc/net/tcp6"}) {
    std::ifstream in(path);
    if (!in) continue;
    std::stringstream buf;
    buf << in.rdbuf();
    if (TableHasListener(buf.str(), port_, inode_)) return true;
  }
  return false;
}

}  // namespace tony::executor
