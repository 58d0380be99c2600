// Copyright libtony authors.
//
// ytf-submit and ytf on the real test YARN (NodeManagers on their own hosts): the real binaries,
// real containers, real TensorFlow. After every test no container or process of the job may remain.

#include <arpa/inet.h>
#include <dirent.h>
#include <netdb.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "broker/broker_client.h"
#include "broker/secret.h"
#include "common/file_util.h"
#include "common/subprocess.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "http/client.h"
#include "http/json.h"
#include "ipc/credentials.h"
#include "tests/harness/hadoop_cluster.h"
#include "yarn/yarn_client.h"

extern char** environ;

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

std::map<std::string, std::string> Environment() {
  std::map<std::string, std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    std::string kv = *e;
    size_t eq = kv.find('=');
    if (eq != std::string::npos) env[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  env["HADOOP_CONF_DIR"] = harness::HadoopCluster::Get().conf_dir();
  return env;
}

Result RunCommand(std::vector<std::string> argv, absl::Duration timeout = absl::Minutes(5)) {
  // A fresh directory per test binary run: the child's output files are appended to.
  static const std::string dir = [] {
    std::string tmpl = ::testing::TempDir() + "/yarn_job_itest.XXXXXX";
    return std::string(mkdtemp(tmpl.data()));
  }();
  static int counter = 0;
  std::string base = absl::StrCat(dir, "/run", ++counter);
  SubprocessOptions options;
  options.argv = std::move(argv);
  options.env = Environment();
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

std::string Python() {
  static const std::string bin = [] {
    const std::string src = harness::HadoopCluster::Get().source_dir();
    Result r = RunCommand({"/bin/bash", src + "/scripts/python-env"}, absl::Minutes(20));
    std::string dir(absl::StripAsciiWhitespace(r.out));
    return dir + "/python";
  }();
  return bin;
}

std::string AppIdOf(const Result& r) {
  std::smatch m;
  static const std::regex re("application_[0-9]+_[0-9]+");
  return std::regex_search(r.out, m, re) ? m.str() : "";
}

http::Json Rm(const std::string& path) {
  http::Client http;
  auto r =
      http.Get(harness::HadoopCluster::Get().rm_web_url() + path, {{"Accept", "application/json"}});
  if (!r.ok() || !r->ok()) return http::Json();
  auto j = http::ParseJson(r->body, path);
  return j.ok() ? *j : http::Json();
}

// Processes started for `app_id`'s containers, found by the CONTAINER_ID in their environment.
std::vector<int> ProcessesOf(const std::string& app_id) {
  std::string suffix = app_id.substr(std::string("application_").size());
  std::string needle = absl::StrCat("CONTAINER_ID=container_", suffix, "_");
  std::vector<int> pids;
  DIR* proc = opendir("/proc");
  if (proc == nullptr) return pids;
  while (dirent* e = readdir(proc)) {
    int pid = std::atoi(e->d_name);
    if (pid <= 0) continue;
    std::ifstream in(absl::StrCat("/proc/", pid, "/environ"), std::ios::binary);
    std::string env((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (absl::StrContains(env, needle)) pids.push_back(pid);
  }
  closedir(proc);
  return pids;
}

// A process's environment, one "KEY=value" per entry.
std::vector<std::string> EnvironOf(int pid) {
  std::string env = ReadFileToString(absl::StrCat("/proc/", pid, "/environ")).value_or("");
  return absl::StrSplit(env, '\0', absl::SkipEmpty());
}

bool Has(const std::vector<std::string>& vars, const std::string& var) {
  return std::find(vars.begin(), vars.end(), var) != vars.end();
}

// The pid of one task's user command: its environment names the app's container and the task.
int TaskProcess(const std::string& app_id, const std::string& job, int index) {
  for (int pid : ProcessesOf(app_id)) {
    std::vector<std::string> vars = EnvironOf(pid);
    bool is_user = std::any_of(vars.begin(), vars.end(), [](const std::string& v) {
      return absl::StartsWith(v, "TF_CONFIG=");
    });
    if (is_user && Has(vars, "DTF_TASK_JOB_NAME=" + job) &&
        Has(vars, absl::StrCat("DTF_TASK_INDEX=", index))) {
      return pid;
    }
  }
  return -1;
}

// Whether process `pid` has ended by `deadline` (checked every 100 ms).
bool EndsBy(int pid, absl::Time deadline) {
  while (kill(pid, 0) == 0 && absl::Now() < deadline) absl::SleepFor(absl::Milliseconds(100));
  return kill(pid, 0) != 0;
}

// Waits (at most 2 minutes) until the task's user command runs; its pid, or -1.
int WaitForTaskProcess(const std::string& app_id, const std::string& job, int index) {
  int pid = TaskProcess(app_id, job, index);
  for (absl::Time deadline = absl::Now() + absl::Minutes(2); pid < 0 && absl::Now() < deadline;) {
    absl::SleepFor(absl::Milliseconds(500));
    pid = TaskProcess(app_id, job, index);
  }
  return pid;
}

void ExpectNothingLeft(const std::string& app_id) {
  ASSERT_FALSE(app_id.empty());
  // Containers end asynchronously after the application does: allow a short while.
  absl::Time deadline = absl::Now() + absl::Seconds(30);
  std::vector<int> left;
  do {
    left = ProcessesOf(app_id);
    if (left.empty()) break;
    absl::SleepFor(absl::Milliseconds(500));
  } while (absl::Now() < deadline);
  EXPECT_TRUE(left.empty()) << left.size() << " processes of " << app_id << " still run";
  // The RM counts a container as running until its NodeManager reports it gone (a heartbeat
  // later, longer on a loaded machine), even after the application finished.
  int running = 0;
  do {
    http::Json app = Rm("/ws/v1/cluster/apps/" + app_id);
    ASSERT_TRUE(app.contains("app")) << app_id;
    running = app["app"]["runningContainers"].get<int>();  // -1 once finished
    if (running <= 0) break;
    absl::SleepFor(absl::Milliseconds(500));
  } while (absl::Now() < deadline);
  EXPECT_LE(running, 0) << app_id;
}

std::string AppState(const std::string& app_id) {
  http::Json app = Rm("/ws/v1/cluster/apps/" + app_id);
  if (!app.contains("app")) return "";
  return app["app"]["state"].get<std::string>() + "/" +
         app["app"]["finalStatus"].get<std::string>();
}

// Waits (at most 2 minutes) until the application is over; its "STATE/FINAL_STATUS". The client
// returns as soon as the AM reports the outcome; YARN records it a moment later.
std::string WaitForEnd(const std::string& app_id) {
  std::string state = AppState(app_id);
  for (absl::Time deadline = absl::Now() + absl::Minutes(2);
       !absl::StartsWith(state, "FINISHED") && !absl::StartsWith(state, "FAILED") &&
       !absl::StartsWith(state, "KILLED") && absl::Now() < deadline;) {
    absl::SleepFor(absl::Milliseconds(500));
    state = AppState(app_id);
  }
  return state;
}

// WebHDFS FileStatus of `path` ("" when it does not exist).
http::Json HdfsStatus(const std::string& path) {
  const harness::HadoopCluster& c = harness::HadoopCluster::Get();
  http::Client http;
  auto r = http.Get(absl::StrCat(c.namenode_web_url(), "/webhdfs/v1", path,
                                 "?op=GETFILESTATUS&user.name=", c.user()));
  if (!r.ok() || !r->ok()) return http::Json();
  auto j = http::ParseJson(r->body, path);
  return j.ok() && j->contains("FileStatus") ? (*j)["FileStatus"] : http::Json();
}

std::string StagingDir(const std::string& app_id) {
  return absl::StrCat("/user/", harness::HadoopCluster::Get().user(), "/.tony/staging/", app_id);
}

// Waits (at most `timeout`) until `path` is gone from HDFS.
bool WaitGoneFromHdfs(const std::string& path, absl::Duration timeout) {
  for (absl::Time deadline = absl::Now() + timeout; absl::Now() < deadline;) {
    if (HdfsStatus(path).is_null()) return true;
    absl::SleepFor(absl::Milliseconds(250));
  }
  return HdfsStatus(path).is_null();
}

std::string Submit() { return BinDir() + "/ytf-submit"; }
std::string Ytf() { return BinDir() + "/ytf"; }

// True when the test cluster gives every NodeManager its own network namespace and name
// (scripts/hadoop-cluster's default), false on its loopback fallback.
bool MultiHost() {
  return harness::HadoopCluster::Get().conf().Get("yarn.resourcemanager.hostname").value_or("") !=
         "localhost";
}

// The NodeManagers (1-based, as scripts/hadoop-cluster numbers them) that ran containers of
// `app_id`: each keeps a container log directory per application.
std::vector<int> NodesThatRan(const std::string& app_id) {
  const std::string state = harness::HadoopCluster::Get().conf_dir() + "/..";
  std::vector<int> nodes;
  for (int i = 1; i <= 3; ++i) {
    struct stat st;
    if (stat(absl::StrCat(state, "/data/nm", i, "/logs/", app_id).c_str(), &st) == 0) {
      nodes.push_back(i);
    }
  }
  return nodes;
}

// Host names of the running nodes carrying `label` ("" for unlabelled ones).
std::vector<std::string> NodeHosts(const std::string& label) {
  std::vector<std::string> hosts;
  http::Json nodes = Rm("/ws/v1/cluster/nodes?states=RUNNING");
  if (!nodes.contains("nodes")) return hosts;
  for (const auto& n : nodes["nodes"]["node"]) {
    std::string l;
    if (n.contains("nodeLabels") && !n["nodeLabels"].empty()) {
      l = n["nodeLabels"][0].get<std::string>();
    }
    if (l == label) hosts.push_back(n["nodeHostName"].get<std::string>());
  }
  return hosts;
}

TEST(YarnJobTest, TensorFlowExampleSucceedsWithCheckpointsAndLogs) {
  std::string tmpl = ::testing::TempDir() + "/tf-out.XXXXXX";
  const std::string out = mkdtemp(tmpl.data());
  const std::string src = harness::HadoopCluster::Get().source_dir();
  // 5 GB workers cannot share an 8 GB node: the job spans both default-partition nodes.
  Result r = RunCommand({Submit(), "--yarn", "-n", "itest-tf", "-r", "ps:1,worker:2", "-m", "1g",
                         "-m", "worker:5g", "-s", src + "/examples/classic_ps_worker.py", "-o", out,
                         Python() + " ${DTF_TASK_SCRIPT} --steps 200"},
                        absl::Minutes(10));
  std::string app = AppIdOf(r);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_THAT(r.err, HasSubstr("SUCCEEDED"));
  EXPECT_EQ(WaitForEnd(app), "FINISHED/SUCCEEDED");
  EXPECT_TRUE(ReadFileToString(out + "/checkpoint").ok()) << "no checkpoint in " << out;
  EXPECT_THAT(NodesThatRan(app), ::testing::ElementsAre(1, 2));

  Result logs = RunCommand({Ytf(), "logs", app, "--task", "worker:0"});
  EXPECT_EQ(logs.exit_code, 0) << logs.err;
  EXPECT_THAT(logs.out, HasSubstr("worker 0 done"));
  ExpectNothingLeft(app);
}

TEST(YarnJobTest, FailingWorkerFailsTheJobWithDiagnosticsAndStopsThePs) {
  Result r =
      RunCommand({Submit(), "--yarn", "-n", "itest-fail", "-r", "ps:1,worker:2", "-m", "256m",
                  "if [ $DTF_TASK_JOB_NAME = worker ] && [ $DTF_TASK_INDEX = 1 ]; then "
                  "echo 'something broke in worker one' >&2; exit 3; fi; "
                  "if [ $DTF_TASK_JOB_NAME = ps ]; then exec sleep 600; fi; sleep 20"},
                 absl::Minutes(5));
  std::string app = AppIdOf(r);
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_THAT(r.err, HasSubstr("worker:1"));
  EXPECT_THAT(r.err, HasSubstr("3"));
  EXPECT_THAT(r.err, HasSubstr("something broke in worker one"));
  EXPECT_EQ(WaitForEnd(app), "FINISHED/FAILED");
  ExpectNothingLeft(app);
}

TEST(YarnJobTest, KillingATaskProcessFromOutsideFailsTheJob) {
  Result r = RunCommand({Submit(), "--yarn", "--detach", "-n", "itest-outside-kill", "-r",
                         "ps:1,worker:1", "-m", "256m", "exec sleep 600"});
  std::string app = AppIdOf(r);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  int pid = WaitForTaskProcess(app, "worker", 0);
  ASSERT_GT(pid, 0) << "worker:0 of " << app << " never started";
  kill(pid, SIGKILL);
  const absl::Time killed = absl::Now();
  EXPECT_EQ(WaitForEnd(app), "FINISHED/FAILED");
  std::printf("fault matrix: task SIGKILL -> FAILED after %s\n",
              absl::FormatDuration(absl::Now() - killed).c_str());
  Result status = RunCommand({Ytf(), "status", app});
  EXPECT_EQ(status.exit_code, 1);
  EXPECT_THAT(status.out, HasSubstr("worker:0 failed with exit code 137"));
  ExpectNothingLeft(app);
}

// The pid of one task's executor: the process running the tony-executor binary itself (the
// launch scripts above it mention it on their command lines too).
int ExecutorProcess(const std::string& app_id, const std::string& job, int index) {
  for (int pid : ProcessesOf(app_id)) {
    char exe[4096] = {0};
    ssize_t n = readlink(absl::StrCat("/proc/", pid, "/exe").c_str(), exe, sizeof(exe) - 1);
    if (n <= 0 ||
        !absl::EndsWith(absl::string_view(exe, static_cast<size_t>(n)), "/tony-executor")) {
      continue;
    }
    std::vector<std::string> vars = EnvironOf(pid);
    if (Has(vars, "TONY_JOB_NAME=" + job) && Has(vars, absl::StrCat("TONY_TASK_INDEX=", index))) {
      return pid;
    }
  }
  return -1;
}

TEST(YarnJobTest, ContainerDyingWithoutItsExecutorReportingFailsTheJob) {
  // The executor is SIGKILLed: no exit report; the AM learns it from YARN's completed container.
  Result r = RunCommand({Submit(), "--yarn", "--detach", "-n", "itest-executor-kill", "-r",
                         "ps:1,worker:1", "-m", "256m", "exec sleep 600"});
  std::string app = AppIdOf(r);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  ASSERT_GT(WaitForTaskProcess(app, "worker", 0), 0) << "worker:0 of " << app << " never started";
  int executor = ExecutorProcess(app, "worker", 0);
  ASSERT_GT(executor, 0) << "no executor of worker:0 in " << app;
  kill(executor, SIGKILL);
  const absl::Time killed = absl::Now();
  EXPECT_EQ(WaitForEnd(app), "FINISHED/FAILED");
  std::printf("fault matrix: executor SIGKILL -> FAILED after %s\n",
              absl::FormatDuration(absl::Now() - killed).c_str());
  Result status = RunCommand({Ytf(), "status", app});
  EXPECT_THAT(status.out, HasSubstr("worker:0"));
  EXPECT_THAT(status.out, HasSubstr("its container ended without an exit report"));
  ExpectNothingLeft(app);
}

// Every file under the NodeManagers' log directories for `app_id` ("path" -> contents).
std::map<std::string, std::string> ContainerLogFiles(const std::string& app_id) {
  std::map<std::string, std::string> files;
  std::string state = harness::HadoopCluster::Get().conf_dir() + "/..";
  Result find = RunCommand(
      {"/bin/bash", "-c", absl::StrCat("find ", state, "/data/*/logs/", app_id, " -type f")});
  for (absl::string_view path : absl::StrSplit(find.out, '\n', absl::SkipEmpty())) {
    files[std::string(path)] = ReadFileToString(std::string(path)).value_or("");
  }
  return files;
}

TEST(YarnJobTest, TheJobSecretIsInNoLogNoLaunchScriptAndNoEnvironment) {
  Result r = RunCommand({Submit(), "--yarn", "--detach", "-n", "itest-secret", "-r", "worker:2",
                         "-m", "256m", "env; sleep 6"});
  std::string app = AppIdOf(r);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  ASSERT_GT(WaitForTaskProcess(app, "worker", 1), 0) << "worker:1 of " << app << " never started";

  // The oracle: the secret as the AM's container credentials hold it.
  std::string secret, am_address;
  for (int pid : ProcessesOf(app)) {
    for (const std::string& v : EnvironOf(pid)) {
      if (absl::StartsWith(v, "TONY_AM_ADDRESS=")) am_address = v.substr(16);
      if (secret.empty() && absl::StartsWith(v, "HADOOP_TOKEN_FILE_LOCATION=")) {
        auto creds = ipc::Credentials::ReadFile(v.substr(27));
        if (!creds.ok()) continue;
        secret = creds->FindSecret(broker::kSecretCredentialAlias).value_or("");
      }
    }
  }
  ASSERT_EQ(secret.size(), 64u) << "no job secret found in the containers' token files";
  ASSERT_FALSE(am_address.empty());
  for (int pid : ProcessesOf(app)) {
    std::string environ = ReadFileToString(absl::StrCat("/proc/", pid, "/environ")).value_or("");
    EXPECT_FALSE(absl::StrContains(environ, secret))
        << "the secret is in the environment of " << pid;
  }
  EXPECT_EQ(WaitForEnd(app), "FINISHED/SUCCEEDED");

  // Everything YARN serves as the job's logs: launch scripts, stdout (with `env`), stderr...
  std::map<std::string, std::string> logs = ContainerLogFiles(app);
  int launch_scripts = 0;
  for (const auto& [path, contents] : logs) {
    if (absl::EndsWith(path, "launch_container.sh")) ++launch_scripts;
    EXPECT_FALSE(absl::StrContains(contents, secret)) << "the secret is in " << path;
  }
  EXPECT_EQ(launch_scripts, 3) << "expected the AM's and two workers' launch scripts";
  Result shown = RunCommand({Ytf(), "logs", app, "--file", "launch_container.sh"});
  EXPECT_THAT(shown.out, HasSubstr("TONY_AM_ADDRESS"));
  EXPECT_FALSE(absl::StrContains(shown.out, secret));
  ExpectNothingLeft(app);
}

TEST(YarnJobTest, NothingTheLogsShowLetsAnyoneReportToTheBroker) {
  // A job that lives long enough to be attacked, and whose outcome the attacker tries to change.
  Result r = RunCommand({Submit(), "--yarn", "--detach", "-n", "itest-secret-attack", "-r",
                         "worker:1", "-m", "256m", "env; sleep 8"});
  std::string app = AppIdOf(r);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  ASSERT_GT(WaitForTaskProcess(app, "worker", 0), 0) << "worker:0 of " << app << " never started";
  std::string everything;
  for (const auto& [path, contents] : ContainerLogFiles(app)) everything += contents;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(everything, m, std::regex("TONY_AM_ADDRESS=\"?([^\"\\s]+)")))
      << "the logs do not show the broker's address";
  const std::string address = m[1].str();
  // Every token that could be a secret, and the empty one.
  std::set<std::string> candidates = {""};
  static const std::regex token("[0-9A-Za-z+/=_-]{16,}");
  for (auto it = std::sregex_iterator(everything.begin(), everything.end(), token);
       it != std::sregex_iterator(); ++it) {
    candidates.insert(it->str());
  }
  for (const std::string& candidate : candidates) {
    broker::BrokerClient client(address, candidate);
    absl::Status s = client.ReportExit("worker", 0, 1, "forged");
    ASSERT_FALSE(s.ok()) << "a ReportExit with '" << candidate << "' from the logs was accepted";
  }
  EXPECT_EQ(WaitForEnd(app), "FINISHED/SUCCEEDED") << candidates.size() << " candidates tried";
  ExpectNothingLeft(app);
}

TEST(YarnJobTest, StagingAndHistoryArePrivateToTheUser) {
  Result r = RunCommand(
      {Submit(), "--yarn", "-n", "itest-private", "-r", "worker:1", "-m", "256m", "true"});
  std::string app = AppIdOf(r);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const std::string home = absl::StrCat("/user/", harness::HadoopCluster::Get().user(), "/.tony");
  http::Json st = HdfsStatus(home);
  ASSERT_FALSE(st.is_null());
  EXPECT_EQ(st["permission"].get<std::string>(), "700");
  http::Json history = HdfsStatus(absl::StrCat(home, "/history/", app, ".json"));
  ASSERT_FALSE(history.is_null());
  EXPECT_EQ(history["permission"].get<std::string>(), "600");
  EXPECT_EQ(HdfsStatus(home + "/history")["permission"].get<std::string>(), "700");
  EXPECT_TRUE(HdfsStatus(StagingDir(app)).is_null()) << "staging left after success";
}

TEST(YarnJobTest, KillingTheAppThroughTheRmRemovesItsStaging) {
  yarn::YarnClientOptions o;
  o.rm_addresses = {harness::HadoopCluster::Get().rm_address()};
  auto yarn = yarn::NewYarnClient(o);
  ASSERT_TRUE(yarn.ok()) << yarn.status();
  // Once the AM runs: its SIGTERM handler removes the staging directory at once.
  Result r = RunCommand({Submit(), "--yarn", "--detach", "-n", "itest-rm-kill-staging", "-r",
                         "worker:1", "-m", "256m", "exec sleep 600"});
  std::string running = AppIdOf(r);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  ASSERT_GT(WaitForTaskProcess(running, "worker", 0), 0);
  ASSERT_FALSE(HdfsStatus(StagingDir(running)).is_null());
  ASSERT_TRUE((*yarn)->KillApplication(*yarn::ParseApplicationId(running), "test").ok());
  EXPECT_TRUE(WaitGoneFromHdfs(StagingDir(running), absl::Seconds(20)))
      << "staging of " << running << " left after an RM kill of the running AM";
  ExpectNothingLeft(running);

  // Before the AM ran: nothing of ours was there to clean up; the next submission's sweep does.
  r = RunCommand({Submit(), "--yarn", "--detach", "-n", "itest-rm-kill-early", "-r", "worker:1",
                  "-m", "256m", "exec sleep 600"});
  std::string early = AppIdOf(r);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  ASSERT_TRUE((*yarn)->KillApplication(*yarn::ParseApplicationId(early), "test").ok());
  EXPECT_THAT(WaitForEnd(early), testing::EndsWith("KILLED"));
  Result next = RunCommand(
      {Submit(), "--yarn", "-n", "itest-sweeper", "-r", "worker:1", "-m", "256m", "true"});
  EXPECT_EQ(next.exit_code, 0) << next.out << next.err;
  EXPECT_TRUE(WaitGoneFromHdfs(StagingDir(early), absl::Seconds(20)))
      << "staging of " << early << " left after the next submission's sweep";
  ExpectNothingLeft(early);
}

TEST(YarnJobTest, ASubmitterKilledMidUploadLeavesNoStagingBehind) {
  // A file large enough that the upload is still going when the client is killed.
  std::string big = ::testing::TempDir() + "/itest-big-upload.bin";
  {
    std::ofstream out(big, std::ios::binary);
    std::string chunk(1 << 20, 'x');
    for (int i = 0; i < 300; ++i) out << chunk;
  }
  SubprocessOptions options;
  options.argv = {Submit(), "--yarn",   "--detach", "-n",   "itest-killed-mid-upload",
                  "-r",     "worker:1", "-m",       "256m", "--file",
                  big,      "true"};
  options.env = Environment();
  options.stdout_path = big + ".out";
  options.stderr_path = big + ".err";
  auto p = Subprocess::Spawn(options);
  ASSERT_TRUE(p.ok()) << p.status();
  // Its staging directory appears as soon as the upload starts.
  const std::string root =
      absl::StrCat("/user/", harness::HadoopCluster::Get().user(), "/.tony/staging");
  std::string orphan;
  http::Client http;
  for (absl::Time deadline = absl::Now() + absl::Seconds(60);
       orphan.empty() && absl::Now() < deadline;) {
    auto r =
        http.Get(absl::StrCat(harness::HadoopCluster::Get().namenode_web_url(), "/webhdfs/v1", root,
                              "/?op=LISTSTATUS&user.name=", harness::HadoopCluster::Get().user()));
    if (r.ok() && r->ok()) {
      auto j = http::ParseJson(r->body, "list");
      if (j.ok()) {
        for (const auto& e : (*j)["FileStatuses"]["FileStatus"]) {
          std::string name = e["pathSuffix"].get<std::string>();
          // This test's own job: its spec is not uploaded yet (the big file goes first).
          if (!HdfsStatus(absl::StrCat(root, "/", name, "/itest-big-upload.bin")).is_null()) {
            orphan = name;
          }
        }
      }
    }
    if (orphan.empty()) absl::SleepFor(absl::Milliseconds(20));
  }
  kill((*p)->pid(), SIGKILL);
  (void)(*p)->Wait(absl::Seconds(10));
  unlink(big.c_str());
  ASSERT_FALSE(orphan.empty()) << "the upload never showed in HDFS";
  ASSERT_FALSE(HdfsStatus(absl::StrCat(root, "/", orphan)).is_null());
  // The next submission from this machine sees that the client that staged it is gone.
  Result next = RunCommand(
      {Submit(), "--yarn", "-n", "itest-sweeper-2", "-r", "worker:1", "-m", "256m", "true"});
  EXPECT_EQ(next.exit_code, 0) << next.out << next.err;
  EXPECT_TRUE(WaitGoneFromHdfs(absl::StrCat(root, "/", orphan), absl::Seconds(20)))
      << "staging of " << orphan << " left after the client was killed mid-upload";
}

// Peak resident memory of a process, kB (VmHWM), or -1.
int64_t PeakRssKb(int pid) {
  std::string status = ReadFileToString(absl::StrCat("/proc/", pid, "/status")).value_or("");
  size_t at = status.find("VmHWM:");
  return at == std::string::npos ? -1 : std::atoll(status.c_str() + at + 6);
}

TEST(YarnJobTest, AFloodOfIdleConnectionsNeitherBloatsTheAmNorStopsTheJob) {
  Result r = RunCommand({Submit(), "--yarn", "--detach", "-n", "itest-flood", "-r", "worker:2",
                         "-m", "256m", "sleep 12"});
  std::string app = AppIdOf(r);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  ASSERT_GT(WaitForTaskProcess(app, "worker", 1), 0);
  int am_pid = -1;
  std::string broker;
  for (int pid : ProcessesOf(app)) {
    for (const std::string& v : EnvironOf(pid)) {
      if (absl::StartsWith(v, "TONY_AM_ADDRESS=")) broker = v.substr(16);
    }
    std::string cmd = ReadFileToString(absl::StrCat("/proc/", pid, "/cmdline")).value_or("");
    if (absl::StrContains(cmd, "tony-am")) am_pid = pid;
  }
  ASSERT_GT(am_pid, 0);
  size_t colon = broker.rfind(':');
  ASSERT_NE(colon, std::string::npos) << broker;
  // The AM's node: its own host (a network namespace of the test cluster), not this loopback.
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  ASSERT_EQ(getaddrinfo(broker.substr(0, colon).c_str(), broker.substr(colon + 1).c_str(), &hints,
                        &found),
            0)
      << broker;
  const sockaddr_in target = *reinterpret_cast<const sockaddr_in*>(found->ai_addr);
  freeaddrinfo(found);
  // Two floods of 5,000 idle connections each (the report that found this used 2 x 10,000; the
  // test process's own descriptors bound it here), held until the job is over.
  std::vector<int> flood;
  for (int i = 0; i < 10000; ++i) {
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr = target;
    if (fd < 0) break;
    if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
      close(fd);
      continue;
    }
    flood.push_back(fd);
  }
  EXPECT_GT(flood.size(), 9000u);
  const int64_t peak_kb = PeakRssKb(am_pid);
  EXPECT_EQ(WaitForEnd(app), "FINISHED/SUCCEEDED") << "under a flood of " << flood.size();
  for (int fd : flood) close(fd);
  // The AM's container has 256 MB; before the broker's limits this flood took it to ~350 MB.
  EXPECT_GT(peak_kb, 0);
  EXPECT_LT(peak_kb, 128 * 1024) << "AM peak RSS under the flood";
  std::printf("AM peak RSS under a flood of %zu idle connections: %.1f MB\n", flood.size(),
              static_cast<double>(peak_kb) / 1024);
  ExpectNothingLeft(app);
}

// The NodeManager whose container `pid` is: its JVM is an ancestor (the DefaultContainerExecutor
// starts containers as its children). Its pid, or -1.
int NodeManagerOf(int pid) {
  for (int p = pid; p > 1;) {
    std::string cmd = ReadFileToString(absl::StrCat("/proc/", p, "/cmdline")).value_or("");
    if (absl::StrContains(cmd, "-Dtony.hadoop.daemon=nodemanager")) return p;
    std::string stat = ReadFileToString(absl::StrCat("/proc/", p, "/stat")).value_or("");
    size_t paren = stat.rfind(')');
    if (paren == std::string::npos) return -1;
    std::vector<std::string> f = absl::StrSplit(stat.substr(paren + 2), ' ');
    p = f.size() > 1 ? std::atoi(f[1].c_str()) : -1;
  }
  return -1;
}

TEST(YarnJobTest, LosingTheAmsNodeManagerLeavesNoProcessOfTheJob) {
  // The AM's NodeManager dies (SIGKILL): YARN loses the AM's node after its liveness expiry
  // (30 s on the test cluster) and ends the attempt; the AM stops; the executors on the dead
  // node, which no NodeManager will ever kill, notice their AM is gone and stop their tasks.
  std::string yaml = ::testing::TempDir() + "/itest-nm-loss.yaml";
  ASSERT_TRUE(WriteFileAtomically(yaml,
                                  "timeouts: {am_unreachable: 10s, stop_grace: 2s}\n"
                                  "jobs:\n  worker: {instances: 2, memory: 256m}\n")
                  .ok());
  Result r = RunCommand({Submit(), "--yarn", "--detach", "-n", "itest-nm-loss", "--spec", yaml,
                         "--am_memory", "256m", "exec sleep 600"});
  std::string app = AppIdOf(r);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  ASSERT_GT(WaitForTaskProcess(app, "worker", 0), 0);
  ASSERT_GT(WaitForTaskProcess(app, "worker", 1), 0);
  int am_pid = -1;
  for (int pid : ProcessesOf(app)) {
    std::string cmd = ReadFileToString(absl::StrCat("/proc/", pid, "/cmdline")).value_or("");
    if (absl::StrContains(cmd, "tony-am")) am_pid = pid;
  }
  ASSERT_GT(am_pid, 0);
  const int nm = NodeManagerOf(am_pid);
  ASSERT_GT(nm, 0) << "no NodeManager above the AM's process";
  ASSERT_EQ(kill(nm, SIGKILL), 0);
  const absl::Time killed = absl::Now();

  // Bound: NM expiry 30 s + the AM's shutdown + am_unreachable 10 s + a heartbeat + grace 2 s.
  std::vector<int> left = ProcessesOf(app);
  while (!left.empty() && absl::Now() - killed < absl::Minutes(3)) {
    absl::SleepFor(absl::Seconds(1));
    left = ProcessesOf(app);
  }
  const absl::Duration took = absl::Now() - killed;
  // Bring the NodeManager back for the tests after this one.
  Result restart =
      RunCommand({"/bin/bash",
                  harness::HadoopCluster::Get().source_dir() + "/scripts/hadoop-cluster", "start"},
                 absl::Minutes(4));
  EXPECT_EQ(restart.exit_code, 0) << restart.err;
  EXPECT_TRUE(left.empty()) << left.size() << " processes of " << app << " still run "
                            << absl::FormatDuration(took) << " after their NodeManager died";
  std::printf("NodeManager of the AM killed: every process of the job gone after %s\n",
              absl::FormatDuration(took).c_str());
  EXPECT_THAT(WaitForEnd(app), testing::EndsWith("FAILED"));
}

TEST(YarnJobTest, YtfKillEndsTheJobKilled) {
  Result r = RunCommand({Submit(), "--yarn", "--detach", "-n", "itest-ytf-kill", "-r",
                         "ps:1,worker:2", "-m", "256m", "exec sleep 600"});
  std::string app = AppIdOf(r);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  // Kill once the tasks run, so the AM has something to stop.
  WaitForTaskProcess(app, "worker", 1);
  Result kill = RunCommand({Ytf(), "kill", app});
  EXPECT_EQ(kill.exit_code, 0) << kill.out << kill.err;
  EXPECT_THAT(kill.out, HasSubstr("KILLED"));
  EXPECT_THAT(WaitForEnd(app), testing::EndsWith("KILLED"));
  Result list = RunCommand({Ytf(), "list", "--all"});
  EXPECT_THAT(list.out, HasSubstr(app));
  ExpectNothingLeft(app);
}

TEST(YarnJobTest, ClientModeDrivesTheClusterFromHereAndItsExitDecides) {
  const std::string src = harness::HadoopCluster::Get().source_dir();
  Result r = RunCommand(
      {Submit(), "--yarn", "--client", "-n", "itest-client", "-r", "ps:1,worker:2", "-m", "1g",
       "-s", src + "/examples/client_mode.py", Python() + " ${DTF_TASK_SCRIPT} --steps 100"},
      absl::Minutes(10));
  std::string app = AppIdOf(r);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_THAT(r.err, HasSubstr("client task started"));
  EXPECT_THAT(r.out, HasSubstr("client done"));  // the client ran here, on our stdout
  EXPECT_THAT(r.err, HasSubstr("client task exited with code 0"));
  EXPECT_EQ(WaitForEnd(app), "FINISHED/SUCCEEDED");
  // The servers never exit by themselves: the AM stopped them once the client was done.
  Result logs = RunCommand({Ytf(), "logs", app, "--task", "worker:1"});
  EXPECT_THAT(logs.out, HasSubstr("worker 1 serving"));
  ExpectNothingLeft(app);
}

// A venv of tensorflow-cpu and tensorboard (scripts/python-env's versions) packed by venv-pack,
// once per set of requirements (cached between runs under $XDG_CACHE_HOME/libtony).
std::string PythonEnvArchive() {
  static const std::string path = [] {
    const std::string src = harness::HadoopCluster::Get().source_dir();
    Result r = RunCommand({"/bin/bash", src + "/scripts/python-env-archive"}, absl::Minutes(30));
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return std::string(absl::StripAsciiWhitespace(r.out));
  }();
  return path;
}

// name -> modification time (ms) of the files in the user's HDFS artifact cache.
std::map<std::string, int64_t> CachedArtifacts() {
  const auto& cluster = harness::HadoopCluster::Get();
  http::Client http;
  auto r = http.Get(absl::StrCat(cluster.namenode_web_url(), "/webhdfs/v1/user/", cluster.user(),
                                 "/.tony-cache?op=LISTSTATUS&user.name=", cluster.user()));
  std::map<std::string, int64_t> out;
  if (!r.ok() || !r->ok()) return out;
  auto j = http::ParseJson(r->body, "LISTSTATUS");
  if (!j.ok()) return out;
  for (const auto& f : (*j)["FileStatuses"]["FileStatus"]) {
    out[f["pathSuffix"].get<std::string>()] = f["modificationTime"].get<int64_t>();
  }
  return out;
}

// The unpacked copies of files named `prefix`... in each NodeManager's public file cache
// (YARN's PUBLIC visibility), by node.
std::map<int, int> PublicCopies(const std::string& prefix) {
  const std::string state = harness::HadoopCluster::Get().conf_dir() + "/..";
  std::map<int, int> out;
  for (int i = 1; i <= 3; ++i) {
    const std::string cache = absl::StrCat(state, "/data/nm", i, "/local/filecache");
    DIR* d = opendir(cache.c_str());
    if (d == nullptr) continue;
    while (dirent* e = readdir(d)) {
      DIR* entry = opendir(absl::StrCat(cache, "/", e->d_name).c_str());
      if (entry == nullptr) continue;
      while (dirent* f = readdir(entry)) {
        if (absl::StartsWith(f->d_name, prefix)) ++out[i];
      }
      closedir(entry);
    }
    closedir(d);
  }
  return out;
}

TEST(YarnJobTest, APythonEnvRunsTheTfExampleWithTensorBoardAndIsUploadedAndUnpackedOnce) {
  const std::string archive = PythonEnvArchive();
  ASSERT_FALSE(archive.empty());
  std::string tmpl = ::testing::TempDir() + "/pyenv-out.XXXXXX";
  const std::string out = mkdtemp(tmpl.data());
  const std::string src = harness::HadoopCluster::Get().source_dir();
  // The nodes' PATH has no TensorFlow: `python` and `tensorboard` can only come from the env.
  const std::string show = "readlink -f tony tony-python-env; command -v python tensorboard; ";
  // Copies from earlier runs (or other cache directories) stay: only new ones count.
  const std::map<int, int> copies_before = PublicCopies("python-env-");
  Result r = RunCommand(
      {Submit(), "--yarn", "-n", "itest-python-env", "--python_env", archive, "-t", "-o", out, "-e",
       "PATH=/usr/bin:/bin", "-r", "ps:1,worker:1", "-m", "2g", "-s",
       src + "/examples/classic_ps_worker.py", show + "python ${DTF_TASK_SCRIPT} --steps 50"},
      absl::Minutes(15));
  std::string app = AppIdOf(r);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(WaitForEnd(app), "FINISHED/SUCCEEDED");
  Result logs = RunCommand({Ytf(), "logs", app, "--task", "worker:0"});
  EXPECT_THAT(logs.out, HasSubstr("worker 0 done"));
  EXPECT_THAT(logs.out, HasSubstr("/tony-python-env/bin/python"));  // `command -v python`
  // PUBLIC: unpacked in the NodeManager's own file cache, not the application's
  // (usercache/<user>/appcache/<app>/filecache).
  static const std::regex public_copy(
      "(^|\n)/\\S+/local/filecache/[0-9]+/python-env-[0-9a-f]+\\.tar\\.gz\n");
  EXPECT_TRUE(std::regex_search(logs.out, public_copy)) << logs.out;
  ExpectNothingLeft(app);

  std::map<std::string, int64_t> cached = CachedArtifacts();
  std::string env_name;
  for (const auto& [name, mtime] : cached) {
    if (absl::StartsWith(name, "python-env-")) env_name = name;
  }
  ASSERT_FALSE(env_name.empty()) << "no python-env-* in the HDFS cache";

  // The same archive again, with TensorBoard behind the tracking URL: nothing is uploaded, and
  // every node that runs a task reuses its unpacked copy.
  Result again = RunCommand({Submit(), "--yarn", "--detach", "-n", "itest-python-env-again",
                             "--python_env", archive, "-t", "-o", out, "-e", "PATH=/usr/bin:/bin",
                             "-r", "worker:1", "-m", "512m", show + "exec sleep 600"});
  std::string app2 = AppIdOf(again);
  ASSERT_EQ(again.exit_code, 0) << again.out << again.err;
  EXPECT_EQ(CachedArtifacts(), cached);  // same files, same modification times
  const std::string proxy = harness::HadoopCluster::Get().rm_web_url() + "/proxy/" + app2 + "/";
  http::Client http;
  bool saw_tensorboard = false;
  for (absl::Time deadline = absl::Now() + absl::Minutes(3);
       !saw_tensorboard && absl::Now() < deadline;) {
    auto page = http.Get(proxy);
    saw_tensorboard =
        page.ok() && page->ok() && absl::StrContains(page->body, "<title>TensorBoard");
    if (!saw_tensorboard) absl::SleepFor(absl::Milliseconds(500));
  }
  EXPECT_TRUE(saw_tensorboard);
  // The nodes' /usr/bin:/bin has none: the TensorBoard behind the URL is the env's.
  Result worker = RunCommand({Ytf(), "logs", app2, "--task", "worker:0"});
  EXPECT_THAT(worker.out, HasSubstr("/tony-python-env/bin/tensorboard"));
  Result kill = RunCommand({Ytf(), "kill", app2});
  EXPECT_EQ(kill.exit_code, 0) << kill.out << kill.err;
  ExpectNothingLeft(app2);
  // Each node that ran a task of either job unpacked the env at most once, in its public cache.
  std::map<int, int> copies_before_by_node = copies_before;
  for (const auto& [node, copies] : PublicCopies("python-env-")) {
    EXPECT_LE(copies - copies_before_by_node[node], 1)
        << "node " << node << " unpacked the env " << copies - copies_before_by_node[node]
        << " times";
  }
  EXPECT_FALSE(PublicCopies(env_name).empty());
}

TEST(YarnJobTest, ABadPythonEnvIsRefusedBeforeAnythingIsSubmitted) {
  std::string tmpl = ::testing::TempDir() + "/pyenv-bad.XXXXXX";
  const std::string dir = mkdtemp(tmpl.data());
  ASSERT_TRUE(WriteFileAtomically(dir + "/env.tar.gz", "not an archive").ok());
  const int before = static_cast<int>(Rm("/ws/v1/cluster/apps")["apps"]["app"].size());
  for (const std::string& env : {dir + "/missing.tar.gz", dir, dir + "/env.tar.gz"}) {
    Result r = RunCommand({Submit(), "--yarn", "--python_env", env, "-r", "worker:1", "true"});
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_THAT(r.err, HasSubstr("--python_env"));
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
  EXPECT_EQ(static_cast<int>(Rm("/ws/v1/cluster/apps")["apps"]["app"].size()), before);
}

TEST(YarnJobTest, ATensorBoardCommandThatFailsIsRestartedAndTrainingStillSucceeds) {
  std::string tmpl = ::testing::TempDir() + "/tb-fails.XXXXXX";
  const std::string out = mkdtemp(tmpl.data());
  Result r = RunCommand({Submit(), "--yarn", "-n", "itest-tensorboard-fails", "-t", "-o", out,
                         "--tensorboard_command", "echo tensorboard broke >&2; exit 3; :", "-r",
                         "worker:1", "-m", "256m", "sleep 15"});
  std::string app = AppIdOf(r);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(WaitForEnd(app), "FINISHED/SUCCEEDED");
  EXPECT_THAT(r.err, HasSubstr("(restarted 1x)"));  // the progress line
  Result status = RunCommand({Ytf(), "status", app});
  EXPECT_THAT(status.out,
              HasSubstr("warning: tensorboard:0 died with exit code 3 after 3 restarts"));
  EXPECT_THAT(status.out, HasSubstr("tensorboard broke"));
  EXPECT_THAT(status.out, HasSubstr("restarted 3 times"));
  ExpectNothingLeft(app);
}

TEST(YarnJobTest, ATensorBoardThatCannotStartNeverFailsTraining) {
  // The nodes' PATH has no TensorBoard (the report that found this: the job ended FAILED).
  std::string tmpl = ::testing::TempDir() + "/tb-missing.XXXXXX";
  const std::string out = mkdtemp(tmpl.data());
  Result r = RunCommand({Submit(), "--yarn", "-n", "itest-tensorboard-missing", "-t", "-o", out,
                         "-e", "PATH=/usr/bin:/bin", "-r", "worker:1", "-m", "256m", "sleep 8"});
  std::string app = AppIdOf(r);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(WaitForEnd(app), "FINISHED/SUCCEEDED");
  Result status = RunCommand({Ytf(), "status", app});
  // Restarted in place, then given up on (or stopped with the job): a warning either way.
  EXPECT_THAT(status.out, HasSubstr("warning: tensorboard:0"));
  EXPECT_THAT(status.out, HasSubstr("code 127"));
  ExpectNothingLeft(app);
}

TEST(YarnJobTest, TrackingUrlShowsTheJobThenTensorBoard) {
  std::string tmpl = ::testing::TempDir() + "/tb-out.XXXXXX";
  const std::string out = mkdtemp(tmpl.data());
  const std::string venv_bin = Python().substr(0, Python().rfind('/'));
  Result r = RunCommand({Submit(), "--yarn", "--detach", "-n", "itest-tensorboard", "-t", "-o", out,
                         "-e", "PATH=" + venv_bin + ":/usr/bin:/bin", "-r", "worker:1", "-m",
                         "256m", "exec sleep 600"});
  std::string app = AppIdOf(r);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  // YARN's web proxy forwards the tracking URL: first the AM's status page, then TensorBoard.
  const std::string proxy = harness::HadoopCluster::Get().rm_web_url() + "/proxy/" + app + "/";
  http::Client http;
  bool saw_status_page = false, saw_tensorboard = false;
  for (absl::Time deadline = absl::Now() + absl::Minutes(3);
       !saw_tensorboard && absl::Now() < deadline;) {
    auto page = http.Get(proxy);
    if (page.ok() && page->ok()) {
      saw_status_page = saw_status_page || absl::StrContains(page->body, "libtony");
      saw_tensorboard = absl::StrContains(page->body, "<title>TensorBoard");
    }
    if (!saw_tensorboard) absl::SleepFor(absl::Milliseconds(500));
  }
  EXPECT_TRUE(saw_status_page);
  EXPECT_TRUE(saw_tensorboard);
  Result status = RunCommand({Ytf(), "status", app});
  EXPECT_THAT(status.out, HasSubstr("TensorBoard: http://"));
  Result kill = RunCommand({Ytf(), "kill", app});
  EXPECT_EQ(kill.exit_code, 0) << kill.out << kill.err;
  ExpectNothingLeft(app);
}

TEST(YarnJobTest, YarnKillingTheAppLeavesNoTaskProcessEvenOneIgnoringSigterm) {
  // The ResourceManager kills the application itself (as `yarn application -kill` or a lost AM
  // would): the NodeManagers kill the containers, SIGTERM then SIGKILL 250 ms later, with no
  // time for the executors to stop their tasks. A task ignoring SIGTERM must still not survive.
  Result r = RunCommand({Submit(), "--yarn", "--detach", "-n", "itest-rm-kill", "-r", "worker:2",
                         "-m", "256m", "trap '' TERM; sleep 600; echo never reached"});
  std::string app = AppIdOf(r);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  ASSERT_GT(WaitForTaskProcess(app, "worker", 1), 0) << "worker:1 of " << app << " never started";
  yarn::YarnClientOptions o;
  o.rm_addresses = {harness::HadoopCluster::Get().rm_address()};
  auto yarn = yarn::NewYarnClient(o);
  ASSERT_TRUE(yarn.ok()) << yarn.status();
  auto id = yarn::ParseApplicationId(app);
  ASSERT_TRUE(id.ok()) << id.status();
  ASSERT_TRUE((*yarn)->KillApplication(*id, "killed by the test through the RM").ok());
  EXPECT_THAT(WaitForEnd(app), testing::EndsWith("KILLED"));
  ExpectNothingLeft(app);
}

TEST(YarnJobTest, MaxAttemptsRestartsTheWholeJobAfterAFailure) {
  // worker:1 fails in the first attempt only (its container id names the attempt); YARN starts a
  // second AM, which runs every task again, and the job succeeds.
  Result r = RunCommand(
      {Submit(), "--yarn", "-n", "itest-restart", "--max_attempts", "2", "-r", "ps:1,worker:2",
       "-m", "256m",
       "if [ $DTF_TASK_JOB_NAME = ps ]; then exec sleep 600; fi; "
       "case $CONTAINER_ID in *_01_0*) if [ $DTF_TASK_INDEX = 1 ]; then "
       "echo 'attempt one breaks' >&2; exit 3; fi; sleep 30;; esac; echo \"ran in $CONTAINER_ID\""},
      absl::Minutes(5));
  std::string app = AppIdOf(r);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(WaitForEnd(app), "FINISHED/SUCCEEDED");
  http::Json attempts = Rm("/ws/v1/cluster/apps/" + app + "/appattempts");
  ASSERT_TRUE(attempts.contains("appAttempts")) << app;
  EXPECT_EQ(attempts["appAttempts"]["appAttempt"].size(), 2u);
  EXPECT_THAT(r.err, HasSubstr("attempt 2 of 2"));
  Result logs = RunCommand({Ytf(), "logs", app, "--task", "worker:1"});
  EXPECT_THAT(logs.out, HasSubstr("_02_"));  // the second attempt's container
  // The first attempt's containers stay listed, so its failure can still be read.
  Result first = RunCommand({Ytf(), "logs", app, "--task", "worker:1@1", "--file", "stderr"});
  EXPECT_THAT(first.out, HasSubstr("attempt one breaks"));
  ExpectNothingLeft(app);
}

// The chief's stdout so far ("" before its container is known).
std::string ChiefOutput(const std::string& app) {
  return RunCommand({Ytf(), "logs", app, "--task", "chief:0", "--file", "stdout"}).out;
}

TEST(YarnJobTest, PsStrategyWorkerKilledMidTrainingIsRelaunchedAloneAndTheJobSucceeds) {
  // Restart policy exit-code, scope task on the workers (examples/tf2_ps_restart.yaml): a SIGKILL
  // (137) is retried; worker:1 comes back at its old address while the chief coordinates on.
  std::string tmpl = ::testing::TempDir() + "/tf-restart.XXXXXX";
  const std::string out = mkdtemp(tmpl.data());
  const std::string src = harness::HadoopCluster::Get().source_dir();
  Result r =
      RunCommand({Submit(), "--yarn", "--detach", "--spec", src + "/examples/tf2_ps_restart.yaml",
                  "-o", out, Python() + " ${DTF_TASK_SCRIPT} --steps 3000"});
  std::string app = AppIdOf(r);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  // Mid-training: the chief has run steps.
  for (absl::Time deadline = absl::Now() + absl::Minutes(3);
       !absl::StrContains(ChiefOutput(app), "chief: step 25") && absl::Now() < deadline;) {
    absl::SleepFor(absl::Seconds(1));
  }
  ASSERT_THAT(ChiefOutput(app), HasSubstr("chief: step 25"));
  const int chief = TaskProcess(app, "chief", 0);
  const int worker = TaskProcess(app, "worker", 1);
  ASSERT_GT(chief, 0);
  ASSERT_GT(worker, 0);
  ASSERT_EQ(kill(worker, SIGKILL), 0);
  const absl::Time killed = absl::Now();
  // Relaunched: a new worker:1 process, while the chief's is the same one.
  int back = -1;
  for (absl::Time deadline = killed + absl::Minutes(2); absl::Now() < deadline;) {
    back = TaskProcess(app, "worker", 1);
    if (back > 0 && back != worker) break;
    absl::SleepFor(absl::Milliseconds(200));
  }
  const absl::Duration relaunched = absl::Now() - killed;
  EXPECT_GT(back, 0);
  EXPECT_NE(back, worker);
  Result status = RunCommand({Ytf(), "status", app});
  EXPECT_THAT(status.out, HasSubstr("worker:1: exit code 137: signal 9 (SIGKILL); task restart 1"))
      << status.out;
  const std::string end = WaitForEnd(app);
  const absl::Duration ended = absl::Now() - killed;
  EXPECT_EQ(end, "FINISHED/SUCCEEDED");
  EXPECT_TRUE(ReadFileToString(out + "/checkpoints/checkpoint").ok());
  EXPECT_THAT(ChiefOutput(app), HasSubstr("chief done"));
  status = RunCommand({Ytf(), "status", app});
  EXPECT_THAT(status.out, HasSubstr("task restart 1 of 3 after 2s; back at")) << status.out;
  EXPECT_THAT(status.out, Not(HasSubstr("chief:0: exit")));  // the chief never restarted
  EXPECT_THAT(status.out, Not(HasSubstr("task restart 2")));
  std::printf("worker:1 SIGKILLed: running again after %s; job SUCCEEDED %s after the kill\n",
              absl::FormatDuration(relaunched).c_str(), absl::FormatDuration(ended).c_str());
  ExpectNothingLeft(app);
}

// Preemption by the real ResourceManager (the test cluster runs the CapacityScheduler's
// preemption monitor): a job in queue research (30 % share) holds most of the cluster; a job in
// queue default (70 %) then asks for more than is free, and the RM takes containers back from the
// first (exit status -102). Its workers' restart policy relaunches them once there is room, and
// both jobs SUCCEED; the preempted job's status names the preemption.
TEST(YarnJobTest, PreemptedWorkersAreRelaunchedByTheirRestartPolicyAndBothJobsSucceed) {
  Result first = RunCommand(
      {Submit(), "--yarn", "--detach", "-n", "itest-preempted", "--queue", "research", "-r",
       "worker:4", "-m", "3g", "--restart",
       "worker:policy=on-failure,max_restarts=3,scope=task,on_address_change=accept", "sleep 20"});
  const std::string app = AppIdOf(first);
  ASSERT_EQ(first.exit_code, 0) << first.out << first.err;
  for (absl::Time deadline = absl::Now() + absl::Minutes(2); absl::Now() < deadline;) {
    if (absl::StrContains(RunCommand({Ytf(), "status", app}).out, "4 running")) break;
    absl::SleepFor(absl::Milliseconds(300));
  }
  ASSERT_THAT(RunCommand({Ytf(), "status", app}).out, HasSubstr("4 running"));
  const absl::Time asked = absl::Now();
  Result second = RunCommand({Submit(), "--yarn", "-n", "itest-preempting", "--queue", "default",
                              "-r", "worker:2", "-m", "3g", "sleep 2"});
  const absl::Duration second_took = absl::Now() - asked;
  EXPECT_EQ(second.exit_code, 0) << second.out << second.err;
  EXPECT_THAT(second.err, HasSubstr("SUCCEEDED"));
  EXPECT_EQ(WaitForEnd(app), "FINISHED/SUCCEEDED");
  const absl::Duration first_took = absl::Now() - asked;
  Result status = RunCommand({Ytf(), "status", app});
  EXPECT_THAT(status.out, HasSubstr("exit status -102: preempted by the scheduler")) << status.out;
  EXPECT_THAT(status.out, HasSubstr("task restart 1")) << status.out;
  std::printf("preempting job SUCCEEDED %s after it was submitted; the preempted one %s after\n",
              absl::FormatDuration(second_took).c_str(), absl::FormatDuration(first_took).c_str());
  ExpectNothingLeft(app);
}

TEST(YarnJobTest, TwoJobsOfSixtyPercentEachSubmittedAtOnceBothSucceedOneAfterTheOther) {
  // Each job needs 3 x 3 GB; the two default-partition nodes hold two such containers each
  // (beside the AMs): without all-or-nothing allocation each job holds two and both wait
  // forever. With it, the partial gangs are released and, after randomised backoffs, one job
  // gets its whole gang and runs, then the other.
  std::string yaml = ::testing::TempDir() + "/itest-gang.yaml";
  ASSERT_TRUE(WriteFileAtomically(yaml,
                                  "timeouts: {allocation: 15s, registration: 5m}\n"
                                  "jobs:\n  worker: {instances: 3, memory: 3g}\n")
                  .ok());
  std::vector<std::string> apps;
  for (const char* name : {"itest-gang-a", "itest-gang-b"}) {
    Result r = RunCommand({Submit(), "--yarn", "--detach", "-n", name, "--spec", yaml,
                           "echo \"ran at $(date +%s)\"; sleep 15"});
    ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
    apps.push_back(AppIdOf(r));
  }
  // While both wait, at least one says what is pending and the queue's headroom.
  bool saw_pending = false;
  for (absl::Time deadline = absl::Now() + absl::Minutes(1);
       !saw_pending && absl::Now() < deadline;) {
    for (const std::string& app : apps) {
      Result st = RunCommand({Ytf(), "status", app});
      if (absl::StrContains(st.out, "3072 MB, 1 vcore>") && absl::StrContains(st.out, "pending") &&
          absl::StrContains(st.out, "queue headroom <")) {
        saw_pending = true;
      }
    }
    absl::SleepFor(absl::Seconds(1));
  }
  EXPECT_TRUE(saw_pending);
  const absl::Time start = absl::Now();
  std::vector<std::string> ends;
  for (const std::string& app : apps) {
    std::string state = AppState(app);
    for (absl::Time deadline = absl::Now() + absl::Minutes(5);
         !absl::StartsWith(state, "FINISHED") && !absl::StartsWith(state, "FAILED") &&
         !absl::StartsWith(state, "KILLED") && absl::Now() < deadline;) {
      absl::SleepFor(absl::Seconds(1));
      state = AppState(app);
    }
    ends.push_back(state);
  }
  EXPECT_THAT(ends, ::testing::ElementsAre("FINISHED/SUCCEEDED", "FINISHED/SUCCEEDED"));
  std::printf("two 60%% jobs submitted at once: both SUCCEEDED within %s of the first status\n",
              absl::FormatDuration(absl::Now() - start).c_str());
  for (const std::string& app : apps) ExpectNothingLeft(app);
}

TEST(YarnJobTest, AWorkerOnAKilledNodeManagerIsRelaunchedElsewhereAndNothingIsLeft) {
  // Node loss from the real RM: the NodeManager of worker:0 dies (SIGKILL); after the test
  // cluster's 30 s liveness expiry the RM reports its containers lost (-100), which the restart
  // policy retries: worker:0 runs again on the other node, at a new address (accepted), and the
  // old executor, orphaned on the dead node, is told it was superseded and stops its task.
  std::string yaml = ::testing::TempDir() + "/itest-node-loss.yaml";
  ASSERT_TRUE(WriteFileAtomically(yaml,
                                  "timeouts: {stop_grace: 2s}\n"
                                  "jobs:\n  worker:\n    instances: 2\n    memory: 3g\n"
                                  "    restart: {policy: exit-code, scope: task, backoff: 1s, "
                                  "on_address_change: accept}\n")
                  .ok());
  // The AM on the labelled node: losing a worker's node must not take the AM with it.
  Result r = RunCommand({Submit(), "--yarn", "--detach", "-n", "itest-node-loss", "--spec", yaml,
                         "--am_node_label", "gpu", "echo \"on $NM_HOST\"; sleep 45"});
  std::string app = AppIdOf(r);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const int worker = WaitForTaskProcess(app, "worker", 0);
  ASSERT_GT(worker, 0);
  const int nm = NodeManagerOf(worker);
  ASSERT_GT(nm, 0);
  ASSERT_EQ(kill(nm, SIGKILL), 0);
  const absl::Time killed = absl::Now();
  // Relaunched: a worker:0 process under another NodeManager.
  int back = -1;
  for (absl::Time deadline = killed + absl::Minutes(3); back < 0 && absl::Now() < deadline;) {
    for (int pid : ProcessesOf(app)) {
      std::vector<std::string> vars = EnvironOf(pid);
      if (pid != worker && Has(vars, "DTF_TASK_JOB_NAME=worker") && Has(vars, "DTF_TASK_INDEX=0") &&
          NodeManagerOf(pid) > 0 && NodeManagerOf(pid) != nm &&
          std::any_of(vars.begin(), vars.end(),
                      [](const std::string& v) { return absl::StartsWith(v, "TF_CONFIG="); })) {
        back = pid;
      }
    }
    absl::SleepFor(absl::Milliseconds(500));
  }
  const absl::Duration relaunched = absl::Now() - killed;
  EXPECT_GT(back, 0) << "worker:0 never ran again";
  // The orphan on the dead node stops once superseded.
  EXPECT_TRUE(EndsBy(worker, absl::Now() + absl::Seconds(30)))
      << "the old worker:0 still runs on the dead node";
  const absl::Duration orphan_gone = absl::Now() - killed;
  const std::string end = WaitForEnd(app);
  const absl::Duration ended = absl::Now() - killed;
  Result status = RunCommand({Ytf(), "status", app});
  Result restart =
      RunCommand({"/bin/bash",
                  harness::HadoopCluster::Get().source_dir() + "/scripts/hadoop-cluster", "start"},
                 absl::Minutes(4));
  EXPECT_EQ(restart.exit_code, 0) << restart.err;
  EXPECT_EQ(end, "FINISHED/SUCCEEDED");
  EXPECT_THAT(status.out, HasSubstr("worker:0: exit status -100: its node was lost")) << status.out;
  EXPECT_THAT(status.out, HasSubstr("back at a new address"));
  std::printf(
      "NodeManager of worker:0 killed: relaunched after %s, orphan gone after %s, job "
      "SUCCEEDED %s after the kill\n",
      absl::FormatDuration(relaunched).c_str(), absl::FormatDuration(orphan_gone).c_str(),
      absl::FormatDuration(ended).c_str());
  ExpectNothingLeft(app);
}

TEST(YarnJobTest, FaultMatrixAmSigtermEndsTheJobKilledNamingTheSignal) {
  Result r = RunCommand({Submit(), "--yarn", "--detach", "-n", "itest-am-sigterm", "-r",
                         "ps:1,worker:1", "-m", "256m", "exec sleep 600"});
  std::string app = AppIdOf(r);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  ASSERT_GT(WaitForTaskProcess(app, "worker", 0), 0);
  int am_pid = -1;
  for (int pid : ProcessesOf(app)) {
    char exe[4096] = {0};
    ssize_t n = readlink(absl::StrCat("/proc/", pid, "/exe").c_str(), exe, sizeof(exe) - 1);
    if (n > 0 && absl::EndsWith(absl::string_view(exe, static_cast<size_t>(n)), "/tony-am")) {
      am_pid = pid;
    }
  }
  ASSERT_GT(am_pid, 0);
  ASSERT_EQ(kill(am_pid, SIGTERM), 0);
  const absl::Time signalled = absl::Now();
  EXPECT_EQ(WaitForEnd(app), "FINISHED/KILLED");
  std::printf("fault matrix: AM SIGTERM -> KILLED after %s\n",
              absl::FormatDuration(absl::Now() - signalled).c_str());
  Result status = RunCommand({Ytf(), "status", app});
  EXPECT_THAT(status.out, HasSubstr("the ApplicationMaster got signal 15")) << status.out;
  ExpectNothingLeft(app);
}

TEST(YarnJobTest, FaultMatrixCtrlCOfTheClientKillsTheJob) {
  std::string tmpl = ::testing::TempDir() + "/ctrl-c.XXXXXX";
  const std::string dir = mkdtemp(tmpl.data());
  SubprocessOptions options;
  options.argv = {Submit(),        "--yarn", "-n",   "itest-ctrl-c",  "-r",
                  "ps:1,worker:1", "-m",     "256m", "exec sleep 600"};
  options.env = Environment();
  options.stdout_path = dir + "/out";
  options.stderr_path = dir + "/err";
  auto submit = Subprocess::Spawn(options);
  ASSERT_TRUE(submit.ok()) << submit.status();
  std::string app;
  for (absl::Time deadline = absl::Now() + absl::Minutes(2);
       app.empty() && absl::Now() < deadline;) {
    absl::SleepFor(absl::Milliseconds(200));
    Result seen;
    seen.out =
        ReadFileToString(dir + "/out").value_or("") + ReadFileToString(dir + "/err").value_or("");
    app = AppIdOf(seen);
  }
  ASSERT_FALSE(app.empty());
  ASSERT_GT(WaitForTaskProcess(app, "worker", 0), 0);
  (*submit)->Signal(SIGINT);
  const absl::Time interrupted = absl::Now();
  auto code = (*submit)->Wait(absl::Minutes(2));
  ASSERT_TRUE(code.ok());
  const absl::Duration took = absl::Now() - interrupted;
  EXPECT_EQ(*code, 1);
  const std::string err = ReadFileToString(dir + "/err").value_or("");
  EXPECT_THAT(err, HasSubstr("interrupted: killing " + app));
  EXPECT_THAT(err, HasSubstr("KILLED"));
  EXPECT_THAT(WaitForEnd(app), testing::EndsWith("KILLED"));
  std::printf("fault matrix: client Ctrl-C -> KILLED after %s\n",
              absl::FormatDuration(took).c_str());
  ExpectNothingLeft(app);
}

// The pid of the job's ApplicationMaster (its executable is tony-am), or -1.
int AmProcess(const std::string& app_id) {
  for (int pid : ProcessesOf(app_id)) {
    char exe[4096] = {0};
    ssize_t n = readlink(absl::StrCat("/proc/", pid, "/exe").c_str(), exe, sizeof(exe) - 1);
    if (n > 0 && absl::EndsWith(absl::string_view(exe, static_cast<size_t>(n)), "/tony-am")) {
      return pid;
    }
  }
  return -1;
}

// Waits (at most `bound`) until no process of `app_id` runs; how long that took, or
// InfiniteDuration with `left` naming how many still run.
absl::Duration WaitNoProcessLeft(const std::string& app_id, absl::Time since, absl::Duration bound,
                                 size_t* left) {
  std::vector<int> pids = ProcessesOf(app_id);
  while (!pids.empty() && absl::Now() - since < bound) {
    absl::SleepFor(absl::Milliseconds(250));
    pids = ProcessesOf(app_id);
  }
  *left = pids.size();
  return pids.empty() ? absl::Now() - since : absl::InfiniteDuration();
}

TEST(YarnJobTest, FaultMatrixAmSigkillWithOneAttemptFailsTheJobNamingTheAm) {
  // SIGKILL leaves the AM no time to stop anything: YARN fails the only attempt once the AM's
  // NodeManager reports its container gone, and kills the job's other containers; an executor
  // no NodeManager stopped would stop its task after timeouts.am_unreachable (10 s here).
  std::string yaml = ::testing::TempDir() + "/itest-am-sigkill1.yaml";
  ASSERT_TRUE(WriteFileAtomically(yaml,
                                  "timeouts: {am_unreachable: 10s, stop_grace: 2s}\n"
                                  "jobs:\n  ps: {instances: 1, memory: 256m}\n"
                                  "  worker: {instances: 2, memory: 256m}\n")
                  .ok());
  Result r = RunCommand({Submit(), "--yarn", "--detach", "-n", "itest-am-sigkill1", "--spec", yaml,
                         "--max_attempts", "1", "--am_memory", "256m", "exec sleep 600"});
  std::string app = AppIdOf(r);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  ASSERT_GT(WaitForTaskProcess(app, "worker", 0), 0);
  ASSERT_GT(WaitForTaskProcess(app, "worker", 1), 0);
  const int am_pid = AmProcess(app);
  ASSERT_GT(am_pid, 0);
  ASSERT_EQ(kill(am_pid, SIGKILL), 0);
  const absl::Time killed = absl::Now();
  // YARN ends it: the application's own state is FAILED (no AM unregistered it).
  EXPECT_EQ(WaitForEnd(app), "FAILED/FAILED");
  const absl::Duration ended = absl::Now() - killed;
  // Bound: the NodeManager's report (a heartbeat), the RM's kill of the other containers, and
  // at worst the dead-man switch (10 s) plus the stop grace (2 s).
  size_t left = 0;
  const absl::Duration gone = WaitNoProcessLeft(app, killed, absl::Seconds(40), &left);
  EXPECT_EQ(left, 0u) << left << " processes of " << app << " still run 40s after the AM's SIGKILL";
  Result status = RunCommand({Ytf(), "status", app});
  EXPECT_THAT(status.out, HasSubstr("FAILED")) << status.out;
  // YARN's own diagnostics name the AM's container and how it ended.
  EXPECT_THAT(status.out, testing::ContainsRegex("AM Container for appattempt_[0-9_]+_000001"))
      << status.out;
  EXPECT_THAT(status.out, HasSubstr("137")) << status.out;
  std::printf("fault matrix: AM SIGKILL, 1 attempt -> FAILED after %s, no process left after %s\n",
              absl::FormatDuration(ended).c_str(), absl::FormatDuration(gone).c_str());
  ExpectNothingLeft(app);
}

TEST(YarnJobTest, FaultMatrixClientSigkillInClientModeFailsTheJobNamingTheClient) {
  // Client mode: ytf-submit runs client:0 here and heartbeats for it. SIGKILL of ytf-submit
  // takes the client task with it (its parent-death signal) and its heartbeats stop: the AM
  // fails the job after its heartbeat timeout (1 minute) naming the client, and stops the rest.
  std::string tmpl = ::testing::TempDir() + "/client-kill.XXXXXX";
  const std::string dir = mkdtemp(tmpl.data());
  SubprocessOptions options;
  options.argv = {Submit(), "--yarn",        "--client", "-n",   "itest-client-kill",
                  "-r",     "ps:1,worker:1", "-m",       "256m", "exec sleep 600"};
  options.env = Environment();
  options.stdout_path = dir + "/out";
  options.stderr_path = dir + "/err";
  auto submit = Subprocess::Spawn(options);
  ASSERT_TRUE(submit.ok()) << submit.status();
  std::string app;
  int client_pid = -1;
  static const std::regex started_re("client task started \\(pid ([0-9]+)\\)");
  for (absl::Time deadline = absl::Now() + absl::Minutes(3);
       client_pid < 0 && absl::Now() < deadline;) {
    absl::SleepFor(absl::Milliseconds(200));
    Result seen;
    seen.out =
        ReadFileToString(dir + "/out").value_or("") + ReadFileToString(dir + "/err").value_or("");
    app = AppIdOf(seen);
    std::smatch m;
    if (std::regex_search(seen.out, m, started_re)) client_pid = std::atoi(m[1].str().c_str());
  }
  ASSERT_FALSE(app.empty());
  ASSERT_GT(client_pid, 0) << ReadFileToString(dir + "/err").value_or("");
  ASSERT_GT(WaitForTaskProcess(app, "worker", 0), 0);
  (*submit)->Signal(SIGKILL);
  const absl::Time killed = absl::Now();
  auto code = (*submit)->Wait(absl::Seconds(30));
  ASSERT_TRUE(code.ok());
  // The client task follows its ytf-submit at once.
  EXPECT_TRUE(EndsBy(client_pid, killed + absl::Seconds(10)))
      << "the client task outlived ytf-submit";
  EXPECT_EQ(WaitForEnd(app), "FINISHED/FAILED");
  const absl::Duration ended = absl::Now() - killed;
  size_t left = 0;
  const absl::Duration gone = WaitNoProcessLeft(app, killed, absl::Minutes(2), &left);
  EXPECT_EQ(left, 0u) << left << " processes of " << app << " still run";
  Result status = RunCommand({Ytf(), "status", app});
  EXPECT_THAT(status.out, HasSubstr("client:0")) << status.out;
  EXPECT_THAT(status.out, HasSubstr("sent no heartbeat for 1m")) << status.out;
  EXPECT_THAT(status.out, HasSubstr("ytf-submit")) << status.out;
  std::printf(
      "fault matrix: client SIGKILL (--client) -> FAILED after %s, no process left after %s\n",
      absl::FormatDuration(ended).c_str(), absl::FormatDuration(gone).c_str());
  ExpectNothingLeft(app);
}

// The CONTAINER_ID in a process's environment ("" when it is gone).
std::string ContainerOf(int pid) {
  for (const std::string& v : EnvironOf(pid)) {
    if (absl::StartsWith(v, "CONTAINER_ID=")) return v.substr(13);
  }
  return "";
}

// `ytf status APP --json`, parsed (null when it fails).
http::Json StatusJsonOf(const std::string& app) {
  Result r = RunCommand({Ytf(), "status", app, "--json"});
  auto j = http::ParseJson(r.out, "ytf status");
  return j.ok() ? *j : http::Json();
}

TEST(YarnJobTest, FaultMatrixAmSigkillWithTwoAttemptsKeepsEveryTaskRunning) {
  // Work-preserving AM restart: YARN keeps the task containers when the AM dies, the second
  // attempt adopts them, the executors find it and register again, and the job goes on: every
  // task process is the one the first attempt started. worker:1 ends while no AM is up (its
  // executor reports the exit to the second attempt); worker:0 ends under the second attempt.
  // The test's files tell the workers when (the containers share this machine's /tmp).
  std::string tmpl = ::testing::TempDir() + "/am-restart.XXXXXX";
  const std::string dir = mkdtemp(tmpl.data());
  std::string yaml = dir + "/job.yaml";
  ASSERT_TRUE(WriteFileAtomically(yaml,
                                  "timeouts: {stop_grace: 2s}\n"
                                  "jobs:\n  ps: {instances: 1, memory: 256m}\n"
                                  "  worker: {instances: 2, memory: 256m}\n")
                  .ok());
  Result r = RunCommand({Submit(), "--yarn", "--detach", "-n", "itest-am-sigkill2", "--spec", yaml,
                         "--max_attempts", "2", "--am_memory", "256m",
                         absl::StrCat("if [ $DTF_TASK_JOB_NAME = ps ]; then exec sleep 600; fi; "
                                      "for i in $(seq 1500); do [ -e ",
                                      dir,
                                      "/end-$DTF_TASK_INDEX ] && break; sleep 0.2; done; "
                                      "echo \"worker done in $CONTAINER_ID\"")});
  std::string app = AppIdOf(r);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const int ps = WaitForTaskProcess(app, "ps", 0);
  const int w0 = WaitForTaskProcess(app, "worker", 0);
  const int w1 = WaitForTaskProcess(app, "worker", 1);
  ASSERT_GT(ps, 0);
  ASSERT_GT(w0, 0);
  ASSERT_GT(w1, 0);
  const int am_pid = AmProcess(app);
  ASSERT_GT(am_pid, 0);
  ASSERT_EQ(kill(am_pid, SIGKILL), 0);
  const absl::Time killed = absl::Now();
  ASSERT_TRUE(WriteFileAtomically(dir + "/end-1", "").ok());  // worker:1 ends with no AM up
  // Its process ends well before any new attempt can be up.
  const bool w1_ended_early = EndsBy(w1, killed + absl::Seconds(5));

  // The second attempt runs, the others are back with it, worker:1's exit is known.
  bool back = false;
  absl::Duration back_after;
  http::Json last;
  for (absl::Time deadline = killed + absl::Minutes(1); !back && absl::Now() < deadline;) {
    absl::SleepFor(absl::Milliseconds(500));
    last = StatusJsonOf(app);
    if (!last.is_object() || last["attempt"].get<int>() != 2 ||
        !last["progress"].contains("worker")) {
      continue;
    }
    back = last["progress"]["worker"]["running"].get<int>() == 1 &&
           last["progress"]["worker"]["succeeded"].get<int>() == 1 &&
           last["progress"]["ps"]["running"].get<int>() == 1;
    back_after = absl::Now() - killed;
  }
  EXPECT_TRUE(w1_ended_early) << "worker:1 still ran 5 s after its end was asked for";
  EXPECT_TRUE(back) << "the tasks never ran under attempt 2: " << last.dump();
  // The same processes throughout.
  EXPECT_EQ(TaskProcess(app, "ps", 0), ps);
  EXPECT_EQ(TaskProcess(app, "worker", 0), w0);
  const int am2 = AmProcess(app);
  EXPECT_GT(am2, 0);
  EXPECT_NE(am2, am_pid);

  ASSERT_TRUE(WriteFileAtomically(dir + "/end-0", "").ok());
  EXPECT_EQ(WaitForEnd(app), "FINISHED/SUCCEEDED");
  const absl::Duration ended = absl::Now() - killed;
  http::Json attempts = Rm("/ws/v1/cluster/apps/" + app + "/appattempts");
  ASSERT_TRUE(attempts.contains("appAttempts")) << app;
  EXPECT_EQ(attempts["appAttempts"]["appAttempt"].size(), 2u);
  Result status = RunCommand({Ytf(), "status", app});
  EXPECT_THAT(status.out, HasSubstr("SUCCEEDED")) << status.out;
  EXPECT_THAT(status.out, HasSubstr("attempt: 2\n")) << status.out;
  EXPECT_THAT(status.out,
              HasSubstr("attempt 1 ended while the job ran; attempt 2 took over its 3 running "
                        "task containers"))
      << status.out;
  // The workers' containers are still the first attempt's.
  for (const char* task : {"worker:0", "worker:1"}) {
    Result logs = RunCommand({Ytf(), "logs", app, "--task", task});
    EXPECT_THAT(logs.out, testing::ContainsRegex("worker done in container_[0-9e_]+_01_"))
        << task << ": " << logs.out;
  }
  std::printf(
      "fault matrix: AM SIGKILL, 2 attempts -> tasks back under attempt 2 after %s (same pids; "
      "worker:1's exit meanwhile reported), job SUCCEEDED %s after the kill\n",
      absl::FormatDuration(back_after).c_str(), absl::FormatDuration(ended).c_str());
  ExpectNothingLeft(app);
}

TEST(YarnJobTest, AnAmRestartAfterATaskEndedStartsEveryTaskAfresh) {
  // Work-preserving restart is all or nothing: worker:1 has already ended when the AM dies, so the
  // second attempt cannot take over the job as it was; it releases the first attempt's running
  // containers (their processes end) and runs every task again.
  Result r = RunCommand(
      {Submit(), "--yarn", "--detach", "-n", "itest-am-restart-afresh", "--max_attempts", "2", "-r",
       "ps:1,worker:2", "-m", "256m", "--am_memory", "256m",
       "if [ $DTF_TASK_JOB_NAME = ps ]; then exec sleep 600; fi; "
       "case $CONTAINER_ID in *_01_0*) if [ $DTF_TASK_INDEX = 0 ]; then exec sleep 600; fi;; esac; "
       "echo \"worker done in $CONTAINER_ID\""});
  std::string app = AppIdOf(r);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const int ps = WaitForTaskProcess(app, "ps", 0);
  const int w0 = WaitForTaskProcess(app, "worker", 0);
  ASSERT_GT(ps, 0);
  ASSERT_GT(w0, 0);
  bool w1_done = false;
  for (absl::Time deadline = absl::Now() + absl::Minutes(1); !w1_done && absl::Now() < deadline;) {
    http::Json s = StatusJsonOf(app);
    w1_done = s.is_object() && s["progress"].contains("worker") &&
              s["progress"]["worker"]["succeeded"].get<int>() == 1;
    if (!w1_done) absl::SleepFor(absl::Milliseconds(300));
  }
  ASSERT_TRUE(w1_done);
  const int am_pid = AmProcess(app);
  ASSERT_GT(am_pid, 0);
  ASSERT_EQ(kill(am_pid, SIGKILL), 0);
  const absl::Time killed = absl::Now();
  EXPECT_EQ(WaitForEnd(app), "FINISHED/SUCCEEDED");
  const absl::Duration ended = absl::Now() - killed;
  // Released by attempt 2 (or cleaned up with the application): the NodeManagers stop them on
  // their next heartbeat, which may come after the application's end.
  EXPECT_TRUE(EndsBy(ps, absl::Now() + absl::Seconds(30))) << "the first attempt's ps still runs";
  EXPECT_TRUE(EndsBy(w0, absl::Now() + absl::Seconds(30)))
      << "the first attempt's worker:0 still runs";
  Result status = RunCommand({Ytf(), "status", app});
  EXPECT_THAT(status.out, HasSubstr("attempt: 2\n")) << status.out;
  EXPECT_THAT(status.out, HasSubstr("attempt 2 could not take over all its tasks")) << status.out;
  Result logs = RunCommand({Ytf(), "logs", app, "--task", "worker:0"});
  EXPECT_THAT(logs.out, testing::ContainsRegex("worker done in container_[0-9e_]+_02_"))
      << logs.out;
  std::printf(
      "AM SIGKILL after a task ended, 2 attempts -> every task afresh, SUCCEEDED %s after "
      "the kill\n",
      absl::FormatDuration(ended).c_str());
  ExpectNothingLeft(app);
}

TEST(YarnJobTest, AnAmRestartAdoptsATaskRelaunchedBeforeIt) {
  // worker:1 is relaunched by its restart policy (scope task) in a new container; the history
  // the AM rewrites then names it, so the second attempt adopts that one too.
  std::string tmpl = ::testing::TempDir() + "/am-restart-relaunch.XXXXXX";
  const std::string dir = mkdtemp(tmpl.data());
  Result r = RunCommand(
      {Submit(), "--yarn", "--detach", "-n", "itest-am-restart-relaunch", "--max_attempts", "2",
       "-r", "ps:1,worker:2", "-m", "256m", "--am_memory", "256m", "--restart",
       "worker:policy=exit-code,scope=task,max_restarts=2,backoff=1s",
       absl::StrCat("if [ $DTF_TASK_JOB_NAME = ps ]; then exec sleep 600; fi; "
                    "for i in $(seq 1500); do [ -e ",
                    dir, "/end-$DTF_TASK_INDEX ] && break; sleep 0.2; done; echo done")});
  std::string app = AppIdOf(r);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const int ps = WaitForTaskProcess(app, "ps", 0);
  const int w0 = WaitForTaskProcess(app, "worker", 0);
  const int first_w1 = WaitForTaskProcess(app, "worker", 1);
  ASSERT_GT(ps, 0);
  ASSERT_GT(w0, 0);
  ASSERT_GT(first_w1, 0);
  const std::string first_container = ContainerOf(first_w1);
  ASSERT_EQ(kill(first_w1, SIGKILL), 0);  // 137: retried
  // Relaunched: a worker:1 process in another container (not a leftover of the first).
  int w1 = -1;
  for (absl::Time deadline = absl::Now() + absl::Minutes(1); absl::Now() < deadline;) {
    w1 = TaskProcess(app, "worker", 1);
    if (w1 > 0 && ContainerOf(w1) != first_container) break;
    absl::SleepFor(absl::Milliseconds(200));
  }
  ASSERT_GT(w1, 0);
  ASSERT_NE(ContainerOf(w1), first_container);
  absl::SleepFor(absl::Seconds(2));  // the history names the new container
  const int am_pid = AmProcess(app);
  ASSERT_GT(am_pid, 0);
  ASSERT_EQ(kill(am_pid, SIGKILL), 0);
  const absl::Time killed = absl::Now();
  bool back = false;
  for (absl::Time deadline = killed + absl::Minutes(1); !back && absl::Now() < deadline;) {
    absl::SleepFor(absl::Milliseconds(500));
    http::Json s = StatusJsonOf(app);
    back = s.is_object() && s["attempt"].get<int>() == 2 && s["progress"].contains("worker") &&
           s["progress"]["worker"]["running"].get<int>() == 2 &&
           s["progress"]["ps"]["running"].get<int>() == 1;
  }
  const absl::Duration back_after = absl::Now() - killed;
  EXPECT_TRUE(back);
  EXPECT_EQ(TaskProcess(app, "ps", 0), ps);
  EXPECT_EQ(TaskProcess(app, "worker", 0), w0);
  EXPECT_EQ(TaskProcess(app, "worker", 1), w1);
  ASSERT_TRUE(WriteFileAtomically(dir + "/end-0", "").ok());
  ASSERT_TRUE(WriteFileAtomically(dir + "/end-1", "").ok());
  EXPECT_EQ(WaitForEnd(app), "FINISHED/SUCCEEDED");
  Result status = RunCommand({Ytf(), "status", app});
  EXPECT_THAT(status.out, HasSubstr("attempt 2 took over its 3 running task containers"))
      << status.out;
  std::printf(
      "AM SIGKILL after a task-scope relaunch -> all 3 tasks back under attempt 2 after "
      "%s\n",
      absl::FormatDuration(back_after).c_str());
  ExpectNothingLeft(app);
}

TEST(YarnJobTest, AskingMoreThanAnyNodeHasFailsBeforeSubmitting) {
  Result r = RunCommand({Submit(), "--yarn", "-r", "worker:1", "-m", "worker:100g", "true"});
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_THAT(r.err, HasSubstr("asks for 102400 MB but no node in the default partition"));
  EXPECT_THAT(r.err, HasSubstr("the largest is "));
  EXPECT_EQ(AppIdOf(r), "");
}

TEST(YarnJobTest, AGangThatCanNeverRunAtOnceFailsBeforeSubmitting) {
  // Every task fits a node, but the AM and three 8 GB tasks never fit the test cluster at once:
  // before this check the job sat at "0/2 allocated" until the registration deadline.
  Result r = RunCommand({Submit(), "--yarn", "-r", "ps:1,worker:2", "-m", "8g", "true"});
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_THAT(r.err, HasSubstr("can never run at once"));
  EXPECT_EQ(AppIdOf(r), "");
}

TEST(YarnJobTest, TasksOnTwoNodesAdvertiseTheirNodesAddressesAndReachEachOther) {
  const std::string src = harness::HadoopCluster::Get().source_dir();
  Result r =
      RunCommand({Submit(), "--yarn", "-n", "itest-cross-node", "-r", "worker:2", "-m", "5g", "-s",
                  src + "/tests/yarnam/cross_node_probe.py", Python() + " ${DTF_TASK_SCRIPT}"});
  std::string app = AppIdOf(r);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_THAT(NodesThatRan(app), ::testing::ElementsAre(1, 2));
  std::vector<std::string> hosts;
  for (int i = 0; i < 2; ++i) {
    Result logs = RunCommand({Ytf(), "logs", app, "--task", absl::StrCat("worker:", i)});
    EXPECT_THAT(logs.out, HasSubstr(absl::StrCat("reached worker:", 1 - i))) << logs.out;
    EXPECT_THAT(logs.out, HasSubstr("probe done")) << logs.out;
    std::smatch m;
    static const std::regex re("advertises ([^:]+):[0-9]+ \\(([0-9.]+)\\); NM_HOST=([^;]*)");
    ASSERT_TRUE(std::regex_search(logs.out, m, re)) << logs.out;
    // The address a task advertises is its node's: the NodeManager's name, and the address its
    // connections to the other node come from.
    EXPECT_EQ(m[1].str(), m[3].str());
    EXPECT_THAT(logs.out, HasSubstr(absl::StrCat(" from ", m[2].str(), ":")));
    hosts.push_back(m[1].str());
  }
  if (MultiHost()) {
    ASSERT_EQ(hosts.size(), 2u);
    EXPECT_NE(hosts[0], hosts[1]);
    for (const std::string& h : hosts) {
      EXPECT_NE(h, "localhost");
      EXPECT_THAT(NodeHosts(""), ::testing::Contains(h));
    }
  }
  ExpectNothingLeft(app);
}

// The node a task ran on, from the "... on <NM_HOST>" line the examples print.
std::string NodeInLogs(const std::string& app, const std::string& task, const std::string& re) {
  Result logs = RunCommand({Ytf(), "logs", app, "--task", task});
  std::smatch m;
  return std::regex_search(logs.out, m, std::regex(re)) ? m[1].str() : "";
}

TEST(YarnJobTest, PyTorchDdpExampleTrainsAcrossTwoNodes) {
  const std::string src = harness::HadoopCluster::Get().source_dir();
  // 5 GB workers cannot share an 8 GB node: rank 0 and rank 1 are on different nodes, and gloo
  // connects them over the network by the addresses the ranks advertise.
  Result r = RunCommand(
      {Submit(), "--yarn", "-n", "itest-pytorch", "--framework", "pytorch", "-r", "worker:2", "-m",
       "5g", "-s", src + "/examples/pytorch_ddp.py", Python() + " ${DTF_TASK_SCRIPT}"},
      absl::Minutes(10));
  std::string app = AppIdOf(r);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(WaitForEnd(app), "FINISHED/SUCCEEDED");
  EXPECT_THAT(NodesThatRan(app), ::testing::ElementsAre(1, 2));
  std::vector<std::string> nodes;
  for (int i = 0; i < 2; ++i) {
    const std::string task = absl::StrCat("worker:", i);
    Result logs = RunCommand({Ytf(), "logs", app, "--task", task});
    EXPECT_THAT(logs.out, HasSubstr(absl::StrCat("pytorch_ddp done: rank ", i, "/2"))) << logs.out;
    nodes.push_back(NodeInLogs(app, task, "rank [0-9]/2 on ([^,]+),"));
  }
  EXPECT_NE(nodes[0], "");
  EXPECT_NE(nodes[0], nodes[1]);
  ExpectNothingLeft(app);
}

TEST(YarnJobTest, Tf2MultiWorkerMirroredExampleTrainsAcrossTwoNodes) {
  const std::string src = harness::HadoopCluster::Get().source_dir();
  Result r = RunCommand({Submit(), "--yarn", "-n", "itest-mwms", "-r", "worker:2", "-m", "5g", "-s",
                         src + "/examples/tf2_multi_worker_mirrored.py",
                         Python() + " ${DTF_TASK_SCRIPT} --steps 100"},
                        absl::Minutes(10));
  std::string app = AppIdOf(r);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(WaitForEnd(app), "FINISHED/SUCCEEDED");
  EXPECT_THAT(NodesThatRan(app), ::testing::ElementsAre(1, 2));
  std::vector<std::string> nodes;
  for (int i = 0; i < 2; ++i) {
    const std::string task = absl::StrCat("worker:", i);
    Result logs = RunCommand({Ytf(), "logs", app, "--task", task});
    EXPECT_THAT(logs.out,
                HasSubstr(absl::StrCat("tf2_multi_worker_mirrored done: worker ", i, " of 2")))
        << logs.out;
    nodes.push_back(NodeInLogs(app, task, "worker [0-9] on ([^:]+):"));
  }
  EXPECT_NE(nodes[0], "");
  EXPECT_NE(nodes[0], nodes[1]);
  ExpectNothingLeft(app);
}

TEST(YarnJobTest, NodeLabelsPlaceTasksAndTheAmOnlyOnTheLabelledNode) {
  const std::vector<std::string> gpu_nodes = NodeHosts("gpu");
  ASSERT_EQ(gpu_nodes.size(), 1u);
  Result r = RunCommand({Submit(), "--yarn", "-n", "itest-label", "-r", "ps:1,worker:2", "-m",
                         "256m", "--node_label", "worker:gpu", "--node_label", "ps:gpu",
                         "--am_node_label", "gpu", "echo \"on $NM_HOST\""});
  std::string app = AppIdOf(r);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_THAT(NodesThatRan(app), ::testing::ElementsAre(3));
  Result logs = RunCommand({Ytf(), "logs", app, "--task", "worker:1"});
  EXPECT_THAT(logs.out, HasSubstr("on " + gpu_nodes[0]));
  ExpectNothingLeft(app);
}

TEST(YarnJobTest, UnknownNodeLabelFailsBeforeSubmittingNamingTheLabels) {
  Result r = RunCommand(
      {Submit(), "--yarn", "-r", "worker:1", "-m", "256m", "--node_label", "worker:fpga", "true"});
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_THAT(r.err, HasSubstr("'fpga' (--node_label worker:<label>)"));
  EXPECT_THAT(r.err, HasSubstr("labels on running nodes: gpu"));
  EXPECT_EQ(AppIdOf(r), "");
  Result am = RunCommand(
      {Submit(), "--yarn", "-r", "worker:1", "-m", "256m", "--am_node_label", "fpga", "true"});
  EXPECT_EQ(am.exit_code, 2) << am.out << am.err;
  EXPECT_THAT(am.err, HasSubstr("ApplicationMaster asks for node label 'fpga'"));
}

TEST(YarnJobTest, QueueResearchTakesTheJobAndAnUnknownQueueFailsBeforeSubmitting) {
  Result r = RunCommand({Submit(), "--yarn", "-n", "itest-queue", "-q", "research", "-r",
                         "worker:1", "-m", "256m", "true"});
  std::string app = AppIdOf(r);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  http::Json a = Rm("/ws/v1/cluster/apps/" + app);
  ASSERT_TRUE(a.contains("app")) << app;
  EXPECT_THAT(a["app"]["queue"].get<std::string>(), ::testing::EndsWith("research"));

  Result bad = RunCommand({Submit(), "--yarn", "-q", "nosuch", "-r", "worker:1", "true"});
  EXPECT_EQ(bad.exit_code, 2) << bad.out << bad.err;
  EXPECT_THAT(bad.err, HasSubstr("queue 'nosuch' (-q/--queue)"));
  EXPECT_THAT(bad.err, HasSubstr("queues you may submit to: default, research"));
  EXPECT_EQ(AppIdOf(bad), "");
}

TEST(YarnJobTest, GpusArePlacedAndMoreThanAnyNodeHasFailsNamingTheLargestNode) {
  Result r = RunCommand({Submit(), "--yarn", "-n", "itest-gpu", "-r", "worker:2", "-m", "256m",
                         "-g", "2", "echo \"gpus:[${CUDA_VISIBLE_DEVICES-unset}]\""});
  std::string app = AppIdOf(r);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  // 2 GPUs per node: the two workers need both default-partition nodes.
  EXPECT_THAT(NodesThatRan(app), ::testing::ElementsAre(1, 2));
  // The test cluster has no GPU plugin: YARN counts GPUs but assigns no devices, as the
  // executor learnt from its NodeManager.
  Result logs = RunCommand({Ytf(), "logs", app, "--task", "worker:0"});
  EXPECT_THAT(logs.out, HasSubstr("gpus:[unset]"));
  Result err = RunCommand({Ytf(), "logs", app, "--task", "worker:0", "--file", "stderr"});
  EXPECT_THAT(err.out, HasSubstr("YARN assigned no GPU device to container_")) << err.out;

  Result big = RunCommand({Submit(), "--yarn", "-r", "worker:1", "-m", "256m", "-g", "3", "true"});
  EXPECT_EQ(big.exit_code, 2) << big.out << big.err;
  EXPECT_THAT(big.err, HasSubstr("asks for 3 GPUs (yarn.io/gpu)"));
  EXPECT_THAT(big.err, HasSubstr("the largest is "));
  EXPECT_THAT(big.err, HasSubstr("yarn.io/gpu:2"));
  EXPECT_EQ(AppIdOf(big), "");
}

}  // namespace
}  // namespace tony
