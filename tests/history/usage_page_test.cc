// Copyright libtony authors.
//
// The history server's usage: /usage and /api/usage over logs of known sizes and durations, what
// each signed-in user may see of them, escaping, the query's bad input, and the usage counters
// on /metrics (their text, and that they do not go down when logs go).

#include "history/usage_page.h"

#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "history/history_server.h"
#include "http/json.h"

namespace tony::history {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

TEST(ParseUsageQueryTest, ReadsByFromAndTo) {
  absl::StatusOr<UsageOptions> o = ParseUsageQuery("by=queue&from=2026-11-01&to=2026-12-01");
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_EQ(o->by, UsageBy::kQueue);
  EXPECT_EQ(o->from, absl::FromCivil(absl::CivilDay(2026, 11, 1), absl::UTCTimeZone()));
  EXPECT_EQ(o->to, absl::FromCivil(absl::CivilDay(2026, 12, 1), absl::UTCTimeZone()));
  o = ParseUsageQuery("");
  ASSERT_TRUE(o.ok());
  EXPECT_EQ(o->by, UsageBy::kUser);
  EXPECT_EQ(o->from, absl::InfinitePast());
  EXPECT_EQ(o->to, absl::InfiniteFuture());
  EXPECT_EQ(ParseUsageQuery("by=job&by=&x=1")->by, UsageBy::kJob);
}

TEST(ParseUsageQueryTest, BadInputNamesTheParameter) {
  struct Case {
    const char* query;
    const char* says;
  } cases[] = {
      {"by=host", "by: 'host' is not user, queue or job"},
      {"from=yesterday", "from: 'yesterday' is not a date"},
      {"to=2026-13-01", "to: '2026-13-01' is not a date"},
      {"from=2026-12-01&to=2026-11-01", "from: must be before to"},
  };
  for (const Case& c : cases) {
    absl::StatusOr<UsageOptions> o = ParseUsageQuery(c.query);
    ASSERT_TRUE(absl::IsInvalidArgument(o.status())) << c.query;
    EXPECT_THAT(o.status().message(), HasSubstr(c.says)) << c.query;
  }
}

UsageReport Report(std::vector<std::string> keys) {
  UsageReport r;
  double vcores = 10;
  for (std::string& key : keys) {
    UsageGroup g;
    g.key = std::move(key);
    g.jobs = 1;
    g.vcore_hours = vcores--;
    r.groups.push_back(g);
    r.total.jobs += 1;
    r.total.vcore_hours += g.vcore_hours;
  }
  r.total.key = "total";
  return r;
}

TEST(UsagePageTest, TextFromLogsIsEscapedInTheTableAndTheChart) {
  const UsageReport r = Report({"<script>alert(1)</script>", "a\"b&c"});
  for (UsageBy by : {UsageBy::kQueue, UsageBy::kJob}) {
    const std::string html = RenderUsagePage(r, {.by = by});
    EXPECT_THAT(html, Not(HasSubstr("<script>"))) << html;
    EXPECT_THAT(html, Not(HasSubstr("a\"b"))) << html;
    EXPECT_THAT(html, HasSubstr("&lt;script&gt;alert(1)&lt;/script&gt;"));
    EXPECT_THAT(html, HasSubstr("a&quot;b&amp;c"));
  }
  const std::string svg = UsageBarsSvg(r, 10);
  EXPECT_THAT(svg, HasSubstr("<svg class=\"usage-bars\""));
  EXPECT_THAT(svg, HasSubstr("&lt;script&gt;"));
  EXPECT_THAT(svg, Not(HasSubstr("<script>")));
  // The bars are scaled to the largest: 10 vcore-hours the full width, 9 nine tenths.
  EXPECT_THAT(svg, HasSubstr("class=\"vcore\" x=\"240\" y=\"23\" width=\"420\""));
  EXPECT_THAT(svg, HasSubstr("class=\"vcore\" x=\"240\" y=\"47\" width=\"378\""));
  EXPECT_THAT(svg, Not(HasSubstr("class=\"gpu\"")));  // no group held a GPU
}

TEST(UsagePageTest, ManyGroupsShowTheLargestAndSayHowManyMore) {
  std::vector<std::string> keys;
  for (int i = 0; i < 40; ++i) keys.push_back(absl::StrCat("user", i));
  const std::string html = RenderUsagePage(Report(keys), {}, /*max_rows=*/30);
  EXPECT_THAT(html, HasSubstr("<td>user29</td>"));
  EXPECT_THAT(html, Not(HasSubstr("<td>user30</td>")));
  EXPECT_THAT(html, HasSubstr("10 more with fewer vcore-hours"));
  EXPECT_THAT(html, HasSubstr("The 25 with the most vcore-hours"));
  EXPECT_THAT(html, HasSubstr("<b>total</b></td><td>40</td>"));
  // A job's row links its page; the JSON link keeps the window.
  UsageOptions by_job{.by = UsageBy::kJob};
  by_job.from = absl::FromCivil(absl::CivilDay(2026, 11, 1), absl::UTCTimeZone());
  const std::string jobs = RenderUsagePage(Report({"application_1_0001"}), by_job);
  EXPECT_THAT(jobs, HasSubstr("<a href=\"/jobs/application_1_0001\">application_1_0001</a>"));
  EXPECT_THAT(jobs, HasSubstr("href=\"/api/usage?by=job&amp;from=2026-11-01T00:00:00.000Z\""));
}

TEST(UsageMetricsTest, TheTextFormat) {
  UsageCounterMap counters;
  UsageCounters& alice = counters[{"alice", "default"}];
  alice.vcore_seconds = 7200;
  alice.mb_seconds = 2048 * 3600;
  alice.gpu_seconds = 3600;
  alice.finished = {{"FAILED", 1}, {"SUCCEEDED", 2}};
  // A queue's name is a log's text: quote, backslash, newline and a broken byte.
  counters[{"bob", "q\"\\\n\xff"}].vcore_seconds = 0.5;
  EXPECT_EQ(
      RenderUsageMetrics(counters),
      "# HELP tony_history_vcore_seconds_total Vcore-seconds the jobs' containers held.\n"
      "# TYPE tony_history_vcore_seconds_total counter\n"
      "tony_history_vcore_seconds_total{user=\"alice\",queue=\"default\"} 7200.000\n"
      "tony_history_vcore_seconds_total{user=\"bob\",queue=\"q\\\"\\\\\\n\xEF\xBF\xBD\"} "
      "0.500\n"
      "# HELP tony_history_memory_gb_seconds_total GB-seconds (GiB, 1024 MB) of memory the "
      "jobs' containers held.\n"
      "# TYPE tony_history_memory_gb_seconds_total counter\n"
      "tony_history_memory_gb_seconds_total{user=\"alice\",queue=\"default\"} 7200.000\n"
      "tony_history_memory_gb_seconds_total{user=\"bob\",queue=\"q\\\"\\\\\\n\xEF\xBF\xBD\"} "
      "0.000\n"
      "# HELP tony_history_gpu_seconds_total GPU-seconds the jobs' containers held.\n"
      "# TYPE tony_history_gpu_seconds_total counter\n"
      "tony_history_gpu_seconds_total{user=\"alice\",queue=\"default\"} 3600.000\n"
      "tony_history_gpu_seconds_total{user=\"bob\",queue=\"q\\\"\\\\\\n\xEF\xBF\xBD\"} "
      "0.000\n"
      "# HELP tony_history_jobs_finished_total Jobs that ended, by final state.\n"
      "# TYPE tony_history_jobs_finished_total counter\n"
      "tony_history_jobs_finished_total{user=\"alice\",queue=\"default\",state=\"FAILED\"} "
      "1\n"
      "tony_history_jobs_finished_total{user=\"alice\",queue=\"default\",state=\"SUCCEEDED\"} "
      "2\n");
  // No job yet: the families, no samples.
  const std::string empty = RenderUsageMetrics({});
  EXPECT_THAT(empty, HasSubstr("# TYPE tony_history_gpu_seconds_total counter\n"));
  EXPECT_THAT(empty, Not(HasSubstr("{")));
}

// A job of one container of 2 vcores, 2048 MB and 1 GPU held from 10:00 to 11:00.
std::string SizedLog(const std::string& user, const std::string& queue, const std::string& state,
                     const std::string& view_acls = "") {
  std::string log = absl::StrCat(
      R"({"v":1,"seq":1,"attempt":1,"time":"2026-11-26T10:00:00.000Z","event":"am_started",)",
      R"("user":")", user, R"(","name":"job","queue":")", queue, R"(","tags":[])",
      view_acls.empty() ? "" : absl::StrCat(R"(,"view_acls":")", view_acls, "\""), "}\n",
      R"({"v":1,"seq":2,"attempt":1,"time":"2026-11-26T10:00:00.000Z","event":"task_requested",)",
      R"("task":"worker:0","memory_mb":2048,"vcores":2,"gpus":1})", "\n",
      R"({"v":1,"seq":3,"attempt":1,"time":"2026-11-26T10:00:00.000Z","event":"task_allocated",)",
      R"("task":"worker:0","container":"c_1"})", "\n",
      R"({"v":1,"seq":4,"attempt":1,"time":"2026-11-26T11:00:00.000Z",)",
      R"("event":"container_completed","task":"worker:0","container":"c_1"})", "\n");
  if (!state.empty()) {
    absl::StrAppend(
        &log,
        R"({"v":1,"seq":5,"attempt":1,"time":"2026-11-26T11:00:00.000Z","event":"job_finished",)",
        R"("state":")", state, R"("})", "\n");
  }
  return log;
}

class HistoryUsageTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = ::testing::TempDir() + "/history_usage_test.XXXXXX";
    dir_ = mkdtemp(tmpl.data());
    Write("application_1_0001.jsonl", SizedLog("alice", "default", "SUCCEEDED"));
    Write("application_1_0002.jsonl", SizedLog("alice", "research", "FAILED"));
    Write("application_1_0003.jsonl", SizedLog("bob", "default", "KILLED", "carol"));
    Write("application_1_0004.jsonl", SizedLog("bob", "<b>q</b>", ""));  // running
  }
  void TearDown() override { (void)system(absl::StrCat("rm -rf '", dir_, "'").c_str()); }

  void Write(const std::string& name, const std::string& text) {
    std::ofstream(dir_ + "/" + name) << text;
  }
  std::unique_ptr<HistoryServer> Server(HistoryServerOptions options = {}) {
    options.admin_acl = "root";
    options.groups_of = [](const std::string&) { return std::vector<std::string>(); };
    auto server = std::make_unique<HistoryServer>(LocalHistoryStore(dir_), options);
    EXPECT_TRUE(server->Scan().ok());
    return server;
  }
  static http::Json Json(const httpd::Reply& reply) {
    auto j = http::ParseJson(reply.body, "reply");
    EXPECT_TRUE(j.ok()) << reply.body;
    return j.ok() ? *j : http::Json();
  }
  // The groups' keys of /api/usage?`query` as `principal` sees it, and its total jobs.
  static std::pair<std::vector<std::string>, int> Usage(HistoryServer& server,
                                                        const std::string& query,
                                                        const std::optional<std::string>& who) {
    http::Json j = Json(server.Handle("/api/usage?" + query, "", who));
    std::vector<std::string> keys;
    for (const http::Json& g : j["groups"]) keys.push_back(g["key"].get<std::string>());
    std::sort(keys.begin(), keys.end());
    return {keys, j["total"]["jobs"].get<int>()};
  }
  std::string dir_;
};

TEST_F(HistoryUsageTest, TheFiguresOfTheIndexedJobs) {
  auto server = Server();
  http::Json j = Json(server->Handle("/api/usage?by=queue"));
  EXPECT_EQ(j["by"], "queue");
  ASSERT_EQ(j["groups"].size(), 3u) << j.dump();
  EXPECT_EQ(j["groups"][0]["key"], "default");  // the most vcore-hours first
  EXPECT_EQ(j["groups"][0]["jobs"], 2);
  EXPECT_DOUBLE_EQ(j["groups"][0]["vcore_hours"].get<double>(), 4);
  EXPECT_DOUBLE_EQ(j["groups"][0]["gb_hours"].get<double>(), 4);
  EXPECT_DOUBLE_EQ(j["groups"][0]["gpu_hours"].get<double>(), 2);
  EXPECT_EQ(j["total"]["jobs"], 4);
  EXPECT_DOUBLE_EQ(j["total"]["vcore_hours"].get<double>(), 8);

  EXPECT_THAT(server->Handle("/").body, HasSubstr("<a href=\"/usage\">usage</a>"));
  httpd::Reply page = server->Handle("/usage?by=queue");
  EXPECT_EQ(page.code, 200);
  EXPECT_THAT(page.body, HasSubstr("<svg class=\"usage-bars\""));
  EXPECT_THAT(page.body, HasSubstr("class=\"gpu\""));
  EXPECT_THAT(page.body, HasSubstr("<td>default</td><td>2</td><td>4.00</td><td>4.00</td>"));
  // A queue name from a log is text, never markup.
  EXPECT_THAT(page.body, HasSubstr("&lt;b&gt;q&lt;/b&gt;"));
  EXPECT_THAT(page.body, Not(HasSubstr("<b>q</b>")));

  // The window: jobs started in [from, to).
  EXPECT_EQ(Usage(*server, "from=2026-11-26T10:00:00Z", std::nullopt).second, 4);
  EXPECT_EQ(Usage(*server, "from=2026-11-26T10:00:01Z", std::nullopt).second, 0);
  EXPECT_EQ(Usage(*server, "to=2026-11-26T10:00:00Z", std::nullopt).second, 0);
  EXPECT_EQ(Usage(*server, "by=job", std::nullopt).first.size(), 4u);
}

// The page's figures are ytf usage's over the same logs: the summaries it copies out of the index
// keep every figure the report reads.
TEST_F(HistoryUsageTest, TheJsonIsYtfUsagesOverTheSameLogs) {
  std::vector<JobSummary> read;
  for (int n = 1; n <= 4; ++n) {
    const std::string app = absl::StrCat("application_1_000", n);
    std::ifstream f(absl::StrCat(dir_, "/", app, ".jsonl"));
    const std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    read.push_back(ReadJobHistory(app, text).summary);
  }
  auto server = Server();
  for (UsageBy by : {UsageBy::kUser, UsageBy::kQueue, UsageBy::kJob}) {
    const UsageOptions options{.by = by};
    const std::string query = by == UsageBy::kUser    ? "user"
                              : by == UsageBy::kQueue ? "queue"
                                                      : "job";
    EXPECT_EQ(server->Handle("/api/usage?by=" + query).body,
              UsageJson(SummarizeUsage(read, options), by))
        << query;
  }
}

TEST_F(HistoryUsageTest, BadQueriesGetA400NamingTheParameter) {
  auto server = Server();
  httpd::Reply page = server->Handle("/usage?by=<i>host</i>");
  EXPECT_EQ(page.code, 400);
  EXPECT_THAT(page.body, HasSubstr("by: '&lt;i&gt;host&lt;/i&gt;' is not user"));
  httpd::Reply json = server->Handle("/api/usage?from=2026-12-01&to=2026-11-01");
  EXPECT_EQ(json.code, 400);
  EXPECT_EQ(Json(json)["error"], "from: must be before to");
}

// With sign-in, each sees the usage of the jobs they may view only: in the page, its JSON and
// the counters on /metrics.
TEST_F(HistoryUsageTest, EachSeesOnlyTheUsageOfJobsTheyMayView) {
  auto server = Server();
  using Keys = std::vector<std::string>;
  EXPECT_EQ(Usage(*server, "", "alice@EXAMPLE.COM"), std::make_pair(Keys{"alice"}, 2));
  EXPECT_EQ(Usage(*server, "", "bob@EXAMPLE.COM"), std::make_pair(Keys{"bob"}, 2));
  EXPECT_EQ(Usage(*server, "", "carol@EXAMPLE.COM"), std::make_pair(Keys{"bob"}, 1));
  EXPECT_EQ(Usage(*server, "by=job", "carol@EXAMPLE.COM").first, Keys{"application_1_0003"});
  EXPECT_EQ(Usage(*server, "", "mallory@EXAMPLE.COM"), std::make_pair(Keys{}, 0));
  EXPECT_EQ(Usage(*server, "", "root@EXAMPLE.COM"), std::make_pair(Keys{"alice", "bob"}, 4));
  EXPECT_EQ(Usage(*server, "", std::nullopt).second, 4);  // no sign-in: everyone sees all

  httpd::Reply page = server->Handle("/usage?by=queue", "", "mallory@EXAMPLE.COM");
  EXPECT_EQ(page.code, 200);
  EXPECT_THAT(page.body, Not(HasSubstr("research")));
  EXPECT_THAT(page.body, Not(HasSubstr("alice")));

  const std::string carol = server->Handle("/metrics", "", "carol@EXAMPLE.COM").body;
  EXPECT_THAT(carol, HasSubstr("tony_history_vcore_seconds_total{user=\"bob\",queue=\"default\"} "
                               "7200.000\n"));
  EXPECT_THAT(carol, HasSubstr("tony_history_jobs_finished_total{user=\"bob\",queue=\"default\","
                               "state=\"KILLED\"} 1\n"));
  EXPECT_THAT(carol, Not(HasSubstr("user=\"alice\"")));
  EXPECT_THAT(carol, Not(HasSubstr("&lt;b&gt;")));  // bob's other job is not hers to see
  const std::string mallory = server->Handle("/metrics", "", "mallory@EXAMPLE.COM").body;
  EXPECT_THAT(mallory, HasSubstr("# TYPE tony_history_vcore_seconds_total counter\n"));
  EXPECT_THAT(mallory, Not(HasSubstr("user=")));
  const std::string root = server->Handle("/metrics", "", "root@EXAMPLE.COM").body;
  EXPECT_THAT(root, HasSubstr("tony_history_gpu_seconds_total{user=\"alice\",queue=\"research\"} "
                              "3600.000\n"));
  EXPECT_THAT(root, HasSubstr("tony_history_vcore_seconds_total{user=\"bob\",queue=\"<b>q</b>\"} "
                              "7200.000\n"));
}

// A counter that went down would read as a restart: a job whose log is removed, by hand or by
// retention, keeps counting.
TEST_F(HistoryUsageTest, TheCountersKeepWhatRemovedLogsHeld) {
  HistoryServerOptions options;
  options.retention.max_jobs = 1;  // of each owner's ended jobs (here one owner, "")
  auto server = Server(options);
  EXPECT_EQ(Usage(*server, "", std::nullopt).second, 2);  // 2 of the 3 ended went, 1 running
  ::unlink((dir_ + "/application_1_0004.jsonl").c_str());
  ASSERT_TRUE(server->Scan().ok());
  EXPECT_EQ(Usage(*server, "", std::nullopt).second, 1);
  const std::string metrics = server->Handle("/metrics").body;
  for (const char* line : {
           "tony_history_vcore_seconds_total{user=\"alice\",queue=\"default\"} 7200.000\n",
           "tony_history_vcore_seconds_total{user=\"alice\",queue=\"research\"} 7200.000\n",
           "tony_history_vcore_seconds_total{user=\"bob\",queue=\"default\"} 7200.000\n",
           "tony_history_vcore_seconds_total{user=\"bob\",queue=\"<b>q</b>\"} 7200.000\n",
           "tony_history_memory_gb_seconds_total{user=\"bob\",queue=\"default\"} 7200.000\n",
           "tony_history_jobs_finished_total{user=\"alice\",queue=\"default\",state=\"SUCCEEDED\"} "
           "1\n",
           "tony_history_jobs_finished_total{user=\"alice\",queue=\"research\",state=\"FAILED\"} "
           "1\n",
           "tony_history_jobs_finished_total{user=\"bob\",queue=\"default\",state=\"KILLED\"} 1\n",
       }) {
    EXPECT_THAT(metrics, HasSubstr(line));
  }
  EXPECT_THAT(metrics, HasSubstr("tony_history_logs_deleted_total 2\n"));
  // A job still running has not ended: no final state for it.
  EXPECT_THAT(metrics, Not(HasSubstr("queue=\"<b>q</b>\",state=")));
}

}  // namespace
}  // namespace tony::history
