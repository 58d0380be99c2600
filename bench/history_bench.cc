// Copyright libtony authors.
//
// The history server's answers with many finished jobs: the job list from an index of 10,000
// and 50,000 synthetic jobs (p50/p99 per request, the memory the index holds), /usage and
// /metrics from a server over as many synthetic logs, and the page of a 500-task job built from
// its event log. Prints figures; asserts nothing.
//
//   history_bench [--jobs=10000,50000] [--requests=200]

#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "history/history_index.h"
#include "history/history_pages.h"
#include "history/history_server.h"
#include "history/job_history.h"

namespace {

using namespace tony::history;  // NOLINT: a bench

int64_t RssKb() {
  std::ifstream statm("/proc/self/statm");
  int64_t size = 0, resident = 0;
  statm >> size >> resident;
  return resident * (sysconf(_SC_PAGESIZE) / 1024);
}

// This thread's CPU time: a figure a loaded machine does not inflate as it does the wall clock.
double ThreadCpuMs() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) / 1e6;
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

// `jobs` logs of one container each, made up as they are read: 40 users, 3 queues.
class SyntheticStore : public HistoryStore {
 public:
  explicit SyntheticStore(int jobs) : jobs_(jobs) {}
  absl::StatusOr<std::vector<HistoryFile>> List() const override {
    std::vector<HistoryFile> out;
    for (int n = 0; n < jobs_; ++n) out.push_back({absl::StrCat("application_1_", n, ".jsonl")});
    return out;
  }
  absl::StatusOr<std::string> Read(const std::string& name, int64_t) const override {
    int n = 0;
    (void)absl::SimpleAtoi(absl::StripSuffix(absl::StripPrefix(name, "application_1_"), ".jsonl"),
                           &n);
    const std::string t = absl::StrFormat("\"time\":\"2026-11-%02dT10:00:0", 1 + n / 2000 % 28);
    return absl::StrCat(
        "{\"v\":1,\"seq\":1,", t, "0.000Z\",\"event\":\"am_started\",\"user\":\"user", n % 40,
        "\",\"queue\":\"",
        n % 3 == 0   ? "research"
        : n % 3 == 1 ? "default"
                     : "gpu",
        "\"}\n", "{\"v\":1,\"seq\":2,", t,
        "0.000Z\",\"event\":\"task_requested\",\"task\":\"worker:0\",\"memory_mb\":4096,"
        "\"vcores\":2,\"gpus\":",
        n % 3 == 2 ? 1 : 0, "}\n", "{\"v\":1,\"seq\":3,", t,
        "1.000Z\",\"event\":\"task_allocated\",\"task\":\"worker:0\",\"container\":\"c\"}\n",
        "{\"v\":1,\"seq\":4,", t, "9.000Z\",\"event\":\"job_finished\",\"state\":\"",
        n % 5 == 3 ? "FAILED" : "SUCCEEDED", "\"}\n");
  }
  absl::Status Delete(const std::string&) const override { return absl::OkStatus(); }
  absl::StatusOr<std::string> Owner(const std::string&) const override { return std::string(); }
  std::string Describe() const override { return "synthetic"; }

 private:
  const int jobs_;
};

void BenchUsage(int jobs, int requests) {
  HistoryServerOptions options;
  options.groups_of = [](const std::string&) { return std::vector<std::string>(); };
  HistoryServer server(std::make_unique<SyntheticStore>(jobs), options);
  const absl::Time start = absl::Now();
  (void)server.Scan();
  std::printf("%6d jobs: a server's first scan of as many logs %.0f ms\n", jobs,
              absl::ToDoubleMilliseconds(absl::Now() - start));
  const std::vector<std::tuple<const char*, std::string, std::optional<std::string>>> asks = {
      {"/usage by user", "/usage", std::nullopt},
      {"/usage by job", "/usage?by=job", std::nullopt},
      {"/usage, a week", "/usage?by=queue&from=2026-11-08&to=2026-11-15", std::nullopt},
      {"/api/usage by queue", "/api/usage?by=queue", std::nullopt},
      {"/usage signed in", "/usage", "user7@EXAMPLE.COM"},
      {"/metrics", "/metrics", std::nullopt},
  };
  for (const auto& [what, target, who] : asks) {
    std::vector<double> ms, cpu_ms;
    size_t bytes = 0;
    for (int i = 0; i < requests; ++i) {
      const absl::Time t = absl::Now();
      const double cpu = ThreadCpuMs();
      bytes = server.Handle(target, "", who).body.size();
      cpu_ms.push_back(ThreadCpuMs() - cpu);
      ms.push_back(absl::ToDoubleMilliseconds(absl::Now() - t));
    }
    std::printf("        %-24s p50 %.2f ms  p99 %.2f ms, CPU p50 %.2f ms (%zu bytes)\n", what,
                Percentile(ms, 0.5), Percentile(ms, 0.99), Percentile(cpu_ms, 0.5), bytes);
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
  for (int n : jobs) BenchUsage(n, std::max(5, requests / 10));
  BenchBigJob(500, std::max(5, requests / 20));
  return 0;
}
