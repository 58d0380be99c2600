// Copyright libtony authors.
//
// Executor footprint: peak RSS (VmHWM) of tony-executor beside a running task (`sleep 2`),
// sampled from /proc/<pid>/status while the task runs, with a broker in this process.
//
//   executor_bench [--bin_dir=DIR] [--runs=3]     (TONY_BENCH_SMAPS=1: RSS per mapping too)

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "broker/secret.h"
#include "common/file_util.h"
#include "common/subprocess.h"
#include "ipc/credentials.h"
#include "tony/cluster_spec_broker.h"

namespace {

constexpr char kSecret[] = "bench-secret-0123456789abcdef";

long StatusKb(pid_t pid, const std::string& key) {
  std::ifstream in(absl::StrCat("/proc/", pid, "/status"));
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(key, 0) == 0) return std::strtol(line.c_str() + key.size(), nullptr, 10);
  }
  return -1;
}

}  // namespace

int main(int argc, char** argv) {
  std::string bin_dir = tony::SelfDirectory();
  int runs = 3;
  for (int i = 1; i < argc; ++i) {
    absl::string_view a = argv[i];
    if (absl::ConsumePrefix(&a, "--bin_dir=")) {
      bin_dir = std::string(a);
    } else if (absl::ConsumePrefix(&a, "--runs=")) {
      if (!absl::SimpleAtoi(a, &runs)) return 2;
    } else {
      std::fprintf(stderr, "usage: executor_bench [--bin_dir=DIR] [--runs=3]\n");
      return 2;
    }
  }
  std::string dir = absl::StrCat(std::getenv("TMPDIR") ? std::getenv("TMPDIR") : "/tmp",
                                 "/tony-executor-bench-", getpid());
  if (!tony::MakeDirectories(dir).ok() ||
      !tony::WriteFileAtomically(dir + "/job.yaml",
                                 "command: sleep 2\njobs:\n  worker: {instances: 1}\n")
           .ok()) {
    return 1;
  }
  // As on YARN: the secret is a secret key of the container's token file.
  tony::ipc::Credentials tokens;
  tokens.AddSecret(tony::broker::kSecretCredentialAlias, kSecret);
  if (absl::Status s = tokens.WriteFile(dir + "/container_tokens"); !s.ok()) {
    std::fprintf(stderr, "%s\n", std::string(s.message()).c_str());
    return 1;
  }
  std::printf("%-6s %-16s %-16s %-16s\n", "run", "VmHWM_kb", "VmRSS_kb", "task_exit");
  std::vector<long> peaks, steady;
  for (int r = 0; r < runs; ++r) {
    tony::ClusterSpecBrokerOptions options;
    options.listen_address = "127.0.0.1:0";
    options.secret = kSecret;
    options.expected_tasks = {{"worker", 1}};
    tony::ClusterSpecBroker broker(options);
    if (!broker.Start().ok()) return 1;
    tony::SubprocessOptions o;
    o.argv = {bin_dir + "/tony-executor"};
    o.env = {{"PATH", "/usr/bin:/bin"},
             {"TONY_AM_ADDRESS", absl::StrCat("127.0.0.1:", broker.port())},
             {"HADOOP_TOKEN_FILE_LOCATION", dir + "/container_tokens"},
             {"TONY_JOB_NAME", "worker"},
             {"TONY_TASK_INDEX", "0"},
             {"TONY_SPEC_FILE", dir + "/job.yaml"},
             {"TONY_TASK_LOG_DIR", dir},
             {"TONY_TASK_HOST", "127.0.0.1"}};
    o.stderr_path = dir + "/executor.log";
    auto p = tony::Subprocess::Spawn(o);
    if (!p.ok()) {
      std::fprintf(stderr, "%s\n", std::string(p.status().message()).c_str());
      return 1;
    }
    absl::SleepFor(absl::Milliseconds(1700));  // the task runs for 2 s
    if (std::getenv("TONY_BENCH_SMAPS")) {
      // Resident kB per mapping, to see where the footprint is.
      std::string cmd = absl::StrCat(
          "awk '/^[0-9a-f]+-/{name=$6 \" \" $2} /^Rss/{r[name]+=$2} "
          "END{for(n in r) if(r[n]>100) print r[n], n}' /proc/",
          (*p)->pid(), "/smaps | sort -n");
      if (std::system(cmd.c_str()) != 0) std::fprintf(stderr, "smaps dump failed\n");
    }
    long hwm = StatusKb((*p)->pid(), "VmHWM:");
    long rss = StatusKb((*p)->pid(), "VmRSS:");
    int code = *(*p)->Wait(absl::Seconds(30));
    std::printf("%-6d %-16ld %-16ld %-16d\n", r, hwm, rss, code);
    peaks.push_back(hwm);
    steady.push_back(rss);
    broker.Stop();
  }
  for (const char* f : {"job.yaml", "executor.log", "stdout", "stderr"}) {
    ::unlink(absl::StrCat(dir, "/", f).c_str());
  }
  ::rmdir(dir.c_str());
  std::sort(peaks.begin(), peaks.end());
  std::sort(steady.begin(), steady.end());
  // Peak: the lifetime high-water mark, start-up included. Steady: resident while the task
  // runs, which is what YARN's container memory monitor samples.
  std::printf("executor RSS beside a running task: median peak %.1f MB, median steady %.1f MB\n",
              peaks[peaks.size() / 2] / 1024.0, steady[steady.size() / 2] / 1024.0);
  return 0;
}
