// Copyright libtony authors.
//
// The executor's "does the task listen on its port yet" check, on a node with many sockets:
// opens N connected loopback socket pairs (as executors, their tasks and the AM hold on a busy
// node), then prints the median CPU time of one check through the kernel's sock_diag and through
// reading /proc/net/tcp{,6} as text. 500 executors on a node check every 2 s at the most.
//
//   listen_check_bench [--sockets=0,500,1500] [--checks=50]

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "executor/port_reservation.h"

namespace {

double CpuMs() {
  timespec t;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

double MedianMs(int checks, const std::function<void()>& check) {
  std::vector<double> v;
  for (int i = 0; i < checks; ++i) {
    const double start = CpuMs();
    check();
    v.push_back(CpuMs() - start);
  }
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// `pairs` established loopback connections (2 sockets each) behind one listener.
std::vector<int> OpenPairs(int pairs) {
  std::vector<int> fds;
  int listener = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(a);
  if (::bind(listener, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0 ||
      ::listen(listener, 4096) != 0 ||
      ::getsockname(listener, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
    return fds;
  }
  fds.push_back(listener);
  for (int i = 0; i < pairs; ++i) {
    int c = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (::connect(c, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0) break;
    fds.push_back(c);
    int s = ::accept(listener, nullptr, nullptr);
    if (s >= 0) fds.push_back(s);
  }
  return fds;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<int> sizes = {0, 500, 1500};
  int checks = 50;
  for (int i = 1; i < argc; ++i) {
    absl::string_view a = argv[i];
    if (absl::ConsumePrefix(&a, "--sockets=")) {
      sizes.clear();
      for (absl::string_view s : absl::StrSplit(a, ',')) {
        int n;
        if (absl::SimpleAtoi(s, &n)) sizes.push_back(n);
      }
    } else if (absl::ConsumePrefix(&a, "--checks=")) {
      if (!absl::SimpleAtoi(a, &checks) || checks < 1) return 2;
    } else {
      std::fprintf(stderr, "usage: listen_check_bench [--sockets=0,500,1500] [--checks=50]\n");
      return 2;
    }
  }
  absl::StatusOr<tony::executor::PortReservation> r = tony::executor::PortReservation::Reserve();
  if (!r.ok()) return 1;
  const int port = r->port();
  std::printf("%-9s %-18s %-18s\n", "sockets", "sock_diag_ms", "proc_net_tcp_ms");
  for (int n : sizes) {
    std::vector<int> fds = OpenPairs(n / 2);
    const double diag = MedianMs(checks, [&] {
      (void)tony::executor::DiagHasListener(AF_INET, port, 0);
      (void)tony::executor::DiagHasListener(AF_INET6, port, 0);
    });
    const double proc = MedianMs(checks, [&] {
      for (const char* path : {"/proc/net/tcp", "/proc/net/tcp6"}) {
        std::ifstream in(path);
        std::stringstream buf;
        buf << in.rdbuf();
        (void)tony::executor::TableHasListener(buf.str(), port, 0);
      }
    });
    std::printf("%-9zu %-18.3f %-18.3f\n", fds.size(), diag, proc);
    for (int fd : fds) ::close(fd);
  }
  return 0;
}
