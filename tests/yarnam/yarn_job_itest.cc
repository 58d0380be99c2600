// Copyright libtony authors.
//
// ytf-submit and ytf on the real test YARN (NodeManagers on their own hosts): the real binaries,
// real containers, real TensorFlow. After every test no container or process of the job may remain.

#include <dirent.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <regex>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "common/file_util.h"
#include "common/subprocess.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "http/client.h"
#include "http/json.h"
#include "tests/harness/hadoop_cluster.h"
#include "yarn/yarn_client.h"

extern char** environ;

namespace tony {
namespace {

using ::testing::HasSubstr;

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

// Waits (at most 2 minutes) until the application is over; its "STATE/FINAL_STATUS".
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
  EXPECT_EQ(AppState(app), "FINISHED/SUCCEEDED");
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
  EXPECT_EQ(AppState(app), "FINISHED/FAILED");
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
  EXPECT_EQ(WaitForEnd(app), "FINISHED/FAILED");
  Result status = RunCommand({Ytf(), "status", app});
  EXPECT_EQ(status.exit_code, 1);
  EXPECT_THAT(status.out, HasSubstr("worker:0"));
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
  EXPECT_EQ(WaitForEnd(app), "FINISHED/FAILED");
  Result status = RunCommand({Ytf(), "status", app});
  EXPECT_THAT(status.out, HasSubstr("worker:0"));
  EXPECT_THAT(status.out, HasSubstr("its container ended without an exit report"));
  ExpectNothingLeft(app);
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
  EXPECT_THAT(AppState(app), testing::EndsWith("KILLED"));
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
  EXPECT_EQ(AppState(app), "FINISHED/SUCCEEDED");
  // The servers never exit by themselves: the AM stopped them once the client was done.
  Result logs = RunCommand({Ytf(), "logs", app, "--task", "worker:1"});
  EXPECT_THAT(logs.out, HasSubstr("worker 1 serving"));
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
  EXPECT_THAT(AppState(app), testing::EndsWith("KILLED"));
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
  EXPECT_EQ(AppState(app), "FINISHED/SUCCEEDED");
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

TEST(YarnJobTest, AskingMoreThanAnyNodeHasFailsBeforeSubmitting) {
  Result r = RunCommand({Submit(), "--yarn", "-r", "worker:1", "-m", "worker:100g", "true"});
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_THAT(r.err, HasSubstr("asks for 102400 MB but no node in the default partition"));
  EXPECT_THAT(r.err, HasSubstr("the largest is "));
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
  // The test cluster has no GPU plugin: YARN counts GPUs but assigns no devices.
  Result logs = RunCommand({Ytf(), "logs", app, "--task", "worker:0"});
  EXPECT_THAT(logs.out, HasSubstr("gpus:[unset]"));

  Result big = RunCommand({Submit(), "--yarn", "-r", "worker:1", "-m", "256m", "-g", "3", "true"});
  EXPECT_EQ(big.exit_code, 2) << big.out << big.err;
  EXPECT_THAT(big.err, HasSubstr("asks for 3 GPUs (yarn.io/gpu)"));
  EXPECT_THAT(big.err, HasSubstr("the largest is "));
  EXPECT_THAT(big.err, HasSubstr("yarn.io/gpu:2"));
  EXPECT_EQ(AppIdOf(big), "");
}

}  // namespace
}  // namespace tony
