// Copyright libtony authors.

#include "executor/port_reservation.h"

#include <arpa/inet.h>
#include <errno.h>
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

bool PortReservation::ListenedOnByOther() const {
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
