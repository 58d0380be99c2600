// Copyright libtony authors.
//
// HistoryServer over a local directory: the list and job pages (HTML and JSON), bad requests,
// incremental scans, retention, /metrics, a missing directory at start, and the same answers
// over a real socket with the scan thread on a simulated clock.

#include "history/history_server.h"

#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "http/client.h"
#include "http/json.h"
#include "tests/testing/wait_until.h"

namespace tony::history {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

std::string Log(const std::string& state, const std::string& name, int exit_code) {
  std::string log = absl::StrCat(
      R"({"v":1,"seq":1,"attempt":1,"time":"2026-11-26T10:00:00.000Z","event":"am_started",)",
      R"("user":"alice","name":")", name, R"(","queue":"default","tags":[]})", "\n",
      R"({"v":1,"seq":2,"attempt":1,"time":"2026-11-26T10:00:01.000Z","event":"task_requested",)",
      R"("task":"worker:0"})", "\n",
      R"({"v":1,"seq":3,"attempt":1,"time":"2026-11-26T10:00:02.000Z","event":"task_started",)",
      R"("task":"worker:0"})", "\n",
      R"({"v":1,"seq":4,"attempt":1,"time":"2026-11-26T10:00:03.000Z","event":"task_usage",)",
      R"("task":"worker:0","rss_bytes":50000000,"cpu_cores":0.5,)",
      R"("gpus":[{"gpu":0,"utilization":0.02,"memory_used_bytes":8000000000},)",
      R"({"gpu":1,"utilization":0.5,"memory_used_bytes":1000000000}]})", "\n",
      R"({"v":1,"seq":4,"attempt":1,"time":"2026-11-26T10:00:03.500Z","event":"task_gpu_idle",)",
      R"("task":"worker:0","gpu":0})", "\n",
      R"({"v":1,"seq":5,"attempt":1,"time":"2026-11-26T10:00:04.000Z","event":"task_exited",)",
      R"("task":"worker:0","exit_code":)", exit_code, R"(,"stderr_tail":"<b>bad</b> input"})",
      "\n");
  if (!state.empty()) {
    absl::StrAppend(
        &log,
        R"({"v":1,"seq":6,"attempt":1,"time":"2026-11-26T10:00:05.000Z","event":"job_finished",)",
        R"("state":")", state, R"(","diagnostics":"worker:0 exited with 3"})", "\n");
  }
  return log;
}

class HistoryServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = ::testing::TempDir() + "/history_server_test.XXXXXX";
    dir_ = mkdtemp(tmpl.data());
    Write("application_1_0001.jsonl", Log("SUCCEEDED", "first", 0));
    Write("application_1_0002.jsonl", Log("FAILED", "second", 3));
    Write("notes.txt", "not a log");
  }
  void TearDown() override { (void)system(absl::StrCat("rm -rf '", dir_, "'").c_str()); }

  void Write(const std::string& name, const std::string& text, bool append = false) {
    std::ofstream f(dir_ + "/" + name, append ? std::ios::app : std::ios::trunc);
    f << text;
  }
  std::unique_ptr<HistoryServer> Server(HistoryServerOptions options = {}) {
    return std::make_unique<HistoryServer>(LocalHistoryStore(dir_), options);
  }
  static http::Json Json(const httpd::Reply& reply) {
    auto j = http::ParseJson(reply.body, "reply");
    EXPECT_TRUE(j.ok()) << reply.body;
    return j.ok() ? *j : http::Json();
  }
  std::string dir_;
};

TEST_F(HistoryServerTest, ListsJobsAndShowsOne) {
  auto server = Server();
  ASSERT_TRUE(server->Scan().ok());
  http::Json list = Json(server->Handle("/api/jobs"));
  EXPECT_EQ(list["total"], 2);
  EXPECT_EQ(list["jobs"][0]["app_id"], "application_1_0002");
  EXPECT_EQ(list["jobs"][0]["state"], "FAILED");
  EXPECT_EQ(Json(server->Handle("/api/jobs?state=SUCCEEDED"))["jobs"][0]["name"], "first");

  httpd::Reply html = server->Handle("/?state=FAILED");
  EXPECT_EQ(html.code, 200);
  EXPECT_THAT(html.body, HasSubstr("href=\"/jobs/application_1_0002\""));
  EXPECT_THAT(html.body, Not(HasSubstr("application_1_0001")));

  httpd::Reply job = server->Handle("/jobs/application_1_0002");
  EXPECT_EQ(job.code, 200);
  EXPECT_THAT(job.body, HasSubstr("<svg class=\"timeline\""));
  EXPECT_THAT(job.body, HasSubstr("<svg class=\"usage\" data-metric=\"memory\""));
  EXPECT_THAT(job.body, HasSubstr("class=\"point\""));
  // Its GPUs: the charts, and the one that sat idle holding memory.
  EXPECT_THAT(job.body, HasSubstr("data-metric=\"gpu\""));
  EXPECT_THAT(job.body, HasSubstr("GPU 26%"));  // the mean of 2 % and 50 %
  EXPECT_THAT(job.body, HasSubstr("class=\"gpu-idle\""));
  // A task's stderr is shown escaped, never as markup.
  EXPECT_THAT(job.body, HasSubstr("&lt;b&gt;bad&lt;/b&gt; input"));
  EXPECT_THAT(job.body, Not(HasSubstr("<b>bad</b>")));
  http::Json detail = Json(server->Handle("/api/jobs/application_1_0002"));
  EXPECT_EQ(detail["tasks"][0]["exit_code"], 3);
  EXPECT_EQ(detail["tasks"][0]["usage"][0]["rss_bytes"], 50000000);
}

// The local backend's jobs: <root>/<id>/events.jsonl, each named by its id, its owner the user.
TEST_F(HistoryServerTest, LocalJobsAreListedAndShownFromTheirJobDirectories) {
  for (const char* id : {"local_1795750000000_a1b2", "local_1795750000001_c3d4"}) {
    ASSERT_EQ(::mkdir(absl::StrCat(dir_, "/", id).c_str(), 0700), 0);
  }
  Write("local_1795750000000_a1b2/events.jsonl", Log("SUCCEEDED", "local-one", 0));
  Write("local_1795750000001_c3d4/stdout", "a job dir without a log yet");
  ASSERT_EQ(::mkdir((dir_ + "/other").c_str(), 0700), 0);
  Write("other/events.jsonl", Log("FAILED", "not a local job's directory", 1));

  HistoryServer server(LocalJobsHistoryStore(dir_), {});
  ASSERT_TRUE(server.Scan().ok());
  http::Json list = Json(server.Handle("/api/jobs"));
  ASSERT_EQ(list["total"], 1) << list.dump();
  EXPECT_EQ(list["jobs"][0]["app_id"], "local_1795750000000_a1b2");
  EXPECT_EQ(list["jobs"][0]["name"], "local-one");
  httpd::Reply job = server.Handle("/jobs/local_1795750000000_a1b2");
  EXPECT_EQ(job.code, 200);
  EXPECT_THAT(job.body, HasSubstr("local-one"));
  EXPECT_EQ(server.Handle("/jobs/local_..%2Fother").code, 404);
  // Retention never removes a local job's directory.
  EXPECT_TRUE(absl::IsFailedPrecondition(
      LocalJobsHistoryStore(dir_)->Delete("local_1795750000000_a1b2.jsonl")));
}

TEST_F(HistoryServerTest, BadRequestsGetAClearAnswer) {
  auto server = Server();
  ASSERT_TRUE(server->Scan().ok());
  struct Case {
    std::string target;
    int code;
    std::string says;
  };
  for (const Case& c : std::vector<Case>{
           {"/jobs/application_9_9", 404, "has no event log"},
           {"/jobs/..%2F..%2Fetc%2Fpasswd", 404, "is not an application id"},
           {"/api/jobs/application_1_0001.jsonl", 404, "is not an application id"},
           {"/api/jobs?limit=x", 400, "limit: 'x'"},
           {"/?from=yesterday", 400, "is not a date"},
           {"/nothing", 404, "Nothing is at /nothing"},
       }) {
    httpd::Reply r = server->Handle(c.target);
    EXPECT_EQ(r.code, c.code) << c.target;
    EXPECT_THAT(r.body, HasSubstr(c.says)) << c.target;
  }
}

TEST_F(HistoryServerTest, ACutShortLogIsShownWithItsProblem) {
  Write("application_1_0003.jsonl",
        Log("", "cut", 0) + R"({"v":1,"seq":6,"attempt":1,"time":"2026-11-26T10:00)");
  auto server = Server();
  ASSERT_TRUE(server->Scan().ok());
  http::Json list = Json(server->Handle("/api/jobs?state=RUNNING"));
  EXPECT_EQ(list["jobs"][0]["bad_lines"], 1);
  httpd::Reply page = server->Handle("/jobs/application_1_0003");
  EXPECT_EQ(page.code, 200);
  EXPECT_THAT(page.body, HasSubstr("line 7: not a JSON object"));
}

TEST_F(HistoryServerTest, ScansReadOnlyWhatChanged) {
  auto server = Server();
  ASSERT_TRUE(server->Scan().ok());
  EXPECT_THAT(server->Handle("/metrics").body, HasSubstr("tony_history_logs_read_total 2\n"));
  ASSERT_TRUE(server->Scan().ok());
  EXPECT_THAT(server->Handle("/metrics").body, HasSubstr("tony_history_logs_read_total 2\n"));
  Write("application_1_0004.jsonl", Log("", "growing", 0));
  ASSERT_TRUE(server->Scan().ok());
  EXPECT_EQ(Json(server->Handle("/api/jobs?name=growing"))["jobs"][0]["state"], "RUNNING");
  Write("application_1_0004.jsonl",
        R"({"v":1,"seq":9,"attempt":1,"time":"2026-11-26T10:09:00.000Z","event":"job_finished",)"
        R"("state":"KILLED"})"
        "\n",
        /*append=*/true);
  ASSERT_TRUE(server->Scan().ok());
  EXPECT_EQ(Json(server->Handle("/api/jobs?name=growing"))["jobs"][0]["state"], "KILLED");
  const std::string metrics = server->Handle("/metrics").body;
  EXPECT_THAT(metrics, HasSubstr("tony_history_logs_read_total 4\n"));
  EXPECT_THAT(metrics, HasSubstr("tony_history_jobs{state=\"KILLED\"} 1\n"));
  ::unlink((dir_ + "/application_1_0004.jsonl").c_str());
  ASSERT_TRUE(server->Scan().ok());
  EXPECT_EQ(Json(server->Handle("/api/jobs"))["total"], 2);
}

TEST_F(HistoryServerTest, RetentionDeletesTheOldestEndedLogs) {
  HistoryServerOptions options;
  options.retention.max_jobs = 1;
  auto server = Server(options);
  ASSERT_TRUE(server->Scan().ok());
  EXPECT_EQ(Json(server->Handle("/api/jobs"))["total"], 1);
  // Both ended at the same time: the index orders them, one goes.
  EXPECT_NE(::access((dir_ + "/application_1_0001.jsonl").c_str(), F_OK) == 0,
            ::access((dir_ + "/application_1_0002.jsonl").c_str(), F_OK) == 0);
  EXPECT_THAT(server->Handle("/metrics").body, HasSubstr("tony_history_logs_deleted_total 1\n"));
}

TEST_F(HistoryServerTest, ARestartWithItsIndexFileReadsOnlyWhatChanged) {
  HistoryServerOptions options;
  options.index_file = dir_ + ".index";  // beside the directory, as unique
  options.scan_interval = absl::Hours(1);
  {
    auto first = Server(options);
    ASSERT_TRUE(first->Start().ok());
    EXPECT_THAT(first->Handle("/metrics").body, HasSubstr("tony_history_logs_read_total 2\n"));
  }
  Write("application_1_0002.jsonl", "\n", /*append=*/true);  // changed while it was down
  auto second = Server(options);
  ASSERT_TRUE(second->Start().ok());  // loads the index, then scans
  EXPECT_THAT(second->Handle("/metrics").body, HasSubstr("tony_history_logs_read_total 1\n"));
  EXPECT_EQ(Json(second->Handle("/api/jobs"))["total"], 2);
  ::unlink(options.index_file.c_str());
}

TEST_F(HistoryServerTest, AMissingDirectoryStopsTheStartWithOneLine) {
  HistoryServer server(LocalHistoryStore(dir_ + "/missing"), {});
  absl::Status s = server.Start();
  EXPECT_TRUE(absl::IsNotFound(s)) << s;
  EXPECT_THAT(s.message(), HasSubstr("history directory " + dir_ + "/missing"));
  EXPECT_EQ(server.port(), 0);
}

TEST_F(HistoryServerTest, ServesOverHttpAndPicksUpNewLogsEveryScanInterval) {
  SimulatedClock clock;
  HistoryServerOptions options;
  options.clock = &clock;
  options.scan_interval = absl::Seconds(10);
  auto server = Server(options);
  ASSERT_TRUE(server->Start().ok());
  http::Client client;
  const std::string base = absl::StrCat("http://127.0.0.1:", server->port());
  auto list = client.Get(base + "/api/jobs");
  ASSERT_TRUE(list.ok()) << list.status();
  EXPECT_EQ(list->status, 200);
  EXPECT_THAT(list->body, HasSubstr("application_1_0002"));
  auto missing = client.Get(base + "/jobs/application_7_7");
  ASSERT_TRUE(missing.ok());
  EXPECT_EQ(missing->status, 404);

  Write("application_1_0005.jsonl", Log("SUCCEEDED", "later", 0));
  // A scan interval passes at each look: the scan thread may not have started waiting (and so
  // read the clock for its deadline) before the first advance (seen under load).
  EXPECT_TRUE(::tony::testing::WaitUntil(
      [&] {
        clock.Advance(absl::Seconds(11));
        auto r = client.Get(base + "/api/jobs?name=later");
        return r.ok() && r->body.find("application_1_0005") != std::string::npos;
      },
      absl::Seconds(20)));
  server->Stop();
}

TEST_F(HistoryServerTest, WithAnAuthenticatorOnlySignedInRequestsSeeJobs) {
  HistoryServerOptions options;
  std::vector<std::string> asked;
  options.authenticate = [&](absl::string_view authorization) -> absl::StatusOr<HttpLogin> {
    asked.emplace_back(authorization);
    if (authorization == "Negotiate good") return HttpLogin{"alice@EXAMPLE.COM", "Negotiate fin"};
    return absl::UnauthenticatedError("Kerberos: the token does not verify");
  };
  auto server = Server(options);
  ASSERT_TRUE(server->Scan().ok());
  httpd::Request request;
  request.method = "GET";
  request.target = request.path = "/api/jobs";
  request.peer = "10.0.0.9";

  // No credentials: the SPNEGO challenge, and nothing of the jobs.
  httpd::Reply challenge = server->Serve(request);
  EXPECT_EQ(challenge.code, 401);
  EXPECT_EQ(challenge.www_authenticate, "Negotiate");
  EXPECT_THAT(challenge.body, HasSubstr("kinit"));
  EXPECT_THAT(challenge.body, Not(HasSubstr("application_1")));
  EXPECT_TRUE(asked.empty());

  request.authorization = "Negotiate bad";
  httpd::Reply refused = server->Serve(request);
  EXPECT_EQ(refused.code, 403);
  EXPECT_THAT(refused.body, HasSubstr("sign-in refused"));
  EXPECT_THAT(refused.body, Not(HasSubstr("Kerberos: the token")));  // the cause stays here
  EXPECT_THAT(refused.body, Not(HasSubstr("application_1")));

  request.authorization = "Negotiate good";
  httpd::Reply ok = server->Serve(request);
  EXPECT_EQ(ok.code, 200);
  EXPECT_EQ(ok.www_authenticate, "Negotiate fin");
  EXPECT_EQ(Json(ok)["total"], 2);
  EXPECT_EQ(asked, (std::vector<std::string>{"Negotiate bad", "Negotiate good"}));
  request.target = request.path = "/metrics";
  EXPECT_THAT(server->Serve(request).body, HasSubstr("tony_history_refused_logins_total 1\n"));

  // Without an authenticator anyone is answered, and the header is not looked at.
  auto open = Server();
  ASSERT_TRUE(open->Scan().ok());
  request.authorization = "";
  request.target = request.path = "/api/jobs";
  EXPECT_EQ(open->Serve(request).code, 200);
}

class FixedTensorBoard : public TensorBoardProcess {
 public:
  std::string url() const override { return "http://127.0.0.1:6006/"; }
  bool alive() override { return true; }
};

TEST_F(HistoryServerTest, AnEndedJobsTensorBoardIsStartedOnDemandOverItsOutput) {
  const std::string spec = R"({"v":1,"seq":7,"attempt":1,"time":"2026-11-26T10:00:05.500Z",)"
                           R"("event":"job_spec","yaml":"output: hdfs:///out/three\njobs:\n  )"
                           R"(worker:\n    instances: 1\n    command: 'true'\n"})"
                           "\n";
  Write("application_1_0003.jsonl", Log("SUCCEEDED", "third", 0) + spec);
  Write("application_1_0004.jsonl", Log("", "running", 0) + spec);
  HistoryServerOptions options;
  std::vector<std::string> launched;
  options.tensorboard =
      [&](const TensorBoardJob& job) -> absl::StatusOr<std::unique_ptr<TensorBoardProcess>> {
    launched.push_back(absl::StrCat(job.app_id, " ", job.output_path, " ", job.user));
    return std::make_unique<FixedTensorBoard>();
  };
  auto server = Server(options);
  ASSERT_TRUE(server->Scan().ok());
  // The page links it only for an ended job with an output path.
  EXPECT_THAT(server->Handle("/jobs/application_1_0003").body,
              HasSubstr("href=\"/jobs/application_1_0003/tensorboard\""));
  EXPECT_THAT(server->Handle("/jobs/application_1_0001").body, Not(HasSubstr("on demand")));
  httpd::Reply to_it = server->Handle("/jobs/application_1_0003/tensorboard");
  EXPECT_EQ(to_it.code, 302);
  EXPECT_EQ(to_it.location, "http://127.0.0.1:6006/");
  EXPECT_EQ(server->Handle("/jobs/application_1_0003/tensorboard").code, 302);
  EXPECT_EQ(launched, (std::vector<std::string>{"application_1_0003 hdfs:///out/three alice"}));
  // No output path, still running, not a job: no TensorBoard, each saying why.
  httpd::Reply none = server->Handle("/jobs/application_1_0001/tensorboard");
  EXPECT_EQ(none.code, 404);
  EXPECT_THAT(none.body, HasSubstr("no output path"));
  httpd::Reply running = server->Handle("/jobs/application_1_0004/tensorboard");
  EXPECT_EQ(running.code, 404);
  EXPECT_THAT(running.body, HasSubstr("The job runs"));
  EXPECT_EQ(server->Handle("/jobs/../etc/tensorboard").code, 404);
  EXPECT_EQ(launched.size(), 1u);
  // Without a launcher the route says so.
  auto plain = Server();
  ASSERT_TRUE(plain->Scan().ok());
  EXPECT_EQ(plain->Handle("/jobs/application_1_0003/tensorboard").code, 404);
}

}  // namespace
}  // namespace tony::history

namespace tony::history {
namespace {

// With sign-in, a user sees the jobs they may view and nothing of the others: not in the list,
// not their pages (diagnostics and stderr tails), not their TensorBoard.
class HistoryViewAclTest : public HistoryServerTest {
 protected:
  void SetUp() override {
    HistoryServerTest::SetUp();  // alice's 0001 and 0002, no view_acls
    std::string shared = Log("SUCCEEDED", "shared", 0);
    const std::string before = R"("tags":[]})";
    shared.replace(shared.find(before), before.size(), R"("tags":[],"view_acls":"carol ml-team"})");
    Write("application_1_0003.jsonl", shared);
    std::string broken = Log("SUCCEEDED", "broken-acl", 0);
    broken.replace(broken.find(before), before.size(), R"("tags":[],"view_acls":"a b c"})");
    Write("application_1_0004.jsonl", broken);
    HistoryServerOptions options;
    options.admin_acl = "root admins";
    options.groups_of = [](const std::string& user) -> std::vector<std::string> {
      if (user == "dave") return {"ml-team"};
      if (user == "erin") return {"admins"};
      return {};
    };
    server_ = Server(options);
    ASSERT_TRUE(server_->Scan().ok());
  }
  std::vector<std::string> Listed(const std::string& principal) {
    std::vector<std::string> ids;
    http::Json list = Json(server_->Handle("/api/jobs", "", principal));
    for (const http::Json& j : list["jobs"]) ids.push_back(j["app_id"].get<std::string>());
    std::sort(ids.begin(), ids.end());
    return ids;
  }
  std::unique_ptr<HistoryServer> server_;
};

TEST_F(HistoryViewAclTest, TheListShowsOnlyWhatEachMayView) {
  const std::vector<std::string> all = {"application_1_0001", "application_1_0002",
                                        "application_1_0003", "application_1_0004"};
  struct Case {
    std::string principal;
    std::vector<std::string> ids;
  } cases[] = {
      {"alice@EXAMPLE.COM", all},                     // the owner
      {"root/admin@EXAMPLE.COM", all},                // an admin by name
      {"erin@EXAMPLE.COM", all},                      // an admin by group
      {"carol@EXAMPLE.COM", {"application_1_0003"}},  // named by the job's view_acls
      {"dave@EXAMPLE.COM", {"application_1_0003"}},   // by a group the list names
      {"mallory@EXAMPLE.COM", {}},                    // nobody's viewer
  };
  for (const Case& c : cases) EXPECT_EQ(Listed(c.principal), c.ids) << c.principal;
  // Without sign-in (no `authenticate`), everyone who reaches the server sees every job.
  EXPECT_EQ(Json(server_->Handle("/api/jobs"))["total"], 4);
}

TEST_F(HistoryViewAclTest, AJobPageIsRefusedToWhoMayNotViewIt) {
  for (const char* target :
       {"/jobs/application_1_0002", "/api/jobs/application_1_0002", "/jobs/application_1_0003"}) {
    httpd::Reply r = server_->Handle(target, "", "mallory@EXAMPLE.COM");
    EXPECT_EQ(r.code, 404) << target;
    // The stderr tail, raw or escaped (not the bare word: a path in the page may hold it).
    EXPECT_THAT(r.body, Not(HasSubstr("bad</b> input"))) << target;
    EXPECT_THAT(r.body, Not(HasSubstr("bad&lt;/b&gt; input"))) << target;
    EXPECT_THAT(r.body, Not(HasSubstr("exited with 3"))) << target;  // the diagnostics
  }
  httpd::Reply own = server_->Handle("/api/jobs/application_1_0002", "", "alice@EXAMPLE.COM");
  EXPECT_EQ(own.code, 200);
  EXPECT_THAT(own.body, HasSubstr("exited with 3"));
  EXPECT_EQ(server_->Handle("/jobs/application_1_0003", "", "dave@EXAMPLE.COM").code, 200);
  // A list that does not parse (forged or damaged) adds no one.
  EXPECT_EQ(server_->Handle("/jobs/application_1_0004", "", "carol@EXAMPLE.COM").code, 404);
}

}  // namespace
}  // namespace tony::history

namespace tony::history {
namespace {

constexpr char kLogApp[] = "application_1700000000000_0005";
constexpr char kLogContainer[] = "container_e03_1700000000000_0005_01_000002";

// A job of alice's whose worker:0 ran in `container` on the NodeManager at `node_http`.
std::string LogWithContainer(const std::string& container, const std::string& node_http,
                             const std::string& view_acls = "") {
  std::string log = Log("FAILED", "with-logs", 3);
  const std::string tags = R"("tags":[]})";
  if (!view_acls.empty()) {
    log.replace(log.find(tags), tags.size(),
                absl::StrCat(R"("tags":[],"view_acls":")", view_acls, R"("})"));
  }
  const std::string started = R"({"v":1,"seq":3,)";
  log.insert(log.find(started),
             absl::StrCat(R"({"v":1,"seq":2,"attempt":1,"time":"2026-11-26T10:00:01.500Z",)",
                          R"("event":"task_allocated","task":"worker:0","container":")", container,
                          R"(","node":"nm1:45454","node_http":")", node_http, "\"}\n"));
  return log;
}

// /jobs/<app id>/logs/<task>/<file>: the reader behind it is a fake that records what it was
// asked and answers what the test says.
class HistoryTaskLogTest : public HistoryServerTest {
 protected:
  void SetUp() override {
    HistoryServerTest::SetUp();
    Write(absl::StrCat(kLogApp, ".jsonl"),
          LogWithContainer(kLogContainer, "nm1.example.com:8042", "carol"));
  }
  std::unique_ptr<HistoryServer> WithReader(int64_t tail_bytes = int64_t{64} << 10) {
    HistoryServerOptions options;
    options.task_log_tail_bytes = tail_bytes;
    options.task_logs = [this](const TaskLogRequest& r, absl::Time) -> absl::StatusOr<TaskLogText> {
      asked_.push_back(r);
      return answer_;
    };
    auto server = Server(options);
    EXPECT_TRUE(server->Scan().ok());
    return server;
  }
  static std::string Target(const std::string& rest) {
    return absl::StrCat("/jobs/", kLogApp, "/logs/", rest);
  }
  std::vector<TaskLogRequest> asked_;
  absl::StatusOr<TaskLogText> answer_ =
      TaskLogText{"line one\n<script>x</script>\nthe end\n", "on nm1.example.com:8042"};
};

TEST_F(HistoryTaskLogTest, TheJobPageLinksTheRouteWhichServesTheLogsEnd) {
  auto server = WithReader(/*tail_bytes=*/27);
  httpd::Reply page = server->Handle(absl::StrCat("/jobs/", kLogApp));
  EXPECT_EQ(page.code, 200);
  EXPECT_THAT(page.body, HasSubstr(absl::StrCat("href=\"/jobs/", kLogApp,
                                                "/logs/worker:0/stderr\">stderr</a>")));
  EXPECT_THAT(page.body, Not(HasSubstr("/node/containerlogs/")));

  httpd::Reply log = server->Handle(Target("worker:0/stderr"));
  EXPECT_EQ(log.code, 200) << log.body;
  ASSERT_EQ(asked_.size(), 1u);
  EXPECT_EQ(asked_[0].app_id, kLogApp);
  EXPECT_EQ(asked_[0].owner, "alice");
  EXPECT_EQ(asked_[0].task, "worker:0");
  EXPECT_EQ(asked_[0].container, kLogContainer);
  EXPECT_EQ(asked_[0].node_http, "nm1.example.com:8042");
  EXPECT_EQ(asked_[0].file, "stderr");
  EXPECT_EQ(asked_[0].tail_bytes, 27);  // a NodeManager sends no more
  // The last 27 bytes, escaped, and where they were read.
  EXPECT_THAT(log.body, HasSubstr("The last 27 of 36 bytes, read on nm1.example.com:8042."));
  EXPECT_THAT(log.body,
              HasSubstr("<pre id=\"log\">&lt;script&gt;x&lt;/script&gt;\nthe end\n</pre>"));
  EXPECT_THAT(log.body, Not(HasSubstr("line one")));
  EXPECT_THAT(log.body, Not(HasSubstr("<script>")));
  // A reader that sent just the tail: the page says it is the file's end.
  answer_ = TaskLogText{std::string(27, 'x'), "on nm1.example.com:8042"};
  EXPECT_THAT(server->Handle(Target("worker:0/stderr")).body,
              HasSubstr("The last 27 bytes, read on nm1.example.com:8042."));
  answer_ = TaskLogText{"short\n", "from the aggregated logs in hdfs://nn/x"};
  EXPECT_THAT(server->Handle(Target("worker:0/stderr")).body,
              HasSubstr(">6 bytes, read from the aggregated logs in hdfs://nn/x.<"));
  // The task's name as the page links it (':' is left as it is).
  EXPECT_EQ(server->Handle(Target("worker%3A0/stdout")).code, 404);
  EXPECT_EQ(server->Handle(Target("worker:0/stdout")).code, 200);
  EXPECT_EQ(asked_.back().file, "stdout");
}

TEST_F(HistoryTaskLogTest, WithoutAReaderThePageLinksTheNodeManager) {
  auto server = Server();
  ASSERT_TRUE(server->Scan().ok());
  httpd::Reply page = server->Handle(absl::StrCat("/jobs/", kLogApp));
  EXPECT_THAT(page.body, HasSubstr(absl::StrCat("href=\"http://nm1.example.com:8042/node/"
                                                "containerlogs/",
                                                kLogContainer, "/alice/stderr/?start=-65536\"")));
  EXPECT_EQ(server->Handle(Target("worker:0/stderr")).code, 404);
}

TEST_F(HistoryTaskLogTest, EachReadersErrorIsOneAnswer) {
  struct Case {
    absl::Status error;
    int code;
  } cases[] = {
      {absl::NotFoundError("no aggregated logs of it"), 404},
      {absl::DeadlineExceededError("the NodeManager did not answer in time"), 504},
      {absl::PermissionDeniedError("hdfs said no"), 502},  // the server's, not the viewer's
      {absl::DataLossError("hdfs://nn/tmp/logs/alice/x: not a readable aggregated log"), 502},
      {absl::UnavailableError("connection refused"), 502},
  };
  auto server = WithReader();
  for (const Case& c : cases) {
    answer_ = c.error;
    httpd::Reply r = server->Handle(Target("worker:0/stderr"));
    EXPECT_EQ(r.code, c.code) << c.error;
    EXPECT_THAT(r.body, HasSubstr(std::string(c.error.message()))) << c.error;
    EXPECT_THAT(r.body, HasSubstr(absl::StrCat("worker:0 stderr of ", kLogApp))) << c.error;
  }
}

TEST_F(HistoryTaskLogTest, OnlyAKnownTasksStdoutOrStderrIsAskedFor) {
  Write("application_1700000000000_0006.jsonl",
        LogWithContainer("container_1700000000000_0005_01_000002", "nm1:8042"));  // 0005's
  Write("application_1700000000000_0007.jsonl",
        LogWithContainer("container_1700000000000_0007_01_000002", "evil/x?y:80"));
  Write("application_1700000000000_0008.jsonl", Log("FAILED", "no-container", 3));
  auto server = WithReader();
  ASSERT_TRUE(server->Scan().ok());
  for (const std::string& target :
       {Target("worker:0/syslog"), Target("worker:0/launch_container.sh"), Target("worker:0/"),
        Target("worker:0"), Target("worker:0/stderr/x"), Target("../worker:0/stderr"),
        Target("worker:1/stderr"), Target("ps:0/stderr"),
        std::string("/jobs/application_1700000000000_0006/logs/worker:0/stderr"),
        std::string("/jobs/application_1700000000000_0007/logs/worker:0/stderr"),
        std::string("/jobs/application_1700000000000_0008/logs/worker:0/stderr"),
        std::string("/jobs/application_1700000000000_0009/logs/worker:0/stderr"),
        std::string("/jobs/..%2F..%2Fetc/logs/worker:0/stderr")}) {
    httpd::Reply r = server->Handle(target);
    EXPECT_EQ(r.code, 404) << target;
  }
  EXPECT_TRUE(asked_.empty()) << asked_.size() << " reads; the first: " << asked_[0].container;
}

TEST_F(HistoryTaskLogTest, ALogIsRefusedToWhoMayNotViewItsJobAsTheJobIs) {
  HistoryServerOptions options;
  options.task_logs = [this](const TaskLogRequest& r, absl::Time) -> absl::StatusOr<TaskLogText> {
    asked_.push_back(r);
    return answer_;
  };
  auto server = Server(options);
  ASSERT_TRUE(server->Scan().ok());
  const std::string job = absl::StrCat("/jobs/", kLogApp);
  for (const char* principal : {"mallory@EXAMPLE.COM", "bob@EXAMPLE.COM"}) {
    httpd::Reply r = server->Handle(Target("worker:0/stderr"), "", principal);
    EXPECT_EQ(r.code, 404) << principal;
    // What the job's own page answers them: nothing tells the job exists.
    EXPECT_EQ(r.body, server->Handle(job, "", principal).body) << principal;
    EXPECT_THAT(r.body, Not(HasSubstr("the end"))) << principal;
  }
  EXPECT_TRUE(asked_.empty());
  for (const char* principal : {"alice@EXAMPLE.COM", "carol@EXAMPLE.COM"}) {
    httpd::Reply r = server->Handle(Target("worker:0/stderr"), "", principal);
    EXPECT_EQ(r.code, 200) << principal;
    EXPECT_THAT(r.body, HasSubstr("the end")) << principal;
  }
  EXPECT_EQ(asked_.size(), 2u);
}

}  // namespace
}  // namespace tony::history
