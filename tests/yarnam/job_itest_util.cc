// Copyright libtony authors.

#include "tests/yarnam/job_itest_util.h"

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
#include "absl/strings/numbers.h"
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
#include "submit/yarn_submitter.h"
#include "tests/harness/hadoop_cluster.h"
#include "yarn/yarn_client.h"

extern char** environ;

namespace tony::itest {

bool WaitUntil(const std::function<bool()>& done, absl::Duration timeout,
               absl::Duration max_interval) {
  const absl::Time deadline = absl::Now() + timeout;
  absl::Duration interval = std::min(absl::Milliseconds(50), max_interval);
  while (!done()) {
    const absl::Time now = absl::Now();
    if (now >= deadline) return false;
    absl::SleepFor(std::min(interval, deadline - now));
    interval = std::min(interval * 2, max_interval);
  }
  return true;
}

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

Result RunCommand(std::vector<std::string> argv, absl::Duration timeout) {
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

std::vector<std::string> EnvironOf(int pid) {
  std::string env = ReadFileToString(absl::StrCat("/proc/", pid, "/environ")).value_or("");
  return absl::StrSplit(env, '\0', absl::SkipEmpty());
}

bool Has(const std::vector<std::string>& vars, const std::string& var) {
  return std::find(vars.begin(), vars.end(), var) != vars.end();
}

namespace {

// The parent pid of `pid` (-1 once it is gone).
int ParentOf(int pid) {
  const std::string stat = ReadFileToString(absl::StrCat("/proc/", pid, "/stat")).value_or("");
  const size_t end = stat.rfind(')');  // the command name may hold spaces and parentheses
  int ppid = -1;
  std::vector<std::string> fields =
      absl::StrSplit(stat.substr(std::min(end + 2, stat.size())), ' ');
  return fields.size() > 1 && absl::SimpleAtoi(fields[1], &ppid) ? ppid : -1;
}

}  // namespace

int TaskProcess(const std::string& app_id, const std::string& job, int index) {
  std::vector<int> candidates;
  for (int pid : ProcessesOf(app_id)) {
    std::vector<std::string> vars = EnvironOf(pid);
    bool is_user = std::any_of(vars.begin(), vars.end(), [](const std::string& v) {
      return absl::StartsWith(v, "TF_CONFIG=");
    });
    if (is_user && Has(vars, "DTF_TASK_JOB_NAME=" + job) &&
        Has(vars, absl::StrCat("DTF_TASK_INDEX=", index))) {
      candidates.push_back(pid);
    }
  }
  // The task's command, not a child it started (a `sleep` of its loop inherits the same
  // environment, and after the pids wrap may come first): the one whose parent is no candidate.
  for (int pid : candidates) {
    const int parent = ParentOf(pid);  // -1: it ended meanwhile
    if (parent > 0 && std::find(candidates.begin(), candidates.end(), parent) == candidates.end()) {
      return pid;
    }
  }
  return -1;
}

bool EndsBy(int pid, absl::Time deadline) {
  return WaitUntil([pid] { return kill(pid, 0) != 0; }, deadline - absl::Now());
}

int WaitForTaskProcess(const std::string& app_id, const std::string& job, int index) {
  int pid = -1;
  WaitUntil([&] { return (pid = TaskProcess(app_id, job, index)) > 0; }, absl::Minutes(2));
  return pid;
}

void ExpectNothingLeft(const std::string& app_id) {
  ASSERT_FALSE(app_id.empty());
  // Containers end asynchronously after the application does: allow a short while.
  const absl::Time deadline = absl::Now() + absl::Seconds(30);
  std::vector<int> left;
  WaitUntil([&] { return (left = ProcessesOf(app_id)).empty(); }, absl::Seconds(30));
  EXPECT_TRUE(left.empty()) << left.size() << " processes of " << app_id << " still run";
  // The RM counts a container as running until its NodeManager reports it gone (a heartbeat
  // later, longer on a loaded machine), even after the application finished.
  int running = 0;
  bool known = true;
  WaitUntil(
      [&] {
        http::Json app = Rm("/ws/v1/cluster/apps/" + app_id);
        known = app.contains("app");
        running = known ? app["app"]["runningContainers"].get<int>() : 0;  // -1 once finished
        return !known || running <= 0;
      },
      deadline - absl::Now());
  ASSERT_TRUE(known) << "the RM does not know " << app_id;
  EXPECT_LE(running, 0) << app_id;
}

std::string AppState(const std::string& app_id) {
  http::Json app = Rm("/ws/v1/cluster/apps/" + app_id);
  if (!app.contains("app")) return "";
  return app["app"]["state"].get<std::string>() + "/" +
         app["app"]["finalStatus"].get<std::string>();
}

std::string WaitForEnd(const std::string& app_id) {
  std::string state;
  WaitUntil(
      [&] {
        state = AppState(app_id);
        return absl::StartsWith(state, "FINISHED") || absl::StartsWith(state, "FAILED") ||
               absl::StartsWith(state, "KILLED");
      },
      absl::Minutes(2));
  return state;
}

http::Json HdfsStatus(const std::string& path) {
  const harness::HadoopCluster& c = harness::HadoopCluster::Get();
  http::Client http;
  auto r = http.Get(absl::StrCat(c.namenode_web_url(), "/webhdfs/v1", path,
                                 "?op=GETFILESTATUS&user.name=", c.user()));
  if (!r.ok() || !r->ok()) return http::Json();
  auto j = http::ParseJson(r->body, path);
  return j.ok() && j->contains("FileStatus") ? (*j)["FileStatus"] : http::Json();
}

std::string HdfsText(const std::string& path) {
  const harness::HadoopCluster& c = harness::HadoopCluster::Get();
  http::Client http;
  http::Request request;
  request.url =
      absl::StrCat(c.namenode_web_url(), "/webhdfs/v1", path, "?op=OPEN&user.name=", c.user());
  request.follow_redirects = true;  // to the DataNode, inside the test bed
  auto r = http.Do(request);
  return r.ok() && r->ok() ? r->body : "";
}

std::vector<http::Json> JobEvents(const std::string& app_id) {
  std::vector<http::Json> events;
  for (absl::string_view line :
       absl::StrSplit(HdfsText(absl::StrCat("/tmp/tony-history/", app_id, ".jsonl")), '\n',
                      absl::SkipEmpty())) {
    auto j = http::ParseJson(line, "event line");
    events.push_back(j.ok() ? *j : http::Json());
  }
  return events;
}

std::string StagingRootOfTheCluster() {
  const harness::HadoopCluster& c = harness::HadoopCluster::Get();
  return submit::StagingRoot(c.user(), submit::ClusterKey(c.conf()));
}

std::string StagingDir(const std::string& app_id) {
  return absl::StrCat(StagingRootOfTheCluster(), "/", app_id);
}

bool WaitGoneFromHdfs(const std::string& path, absl::Duration timeout) {
  return WaitUntil([&] { return HdfsStatus(path).is_null(); }, timeout);
}

std::string Submit() { return BinDir() + "/ytf-submit"; }

std::string Ytf() { return BinDir() + "/ytf"; }

bool MultiHost() {
  return harness::HadoopCluster::Get().conf().Get("yarn.resourcemanager.hostname").value_or("") !=
         "localhost";
}

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

int64_t PeakRssKb(int pid) {
  std::string status = ReadFileToString(absl::StrCat("/proc/", pid, "/status")).value_or("");
  size_t at = status.find("VmHWM:");
  return at == std::string::npos ? -1 : std::atoll(status.c_str() + at + 6);
}

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

std::string PythonEnvArchive() {
  static const std::string path = [] {
    const std::string src = harness::HadoopCluster::Get().source_dir();
    Result r = RunCommand({"/bin/bash", src + "/scripts/python-env-archive"}, absl::Minutes(30));
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return std::string(absl::StripAsciiWhitespace(r.out));
  }();
  return path;
}

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

std::string NodeManagerLogLines(const std::string& text) {
  const std::string logs = harness::HadoopCluster::Get().conf_dir() + "/../logs";
  Result r = RunCommand({"/bin/bash", "-c",
                         absl::StrCat("grep -hF -- \"$1\" ", logs, "/nodemanager*.log | tail -40"),
                         "grep", text});
  return r.out;
}

std::string ChiefOutput(const std::string& app) {
  return RunCommand({Ytf(), "logs", app, "--task", "chief:0", "--file", "stdout"}).out;
}

bool RmContainerRunning(const std::string& app_id, const std::string& container) {
  http::Json attempts = Rm("/ws/v1/cluster/apps/" + app_id + "/appattempts");
  if (!attempts.contains("appAttempts")) return false;
  const http::Json& list = attempts["appAttempts"]["appAttempt"];
  if (!list.is_array() || list.empty()) return false;
  const std::string attempt = list.back().value("appAttemptId", "");
  http::Json containers =
      Rm("/ws/v1/cluster/apps/" + app_id + "/appattempts/" + attempt + "/containers");
  if (!containers.contains("container") || !containers["container"].is_array()) return false;
  for (const http::Json& c : containers["container"]) {
    if (c.value("containerId", "") == container) return c.value("containerState", "") == "RUNNING";
  }
  return false;
}

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

absl::Duration WaitNoProcessLeft(const std::string& app_id, absl::Time since, absl::Duration bound,
                                 size_t* left) {
  std::vector<int> pids;
  WaitUntil([&] { return (pids = ProcessesOf(app_id)).empty(); }, since + bound - absl::Now());
  *left = pids.size();
  return pids.empty() ? absl::Now() - since : absl::InfiniteDuration();
}

std::string ContainerOf(int pid) {
  for (const std::string& v : EnvironOf(pid)) {
    if (absl::StartsWith(v, "CONTAINER_ID=")) return v.substr(13);
  }
  return "";
}

http::Json StatusJsonOf(const std::string& app) {
  Result r = RunCommand({Ytf(), "status", app, "--json"});
  auto j = http::ParseJson(r.out, "ytf status");
  return j.ok() ? *j : http::Json();
}

bool HistoryNames(const std::string& app_id, const std::string& task,
                  const std::string& container) {
  Result logs =
      RunCommand({Ytf(), "logs", app_id, "--task", task, "--file", "launch_container.sh"});
  // The header of the file, or the error when the NodeManager does not serve it, names it.
  return absl::StrContains(logs.out + logs.err, container);
}

std::string NodeInLogs(const std::string& app, const std::string& task, const std::string& re) {
  Result logs = RunCommand({Ytf(), "logs", app, "--task", task});
  std::smatch m;
  return std::regex_search(logs.out, m, std::regex(re)) ? m[1].str() : "";
}

}  // namespace tony::itest
