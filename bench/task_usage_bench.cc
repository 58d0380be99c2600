// Copyright libtony authors.
//
// The executor's heartbeat sampling (common/proc.h SampleTaskUsage): one /proc scan that finds
// the task's processes and sums their memory and CPU. Starts N sleeping children as the task's
// processes, beside whatever else the machine runs, then prints the median CPU time and wall
// time of one sample and the RSS it adds to this process (the executor stays within 6 MB).
//
//   task_usage_bench [--children=1,20,200] [--samples=50]

#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "common/proc.h"

namespace {

double CpuMs() {
  timespec t;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

double WallMs() {
  timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<int> counts = {1, 20, 200};
  int samples = 50;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a.rfind("--children=", 0) == 0) {
      counts.clear();
      for (absl::string_view n : absl::StrSplit(a.substr(11), ',')) {
        int c = 0;
        if (absl::SimpleAtoi(n, &c)) counts.push_back(c);
      }
    } else if (a.rfind("--samples=", 0) == 0) {
      (void)absl::SimpleAtoi(a.substr(10), &samples);
    }
  }
  std::printf("%-10s %-14s %-14s %-12s %s\n", "children", "cpu ms/sample", "wall ms/sample",
              "peak RSS kB", "task processes");
  for (int n : counts) {
    std::vector<pid_t> children;
    for (int i = 0; i < n; ++i) {
      pid_t c = ::fork();
      if (c == 0) {
        ::pause();
        ::_exit(0);
      }
      if (c > 0) children.push_back(c);
    }
    std::vector<double> cpu, wall;
    tony::TaskUsage u;
    for (int s = 0; s < samples; ++s) {
      const double c0 = CpuMs(), w0 = WallMs();
      // As the executor filters: descendants, and any process carrying its marker.
      u = tony::SampleTaskUsage({.env_marker = "TONY_TASK_INSTANCE=bench"});
      cpu.push_back(CpuMs() - c0);
      wall.push_back(WallMs() - w0);
    }
    std::printf("%-10d %-14.3f %-14.3f %-12lld %d found of %d started\n", n, Median(cpu),
                Median(wall), static_cast<long long>(tony::PeakRssKb()), u.processes, n);
    for (pid_t c : children) ::kill(c, SIGKILL);
    for (pid_t c : children) ::waitpid(c, nullptr, 0);
  }
  return 0;
}
