// Copyright libtony authors.
//
// The job's secrets and staging on the real test YARN: what logs, launch scripts and HDFS
// show, who may report to the broker, staging removed however the job ends, an AM that idle
// connections cannot bloat.
// After every test no container or process of its job remains.

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
#include <memory>
#include <regex>
#include <set>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "broker/broker_client.h"
#include "broker/secret.h"
#include "common/file_util.h"
#include "common/subprocess.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "hdfs/webhdfs_client.h"
#include "http/client.h"
#include "http/json.h"
#include "ipc/credentials.h"
#include "tests/harness/hadoop_cluster.h"
#include "yarn/yarn_client.h"

#include "tests/yarnam/job_itest_util.h"

namespace tony::itest {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

TEST(YarnJobSecurityTest, TheJobSecretIsInNoLogNoLaunchScriptAndNoEnvironment) {
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

TEST(YarnJobSecurityTest, NothingTheLogsShowLetsAnyoneReportToTheBroker) {
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

TEST(YarnJobSecurityTest, StagingAndHistoryArePrivateToTheUser) {
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

// The next `n` application ids the RM will hand out (ids are predictable: an attacker's view).
std::vector<std::string> NextAppIds(int n) {
  const int64_t started = Rm("/ws/v1/cluster/info")["clusterInfo"].value("startedOn", int64_t{0});
  int last = 0;
  const http::Json apps = Rm("/ws/v1/cluster/apps")["apps"];
  if (apps.is_object() && apps["app"].is_array()) {
    for (const http::Json& a : apps["app"]) {
      const std::string id = a.value("id", "");
      int seq = 0;
      if (absl::SimpleAtoi(id.substr(id.rfind('_') + 1), &seq)) last = std::max(last, seq);
    }
  }
  std::vector<std::string> ids;
  for (int i = 1; i <= n; ++i)
    ids.push_back(absl::StrFormat("application_%d_%04d", started, last + i));
  return ids;
}

std::unique_ptr<hdfs::WebHdfsClient> HdfsAs(const std::string& user) {
  hdfs::WebHdfsClient::Options o;
  std::string nn = harness::HadoopCluster::Get().namenode_web_url();
  o.namenodes = {nn.substr(nn.find("://") + 3)};
  o.user = user;
  auto client = hdfs::WebHdfsClient::Create(o);
  return client.ok() ? *std::move(client) : nullptr;
}

// mallory creates the logs of bob's next jobs first, open to everyone, to read what his AM
// appends (his tasks' stderr, his spec) and to feed his next AM attempt lines. His AM neither
// writes to nor reads her file: it logs in his private directory, says so, and the job goes on.
TEST(YarnJobSecurityTest, AnotherUsersFileUnderAJobsLogNameIsNeitherWrittenNorRead) {
  const std::string dir = absl::StrCat("/tmp/tony-history-squat-", ::getpid());
  // The admin's step: the shared directory, sticky.
  Result init = RunCommand({Ytf(), "history-server", "--init_dir", "--history_dir", dir});
  ASSERT_EQ(init.exit_code, 0) << init.out << init.err;
  EXPECT_THAT(init.out, HasSubstr("mode 1777"));
  auto mallory = HdfsAs("mallory");
  ASSERT_NE(mallory, nullptr);
  const std::string bait = "{\"event\":\"role_scaled\",\"role\":\"worker\",\"tasks\":9}\n";
  hdfs::UploadOptions open_to_all;
  open_to_all.overwrite = false;
  open_to_all.permission = 0666;
  for (const std::string& id : NextAppIds(25)) {
    ASSERT_TRUE(
        mallory->UploadString(bait, absl::StrCat(dir, "/", id, ".jsonl"), open_to_all).ok());
  }
  Result r = RunCommand({"/usr/bin/env", "HADOOP_USER_NAME=bob", Submit(), "--yarn", "-n",
                         "itest-squat", "-D", "tony.history.dir=" + dir, "-r", "worker:1", "-m",
                         "256m", "echo bob-was-here-42 >&2; exit 3"});
  const std::string app = AppIdOf(r);
  ASSERT_FALSE(app.empty()) << r.out << r.err;
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;  // the task failed; the job ended, FAILED
  const std::string squatted = absl::StrCat(dir, "/", app, ".jsonl");
  ASSERT_FALSE(HdfsStatus(squatted).is_null()) << app << " was not among the squatted ids";
  EXPECT_EQ(HdfsText(squatted), bait) << "bob's AM wrote into mallory's file";
  const std::string own = absl::StrCat("/user/bob/.tony/history/", app, ".events.jsonl");
  // The client returns once the AM has reported the end; the log's last flush follows.
  EXPECT_TRUE(WaitUntil([&] { return HdfsText(own).find("\"job_finished\"") != std::string::npos; },
                        absl::Seconds(60)))
      << "no private event log with the job's end";
  http::Json st = HdfsStatus(own);
  ASSERT_FALSE(st.is_null()) << "no private event log";
  EXPECT_EQ(st["owner"].get<std::string>(), "bob");
  EXPECT_EQ(st["permission"].get<std::string>(), "600");
  const std::string events = HdfsText(own);
  EXPECT_THAT(events, HasSubstr("\"job_finished\""));
  EXPECT_THAT(events, HasSubstr("bob-was-here-42"));
  // bob's `ytf events` finds it.
  Result ev = RunCommand({"/usr/bin/env", "HADOOP_USER_NAME=bob", Ytf(), "events", "--json", app});
  EXPECT_EQ(ev.exit_code, 0) << ev.err;
  EXPECT_THAT(ev.out, HasSubstr("job_finished"));
  (void)mallory->Delete(dir, /*recursive=*/true);
  ExpectNothingLeft(app);
}

TEST(YarnJobSecurityTest, KillingTheAppThroughTheRmRemovesItsStaging) {
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

TEST(YarnJobSecurityTest, ASubmitterKilledMidUploadLeavesNoStagingBehind) {
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
  const std::string root = StagingRootOfTheCluster();
  std::string orphan;
  http::Client http;
  // Polled every 20 ms: the upload must still be going when the client is killed.
  WaitUntil(
      [&] {
        auto r = http.Get(
            absl::StrCat(harness::HadoopCluster::Get().namenode_web_url(), "/webhdfs/v1", root,
                         "/?op=LISTSTATUS&user.name=", harness::HadoopCluster::Get().user()));
        if (!r.ok() || !r->ok()) return false;
        auto j = http::ParseJson(r->body, "list");
        if (!j.ok()) return false;
        for (const auto& e : (*j)["FileStatuses"]["FileStatus"]) {
          std::string name = e["pathSuffix"].get<std::string>();
          // This test's own job: its spec is not uploaded yet (the big file goes first).
          if (!HdfsStatus(absl::StrCat(root, "/", name, "/itest-big-upload.bin")).is_null()) {
            orphan = name;
          }
        }
        return !orphan.empty();
      },
      absl::Seconds(60), absl::Milliseconds(20));
  kill((*p)->pid(), SIGKILL);
  (void)(*p)->Wait(absl::Seconds(10));
  unlink(big.c_str());
  ASSERT_FALSE(orphan.empty()) << "the upload never showed in HDFS";
  // It need not be there still: a submission of a test running beside this one may already have
  // swept it (the client that staged it is gone), which is what this test is about. SIGKILL
  // leaves the client no way to clean up itself.
  // The next submission from this machine sees that the client that staged it is gone.
  Result next = RunCommand(
      {Submit(), "--yarn", "-n", "itest-sweeper-2", "-r", "worker:1", "-m", "256m", "true"});
  EXPECT_EQ(next.exit_code, 0) << next.out << next.err;
  EXPECT_TRUE(WaitGoneFromHdfs(absl::StrCat(root, "/", orphan), absl::Seconds(20)))
      << "staging of " << orphan << " left after the client was killed mid-upload";
}

TEST(YarnJobSecurityTest, AFloodOfIdleConnectionsNeitherBloatsTheAmNorStopsTheJob) {
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

TEST(YarnJobSecurityTest, TheStatusPageAnswersYarnsProxyAndSendsEveryoneElseThere) {
  // On the loopback fallback the proxy and this test share 127.0.0.1.
  if (!MultiHost()) GTEST_SKIP() << "needs the test cluster's network namespaces";
  Result r = RunCommand({Submit(), "--yarn", "--detach", "-n", "itest-status-page-guard", "-r",
                         "worker:1", "-m", "256m", "exec sleep 600"});
  const std::string app = AppIdOf(r);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  yarn::YarnClientOptions o;
  o.rm_addresses = {harness::HadoopCluster::Get().rm_address()};
  auto yarn = yarn::NewYarnClient(o);
  ASSERT_TRUE(yarn.ok()) << yarn.status();
  std::string page_url;  // the AM's own URL, which the RM's proxy forwards to
  ASSERT_TRUE(WaitUntil(
      [&] {
        auto report = (*yarn)->GetApplicationReport(*yarn::ParseApplicationId(app));
        if (report.ok()) page_url = report->original_tracking_url;
        return absl::StartsWith(page_url, "http://");
      },
      absl::Minutes(2)))
      << "no tracking URL for " << app;

  // Through the proxy (the RM's address): the page.
  http::Client http;
  auto proxied = http.Get(harness::HadoopCluster::Get().rm_web_url() + "/proxy/" + app + "/");
  ASSERT_TRUE(proxied.ok()) << proxied.status();
  EXPECT_THAT(proxied->body, HasSubstr("libtony"));
  // Prometheus' view through the same proxy: the job's gauges (issue 27).
  auto metrics =
      http.Get(harness::HadoopCluster::Get().rm_web_url() + "/proxy/" + app + "/metrics");
  ASSERT_TRUE(metrics.ok()) << metrics.status();
  EXPECT_THAT(metrics->body, HasSubstr("# TYPE tony_tasks gauge"));
  EXPECT_THAT(metrics->body, HasSubstr("tony_tasks{job=\"worker\",phase=\"total\"} 1"));
  EXPECT_THAT(metrics->body, HasSubstr("tony_job_attempt 1"));

  // From another node's address: a redirect to the proxy, and nothing of the page.
  const std::string rm_host =
      harness::HadoopCluster::Get().conf().Get("yarn.resourcemanager.hostname").value_or("");
  const std::string node_ns = absl::StrCat(rm_host.substr(0, rm_host.rfind('-')), "-nm1");
  const char* fetch =
      "import http.client, sys, urllib.parse as u\n"
      "p = u.urlsplit(sys.argv[1])\n"
      "c = http.client.HTTPConnection(p.hostname, p.port, timeout=10)\n"
      "c.request('GET', '/')\n"
      "r = c.getresponse()\n"
      "print(r.status, r.getheader('Location'), len(r.read()))\n";
  Result direct = RunCommand(
      {"/usr/sbin/ip", "netns", "exec", node_ns, "/usr/bin/python3", "-c", fetch, page_url});
  EXPECT_EQ(direct.exit_code, 0) << direct.err;
  EXPECT_THAT(direct.out, HasSubstr(absl::StrCat("307 http://")));
  EXPECT_THAT(direct.out, HasSubstr(absl::StrCat("/proxy/", app, "/ 0")));

  Result kill = RunCommand({Ytf(), "kill", app});
  EXPECT_EQ(kill.exit_code, 0) << kill.out << kill.err;
  ExpectNothingLeft(app);
}

}  // namespace
}  // namespace tony::itest
