// Copyright libtony authors.
//
// Broker scale: N simulated executors register over loopback; prints the time from the first
// registration until the last executor holds the cluster spec (median over runs) and the
// broker's peak RSS. The broker runs in a child process (this binary with --serve) so its RSS is
// its own; the executors are asynchronous calls from this process over several connections.
//
//   broker_bench [--tasks=100,1000,10000] [--runs=5] [--channels=8]   (at least tasks/8)

#include <grpcpp/grpcpp.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "broker/secret.h"
#include "tony/broker.grpc.pb.h"
#include "tony/cluster_spec_broker.h"

namespace {

constexpr char kSecret[] = "bench-secret-0123456789abcdef";

long PeakRssKb() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmHWM:", 0) == 0) return std::strtol(line.c_str() + 6, nullptr, 10);
  }
  return -1;
}

// Child: serves a broker for `tasks` workers, writes its port to `out_fd`, then waits for the
// parent to close `in_fd` and writes its peak RSS (kB) before exiting.
int Serve(int tasks, int out_fd, int in_fd) {
  tony::ClusterSpecBrokerOptions options;
  options.listen_address = "127.0.0.1:0";
  options.secret = kSecret;
  options.expected_tasks = {{"worker", tasks}};
  tony::ClusterSpecBroker broker(options);
  if (!broker.Start().ok()) return 1;
  std::string port = absl::StrCat(broker.port(), "\n");
  if (write(out_fd, port.data(), port.size()) < 0) return 1;
  char c;
  while (read(in_fd, &c, 1) > 0) {
  }
  std::string rss = absl::StrCat(PeakRssKb(), "\n");
  if (write(out_fd, rss.data(), rss.size()) < 0) return 1;
  broker.Stop();
  return 0;
}

struct RunResult {
  double seconds = 0;
  long broker_rss_kb = 0;
  int failures = 0;
};

std::string ReadLine(int fd) {
  std::string s;
  char c;
  while (read(fd, &c, 1) == 1 && c != '\n') s += c;
  return s;
}

RunResult RunOnce(const char* self, int tasks, int channels) {
  int to_parent[2], to_child[2];
  if (pipe(to_parent) != 0 || pipe(to_child) != 0) std::abort();
  pid_t pid = fork();
  if (pid == 0) {
    close(to_parent[0]);
    close(to_child[1]);
    // Exec for a clean process: the broker's RSS must not include this process's pages.
    std::string t = absl::StrCat("--serve=", tasks, ",", to_parent[1], ",", to_child[0]);
    execl(self, self, t.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  close(to_parent[1]);
  close(to_child[0]);
  int port = 0;
  if (!absl::SimpleAtoi(ReadLine(to_parent[0]), &port)) std::abort();
  const std::string address = absl::StrCat("127.0.0.1:", port);

  std::vector<std::unique_ptr<tony::broker::ClusterSpecBroker::Stub>> stubs;
  for (int i = 0; i < channels; ++i) {
    grpc::ChannelArguments args;
    args.SetInt("tony.bench.channel", i);  // distinct args: one connection each
    args.SetMaxReceiveMessageSize(64 << 20);
    auto channel = grpc::CreateCustomChannel(address, grpc::InsecureChannelCredentials(), args);
    channel->WaitForConnected(std::chrono::system_clock::now() + std::chrono::seconds(10));
    stubs.push_back(tony::broker::ClusterSpecBroker::NewStub(channel));
  }

  struct Call {
    grpc::ClientContext ctx;
    tony::broker::RegisterRequest request;
    tony::broker::RegisterResponse response;
    grpc::Status status;
    std::unique_ptr<grpc::ClientAsyncResponseReader<tony::broker::RegisterResponse>> reader;
  };
  std::vector<std::unique_ptr<Call>> calls(tasks);
  for (int i = 0; i < tasks; ++i) {
    auto& c = calls[i];
    c = std::make_unique<Call>();
    c->ctx.AddMetadata(tony::broker::kSecretMetadataKey, kSecret);
    c->ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(120));
    c->request.mutable_task()->set_job_name("worker");
    c->request.mutable_task()->set_index(i);
    c->request.set_host("127.0.0.1");
    c->request.set_port(static_cast<uint32_t>(20000 + i % 40000));
  }

  grpc::CompletionQueue cq;
  const absl::Time start = absl::Now();
  for (int i = 0; i < tasks; ++i) {
    Call* c = calls[i].get();
    c->reader = stubs[i % channels]->PrepareAsyncRegister(&c->ctx, c->request, &cq);
    c->reader->StartCall();
    c->reader->Finish(&c->response, &c->status, c);
  }
  RunResult result;
  absl::Time last = start;
  for (int done = 0; done < tasks; ++done) {
    void* tag;
    bool ok;
    if (!cq.Next(&tag, &ok)) break;
    auto* c = static_cast<Call*>(tag);
    if (!c->status.ok() || c->response.cluster().jobs_size() != 1 ||
        static_cast<int>(c->response.cluster().jobs(0).ports().size()) != 2 * tasks) {
      ++result.failures;
    }
    last = absl::Now();
  }
  result.seconds = absl::ToDoubleSeconds(last - start);
  cq.Shutdown();
  void* tag;
  bool ok;
  while (cq.Next(&tag, &ok)) {
  }
  close(to_child[1]);
  absl::SimpleAtoi(ReadLine(to_parent[0]), &result.broker_rss_kb);
  close(to_parent[0]);
  int wstatus;
  waitpid(pid, &wstatus, 0);
  return result;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<int> sizes = {100, 1000, 10000};
  int runs = 5;
  int channels = 8;
  for (int i = 1; i < argc; ++i) {
    absl::string_view a = argv[i];
    if (absl::ConsumePrefix(&a, "--serve=")) {
      std::vector<std::string> p = absl::StrSplit(a, ',');
      int tasks, out_fd, in_fd;
      if (p.size() != 3 || !absl::SimpleAtoi(p[0], &tasks) || !absl::SimpleAtoi(p[1], &out_fd) ||
          !absl::SimpleAtoi(p[2], &in_fd)) {
        return 2;
      }
      return Serve(tasks, out_fd, in_fd);
    } else if (absl::ConsumePrefix(&a, "--tasks=")) {
      sizes.clear();
      for (absl::string_view s : absl::StrSplit(a, ',')) {
        int n;
        if (absl::SimpleAtoi(s, &n)) sizes.push_back(n);
      }
    } else if (absl::ConsumePrefix(&a, "--runs=")) {
      if (!absl::SimpleAtoi(a, &runs)) return 2;
    } else if (absl::ConsumePrefix(&a, "--channels=")) {
      if (!absl::SimpleAtoi(a, &channels)) return 2;
    } else {
      std::cerr << "usage: broker_bench [--tasks=100,1000,10000] [--runs=5] [--channels=8]\n";
      return 2;
    }
  }
  std::printf("%-8s %-6s %-14s %-14s %-14s %-16s\n", "tasks", "runs", "median_s", "min_s", "max_s",
              "broker_rss_mb");
  for (int tasks : sizes) {
    std::vector<double> times;
    long rss = 0;
    int failures = 0;
    for (int r = 0; r < runs; ++r) {
      // The broker takes 16 calls at once per connection: at most 8 long polls on each.
      RunResult res = RunOnce(argv[0], tasks, std::min(std::max(channels, (tasks + 7) / 8), tasks));
      times.push_back(res.seconds);
      rss = std::max(rss, res.broker_rss_kb);
      failures += res.failures;
    }
    std::sort(times.begin(), times.end());
    std::printf("%-8d %-6d %-14.3f %-14.3f %-14.3f %-16.1f%s\n", tasks, runs,
                times[times.size() / 2], times.front(), times.back(), rss / 1024.0,
                failures ? absl::StrCat("  FAILURES: ", failures).c_str() : "");
    std::fflush(stdout);
  }
  return 0;
}
