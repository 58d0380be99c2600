// Copyright libtony authors.

#include "common/egress.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "absl/time/clock.h"
#include "common/tcp_connect.h"
#include "common/unique_fd.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tony {
namespace {

using ::testing::HasSubstr;

sockaddr_storage V4(const char* text) {
  sockaddr_storage ss{};
  auto* in = reinterpret_cast<sockaddr_in*>(&ss);
  in->sin_family = AF_INET;
  EXPECT_EQ(inet_pton(AF_INET, text, &in->sin_addr), 1) << text;
  return ss;
}

sockaddr_storage V6(const char* text) {
  sockaddr_storage ss{};
  auto* in6 = reinterpret_cast<sockaddr_in6*>(&ss);
  in6->sin6_family = AF_INET6;
  EXPECT_EQ(inet_pton(AF_INET6, text, &in6->sin6_addr), 1) << text;
  return ss;
}

const sockaddr* Sa(const sockaddr_storage& ss) { return reinterpret_cast<const sockaddr*>(&ss); }

// Sets TONY_ALLOWED_NETWORKS for one test and restores it after.
class ScopedAllowed {
 public:
  explicit ScopedAllowed(const char* value) {
    if (const char* old = std::getenv("TONY_ALLOWED_NETWORKS")) old_ = old;
    had_ = std::getenv("TONY_ALLOWED_NETWORKS") != nullptr;
    if (value == nullptr) {
      unsetenv("TONY_ALLOWED_NETWORKS");
    } else {
      setenv("TONY_ALLOWED_NETWORKS", value, 1);
    }
  }
  ~ScopedAllowed() {
    if (had_) {
      setenv("TONY_ALLOWED_NETWORKS", old_.c_str(), 1);
    } else {
      unsetenv("TONY_ALLOWED_NETWORKS");
    }
  }

 private:
  bool had_ = false;
  std::string old_;
};

TEST(NetworkAllowListTest, MatchesBlocksByPrefix) {
  auto list = NetworkAllowList::Parse("127.0.0.0/8, 10.71.88.0/24,::1/128,192.0.2.7");
  ASSERT_TRUE(list.ok()) << list.status();
  EXPECT_TRUE(list->Allows(Sa(V4("127.1.2.3"))));
  EXPECT_TRUE(list->Allows(Sa(V4("10.71.88.4"))));
  EXPECT_FALSE(list->Allows(Sa(V4("10.71.89.4"))));
  EXPECT_TRUE(list->Allows(Sa(V4("192.0.2.7"))));
  EXPECT_FALSE(list->Allows(Sa(V4("192.0.2.1"))));  // a block without a length is one host
  EXPECT_TRUE(list->Allows(Sa(V6("::1"))));
  EXPECT_FALSE(list->Allows(Sa(V6("fd00::2"))));
  // An IPv4-mapped IPv6 address is judged as the IPv4 address it carries.
  EXPECT_TRUE(list->Allows(Sa(V6("::ffff:10.71.88.9"))));
  EXPECT_FALSE(list->Allows(Sa(V6("::ffff:8.8.8.8"))));
}

TEST(NetworkAllowListTest, PrefixesThatAreNotWholeBytes) {
  auto list = NetworkAllowList::Parse("10.64.0.0/11");
  ASSERT_TRUE(list.ok());
  EXPECT_TRUE(list->Allows(Sa(V4("10.64.0.1"))));
  EXPECT_TRUE(list->Allows(Sa(V4("10.95.255.255"))));
  EXPECT_FALSE(list->Allows(Sa(V4("10.96.0.0"))));
  EXPECT_FALSE(list->Allows(Sa(V4("10.63.255.255"))));
  auto all = NetworkAllowList::Parse("0.0.0.0/0");
  ASSERT_TRUE(all.ok());
  EXPECT_TRUE(all->Allows(Sa(V4("8.8.8.8"))));
  EXPECT_FALSE(all->Allows(Sa(V6("::1"))));  // families never mix
}

TEST(NetworkAllowListTest, BadBlocksAreNamed) {
  for (const char* bad : {"10.0.0.0/33", "::/129", "10.0.0/8", "localhost", "10.0.0.0/x", "/8"}) {
    auto list = NetworkAllowList::Parse(bad);
    ASSERT_FALSE(list.ok()) << bad;
    EXPECT_EQ(list.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(list.status().message(), HasSubstr("TONY_ALLOWED_NETWORKS"));
  }
}

TEST(CheckEgressTest, UnsetAllowsEverything) {
  ScopedAllowed unset(nullptr);
  EXPECT_TRUE(CheckEgress(Sa(V4("8.8.8.8")), "anyone").ok());
  ScopedAllowed empty("");
  EXPECT_TRUE(CheckEgress(Sa(V4("8.8.8.8")), "anyone").ok());
}

TEST(CheckEgressTest, OutsideTheListIsRefusedNamingPeerAddressAndList) {
  ScopedAllowed allowed("127.0.0.0/8");
  EXPECT_TRUE(CheckEgress(Sa(V4("127.0.0.1")), "the NameNode").ok());
  absl::Status refused = CheckEgress(Sa(V4("10.71.88.1")), "the ResourceManager at rm:8032");
  EXPECT_EQ(refused.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_THAT(refused.message(), HasSubstr("the ResourceManager at rm:8032"));
  EXPECT_THAT(refused.message(), HasSubstr("10.71.88.1"));
  EXPECT_THAT(refused.message(), HasSubstr("TONY_ALLOWED_NETWORKS=127.0.0.0/8"));
}

TEST(CheckEgressTest, AMalformedListAllowsNothing) {
  ScopedAllowed typo("127.0.0.0/88");
  absl::Status refused = CheckEgress(Sa(V4("127.0.0.1")), "the NameNode");
  EXPECT_EQ(refused.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_THAT(refused.message(), HasSubstr("bad prefix length"));
}

TEST(CheckEgressTest, HostsAreCheckedByEveryAddressTheyResolveTo) {
  ScopedAllowed allowed("10.0.0.0/8");
  EXPECT_EQ(CheckEgressToHost("127.0.0.1", "the broker").code(),
            absl::StatusCode::kPermissionDenied);
  EXPECT_TRUE(CheckEgressToHost("10.1.2.3", "the broker").ok());
  ScopedAllowed unset(nullptr);
  EXPECT_TRUE(CheckEgressToHost("127.0.0.1", "the broker").ok());
}

// A listening socket on 127.0.0.1 and its port.
struct Listener {
  UniqueFd fd;
  int port = 0;
};

Listener Listen() {
  Listener l;
  l.fd.Reset(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  EXPECT_EQ(::bind(l.fd.get(), reinterpret_cast<sockaddr*>(&a), sizeof(a)), 0);
  EXPECT_EQ(::listen(l.fd.get(), 4), 0);
  socklen_t len = sizeof(a);
  ::getsockname(l.fd.get(), reinterpret_cast<sockaddr*>(&a), &len);
  l.port = ntohs(a.sin_port);
  return l;
}

bool Pending(int listen_fd) {
  pollfd p{listen_fd, POLLIN, 0};
  return ::poll(&p, 1, 0) == 1;
}

TEST(ConnectTcpTest, ConnectsWhereAllowedAndSendsNothingWhereNot) {
  Listener l = Listen();
  {
    ScopedAllowed allowed("127.0.0.0/8");
    auto fd = ConnectTcp("127.0.0.1", std::to_string(l.port), absl::Now() + absl::Seconds(5));
    ASSERT_TRUE(fd.ok()) << fd.status();
    EXPECT_TRUE(Pending(l.fd.get()));
    UniqueFd accepted(::accept4(l.fd.get(), nullptr, nullptr, SOCK_CLOEXEC));
  }
  ScopedAllowed elsewhere("10.71.88.0/24");
  auto fd = ConnectTcp("127.0.0.1", std::to_string(l.port), absl::Now() + absl::Seconds(5));
  ASSERT_FALSE(fd.ok());
  EXPECT_EQ(fd.status().code(), absl::StatusCode::kPermissionDenied);
  EXPECT_THAT(fd.status().message(), HasSubstr("127.0.0.1:" + std::to_string(l.port)));
  EXPECT_FALSE(Pending(l.fd.get())) << "a refused destination was connected to";
}

TEST(ConnectTcpTest, NothingListeningIsUnavailable) {
  ScopedAllowed unset(nullptr);
  Listener l = Listen();
  const int port = l.port;
  l.fd.Reset();
  auto fd = ConnectTcp("127.0.0.1", std::to_string(port), absl::Now() + absl::Seconds(5));
  EXPECT_EQ(fd.status().code(), absl::StatusCode::kUnavailable);
}

}  // namespace
}  // namespace tony
