// Copyright libtony authors.
//
// The history server's answers with many finished jobs: the job list from an index of 10,000
// and 50,000 synthetic jobs (p50/p99 per request, the memory the index holds), and the page of a
// 500-task job built from its event log. Prints figures; asserts nothing.
//
//   history_bench [--jobs=10000,50000] [--requests=200]

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "history/history_index.h"
#include "history/history_pages.h"
#include "history/job_history.h"

namespace {

using namespace tony::history;  // NOLINT: a bench

int64_t RssKb() {
  std::ifstream statm("/proc/self/statm");
  int64_t size = 0, resident = 0;
  statm >> size >> resident;
  return resident * (sysconf(_SC_PAGESIZE) / 1024);
}

double Percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(p * static_cast<double>(v.size())))];
}

JobSummary Synthetic(int n, absl::Time t0) {
  static const char* kStates[] = {"SUCCEEDED", "SUCCEEDED", "SUCCEEDED", "FAILED", "KILLED"};
  JobSummary s;
  s.user = absl::StrCat("user", n % 40);
  s.name = absl::StrCat(n % 7 == 0 ? "mnist-" : "resnet-", n);
  s.queue = n % 3 == 0 ? "research" : "default";
  s.state = kStates[n % 5];
  s.started = t0 + absl::Minutes(n);
  s.finished = s.started + absl::Minutes(5);
  s.attempts = 1;
  s.tasks = 4;
  s.tags = {"nightly"};
  if (s.state == "FAILED") s.diagnostics = "worker:1 exited with 1: Traceback (most recent...";
  return s;
}

void BenchList(int jobs, int requests) {
  const absl::Time t0 = absl::FromUnixSeconds(1700000000);
  const int64_t rss_before = RssKb();
  HistoryIndex index;
  absl::Time start = absl::Now();
  for (int n = 0; n < jobs; ++n) {
    index.Put({absl::StrCat("application_1_", n, ".jsonl"), 4000, 1, "u"}, Synthetic(n, t0));
  }
  const double build_ms = absl::ToDoubleMilliseconds(absl::Now() - start);
  index.Query(HistoryQuery{});  // the first sorts
  const int64_t rss_after = RssKb();
  const std::vector<std::pair<const char*, std::string>> queries = {
      {"first page, no filter", ""},
      {"state=FAILED, page 3", "state=FAILED&offset=100"},
      {"user + name part", "user=user7&name=mnist"},
  };
  std::printf("%6d jobs: index of %.1f MB (RSS added), built in %.0f ms\n", jobs,
              static_cast<double>(rss_after - rss_before) / 1024.0, build_ms);
  for (const auto& [what, qs] : queries) {
    auto q = ParseHistoryQuery(qs);
    std::vector<double> ms;
    for (int i = 0; i < requests; ++i) {
      const absl::Time t = absl::Now();
      HistoryPage page = index.Query(*q);
      std::string html = RenderJobListPage(page, *q, index.size());
      ms.push_back(absl::ToDoubleMilliseconds(absl::Now() - t));
    }
    std::printf("        %-24s p50 %.2f ms  p99 %.2f ms (query and HTML)\n", what,
                Percentile(ms, 0.5), Percentile(ms, 0.99));
  }
}

void BenchBigJob(int tasks, int requests) {
  std::string log;
  int seq = 0;
  auto line = [&](int second, const std::string& rest) {
    absl::StrAppend(&log, R"({"v":1,"attempt":1,"seq":)", ++seq, R"(,"time":"2026-11-26T10:)",
                    absl::StrFormat("%02d:%02d", second / 60, second % 60), R"(.000Z",)", rest,
                    "}\n");
  };
  line(0, R"("event":"am_started","name":"big")");
  for (int i = 0; i < tasks; ++i) {
    const std::string task = absl::StrCat(R"("task":"worker:)", i, R"(")");
    line(1, R"("event":"task_requested",)" + task);
    line(2, R"("event":"task_allocated","container":"c","node":"nm:1",)" + task);
    line(3, R"("event":"task_registered","address":"nm:2",)" + task);
    line(4, R"("event":"task_started",)" + task);
    for (int m = 0; m < 10; ++m) {
      line(5 + m * 60, R"("event":"task_usage","rss_bytes":100000000,"cpu_cores":1.0,)" + task);
    }
    line(700, R"("event":"task_exited","exit_code":0,)" + task);
  }
  line(701, R"("event":"job_finished","state":"SUCCEEDED")");
  std::vector<double> ms;
  size_t bytes = 0;
  for (int i = 0; i < requests; ++i) {
    const absl::Time t = absl::Now();
    JobHistory job = ReadJobHistory("application_1_1", log);
    bytes = RenderJobPage(job).size();
    ms.push_back(absl::ToDoubleMilliseconds(absl::Now() - t));
  }
  std::printf("%d-task job: log %.1f MB, page %.1f MB; read and render p50 %.0f ms, p99 %.0f ms\n",
              tasks, static_cast<double>(log.size()) / 1e6, static_cast<double>(bytes) / 1e6,
              Percentile(ms, 0.5), Percentile(ms, 0.99));
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<int> jobs = {10000, 50000};
  int requests = 200;
  for (int i = 1; i < argc; ++i) {
    absl::string_view a = argv[i];
    if (absl::ConsumePrefix(&a, "--jobs=")) {
      jobs.clear();
      for (absl::string_view n : absl::StrSplit(a, ',')) {
        int v = 0;
        if (absl::SimpleAtoi(n, &v)) jobs.push_back(v);
      }
    } else if (absl::ConsumePrefix(&a, "--requests=")) {
      (void)absl::SimpleAtoi(a, &requests);
    }
  }
  for (int n : jobs) BenchList(n, requests);
  BenchBigJob(500, std::max(5, requests / 20));
  return 0;
}
