// Copyright libtony authors.

#include "executor/port_reservation.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>

#include "gtest/gtest.h"

namespace tony::executor {
namespace {

// A socket bound to `port` with SO_REUSEPORT (as TensorFlow's gRPC server binds), listening or
// not. Closed by the destructor.
class Server {
 public:
  Server(int family, int port, bool listen) {
    fd_ = ::socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int one = 1;
    ::setsockopt(fd_, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one));
    ::setsockopt(fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    int rc;
    if (family == AF_INET6) {
      sockaddr_in6 a{};
      a.sin6_family = AF_INET6;
      a.sin6_addr = in6addr_any;
      a.sin6_port = htons(static_cast<uint16_t>(port));
      rc = ::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof(a));
    } else {
      sockaddr_in a{};
      a.sin_family = AF_INET;
      a.sin_addr.s_addr = htonl(INADDR_ANY);
      a.sin_port = htons(static_cast<uint16_t>(port));
      rc = ::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof(a));
    }
    ok_ = rc == 0 && (!listen || ::listen(fd_, 4) == 0);
  }
  ~Server() { ::close(fd_); }
  bool ok() const { return ok_; }

 private:
  int fd_ = -1;
  bool ok_ = false;
};

TEST(PortReservationTest, NobodyListensOnAFreshReservation) {
  absl::StatusOr<PortReservation> r = PortReservation::Reserve();
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->held());
  EXPECT_GT(r->port(), 0);
  EXPECT_FALSE(r->ListenedOnByOther());
  // A second bound-only socket is not a listener either.
  Server bound(AF_INET, r->port(), /*listen=*/false);
  ASSERT_TRUE(bound.ok());
  EXPECT_FALSE(r->ListenedOnByOther());
}

TEST(PortReservationTest, TheTasksListenerIsSeenOnIpv4AndIpv6) {
  for (int family : {AF_INET, AF_INET6}) {
    absl::StatusOr<PortReservation> r = PortReservation::Reserve();
    ASSERT_TRUE(r.ok()) << r.status();
    Server task(family, r->port(), /*listen=*/true);
    if (!task.ok() && family == AF_INET6) continue;  // a host without IPv6
    ASSERT_TRUE(task.ok()) << family;
    EXPECT_TRUE(r->ListenedOnByOther()) << family;
    r->Release();
    EXPECT_FALSE(r->held());
  }
}

TEST(PortReservationTest, SockDiagAgreesWithProcNetTcp) {
  absl::StatusOr<PortReservation> r = PortReservation::Reserve();
  ASSERT_TRUE(r.ok()) << r.status();
  auto proc = [&] {
    std::ifstream in("/proc/net/tcp");
    std::stringstream buf;
    buf << in.rdbuf();
    return TableHasListener(buf.str(), r->port(), 0);
  };
  absl::StatusOr<bool> diag = DiagHasListener(AF_INET, r->port(), 0);
  if (!diag.ok()) GTEST_SKIP() << "no sock_diag here: " << diag.status();
  EXPECT_FALSE(*diag);
  EXPECT_FALSE(proc());
  Server task(AF_INET, r->port(), /*listen=*/true);
  ASSERT_TRUE(task.ok());
  diag = DiagHasListener(AF_INET, r->port(), 0);
  ASSERT_TRUE(diag.ok()) << diag.status();
  EXPECT_TRUE(*diag);
  EXPECT_TRUE(proc());
}

TEST(PortReservationTest, APreferredPortSomebodyListensOnIsNotTaken) {
  absl::StatusOr<PortReservation> first = PortReservation::Reserve();
  ASSERT_TRUE(first.ok()) << first.status();
  const int port = first->port();
  Server other(AF_INET, port, /*listen=*/true);
  ASSERT_TRUE(other.ok());
  absl::StatusOr<PortReservation> second = PortReservation::Reserve(port);
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_NE(second->port(), port);
}

TEST(TableHasListenerTest, FindsListenStateOnThePortExceptItself) {
  const std::string table =
      "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  "
      "timeout inode\n"
      "   0: 00000000:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0  "
      "      0 111 1 0000000000000000 100 0 0 10 0\n"
      "   1: 0100007F:1F91 0100007F:9C40 01 00000000:00000000 00:00000000 00000000     0  "
      "      0 222 1 0000000000000000 20 4 30 10 -1\n";
  EXPECT_TRUE(TableHasListener(table, 0x1F90, 0));
  EXPECT_FALSE(TableHasListener(table, 0x1F90, 111));  // our own socket
  EXPECT_FALSE(TableHasListener(table, 0x1F91, 0));    // established, not listening
  EXPECT_FALSE(TableHasListener(table, 80, 0));
}

}  // namespace
}  // namespace tony::executor
