// Copyright libtony authors.
//
// The HTTP server under the AM's page and the history server (httpd::Server, libmicrohttpd):
// latency of a GET of a 20 KB page over loopback, a new connection each (every answer closes
// its connection), alone and while clients trickling their requests hold all but two of the
// connections; and the memory those held connections cost (a thread each). Prints figures;
// asserts nothing.
//
//   httpd_bench [--requests=500]

#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "common/tcp_connect.h"
#include "httpd/server.h"

namespace {

// This process's resident set, in KB.
int64_t RssKb() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    absl::string_view v = line;
    int64_t kb = 0;
    if (absl::ConsumePrefix(&v, "VmRSS:") &&
        absl::SimpleAtoi(absl::StripSuffix(absl::StripAsciiWhitespace(v), " kB"), &kb)) {
      return kb;
    }
  }
  return 0;
}

// One GET on a new connection; false when the answer is not a whole 200.
bool Get(int port, size_t body) {
  auto fd = tony::ConnectTcp("127.0.0.1", std::to_string(port), absl::Now() + absl::Seconds(5));
  if (!fd.ok()) return false;
  const std::string request = "GET /page HTTP/1.1\r\nHost: bench\r\n\r\n";
  if (::send(fd->get(), request.data(), request.size(), MSG_NOSIGNAL) < 0) return false;
  std::string answer;
  char buf[16384];
  while (true) {
    pollfd pfd{fd->get(), POLLIN, 0};
    if (::poll(&pfd, 1, 5000) <= 0) return false;
    ssize_t n = ::recv(fd->get(), buf, sizeof(buf), 0);
    if (n <= 0) break;
    answer.append(buf, static_cast<size_t>(n));
  }
  return absl::StrContains(answer.substr(0, 16), " 200 ") && answer.size() > body;
}

void Latency(const char* label, int port, int requests, size_t body) {
  std::vector<double> ms;
  int failed = 0;
  for (int i = 0; i < requests; ++i) {
    const absl::Time start = absl::Now();
    if (!Get(port, body)) ++failed;
    ms.push_back(absl::ToDoubleMilliseconds(absl::Now() - start));
  }
  std::sort(ms.begin(), ms.end());
  std::printf("%-44s p50 %6.3f ms  p99 %6.3f ms  (%d requests, %d failed)\n", label,
              ms[ms.size() / 2], ms[ms.size() * 99 / 100], requests, failed);
}

}  // namespace

int main(int argc, char** argv) {
  int requests = 500;
  for (int i = 1; i < argc; ++i) {
    absl::string_view a = argv[i];
    if (absl::ConsumePrefix(&a, "--requests=")) (void)absl::SimpleAtoi(a, &requests);
  }
  const size_t body = 20 << 10;
  tony::httpd::ServerOptions options;
  options.request_timeout = absl::Seconds(30);  // the trickling clients stay for the run
  tony::httpd::Server server(options, [&](const tony::httpd::Request&) {
    return tony::httpd::Reply{.body = std::string(body, 'x')};
  });
  if (!server.Start().ok()) return 1;
  Latency("GET, a new connection each", server.port(), requests, body);

  const int64_t before = RssKb();
  std::vector<tony::UniqueFd> held;
  for (int i = 0; i < options.max_connections - 2; ++i) {
    auto fd = tony::ConnectTcp("127.0.0.1", std::to_string(server.port()),
                               absl::Now() + absl::Seconds(5));
    if (!fd.ok()) continue;
    const std::string part = "GET / HTTP/1.1\r\nX-Slow: ";
    (void)::send(fd->get(), part.data(), part.size(), MSG_NOSIGNAL);
    held.push_back(*std::move(fd));
  }
  absl::SleepFor(absl::Milliseconds(200));  // their threads have started
  const int64_t after = RssKb();
  Latency(absl::StrCat("the same, ", held.size(), " connections held").c_str(), server.port(),
          requests, body);
  std::printf("%-44s %lld KB for %zu connections (%.0f KB each)\n", "RSS of held connections",
              static_cast<long long>(after - before), held.size(),
              held.empty() ? 0.0 : static_cast<double>(after - before) / held.size());
  held.clear();
  server.Stop();
  return 0;
}
