// Copyright libtony authors.
//
// ytf-submit and ytf as a newcomer meets them, on the real single-host YARN: the real binaries,
// what they print and how they exit.

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <regex>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "common/file_util.h"
#include "common/subprocess.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "http/client.h"
#include "http/json.h"
#include "tests/harness/hadoop_cluster.h"
#include "tests/testing/browser.h"
#include "tests/testing/wait_until.h"

namespace tony {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

struct Result {
  int exit_code = -1;
  std::string out;
  std::string err;
};

std::string BinDir() {
  const char* d = std::getenv("TONY_BIN_DIR");
  return d != nullptr ? d : "build/bin";
}

std::string TempDir() {
  static const std::string dir = [] {
    std::string tmpl = ::testing::TempDir() + "/cli_itest.XXXXXX";
    return std::string(mkdtemp(tmpl.data()));
  }();
  return dir;
}

// Runs argv with the cluster's HADOOP_CONF_DIR plus `env`, without the variables in `unset`,
// capturing stdout and stderr.
Result Exec(std::vector<std::string> argv, std::map<std::string, std::string> env = {},
            absl::Duration timeout = absl::Minutes(5), std::vector<std::string> unset = {}) {
  static int counter = 0;
  std::string base = absl::StrCat(TempDir(), "/run", ++counter);
  SubprocessOptions options;
  options.argv = std::move(argv);
  options.env = CurrentEnvironment();
  options.env["HADOOP_CONF_DIR"] = harness::HadoopCluster::Get().conf_dir();
  for (const auto& [k, v] : env) options.env[k] = v;
  for (const std::string& k : unset) options.env.erase(k);
  options.stdout_path = base + ".out";
  options.stderr_path = base + ".err";
  Result r;
  auto p = Subprocess::Spawn(options);
  if (!p.ok()) {
    r.err = std::string(p.status().message());
    return r;
  }
  auto code = (*p)->Wait(timeout);
  r.exit_code = code.ok() ? *code : (*p)->Terminate(absl::Seconds(5));
  r.out = ReadFileToString(base + ".out").value_or("");
  r.err = ReadFileToString(base + ".err").value_or("");
  return r;
}

std::string Submit() { return BinDir() + "/ytf-submit"; }
std::string Ytf() { return BinDir() + "/ytf"; }

std::string AppIdOf(const std::string& text) {
  std::smatch m;
  static const std::regex re("application_[0-9]+_[0-9]+");
  return std::regex_search(text, m, re) ? m.str() : "";
}

int Lines(const std::string& text) {
  return static_cast<int>(std::count(text.begin(), text.end(), '\n'));
}

// One small job shared by the tests that only read what it left behind.
const std::string& FinishedJob() {
  static const std::string app = [] {
    Result r = Exec({Submit(), "--yarn", "-n", "cli-itest", "-r", "worker:2", "-m", "128m",
                     "echo \"out of $DTF_TASK_JOB_NAME:$DTF_TASK_INDEX\"; echo err >&2"});
    EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
    return AppIdOf(r.out);
  }();
  return app;
}

TEST(CliTest, LogsOfTheAmAreItsOwnFilesAndAMissingLogIsAnError) {
  const std::string& app = FinishedJob();
  ASSERT_FALSE(app.empty());
  Result am = Exec({Ytf(), "logs", app, "--task", "am"});
  EXPECT_EQ(am.exit_code, 0) << am.err;
  EXPECT_THAT(am.out, HasSubstr("==> am stderr"));
  EXPECT_THAT(am.err, Not(HasSubstr("not available")));

  Result missing = Exec({Ytf(), "logs", app, "--task", "am", "--file", "no-such-file"});
  EXPECT_EQ(missing.exit_code, 3) << missing.out << missing.err;
  EXPECT_EQ(Lines(missing.err), 1) << missing.err;
  EXPECT_THAT(missing.err, HasSubstr("no-such-file"));

  Result no_task = Exec({Ytf(), "logs", app, "--task", "worker:7"});
  EXPECT_EQ(no_task.exit_code, 2);
  EXPECT_THAT(no_task.err, HasSubstr("worker:0, worker:1"));
}

TEST(CliTest, WordsAfterDoubleDashReachTheTaskAsGiven) {
  Result r = Exec({Submit(), "--yarn", "-n", "cli-itest-argv", "-r", "worker:1", "-m", "128m", "--",
                   "python3", "-c", "import sys; print('a b', sys.argv[1:])", "$HOME", "x y"});
  const std::string app = AppIdOf(r.out);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  Result logs = Exec({Ytf(), "logs", app, "--task", "worker:0", "--file", "stdout"});
  EXPECT_THAT(logs.out, HasSubstr("a b ['$HOME', 'x y']\n"));
}

// TonY's command line with --src_dir: the sources, subpackages and all, are every task's
// working directory's, and --executes names a file among them.
TEST(CliTest, ATonyCommandLineWithSrcDirRunsTheSourcesInEveryTask) {
  const std::string src = absl::StrCat(::testing::TempDir(), "/cli-itest-src-", ::getpid());
  const std::string deep = src + "/pkg/" + std::string(80, 'd') + "/" + std::string(40, 'e');
  ASSERT_TRUE(MakeDirectories(deep).ok());
  ASSERT_TRUE(WriteFileAtomically(src + "/pkg/__init__.py", "").ok());
  ASSERT_TRUE(WriteFileAtomically(src + "/pkg/model.py", "NAME = 'model from the sources'\n").ok());
  ASSERT_TRUE(WriteFileAtomically(deep + "/leaf.txt", "leaf\n").ok());
  ASSERT_TRUE(WriteFileAtomically(src + "/train.py",
                                  "import glob, os, sys\n"
                                  "from pkg.model import NAME\n"
                                  "print(NAME, sys.argv[1:])\n"
                                  "print('leaf:', open(glob.glob('pkg/*/*/leaf.txt')[0]).read())\n")
                  .ok());
  Result r = Exec({Submit(), "--yarn", "-n", "cli-itest-src-dir", "-src_dir", src, "-executes",
                   "train.py", "-task_params", "--steps 3", "-python_binary_path", "python3",
                   "-conf", "tony.worker.instances=2", "-conf", "tony.worker.memory=128m"});
  const std::string app = AppIdOf(r.out);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  for (const char* task : {"worker:0", "worker:1"}) {
    Result logs = Exec({Ytf(), "logs", app, "--task", task, "--file", "stdout"});
    EXPECT_THAT(logs.out, HasSubstr("model from the sources ['--steps', '3']")) << task;
    EXPECT_THAT(logs.out, HasSubstr("leaf: leaf")) << task;
  }
  // A tree that cannot be packed is refused before anything reaches the cluster: no
  // application, nothing uploaded.
  ASSERT_EQ(::symlink("..", (src + "/pkg/loop").c_str()), 0);
  Result refused = Exec({Submit(), "--yarn", "-n", "cli-itest-src-loop", "-src_dir", src,
                         "-executes", "train.py", "-conf", "tony.worker.instances=1"});
  EXPECT_EQ(refused.exit_code, 2) << refused.out << refused.err;
  EXPECT_THAT(refused.err, HasSubstr("a loop"));
  EXPECT_THAT(refused.out + refused.err, Not(HasSubstr("application_")));
  (void)std::system(absl::StrCat("rm -rf '", src, "'").c_str());
}

TEST(CliTest, MaxAttemptsAboveTheClusterCapWarnsPlainlyAndProgressAgrees) {
  // The test cluster allows 3 attempts. worker:0 fails in the first attempt only (its container
  // id names the attempt), so the second one succeeds.
  Result r = Exec({Submit(), "--yarn", "-n", "cli-itest-attempts", "--max_attempts", "5", "-r",
                   "worker:1", "-m", "128m",
                   "case $CONTAINER_ID in *_01_0*) echo 'attempt one breaks' >&2; exit 3;; esac"});
  const std::string app = AppIdOf(r.out);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_THAT(r.err,
              HasSubstr("ytf-submit: warning: max_attempts 5 is more than this cluster "
                        "allows (yarn.resourcemanager.am.max-attempts = 3): the job gets 3"));
  EXPECT_THAT(r.err, HasSubstr("attempt 2 of 3"));
  // No log-formatted line ("W1123 12:00:00.000 file.cc:301] ...") reaches the user.
  static const std::regex log_line("(^|\n)[DIWE][0-9]{4} [0-9:.]+ [^ ]+:[0-9]+\\]");
  EXPECT_FALSE(std::regex_search(r.err, log_line)) << r.err;

  // The first attempt's AM keeps its own log files.
  Result am1 = Exec({Ytf(), "logs", app, "--task", "am@1", "--file", "stderr"});
  EXPECT_EQ(am1.exit_code, 0) << am1.err;
  EXPECT_THAT(am1.out, HasSubstr("==> am@1 stderr"));
}

TEST(CliTest, FinishedJobStatusKillListAndFollow) {
  const std::string& app = FinishedJob();
  ASSERT_FALSE(app.empty());
  // The per-role summary survives the AM.
  Result status = Exec({Ytf(), "status", app});
  EXPECT_EQ(status.exit_code, 0) << status.err;
  EXPECT_THAT(status.out, HasSubstr("SUCCEEDED"));
  EXPECT_THAT(status.out, HasSubstr("worker       2 tasks: 2 allocated, 2 registered, 0 running, "
                                    "2 succeeded, 0 failed"));
  Result json = Exec({Ytf(), "status", "--json", app});
  EXPECT_EQ(json.exit_code, 0) << json.err;
  EXPECT_THAT(json.out, HasSubstr("\"state\": \"SUCCEEDED\""));
  EXPECT_THAT(json.out, HasSubstr("\"succeeded\": 2"));

  Result kill = Exec({Ytf(), "kill", app});
  EXPECT_EQ(kill.exit_code, 1);
  EXPECT_EQ(kill.err, absl::StrCat("ytf: ", app, " had already finished: SUCCEEDED\n"));

  Result list = Exec({Ytf(), "list", "--all", "--json"});
  EXPECT_EQ(list.exit_code, 0) << list.err;
  EXPECT_THAT(list.out, HasSubstr(absl::StrCat("\"id\": \"", app, "\"")));

  // Following several logs: every line says which task and file it comes from.
  Result follow = Exec({Ytf(), "logs", app, "--follow"});
  EXPECT_EQ(follow.exit_code, 0) << follow.err;
  EXPECT_THAT(follow.out, HasSubstr("worker:0 stdout| out of worker:0\n"));
  EXPECT_THAT(follow.out, HasSubstr("worker:1 stdout| out of worker:1\n"));
  EXPECT_THAT(follow.out, HasSubstr("worker:1 stderr| err\n"));
}

// The history server's pages in a real browser, Debian's chromium headless: the DOM it built
// (the task table, every chart with what it drew) and screenshots kept as artifacts
// ($TONY_ARTIFACT_DIR, else the test's temporary directory).
void CheckInABrowser(const std::string& url, const std::string& app) {
  ASSERT_EQ(access(testing::kChromium, X_OK), 0) << "no chromium (scripts/install-deps)";
  const char* artifacts = std::getenv("TONY_ARTIFACT_DIR");
  const std::string dir = artifacts != nullptr ? artifacts : TempDir();
  auto browse = [&](std::vector<std::string> flags, const std::string& page) {
    return testing::Browse(url + page, flags);
  };
  testing::BrowserResult dom = browse({"--dump-dom"}, "jobs/" + app);
  ASSERT_EQ(dom.exit_code, 0) << dom.err;
  EXPECT_THAT(dom.out, HasSubstr("<td>worker:0</td>"));
  EXPECT_THAT(dom.out, HasSubstr("<svg class=\"timeline\""));
  EXPECT_THAT(dom.out, HasSubstr("<rect class=\"phase\""));
  // Both charts drew the task's sample.
  for (const char* metric : {"memory", "cpu"}) {
    const size_t chart = dom.out.find(absl::StrCat("data-metric=\"", metric, "\""));
    ASSERT_NE(chart, std::string::npos) << metric;
    const size_t end = dom.out.find("</svg>", chart);
    EXPECT_NE(dom.out.substr(chart, end - chart).find("class=\"point\""), std::string::npos)
        << metric << " chart drew no point";
  }
  testing::BrowserResult list = browse({"--dump-dom"}, "?state=FAILED&name=history-fail");
  EXPECT_THAT(list.out, HasSubstr(absl::StrCat(">", app, "</a>")));
  for (const auto& [name, page] : std::vector<std::pair<std::string, std::string>>{
           {"history-job.png", "jobs/" + app}, {"history-list.png", ""}}) {
    testing::BrowserResult shot =
        browse({"--screenshot=" + dir + "/" + name, "--hide-scrollbars"}, page);
    EXPECT_EQ(shot.exit_code, 0) << shot.err;
    struct stat st {};
    EXPECT_EQ(stat((dir + "/" + name).c_str(), &st), 0);
    EXPECT_GT(st.st_size, 10000) << name;
    std::cerr << "screenshot: " << dir << "/" << name << "\n";
  }
}

// `ytf history-server --port 0` with `flags`, as a person starts it; its URL
// ("http://127.0.0.1:N/") once printed, "" when it never was (its stderr is logged).
struct HistoryServerProcess {
  std::unique_ptr<Subprocess> process;
  std::string url;
};
HistoryServerProcess StartHistoryServer(const std::string& name, std::vector<std::string> flags,
                                        std::map<std::string, std::string> env = {}) {
  SubprocessOptions options;
  options.argv = {Ytf(), "history-server", "--port", "0"};
  options.argv.insert(options.argv.end(), flags.begin(), flags.end());
  options.env = CurrentEnvironment();
  options.env["HADOOP_CONF_DIR"] = harness::HadoopCluster::Get().conf_dir();
  for (const auto& [k, v] : env) options.env[k] = v;
  options.stdout_path = TempDir() + "/" + name + ".out";
  options.stderr_path = TempDir() + "/" + name + ".err";
  // Spawn appends: an earlier run's line would name its port.
  ::unlink(options.stdout_path.c_str());
  HistoryServerProcess server;
  auto spawned = Subprocess::Spawn(options);
  if (!spawned.ok()) {
    ADD_FAILURE() << spawned.status();
    return server;
  }
  server.process = *std::move(spawned);
  testing::WaitUntil(
      [&] {
        std::smatch m;
        static const std::regex re("http://127\\.0\\.0\\.1:[0-9]+/");
        const std::string out = ReadFileToString(options.stdout_path).value_or("");
        if (std::regex_search(out, m, re)) server.url = m.str();
        return !server.url.empty() || server.process->Poll().has_value();
      },
      absl::Seconds(60));
  if (server.url.empty()) {
    ADD_FAILURE() << name << " never printed its URL: "
                  << ReadFileToString(options.stderr_path).value_or("");
  }
  return server;
}

// A training job's event files, written as PyTorch's SummaryWriter writes them, into HDFS under
// the output path of an ended job: its history page offers TensorBoard, and following the link
// starts one over a copy of them (TensorFlow 2 reads no HDFS) that shows the run; stopping the
// server stops it.
TEST(CliTest, TheHistoryServerStartsTensorBoardOverAnEndedJobsOutput) {
  const harness::HadoopCluster& c = harness::HadoopCluster::Get();
  const std::string output = absl::StrCat("/tmp/tony-tb-itest-", ::getpid());
  const std::string events = TempDir() + "/tb-events";
  Result wrote = Exec({"/bin/sh", "-c",
                       "python3 -c 'import sys; from torch.utils.tensorboard import SummaryWriter; "
                       "w = SummaryWriter(sys.argv[1]); w.add_scalar(\"loss\", 0.5, 1); "
                       "w.close()' \"$0\" && ls \"$0\"",
                       events});
  ASSERT_EQ(wrote.exit_code, 0) << wrote.err;
  const std::string event_file = std::string(absl::StripAsciiWhitespace(wrote.out));
  ASSERT_THAT(event_file, HasSubstr("tfevents"));
  http::Client http;
  http::Request put;
  put.method = http::Method::kPut;
  put.url = absl::StrCat(c.namenode_web_url(), "/webhdfs/v1", output, "/run1/", event_file,
                         "?op=CREATE&overwrite=true&user.name=", c.user());
  put.body = ReadFileToString(events + "/" + event_file).value_or("");
  put.follow_redirects = true;
  auto created = http.Do(put);
  ASSERT_TRUE(created.ok()) << created.status();
  ASSERT_EQ(created->status, 201) << created->body;

  Result job = Exec({Submit(), "--yarn", "-n", "cli-itest-tensorboard", "-r", "worker:1", "-m",
                     "128m", "-o", "hdfs://" + output, "true"});
  ASSERT_EQ(job.exit_code, 0) << job.err;
  const std::string app = AppIdOf(job.out);
  EXPECT_TRUE(testing::WaitUntil(
      [&] {
        Result list = Exec({Ytf(), "history", "--json", "--name", "cli-itest-tensorboard"});
        return absl::StrContains(list.out, app) && absl::StrContains(list.out, "SUCCEEDED");
      },
      absl::Seconds(30)));

  HistoryServerProcess server =
      StartHistoryServer("history-server-tb", {"--tensorboard_command", "tensorboard"},
                         {{"XDG_CACHE_HOME", TempDir() + "/cache"}});
  ASSERT_FALSE(server.url.empty());
  const std::string& url = server.url;
  auto page = http.Get(url + "jobs/" + app);
  ASSERT_TRUE(page.ok()) << page.status();
  EXPECT_THAT(page->body, HasSubstr("href=\"/jobs/" + app + "/tensorboard\""));
  http::Request open;
  open.url = url + "jobs/" + app + "/tensorboard";
  open.timeout = absl::Minutes(3);  // TensorBoard imports TensorFlow
  auto redirect = http.Do(open);
  ASSERT_TRUE(redirect.ok()) << redirect.status();
  ASSERT_EQ(redirect->status, 302) << redirect->body;
  const std::string tensorboard = redirect->Header("location").value_or("");
  ASSERT_THAT(tensorboard, ::testing::StartsWith("http://127.0.0.1:"));
  // It prints its address before it has read the logdir: the run appears a moment later.
  std::string runs;
  EXPECT_TRUE(testing::WaitUntil(
      [&] {
        auto got = http.Get(tensorboard + "data/runs");
        runs = got.ok() ? got->body : std::string(got.status().message());
        return absl::StrContains(runs, "run1");
      },
      absl::Seconds(60)))
      << runs;
  // Opened again: the same one.
  auto again = http.Do(open);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->Header("location").value_or(""), tensorboard);
  // In a browser: the link leads to TensorBoard's own page, showing the run's scalar.
  ASSERT_EQ(access(testing::kChromium, X_OK), 0) << "no chromium (scripts/install-deps)";
  testing::BrowserResult dom =
      testing::Browse(url + "jobs/" + app + "/tensorboard", {"--dump-dom"});
  ASSERT_EQ(dom.exit_code, 0) << dom.err;
  EXPECT_THAT(dom.out, HasSubstr("<title>TensorBoard</title>"));
  const char* artifacts = std::getenv("TONY_ARTIFACT_DIR");
  const std::string shot =
      (artifacts != nullptr ? artifacts : TempDir()) + "/history-tensorboard.png";
  testing::BrowserResult shown =
      testing::Browse(url + "jobs/" + app + "/tensorboard",
                      {"--screenshot=" + shot, "--hide-scrollbars", "--virtual-time-budget=8000"});
  EXPECT_EQ(shown.exit_code, 0) << shown.err;
  std::cerr << "screenshot: " << shot << "\n";

  // Another user's job pointing at these files, and a job whose output is not in HDFS: the
  // server's account reads neither for them.
  Result other = Exec({Submit(), "--yarn", "-n", "cli-itest-tensorboard-other", "-r", "worker:1",
                       "-m", "128m", "-o", "hdfs://" + output, "true"},
                      {{"HADOOP_USER_NAME", "alice"}});
  Result local = Exec({Submit(), "--yarn", "-n", "cli-itest-tensorboard-local", "-r", "worker:1",
                       "-m", "128m", "-o", "file:///etc", "true"});
  ASSERT_EQ(other.exit_code, 0) << other.err;
  ASSERT_EQ(local.exit_code, 0) << local.err;
  for (const auto& [job_out, why] : std::vector<std::pair<std::string, std::string>>{
           {other.out, "not to the job's user alice"}, {local.out, "is not in HDFS"}}) {
    const std::string refused_app = AppIdOf(job_out);
    http::Request refused;
    refused.url = url + "jobs/" + refused_app + "/tensorboard";
    refused.timeout = absl::Minutes(1);
    std::string body;
    // The server's index learns of the job at its next scan.
    EXPECT_TRUE(testing::WaitUntil(
        [&] {
          auto r = http.Do(refused);
          body = r.ok() ? absl::StrCat(r->status, " ", r->body) : "";
          return absl::StartsWith(body, "503 ") && absl::StrContains(body, why);
        },
        absl::Seconds(30)))
        << refused_app << ": " << body;
  }

  server.process->Terminate(absl::Seconds(20));
  auto gone = http.Get(tensorboard);
  EXPECT_FALSE(gone.ok()) << "TensorBoard still answers after the server stopped";
}

// The history of finished jobs, from their event logs: `ytf history` reading the directory,
// `ytf history-server` serving the list and each job's page, and `ytf history --server`.
// A number member of a JSON object, or -1.
double NumberIn(const http::Json& j, const char* key) {
  const http::Json* v = http::JsonField(j, key);
  return v != nullptr && v->is_number() ? v->get<double>() : -1;
}

TEST(CliTest, UsageOfAJobIsWithinWhatItAskedForOverItsOwnSpan) {
  const std::string& app = FinishedJob();
  ASSERT_FALSE(app.empty());
  // Its own bounds, from its log: the first line's time to job_finished's, and each task's ask.
  absl::Time first = absl::InfinitePast(), finished = absl::InfinitePast();
  std::vector<http::Json> asks;
  Result events;
  EXPECT_TRUE(testing::WaitUntil(
      [&] {
        events = Exec({Ytf(), "events", app, "--json"});
        return events.exit_code == 0 && absl::StrContains(events.out, "\"job_finished\"");
      },
      absl::Seconds(30)))
      << events.out << events.err;
  for (absl::string_view line : absl::StrSplit(events.out, '\n', absl::SkipEmpty())) {
    auto j = http::ParseJson(line, "event");
    ASSERT_TRUE(j.ok()) << line;
    absl::Time t;
    std::string err;
    ASSERT_TRUE(absl::ParseTime(absl::RFC3339_full, j->value("time", ""), &t, &err)) << line;
    if (first == absl::InfinitePast()) first = t;
    const std::string event = j->value("event", "");
    if (event == "job_finished") finished = t;
    if (event == "task_requested") asks.push_back(*j);
  }
  ASSERT_EQ(asks.size(), 2u) << events.out;  // worker:2, no restarts
  const double span_s = absl::ToDoubleSeconds(finished - first);
  const double vcores = NumberIn(asks[0], "vcores"), memory_mb = NumberIn(asks[0], "memory_mb");
  EXPECT_EQ(memory_mb, 128);
  EXPECT_GE(vcores, 1);

  Result usage = Exec({Ytf(), "usage", "--by", "job", "--json"});
  ASSERT_EQ(usage.exit_code, 0) << usage.err;
  auto report = http::ParseJson(usage.out, "usage");
  ASSERT_TRUE(report.ok()) << usage.out;
  const http::Json* group = nullptr;
  for (const http::Json& g : (*report)["groups"]) {
    if (g.value("key", "") == app) group = &g;
  }
  ASSERT_NE(group, nullptr) << usage.out;
  EXPECT_EQ(NumberIn(*group, "jobs"), 1);
  // Two containers of the asked size, each held for part of the job's span, none outside it.
  const double vcore_s = NumberIn(*group, "vcore_hours") * 3600;
  EXPECT_GT(vcore_s, 0);
  EXPECT_LE(vcore_s, 2 * vcores * span_s * (1 + 1e-9));
  EXPECT_NEAR(NumberIn(*group, "gb_hours") / NumberIn(*group, "vcore_hours"),
              memory_mb / 1024 / vcores, 1e-9);
  EXPECT_EQ(NumberIn(*group, "gpu_hours"), 0);
  Result csv = Exec({Ytf(), "usage", "--by", "job", "--csv", "--from", "2999-01-01"});
  EXPECT_EQ(csv.exit_code, 0) << csv.err;
  EXPECT_THAT(csv.out, Not(HasSubstr(app)));
}

// Goodput of a job with a forced restart: its worker fails once (exit 3), its restart policy
// relaunches it, the second run succeeds. The split has a recovering part, and its parts add up
// to the log's own span (the first line to job_finished): structure, never absolute times.
TEST(CliTest, GoodputOfARestartedJobHasARecoveringPartAndAddsUpToItsSpan) {
  std::string tmpl = TempDir() + "/goodput.XXXXXX";
  const std::string dir = mkdtemp(tmpl.data());
  ASSERT_EQ(chmod(dir.c_str(), 0777), 0);
  const std::string marker = dir + "/failed-once";
  Result r = Exec({Submit(), "--yarn", "-n", "cli-itest-goodput", "-r", "worker:1", "-m", "128m",
                   "--restart", "worker:policy=on-failure,scope=task,max_restarts=2,backoff=1s",
                   absl::StrCat("[ -e ", marker, " ] || { touch ", marker, "; exit 3; }")});
  const std::string app = AppIdOf(r.out + r.err);
  ASSERT_FALSE(app.empty()) << r.out << r.err;
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  Result events;
  ASSERT_TRUE(testing::WaitUntil(
      [&] {
        events = Exec({Ytf(), "events", app, "--json"});
        return events.exit_code == 0 && absl::StrContains(events.out, "\"job_finished\"");
      },
      absl::Seconds(30)))
      << events.out << events.err;
  absl::Time first = absl::InfinitePast(), finished = absl::InfinitePast();
  for (absl::string_view line : absl::StrSplit(events.out, '\n', absl::SkipEmpty())) {
    auto j = http::ParseJson(line, "event");
    ASSERT_TRUE(j.ok()) << line;
    absl::Time t;
    std::string err;
    ASSERT_TRUE(absl::ParseTime(absl::RFC3339_full, j->value("time", ""), &t, &err)) << line;
    if (first == absl::InfinitePast()) first = t;
    if (j->value("event", "") == "job_finished") finished = t;
  }
  EXPECT_THAT(events.out, HasSubstr("\"task_restart_scheduled\"")) << events.out;

  // ytf events: the timeline, then the split.
  Result text = Exec({Ytf(), "events", app});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_THAT(text.out, HasSubstr("\ngoodput: ")) << text.out;
  EXPECT_THAT(text.out, HasSubstr("\n  recovering ")) << text.out;

  // ytf usage --by job: the same split, in hours.
  Result usage = Exec({Ytf(), "usage", "--by", "job", "--json"});
  ASSERT_EQ(usage.exit_code, 0) << usage.err;
  auto report = http::ParseJson(usage.out, "usage");
  ASSERT_TRUE(report.ok()) << usage.out;
  const http::Json* goodput = nullptr;
  for (const http::Json& g : (*report)["groups"]) {
    if (g.value("key", "") == app) goodput = http::JsonField(g, "goodput");
  }
  ASSERT_NE(goodput, nullptr) << usage.out;
  double parts_s = 0;
  for (const char* part : {"waiting", "starting", "training", "recovering", "stopping"}) {
    const double s = NumberIn(*goodput, absl::StrCat(part, "_hours").c_str()) * 3600;
    EXPECT_GE(s, 0) << part;
    parts_s += s;
  }
  EXPECT_GT(NumberIn(*goodput, "recovering_hours"), 0) << goodput->dump();
  EXPECT_GT(NumberIn(*goodput, "training_hours"), 0) << goodput->dump();
  EXPECT_GT(NumberIn(*goodput, "waiting_hours"), 0) << goodput->dump();
  const double span_s = absl::ToDoubleSeconds(finished - first);
  EXPECT_NEAR(parts_s, span_s, 1e-3) << goodput->dump();
  EXPECT_NEAR(NumberIn(*goodput, "wall_hours") * 3600, span_s, 1e-3) << goodput->dump();
  const double share = NumberIn(*goodput, "training_share");
  EXPECT_GT(share, 0);
  EXPECT_LT(share, 1);
}

TEST(CliTest, HistoryListsFinishedJobsAndTheServerShowsEach) {
  const std::string& ok_app = FinishedJob();
  ASSERT_FALSE(ok_app.empty());
  // It runs past one heartbeat (5 s), so that its page has a memory and CPU sample to draw.
  Result failed = Exec({Submit(), "--yarn", "-n", "cli-itest-history-fail", "-r", "worker:1", "-m",
                        "128m", "sleep 6; echo '<nope>' >&2; exit 3"});
  ASSERT_EQ(failed.exit_code, 1) << failed.err;
  const std::string failed_app = AppIdOf(failed.out);

  // The AM appends its last lines as it ends: look until the end is there.
  Result list;
  EXPECT_TRUE(testing::WaitUntil(
      [&] {
        list = Exec({Ytf(), "history", "--json", "--name", "cli-itest"});
        return list.exit_code == 0 && absl::StrContains(list.out, failed_app) &&
               absl::StrContains(list.out, "\"FAILED\"");
      },
      absl::Seconds(30)))
      << list.out << list.err;
  EXPECT_THAT(list.out, HasSubstr(absl::StrCat("\"app_id\": \"", ok_app, "\"")));
  EXPECT_THAT(list.out, HasSubstr("\"queue\": \"default\""));
  Result text = Exec({Ytf(), "history", "--state", "failed", "--name", "history-fail"});
  EXPECT_EQ(text.exit_code, 0) << text.err;
  EXPECT_THAT(text.out, ::testing::ContainsRegex(failed_app + " +FAILED "));
  EXPECT_THAT(text.out, Not(HasSubstr(ok_app)));
  Result bad = Exec({Ytf(), "history", "--from", "yesterday"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_THAT(bad.err, HasSubstr("--from: 'yesterday' is not a date"));

  // The server, on a free port it prints.
  const std::string index_file = TempDir() + "/history-index.jsonl";
  HistoryServerProcess server =
      StartHistoryServer("history-server", {"--scan_interval", "2s", "--index_file", index_file});
  ASSERT_FALSE(server.url.empty());
  const std::string& url = server.url;
  http::Client client;
  auto page = client.Get(url + "jobs/" + failed_app);
  ASSERT_TRUE(page.ok()) << page.status();
  EXPECT_EQ(page->status, 200);
  EXPECT_THAT(page->body, HasSubstr("<td class=\"FAILED\" id=\"state\">FAILED</td>"));
  EXPECT_THAT(page->body, HasSubstr("<td>worker:0</td>"));
  EXPECT_THAT(page->body, HasSubstr("&lt;nope&gt;"));  // its stderr, escaped
  EXPECT_THAT(page->body, HasSubstr("<svg class=\"timeline\""));
  EXPECT_THAT(page->body, HasSubstr("<h2>Goodput</h2>"));
  EXPECT_THAT(page->body, HasSubstr("<table id=\"goodput\"><tr class=\"waiting\">"));
  // The task's stderr, linked from the table to the server's own route: from the NodeManager,
  // or once YARN aggregated the logs (the test cluster does), from HDFS.
  std::smatch link;
  const std::regex stderr_link("href=\"/(jobs/[^\"]+/logs/worker:0/stderr)\"");
  ASSERT_TRUE(std::regex_search(page->body, link, stderr_link)) << page->body;
  const std::string log_url = url + link[1].str();
  auto log = client.Get(log_url);
  ASSERT_TRUE(log.ok()) << log.status();
  EXPECT_EQ(log->status, 200) << log_url << "\n" << log->body;
  EXPECT_THAT(log->body, HasSubstr("&lt;nope&gt;")) << log_url;
  EXPECT_THAT(log->body,
              ::testing::ContainsRegex("bytes, read (on |from the aggregated logs in hdfs://)"));
  auto ok_page = client.Get(url + "api/jobs/" + ok_app);
  ASSERT_TRUE(ok_page.ok());
  EXPECT_THAT(ok_page->body, HasSubstr("\"task\":\"worker:1\""));
  EXPECT_THAT(ok_page->body, HasSubstr("\"state\":\"SUCCEEDED\""));
  auto metrics = client.Get(url + "metrics");
  ASSERT_TRUE(metrics.ok());
  EXPECT_THAT(metrics->body, HasSubstr("tony_history_jobs{state=\"FAILED\"}"));
  CheckInABrowser(url, failed_app);
  Result via_server = Exec({Ytf(), "history", "--server", url, "--state", "FAILED"});
  EXPECT_EQ(via_server.exit_code, 0) << via_server.err;
  EXPECT_THAT(via_server.out, HasSubstr(failed_app));
  server.process->Signal(SIGTERM);
  auto code = server.process->Wait(absl::Seconds(20));
  EXPECT_TRUE(code.ok() && *code == 0)
      << ReadFileToString(TempDir() + "/history-server.err").value_or("");
  EXPECT_THAT(ReadFileToString(index_file).value_or(""), HasSubstr(failed_app));
}

TEST(CliTest, ApplicationTypeAndAnotherUsersJobStillListedAndTheirLogsFound) {
  std::string yaml = TempDir() + "/typed.yaml";
  std::ofstream(yaml) << "application_type: MY-TRAINER\n"
                         "command: echo typed\n"
                         "defaults: {memory: 128m}\n"
                         "jobs: {worker: {instances: 1}}\n";
  Result r = Exec({Submit(), "--yarn", "-n", "cli-itest-typed", "--spec", yaml},
                  {{"HADOOP_USER_NAME", "alice"}});
  const std::string app = AppIdOf(r.out);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  Result list = Exec({Ytf(), "list", "--all", "--all_users"});
  EXPECT_THAT(list.out, HasSubstr(app));
  EXPECT_THAT(Exec({Ytf(), "list", "--all"}).out, Not(HasSubstr(app)));  // not this user's
  // A scheduler finds its submission again by its tag (YARN keeps tags in lower case)...
  const std::string tag = absl::StrCat("Cli-Itest-", absl::ToUnixNanos(absl::Now()));
  // ...and never another user's: mallory puts the same tag on hers first.
  Result squat = Exec({Submit(), "--yarn", "--detach", "-n", "cli-itest-squat", "--tag", tag, "-r",
                       "worker:1", "-m", "128m", "true"},
                      {{"HADOOP_USER_NAME", "mallory"}});
  ASSERT_EQ(squat.exit_code, 0) << squat.err;
  const std::string squat_app = AppIdOf(squat.out);
  Result tagged = Exec({Submit(), "--yarn", "--detach", "-n", "cli-itest-tagged", "--tag", tag,
                        "-r", "worker:1", "-m", "128m", "true"});
  ASSERT_EQ(tagged.exit_code, 0) << tagged.err;
  const std::string tagged_app = AppIdOf(tagged.out);
  Result by_tag = Exec({Ytf(), "list", "--all", "--json", "--tag", tag});
  EXPECT_EQ(by_tag.exit_code, 0) << by_tag.err;
  EXPECT_THAT(by_tag.out, HasSubstr(tagged_app));
  EXPECT_THAT(by_tag.out, HasSubstr(absl::AsciiStrToLower(tag)));
  EXPECT_THAT(by_tag.out, Not(HasSubstr(app)));
  EXPECT_THAT(by_tag.out, Not(HasSubstr(squat_app)));
  EXPECT_THAT(by_tag.out, Not(HasSubstr("mallory")));
  Result everyones = Exec({Ytf(), "list", "--all", "--all_users", "--json", "--tag", tag});
  EXPECT_THAT(everyones.out, HasSubstr(squat_app));
  EXPECT_THAT(everyones.out, HasSubstr("\"user\": \"mallory\""));
  Result none = Exec({Ytf(), "list", "--all", "--tag", tag + "-other"});
  EXPECT_THAT(none.out, Not(HasSubstr(tagged_app)));
  // ...and reaps it: status --wait returns once it has ended, with the job's exit code.
  Result reaped = Exec({Ytf(), "status", tagged_app, "--wait", "--timeout", "5m"});
  EXPECT_EQ(reaped.exit_code, 0) << reaped.err;
  EXPECT_THAT(reaped.out, HasSubstr("SUCCEEDED"));
  // Asked by this machine's user: the history is in the job's user's HDFS home.
  Result logs = Exec({Ytf(), "logs", app, "--task", "worker:0", "--file", "stdout"});
  EXPECT_EQ(logs.exit_code, 0) << logs.err;
  EXPECT_THAT(logs.out, HasSubstr("typed"));
}

// Why a job waits (docs/troubleshooting.md#why-a-job-waits), as users see it: a job holding
// the default partition keeps a second job's ApplicationMaster waiting, and the second's progress
// line and `ytf status` say the queue is at capacity. *Exclusive*: it fills the partition.
TEST(CliExclusiveTest, ProgressAndStatusSayWhyAJobWaits) {
  // Two <8192 MB> nodes: a 1024 MB AM and two 7168 MB workers leave 1024 MB, less than 2048.
  Result holder = Exec({Submit(), "--yarn", "--detach", "-n", "cli-itest-holder", "-r", "worker:2",
                        "-m", "7168", "--am_memory", "1024", "sleep 600"});
  const std::string held = AppIdOf(holder.out);
  ASSERT_FALSE(held.empty()) << holder.err;
  const bool running = testing::WaitUntil(
      [&] {
        Result s = Exec({Ytf(), "status", "--json", held});
        auto json = http::ParseJson(s.out, "ytf status --json");
        return json.ok() && (*json)["progress"].contains("worker") &&
               (*json)["progress"]["worker"]["running"] == 2;
      },
      absl::Minutes(4));
  ASSERT_TRUE(running) << Exec({Ytf(), "status", held}).out;

  const std::string base = absl::StrCat(TempDir(), "/waiting");
  SubprocessOptions options;
  options.argv = {Submit(),      "--yarn",   "-n",  "cli-itest-waiting",
                  "-r",          "worker:1", "-m",  "128m",
                  "--am_memory", "2048",     "true"};
  options.env = CurrentEnvironment();
  options.env["HADOOP_CONF_DIR"] = harness::HadoopCluster::Get().conf_dir();
  options.stdout_path = base + ".out";
  options.stderr_path = base + ".err";
  auto waiting = Subprocess::Spawn(options);
  ASSERT_TRUE(waiting.ok()) << waiting.status();
  std::string err;
  const bool said = testing::WaitUntil(
      [&] {
        err = ReadFileToString(base + ".err").value_or("");
        return absl::StrContains(err, "| why: queue at capacity: root.default uses ");
      },
      absl::Minutes(2));
  EXPECT_TRUE(said) << err;
  const std::string second = AppIdOf(ReadFileToString(base + ".out").value_or(""));
  ASSERT_FALSE(second.empty()) << err;
  Result status = Exec({Ytf(), "status", second});
  EXPECT_THAT(status.out, HasSubstr("\n  why: queue at capacity: root.default uses "))
      << status.out;
  Result json = Exec({Ytf(), "status", "--json", second});
  auto parsed = http::ParseJson(json.out, "ytf status --json");
  ASSERT_TRUE(parsed.ok()) << json.out;
  EXPECT_EQ((*parsed)["wait_kind"], "queue-at-capacity") << json.out;

  // SIGTERM: ytf-submit kills the job it follows.
  (void)(*waiting)->Terminate(absl::Seconds(30));
  Result killed = Exec({Ytf(), "kill", held});
  EXPECT_EQ(killed.exit_code, 0) << killed.err;
}

TEST(CliTest, LocalJobIdsGetAClearAnswerFromYtf) {
  Result r = Exec({Submit(), "--local", "-r", "worker:1", "true"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::string id(absl::StripAsciiWhitespace(r.out));
  ASSERT_TRUE(absl::StartsWith(id, "local_")) << r.out;
  for (const char* command : {"status", "logs", "kill"}) {
    Result y = Exec({Ytf(), command, id});
    EXPECT_EQ(y.exit_code, 2) << command;
    EXPECT_THAT(y.err, HasSubstr("is a local job (--local)")) << command;
    EXPECT_EQ(Lines(y.err), 1) << y.err;
  }
  // Its history is the local backend's, read without a cluster.
  Result history = Exec({Ytf(), "history", "--local", "--json", "--limit", "1000"},
                        {{"HADOOP_CONF_DIR", "/nonexistent"}});
  ASSERT_EQ(history.exit_code, 0) << history.err;
  EXPECT_THAT(history.out, HasSubstr(absl::StrCat("\"app_id\": \"", id, "\"")));
}

// A gateway with only HADOOP_HOME set (its etc/hadoop the cluster's site files): without
// --yarn the job goes to that cluster, as ytf and the Submitter's loader would, not to local
// processes on the gateway.
TEST(CliTest, OnlyHadoopHomeSetSubmitsToTheClusterItsConfigurationNames) {
  const std::string home = TempDir() + "/hadoop-home";
  const std::string conf = harness::HadoopCluster::Get().conf_dir();
  ASSERT_EQ(std::system(("mkdir -p '" + home + "/etc/hadoop' && cp -R '" + conf + "'/. '" + home +
                         "/etc/hadoop/'")
                            .c_str()),
            0);
  ASSERT_EQ(access((home + "/etc/hadoop/yarn-site.xml").c_str(), R_OK), 0);
  Result r = Exec({Submit(), "-n", "cli-itest-hadoop-home", "-r", "worker:1", "-m", "128m", "true"},
                  {{"HADOOP_HOME", home}}, absl::Minutes(5), {"HADOOP_CONF_DIR", "YARN_CONF_DIR"});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_THAT(r.err, Not(HasSubstr("running locally")));
  EXPECT_FALSE(AppIdOf(r.out).empty()) << r.out << r.err;
}

TEST(CliTest, ABadUsageIntervalIsOneLineNamingTheKeyAndNothingIsSubmitted) {
  Result r =
      Exec({Submit(), "--yarn", "-D", "tony.history.usage-interval=0", "-r", "worker:1", "true"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_THAT(r.err, HasSubstr("tony.history.usage-interval is 0; give at least 1s"));
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_EQ(AppIdOf(r.out + r.err), "");
}

TEST(CliTest, AHeartbeatTimeoutBelowTheMinimumIsOneLineNamingTheKeyAndNothingIsSubmitted) {
  Result r =
      Exec({Submit(), "--yarn", "-D", "tony.task.heartbeat-timeout=5s", "-r", "worker:1", "true"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_THAT(r.err, HasSubstr("tony.task.heartbeat-timeout is 5s; give at least 20s"));
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_EQ(AppIdOf(r.out + r.err), "");
}

// A copy of the cluster's configuration directory with `site` as its tony-site.yaml.
std::string ConfWithSite(const std::string& name, const std::string& site) {
  const std::string dir = absl::StrCat(TempDir(), "/", name);
  const std::string conf = harness::HadoopCluster::Get().conf_dir();
  EXPECT_EQ(
      std::system(("mkdir -p '" + dir + "' && cp -R '" + conf + "'/. '" + dir + "/'").c_str()), 0);
  std::ofstream(dir + "/tony-site.yaml") << site;
  return dir;
}

// The site file's limit refuses in one line naming it, its value and the file, before any
// application exists.
TEST(CliTest, ASiteLimitRefusesInOneLineAndLeavesNoApplication) {
  const std::string conf = ConfWithSite("site-limits", "limits:\n  max_tasks_per_job: 2\n");
  // A name of this run alone: an earlier run's refusal may have been an application.
  const std::string name = absl::StrCat("cli-itest-site-refused-", getpid());
  Result r = Exec({Submit(), "--yarn", "-n", name, "-r", "worker:3", "-m", "128m", "true"},
                  {{"HADOOP_CONF_DIR", conf}, {"TONY_SITE_FILE", ""}});
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_EQ(r.err, absl::StrCat("ytf-submit: limits.max_tasks_per_job is 2 (", conf,
                                "/tony-site.yaml:2): the job has 3 tasks; ask for less or ask "
                                "the cluster's admins\n"));
  EXPECT_EQ(r.out, "");
  Result list = Exec({Ytf(), "list", "--all"});
  EXPECT_EQ(list.exit_code, 0) << list.err;
  EXPECT_THAT(list.out, Not(HasSubstr(name)));

  // A broken site file refuses too, naming file and line: it never silently drops a limit.
  const std::string broken = ConfWithSite("site-broken", "limits:\n  max_task_per_job: 2\n");
  r = Exec({Submit(), "--yarn", "-n", name, "-r", "worker:1", "true"},
           {{"HADOOP_CONF_DIR", broken}, {"TONY_SITE_FILE", ""}});
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_THAT(r.err, HasSubstr(absl::StrCat(broken,
                                            "/tony-site.yaml:2:3: limits.max_task_per_job: "
                                            "unknown key")));
  EXPECT_EQ(Lines(r.err), 1) << r.err;
  EXPECT_EQ(AppIdOf(r.out + r.err), "");
}

// A template's settings reach the job: its environment in the tasks, its name in the spec.
TEST(CliTest, ASiteTemplateIsAppliedToTheJob) {
  const std::string conf =
      ConfWithSite("site-template",
                   "defaults:\n  env: {SITE_DEFAULT_MARK: from-defaults}\n"
                   "templates:\n  small:\n    env: {SITE_TEMPLATE_MARK: from-template}\n"
                   "    jobs: {worker: {memory: 128m}}\n");
  Result r = Exec({Submit(), "--yarn", "-n", "cli-itest-site-template", "--template", "small", "-r",
                   "worker:1", "echo \"marks=$SITE_TEMPLATE_MARK,$SITE_DEFAULT_MARK\""},
                  {{"HADOOP_CONF_DIR", conf}, {"TONY_SITE_FILE", ""}});
  const std::string app = AppIdOf(r.out);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  Result logs = Exec({Ytf(), "logs", app, "--task", "worker:0", "--file", "stdout"});
  EXPECT_THAT(logs.out, HasSubstr("marks=from-template,from-defaults\n"));
  Result shown =
      Exec({Submit(), "--show_site"}, {{"HADOOP_CONF_DIR", conf}, {"TONY_SITE_FILE", ""}});
  EXPECT_EQ(shown.exit_code, 0) << shown.err;
  EXPECT_THAT(shown.out,
              HasSubstr("  templates.small.env.SITE_TEMPLATE_MARK: from-template  (line 5)"));
}

TEST(CliTest, UnreachableResourceManagerSaysWhatAndGivesUp) {
  Result r = Exec({Submit(), "--yarn", "-D", "yarn.resourcemanager.address=localhost:1", "-r",
                   "worker:1", "true"});
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_THAT(r.err,
              HasSubstr("ytf-submit: warning: ResourceManager at localhost:1 unreachable ("));
  EXPECT_THAT(r.err, HasSubstr("retrying for up to"));
  EXPECT_THAT(r.err, HasSubstr("ResourceManager at localhost:1 unreachable: gave up after"));
  EXPECT_EQ(AppIdOf(r.out), "");
}

TEST(CliTest, TimeoutEndsTheJobFailedSayingWhy) {
  Result r = Exec({Submit(), "--yarn", "-n", "cli-itest-timeout", "--timeout", "5s", "-r",
                   "worker:1", "-m", "128m", "sleep 600"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_THAT(r.err, HasSubstr(" FAILED\nthe job timeout of 5s passed\n"));
}

TEST(CliTest, ReadmeCppExampleRunsAgainstTheInstalledPackage) {
  const char* dir = std::getenv("TONY_CONSUMER_BUILD_DIR");
  std::string example = dir != nullptr ? absl::StrCat(dir, "/readme_example") : "";
  if (example.empty() || access(example.c_str(), X_OK) != 0) {
    GTEST_SKIP() << "no readme_example: run the find_package_consumer test first";
  }
  // No TONY_BIN_DIR or TONY_RUNTIME_BUNDLE: it finds the installed package on its own.
  std::map<std::string, std::string> env = {{"TONY_BIN_DIR", ""}, {"TONY_RUNTIME_BUNDLE", ""}};
  Result r = Exec({example}, env);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("SUCCEEDED"));
  EXPECT_FALSE(AppIdOf(r.out).empty()) << r.out;
}

// The first ```<lang> block after `after` in `text`.
std::string CodeBlock(const std::string& text, const std::string& after, const std::string& lang) {
  size_t at = text.find(after);
  if (at == std::string::npos) return "";
  size_t begin = text.find("```" + lang + "\n", at);
  if (begin == std::string::npos) return "";
  begin += 4 + lang.size();
  size_t end = text.find("```", begin);
  return end == std::string::npos ? "" : text.substr(begin, end - begin);
}

std::string SourceDir() { return harness::HadoopCluster::Get().source_dir(); }

std::string PathWithTools() {
  const char* path = std::getenv("PATH");
  return BinDir() + ":" + (path != nullptr ? path : "/usr/bin:/bin");
}

TEST(DocsTest, ReadmeFirstJobRunsAsWritten) {
  std::string readme = ReadFileToString(SourceDir() + "/README.md").value_or("");
  std::string commands = CodeBlock(readme, "### A first job", "sh");
  ASSERT_FALSE(commands.empty()) << "README.md lost its first-job commands";
  Result r = Exec({"/bin/bash", "-euo", "pipefail", "-c", "cd \"$0\" && " + commands, SourceDir()},
                  {{"PATH", PathWithTools()}}, absl::Minutes(10));
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("==> chief:0 stdout"));  // ytf logs --follow
  EXPECT_THAT(r.out, HasSubstr("  SUCCEEDED\n"));       // ytf status
}

TEST(DocsTest, JobSpecYamlExampleRunsWithTheTestClustersLimits) {
  std::string doc = ReadFileToString(SourceDir() + "/docs/job-spec.md").value_or("");
  std::string yaml = CodeBlock(doc, "## Full example", "yaml");
  ASSERT_FALSE(yaml.empty()) << "docs/job-spec.md lost its example";
  // As written, in a directory of its own: its relative script resolves against it.
  const std::string dir = TempDir() + "/docs-yaml";
  ASSERT_EQ(mkdir(dir.c_str(), 0755), 0);
  ASSERT_EQ(symlink((SourceDir() + "/examples").c_str(), (dir + "/examples").c_str()), 0);
  std::ofstream(dir + "/job.yaml") << yaml;
  // Overridden the documented way (options beat the file): the test cluster has only the
  // default queue, no HDFS support in TensorFlow for hdfs:// output, two nodes for unlabelled
  // requests, and its TensorFlow in a virtual environment.
  const std::string venv =
      std::string(absl::StripAsciiWhitespace(Exec({SourceDir() + "/scripts/python-env"}).out));
  std::vector<std::string> argv = {Submit(), "--yarn", "--spec", dir + "/job.yaml"};
  for (const char* arg : {"-q", "default", "-r", "worker:1", "-m", "512m", "-m", "ps:512m", "-m",
                          "worker:512m", "-m", "worker[0]:512m", "-c", "worker[0]:1"}) {
    argv.push_back(arg);
  }
  argv.insert(argv.end(), {"-o", dir + "/out", "-e", "PATH=" + venv + ":/usr/bin:/bin"});
  Result r = Exec(argv, {{"PATH", PathWithTools()}}, absl::Minutes(10));
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_THAT(r.err, HasSubstr("SUCCEEDED"));
}

}  // namespace
}  // namespace tony
