// Copyright libtony authors.
//
// httpd::Server over real loopback sockets: what reaches the handler, and each limit the header
// promises (header size, body size, connections, time to send a request and to take an answer).

#include "httpd/server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>

#include <atomic>
#include <iostream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "common/tcp_connect.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/wait_until.h"

namespace tony::httpd {
namespace {

using ::testing::AnyOf;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;
using ::tony::testing::WaitUntil;

UniqueFd Connect(int port) {
  auto fd = ConnectTcp("127.0.0.1", std::to_string(port), absl::Now() + absl::Seconds(5));
  EXPECT_TRUE(fd.ok()) << fd.status();
  return fd.ok() ? *std::move(fd) : UniqueFd();
}

bool SendRaw(int fd, const std::string& data) {
  return ::send(fd, data.data(), data.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(data.size());
}

// Everything the server sends until it closes the connection (or 10 s pass).
std::string ReadToEnd(int fd) {
  std::string answer;
  char buf[4096];
  for (absl::Time end = absl::Now() + absl::Seconds(10); absl::Now() < end;) {
    pollfd pfd{fd, POLLIN, 0};
    if (::poll(&pfd, 1, 100) <= 0) continue;
    ssize_t n = ::recv(fd, buf, sizeof(buf), 0);
    if (n <= 0) break;
    answer.append(buf, static_cast<size_t>(n));
  }
  return answer;
}

std::string Exchange(int port, const std::string& request) {
  UniqueFd fd = Connect(port);
  if (!fd.valid() || !SendRaw(fd.get(), request)) return "not sent";
  return ReadToEnd(fd.get());
}

// Whether the server closed `fd` (EOF or reset) within 10 s, reading whatever came first.
bool ClosedByServer(int fd) {
  char buf[4096];
  for (absl::Time end = absl::Now() + absl::Seconds(10); absl::Now() < end;) {
    pollfd pfd{fd, POLLIN, 0};
    if (::poll(&pfd, 1, 100) <= 0) continue;
    if (::recv(fd, buf, sizeof(buf), 0) <= 0) return true;
  }
  return false;
}

struct Recorder {
  absl::Mutex mu;
  std::vector<Request> seen;
  Server::Handler Handler(std::string body = "the page") {
    return [this, body](const Request& r) {
      absl::MutexLock lock(&mu);
      seen.push_back(r);
      return Reply{.body = body};
    };
  }
  size_t count() {
    absl::MutexLock lock(&mu);
    return seen.size();
  }
};

TEST(HttpdServerTest, AnswersGetAndHeadAndRefusesEveryOtherMethod) {
  Recorder rec;
  Server server({}, rec.Handler("hello"));
  ASSERT_TRUE(server.Start().ok());
  std::string get = Exchange(server.port(), "GET /any/path HTTP/1.1\r\nHost: x\r\n\r\n");
  EXPECT_THAT(get, StartsWith("HTTP/1.1 200"));
  EXPECT_THAT(get, HasSubstr("Content-Type: text/html; charset=utf-8\r\n"));
  EXPECT_THAT(get, HasSubstr("Cache-Control: no-store\r\n"));
  EXPECT_THAT(get, HasSubstr("Connection: close\r\n"));
  EXPECT_THAT(get, ::testing::EndsWith("\r\n\r\nhello"));
  std::string head = Exchange(server.port(), "HEAD / HTTP/1.0\r\n\r\n");
  EXPECT_THAT(head, HasSubstr(" 200 "));
  EXPECT_THAT(head, HasSubstr("Content-Length: 5\r\n"));
  EXPECT_THAT(head, Not(HasSubstr("hello")));
  std::string post = Exchange(server.port(), "POST / HTTP/1.1\r\nHost: x\r\n\r\n");
  EXPECT_THAT(post, HasSubstr(" 405 "));
  EXPECT_THAT(post, HasSubstr("Allow: GET, HEAD\r\n"));
  std::string garbage = Exchange(server.port(), "\x01\x02 nonsense\r\n\r\n");
  EXPECT_THAT(garbage, HasSubstr(" 400 "));
  EXPECT_EQ(rec.count(), 2u);  // the GET and the HEAD
  server.Stop();
  server.Stop();
}

TEST(HttpdServerTest, TheHandlerSeesTheTargetAsSentAndTheAuthorization) {
  Recorder rec;
  Server server({}, [&](const Request& r) {
    rec.Handler()(r);
    return Reply{.code = 401, .body = "who?", .www_authenticate = "Negotiate"};
  });
  ASSERT_TRUE(server.Start().ok());
  std::string answer = Exchange(
      server.port(),
      "GET /jobs/a%20b?state=FAILED&tag=x%26y HTTP/1.1\r\nHost: x\r\nAuthorization: Negotiate "
      "YII=\r\n\r\n");
  EXPECT_THAT(answer, StartsWith("HTTP/1.1 401"));
  EXPECT_THAT(answer, HasSubstr("WWW-Authenticate: Negotiate\r\n"));
  ASSERT_EQ(rec.count(), 1u);
  EXPECT_EQ(rec.seen[0].method, "GET");
  EXPECT_EQ(rec.seen[0].target, "/jobs/a%20b?state=FAILED&tag=x%26y");
  EXPECT_EQ(rec.seen[0].path, "/jobs/a%20b");
  EXPECT_EQ(rec.seen[0].peer, "127.0.0.1");
  EXPECT_EQ(rec.seen[0].authorization, "Negotiate YII=");

  EXPECT_EQ(NormalizeTarget("/a?b#c"), "/a?b");
  EXPECT_EQ(NormalizeTarget("http://elsewhere/"), "/");
  EXPECT_EQ(NormalizeTarget(""), "/");
}

TEST(HttpdServerTest, OnlyAllowedPeersReachTheHandlerAndOthersAreSentToTheProxy) {
  EXPECT_TRUE(PeerAllowed("10.0.0.1", {}));
  EXPECT_TRUE(PeerAllowed("::ffff:10.0.0.1", {"10.0.0.1"}));
  EXPECT_TRUE(PeerAllowed("fe80::1", {"10.0.0.1", "fe80::1"}));
  EXPECT_FALSE(PeerAllowed("10.0.0.2", {"10.0.0.1"}));
  EXPECT_FALSE(PeerAllowed("10.0.0.1", {"-"}));

  Recorder rec;
  ServerOptions to_proxy;
  to_proxy.allowed_peers = {"192.0.2.7"};  // the proxy; this test connects from 127.0.0.1
  to_proxy.redirect_url = "http://rm.example:8088/proxy/application_1_0001/";
  Server redirecting(to_proxy, rec.Handler("secret state"));
  ASSERT_TRUE(redirecting.Start().ok());
  std::string answer = Exchange(redirecting.port(), "GET / HTTP/1.0\r\n\r\n");
  EXPECT_THAT(answer, HasSubstr(" 307 "));
  EXPECT_THAT(answer,
              HasSubstr("\r\nLocation: http://rm.example:8088/proxy/application_1_0001/\r\n"));
  EXPECT_THAT(answer, Not(HasSubstr("secret")));
  EXPECT_EQ(redirecting.refused(), 1);

  ServerOptions closed;
  closed.allowed_peers = {"192.0.2.7"};
  Server refusing(closed, rec.Handler("secret state"));
  ASSERT_TRUE(refusing.Start().ok());
  EXPECT_THAT(Exchange(refusing.port(), "GET / HTTP/1.0\r\n\r\n"), HasSubstr(" 403 "));
  EXPECT_EQ(rec.count(), 0u);

  ServerOptions from_proxy;
  from_proxy.allowed_peers = {"192.0.2.7", "127.0.0.1"};
  Server answering(from_proxy, rec.Handler("the state"));
  ASSERT_TRUE(answering.Start().ok());
  EXPECT_THAT(Exchange(answering.port(), "GET / HTTP/1.0\r\n\r\n"), HasSubstr("the state"));
  EXPECT_EQ(answering.refused(), 0);
}

TEST(HttpdServerTest, AKerberosSizedAuthorizationFitsAWiderLimit) {
  Recorder rec;
  ServerOptions o;
  o.max_header_bytes = 64 << 10;  // the history server's with sign-in on
  Server server(o, rec.Handler());
  ASSERT_TRUE(server.Start().ok());
  const std::string token(12 << 10, 'Y');  // a ticket with an Active Directory PAC
  EXPECT_THAT(Exchange(server.port(), absl::StrCat("GET / HTTP/1.1\r\nHost: x\r\nAuthorization: "
                                                   "Negotiate ",
                                                   token, "\r\n\r\n")),
              HasSubstr(" 200 "));
  ASSERT_EQ(rec.count(), 1u);
  EXPECT_EQ(rec.seen[0].authorization.size(), token.size() + 10);
  EXPECT_EQ(rec.seen[0].host, "x");
}

TEST(HttpdServerTest, AReplyHeaderWithALineBreakIsNotSent) {
  Server server({}, [](const Request&) {
    return Reply{.code = 302, .location = "http://x/\r\nSet-Cookie: stolen=1"};
  });
  ASSERT_TRUE(server.Start().ok());
  std::string answer = Exchange(server.port(), "GET / HTTP/1.0\r\n\r\n");
  EXPECT_THAT(answer, Not(HasSubstr("Set-Cookie")));
  EXPECT_THAT(answer, Not(HasSubstr(" 302 ")));
}

TEST(HttpdServerTest, HeadersBeyondTheLimitAreRefusedAndTheServerGoesOn) {
  Recorder rec;
  ServerOptions o;
  o.max_header_bytes = 4096;
  Server server(o, rec.Handler());
  ASSERT_TRUE(server.Start().ok());
  const std::string big =
      absl::StrCat("GET / HTTP/1.1\r\nHost: x\r\nX-Filler: ", std::string(8000, 'a'), "\r\n\r\n");
  std::string answer = Exchange(server.port(), big);
  EXPECT_THAT(answer, HasSubstr(" 431 "));
  EXPECT_EQ(rec.count(), 0u);
  // A long URL counts the same.
  answer = Exchange(server.port(),
                    absl::StrCat("GET /", std::string(8000, 'u'), " HTTP/1.1\r\nHost: x\r\n\r\n"));
  EXPECT_THAT(answer, AnyOf(HasSubstr(" 414 "), HasSubstr(" 431 ")));
  EXPECT_THAT(Exchange(server.port(), "GET / HTTP/1.1\r\nHost: x\r\n\r\n"), HasSubstr(" 200 "));
}

TEST(HttpdServerTest, ABodyBeyondTheLimitIsRefusedUnread) {
  Recorder rec;
  Server server({}, rec.Handler());
  ASSERT_TRUE(server.Start().ok());
  // Declares 10 MB and sends none of it: the answer comes at once, nothing is waited for.
  UniqueFd fd = Connect(server.port());
  ASSERT_TRUE(SendRaw(fd.get(), "GET / HTTP/1.1\r\nHost: x\r\nContent-Length: 10000000\r\n\r\n"));
  EXPECT_THAT(ReadToEnd(fd.get()), HasSubstr(" 413 "));
  EXPECT_THAT(Exchange(server.port(),
                       "GET / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n"
                       "hello\r\n0\r\n\r\n"),
              HasSubstr(" 413 "));
  EXPECT_EQ(rec.count(), 0u);
  // An empty body is no body.
  EXPECT_THAT(Exchange(server.port(), "GET / HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n"),
              HasSubstr(" 200 "));

  ServerOptions small;
  small.max_body_bytes = 16;
  Server lenient(small, rec.Handler());
  ASSERT_TRUE(lenient.Start().ok());
  EXPECT_THAT(
      Exchange(lenient.port(), "GET / HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello"),
      HasSubstr(" 200 "));
  EXPECT_THAT(Exchange(lenient.port(), "GET / HTTP/1.1\r\nHost: x\r\nContent-Length: 17\r\n\r\n"),
              HasSubstr(" 413 "));
}

TEST(HttpdServerTest, ConnectionsBeyondTheLimitAreClosedAtAccept) {
  Recorder rec;
  ServerOptions o;
  o.max_connections = 2;
  o.request_timeout = absl::Seconds(3);
  Server server(o, rec.Handler());
  ASSERT_TRUE(server.Start().ok());
  // Two clients that send nothing hold both connections.
  UniqueFd idle1 = Connect(server.port());
  UniqueFd idle2 = Connect(server.port());
  std::vector<UniqueFd> turned_away;
  ASSERT_TRUE(WaitUntil(
      [&] {
        turned_away.push_back(Connect(server.port()));
        return server.shed() > 0;
      },
      absl::Seconds(10)));
  EXPECT_TRUE(ClosedByServer(turned_away.back().get()));
  // Once the idle ones are gone, requests are answered again.
  idle1.Reset();
  idle2.Reset();
  ASSERT_TRUE(WaitUntil(
      [&] { return absl::StrContains(Exchange(server.port(), "GET / HTTP/1.0\r\n\r\n"), " 200 "); },
      absl::Seconds(10)));
}

// A client connecting from `source` (another loopback address: the "proxy" of a test).
UniqueFd ConnectFrom(const std::string& source, int port) {
  UniqueFd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_in from{};
  from.sin_family = AF_INET;
  EXPECT_EQ(::inet_pton(AF_INET, source.c_str(), &from.sin_addr), 1);
  EXPECT_EQ(::bind(fd.get(), reinterpret_cast<sockaddr*>(&from), sizeof(from)), 0);
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_port = htons(static_cast<uint16_t>(port));
  to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  EXPECT_EQ(::connect(fd.get(), reinterpret_cast<sockaddr*>(&to), sizeof(to)), 0);
  return fd;
}

// Peers that are not YARN's proxy only ever get the redirect; idle, they could once hold every
// connection slot and leave the proxy shed. They now share a smaller part.
TEST(HttpdServerTest, OtherPeersCannotTakeTheProxysConnections) {
  Recorder rec;
  ServerOptions o;
  o.allowed_peers = {"127.0.0.2"};  // the proxy
  o.redirect_url = "http://rm.example:8088/proxy/application_1_0001/";
  o.max_connections = 4;
  o.max_other_connections = 2;
  o.request_timeout = absl::Seconds(30);  // the idle ones stay for the whole test
  Server server(o, rec.Handler("the state"));
  ASSERT_TRUE(server.Start().ok());
  // Others (from 127.0.0.1) open more idle connections than there are: two are kept.
  std::vector<UniqueFd> others;
  for (int i = 0; i < 6; ++i) others.push_back(Connect(server.port()));
  EXPECT_TRUE(WaitUntil([&] { return server.shed() == 4; }, absl::Seconds(10)))
      << server.shed() << " shed";
  // The proxy is answered while they hold theirs, twice at once.
  UniqueFd proxy1 = ConnectFrom("127.0.0.2", server.port());
  UniqueFd proxy2 = ConnectFrom("127.0.0.2", server.port());
  ASSERT_TRUE(SendRaw(proxy1.get(), "GET / HTTP/1.0\r\n\r\n"));
  ASSERT_TRUE(SendRaw(proxy2.get(), "GET / HTTP/1.0\r\n\r\n"));
  EXPECT_THAT(ReadToEnd(proxy1.get()), HasSubstr("the state"));
  EXPECT_THAT(ReadToEnd(proxy2.get()), HasSubstr("the state"));
  EXPECT_EQ(server.shed(), 4);
  EXPECT_EQ(rec.count(), 2u);
}

TEST(HttpdServerTest, AClientTricklingItsRequestIsCutAtTheDeadline) {
  Recorder rec;
  ServerOptions o;
  o.request_timeout = absl::Milliseconds(500);
  Server server(o, rec.Handler());
  ASSERT_TRUE(server.Start().ok());
  UniqueFd fd = Connect(server.port());
  ASSERT_TRUE(SendRaw(fd.get(), "GET / HTTP/1.1\r\nX-Slow: "));
  // A byte every 100 ms keeps libmicrohttpd's own inactivity timeout from ever firing; 200
  // bytes would take 20 s.
  bool cut = false;
  for (int i = 0; i < 200 && !cut; ++i) {
    pollfd pfd{fd.get(), POLLIN, 0};
    if (::poll(&pfd, 1, 100) > 0) {
      char c;
      cut = ::recv(fd.get(), &c, 1, 0) <= 0;
      if (cut) break;
    }
    cut = !SendRaw(fd.get(), "a");
  }
  EXPECT_TRUE(cut);
  EXPECT_EQ(server.timed_out(), 1);
  EXPECT_EQ(rec.count(), 0u);
  // Served again; a starved process (the sanitizer runs at nice 19) may see the 500 ms deadline
  // cut one exchange before its handler ran, so it asks until answered.
  EXPECT_TRUE(WaitUntil(
      [&] { return absl::StrContains(Exchange(server.port(), "GET / HTTP/1.0\r\n\r\n"), " 200 "); },
      absl::Seconds(10)));
}

// What a try of the slow request saw: the wall time before the handler ran and after it returned.
struct SlowTry {
  std::string answer;
  int64_t timed_out = 0;
  absl::Duration before_handler;
  absl::Duration after_handler;
};

SlowTry TrySlowHandler(const ServerOptions& o, absl::Duration handler_time) {
  absl::Mutex mu;
  absl::Time entered, left;
  Server server(o, [&](const Request&) {
    {
      absl::MutexLock lock(&mu);
      entered = absl::Now();
    }
    absl::SleepFor(handler_time);
    absl::MutexLock lock(&mu);
    left = absl::Now();
    return Reply{.body = "slow but whole"};
  });
  EXPECT_TRUE(server.Start().ok());
  const absl::Time start = absl::Now();
  SlowTry t;
  t.answer = Exchange(server.port(), "GET /slow HTTP/1.0\r\n\r\n");
  const absl::Time end = absl::Now();
  t.timed_out = server.timed_out();
  absl::MutexLock lock(&mu);
  t.before_handler = entered - start;
  t.after_handler = end - left;
  return t;
}

TEST(HttpdServerTest, TheHandlersOwnTimeIsNotCountedAgainstTheClient) {
  ServerOptions o;
  o.request_timeout = absl::Seconds(1);
  // The sanitizer runs share the machine at nice 19 and can be starved for longer than the
  // deadline; a try in which the time outside the handler reached it proves nothing and is
  // repeated (the server's watcher reads the same clock as this test).
  for (int attempt = 1; attempt <= 5; ++attempt) {
    SlowTry t = TrySlowHandler(o, 3 * o.request_timeout);  // three times the deadline: not counted
    if (t.before_handler >= o.request_timeout || t.after_handler >= o.request_timeout) {
      std::cerr << "try " << attempt << " inconclusive: " << t.before_handler << " before and "
                << t.after_handler << " after the handler\n";
      continue;
    }
    EXPECT_THAT(t.answer, HasSubstr("slow but whole"));
    EXPECT_EQ(t.timed_out, 0);
    return;
  }
  GTEST_SKIP() << "this process was starved past the deadline in every try";
}

TEST(HttpdServerTest, AClientNotTakingTheAnswerIsCut) {
  ServerOptions o;
  o.request_timeout = absl::Seconds(1);
  o.min_answer_rate = int64_t{1} << 30;  // the big answer's time is about request_timeout
  Server server(o, [&](const Request&) {
    return Reply{.body = std::string(32 << 20, 'x')};  // far more than socket buffers hold
  });
  ASSERT_TRUE(server.Start().ok());
  UniqueFd fd = Connect(server.port());
  ASSERT_TRUE(SendRaw(fd.get(), "GET /big HTTP/1.0\r\n\r\n"));
  ASSERT_TRUE(WaitUntil([&] { return server.timed_out() == 1; }, absl::Seconds(30)));
  // What the client reads now ends short of the body.
  EXPECT_LT(ReadToEnd(fd.get()).size(), size_t{32} << 20);
}

TEST(HttpdServerTest, StopWaitsForARunningHandlerAndRefusesAfterwards) {
  absl::Notification entered;
  std::atomic<bool> finished{false};
  Server server({}, [&](const Request&) {
    entered.Notify();
    absl::SleepFor(absl::Milliseconds(200));
    finished.store(true);
    return Reply{.body = "late"};
  });
  ASSERT_TRUE(server.Start().ok());
  const int port = server.port();
  UniqueFd fd = Connect(port);
  ASSERT_TRUE(SendRaw(fd.get(), "GET / HTTP/1.0\r\n\r\n"));
  ASSERT_TRUE(entered.WaitForNotificationWithTimeout(absl::Seconds(10)));
  server.Stop();
  EXPECT_TRUE(finished.load());
  EXPECT_FALSE(ConnectTcp("127.0.0.1", std::to_string(port), absl::Now() + absl::Seconds(2)).ok());
}

TEST(HttpdServerTest, StartFailsClearly) {
  Server bad_host({.listen_host = "not-an-address"}, [](const Request&) { return Reply{}; });
  absl::Status s = bad_host.Start();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("not-an-address"));
  Server first({}, [](const Request&) { return Reply{}; });
  ASSERT_TRUE(first.Start().ok());
  EXPECT_EQ(first.Start().code(), absl::StatusCode::kFailedPrecondition);
  Server second({.port = first.port()}, [](const Request&) { return Reply{}; });
  s = second.Start();
  EXPECT_EQ(s.code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(s.message(), HasSubstr(absl::StrCat(":", first.port())));
}

TEST(HttpdServerTest, TheHandlerSeesTheCookieAndCookieValueDecodesIt) {
  Recorder rec;
  Server server({}, rec.Handler());
  ASSERT_TRUE(server.Start().ok());
  Exchange(server.port(), "GET / HTTP/1.1\r\nHost: x\r\nCookie: a=1; proxy-user=al%40ICE\r\n\r\n");
  ASSERT_EQ(rec.count(), 1u);
  EXPECT_EQ(rec.seen[0].cookie, "a=1; proxy-user=al%40ICE");
  EXPECT_EQ(CookieValue(rec.seen[0].cookie, "proxy-user"), "al@ICE");
  EXPECT_EQ(CookieValue("x-proxy-user=bob; proxy-user=carol+d", "proxy-user"), "carol d");
  EXPECT_EQ(CookieValue("proxy-user=%4", "proxy-user"), "%4");  // not an escape: as sent
  EXPECT_EQ(CookieValue("other=1", "proxy-user"), "");
  EXPECT_EQ(CookieValue("", "proxy-user"), "");
}

}  // namespace
}  // namespace tony::httpd
