// Copyright libtony authors.
//
// libtony on the Kerberos test cluster (scripts/hadoop-cluster --secure: its own MIT KDC,
// hadoop.rpc.protection=privacy by default, as production runs it; SPNEGO everywhere, SASL data
// transfer): the real binaries with the test user's ticket, a real TensorFlow job, a task that
// reaches HDFS with nothing but the job's delegation token, and every bad-credential case ending
// in one line and exit 3.

#include <glob.h>
#include <netdb.h>
#include <pwd.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <map>
#include <regex>
#include <string>
#include <tuple>
#include <vector>

#include "absl/random/random.h"
#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "broker/broker_client.h"
#include "broker/tls.h"
#include "common/egress.h"
#include "common/file_util.h"
#include "common/subprocess.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "http/client.h"
#include "http/json.h"
#include "ipc/credentials.h"
#include "ipc/token.h"
#include "tests/harness/hadoop_cluster.h"
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

const harness::HadoopCluster& Cluster() { return harness::HadoopCluster::Get(); }

// Runs argv with the harness's environment (HADOOP_CONF_DIR, KRB5_CONFIG, KRB5CCNAME) plus
// `env`, capturing stdout and stderr.
Result Exec(std::vector<std::string> argv, std::map<std::string, std::string> env = {},
            absl::Duration timeout = absl::Minutes(5)) {
  static const std::string dir = [] {
    std::string tmpl = ::testing::TempDir() + "/secure_itest.XXXXXX";
    return std::string(mkdtemp(tmpl.data()));
  }();
  static int counter = 0;
  std::string base = absl::StrCat(dir, "/run", ++counter);
  SubprocessOptions options;
  options.argv = std::move(argv);
  options.env = CurrentEnvironment();
  options.env["HADOOP_CONF_DIR"] = Cluster().conf_dir();
  for (const auto& [k, v] : env) options.env[k] = v;
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

std::string Python() {
  static const std::string bin = [] {
    Result r =
        Exec({"/bin/bash", Cluster().source_dir() + "/scripts/python-env"}, {}, absl::Minutes(20));
    return std::string(absl::StripAsciiWhitespace(r.out)) + "/python";
  }();
  return bin;
}

// The Hadoop jars the cluster's daemons run from: a task uses them as any Hadoop client would.
std::string HadoopClasspath() {
  std::string state = Cluster().conf_dir();
  state = state.substr(0, state.rfind('/'));
  glob_t g{};
  std::string cp;
  if (glob((state + "/classpath-*/classpath.txt").c_str(), 0, nullptr, &g) == 0 && g.gl_pathc > 0) {
    cp = ReadFileToString(g.gl_pathv[0]).value_or("");
  }
  globfree(&g);
  return std::string(absl::StripAsciiWhitespace(cp));
}

// Expects exit 3 and exactly one line on stderr containing `needle`.
void ExpectOneLineExit3(const Result& r, absl::string_view needle) {
  EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
  EXPECT_EQ(Lines(r.err), 1) << r.err;
  EXPECT_THAT(r.err, HasSubstr(std::string(needle))) << r.err;
  EXPECT_THAT(r.err, Not(HasSubstr("Exception"))) << r.err;
}

// A shell command that lists the user's HDFS home with the cluster's own Hadoop client (FsShell)
// and no ticket cache, only the token file YARN gave the container: prints HDFS-LS-OK, or the
// error and exit 4. Needs TEST_HADOOP_CP (HadoopClasspath()) in the task's environment.
std::string HdfsLsWithOnlyTheToken() {
  return "KRB5CCNAME=FILE:/nonexistent/no-ticket \"$JAVA_HOME/bin/java\" "
         "-Djava.security.krb5.conf=\"$KRB5_CONFIG\" -cp \"$TEST_HADOOP_CP:$HADOOP_CONF_DIR\" "
         "org.apache.hadoop.fs.FsShell -ls /user/" +
         Cluster().principal().substr(0, Cluster().principal().find('@')) +
         " 2>hdfs-ls.err && echo HDFS-LS-OK || { tail -5 hdfs-ls.err; exit 4; }";
}

// What the containers of `app` printed, read from the NodeManagers' log directories (one host):
// the NodeManager's own log service cannot read files on this test bed (see ytf logs below).
std::string ContainersStdout(const std::string& app) {
  std::string state = Cluster().conf_dir();
  state = state.substr(0, state.rfind('/'));
  std::string out;
  glob_t g{};
  if (glob((state + "/data/nm*/logs/" + app + "/container_*/stdout").c_str(), 0, nullptr, &g) ==
      0) {
    for (size_t i = 0; i < g.gl_pathc; ++i) out += ReadFileToString(g.gl_pathv[i]).value_or("");
  }
  globfree(&g);
  return out;
}

// The ApplicationMaster's stderr (its log), from the NodeManagers' log directories (one host).
std::string AmStderr(const std::string& app) {
  std::string state = Cluster().conf_dir();
  state = state.substr(0, state.rfind('/'));
  std::string out;
  glob_t g{};
  if (glob((state + "/data/nm*/logs/" + app + "/container_*_000001/tony-am.stderr").c_str(), 0,
           nullptr, &g) == 0) {
    for (size_t i = 0; i < g.gl_pathc; ++i) out += ReadFileToString(g.gl_pathv[i]).value_or("");
  }
  globfree(&g);
  return out;
}

// The token files the NodeManagers wrote for the containers of `app` (one host), by container id.
std::map<std::string, ipc::Credentials> ContainerTokenFiles(const std::string& app) {
  std::string state = Cluster().conf_dir();
  state = state.substr(0, state.rfind('/'));
  std::map<std::string, ipc::Credentials> files;
  glob_t g{};
  const std::string pattern =
      state + "/data/nm*/local/usercache/*/appcache/" + app + "/container_*/container_tokens";
  if (glob(pattern.c_str(), 0, nullptr, &g) == 0) {
    for (size_t i = 0; i < g.gl_pathc; ++i) {
      std::string path = g.gl_pathv[i];
      std::string dir = path.substr(0, path.rfind('/'));
      auto creds = ipc::Credentials::ReadFile(path);
      if (creds.ok()) files[dir.substr(dir.rfind('/') + 1)] = *std::move(creds);
    }
  }
  globfree(&g);
  return files;
}

// `principal`'s short name under the test bed's hadoop.security.auth_to_local, which maps every
// TONY.TEST principal to the user the daemons run as (scripts/hadoop-cluster).
std::string ShortName(const std::string& principal) {
  const passwd* pw = getpwuid(geteuid());
  return absl::EndsWith(principal, "@TONY.TEST") && pw != nullptr
             ? std::string(pw->pw_name)
             : principal.substr(0, principal.find('/'));
}

// The renewer of an HDFS delegation token: its identifier is Hadoop's Writable
// AbstractDelegationTokenIdentifier — a version byte, then Text owner and Text renewer (a vint
// length, one byte below 128, and the bytes).
std::string RenewerOf(const ipc::Token& token) {
  const std::string& id = token.identifier;
  if (id.size() < 2) return "";
  size_t at = 2 + static_cast<uint8_t>(id[1]);
  if (at >= id.size() || static_cast<uint8_t>(id[at]) >= 128) return "";
  return id.substr(at + 1, static_cast<uint8_t>(id[at]));
}

TEST(SecureTest, TensorFlowExampleSucceedsAndATaskUsesHdfsWithOnlyTheDelegationToken) {
  std::string tmpl = ::testing::TempDir() + "/secure-tf-out.XXXXXX";
  const std::string out = mkdtemp(tmpl.data());
  const std::string src = Cluster().source_dir();
  // worker:0, after training, lists the user's HDFS home with only the job's token.
  const std::string hdfs_ls =
      "if [ $DTF_TASK_JOB_NAME = worker ] && [ $DTF_TASK_INDEX = 0 ]; then " +
      HdfsLsWithOnlyTheToken() + "; fi";
  Result r = Exec({Submit(), "--yarn", "-n", "secure-tf", "-r", "ps:1,worker:2", "-m", "1g", "-s",
                   src + "/examples/classic_ps_worker.py", "-o", out, "-e",
                   "TEST_HADOOP_CP=" + HadoopClasspath(), "-e",
                   "PATH=" + Python().substr(0, Python().rfind('/')) + ":/usr/bin:/bin",
                   Python() + " ${DTF_TASK_SCRIPT} --steps 50 && " + hdfs_ls},
                  {}, absl::Minutes(10));
  const std::string app = AppIdOf(r.out);
  ASSERT_FALSE(app.empty()) << r.out << r.err;
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_THAT(r.err, HasSubstr("SUCCEEDED"));
  EXPECT_TRUE(ReadFileToString(out + "/checkpoint").ok()) << "no checkpoint in " << out;

  const std::string worker_out = ContainersStdout(app);
  EXPECT_THAT(worker_out, HasSubstr("HDFS-LS-OK"));
  EXPECT_THAT(worker_out, HasSubstr("/user/"));
  // The AM wrote the event log (docs/events.md) with the job's token over HTTPS: it would say
  // "event log: ..." otherwise.
  const std::string am_log = AmStderr(app);
  EXPECT_THAT(am_log, HasSubstr("TONY_PHASE am_started"));
  EXPECT_THAT(am_log, Not(HasSubstr("event log"))) << am_log;

  // ytf logs with the user's ticket: SPNEGO to the NodeManager's web services passes (no 401);
  // the NodeManager then needs Hadoop's native library to open container logs in secure mode
  // ("Secure IO is not possible without native code extensions"), which the Maven-built test
  // cluster lacks, so it answers 500. Production NodeManagers have it.
  // The client returns as soon as the AM reports the outcome; the NodeManagers serve the logs of
  // a finished application once YARN has recorded its end (ytf list shows YARN's own state).
  testing::WaitUntil(
      [&] {
        Result list = Exec({Ytf(), "list", "--all"});
        const size_t at = list.out.find(app);
        if (list.exit_code != 0 || at == std::string::npos) return true;
        const std::string line = list.out.substr(at, list.out.find('\n', at) - at);
        return !absl::StrContains(line, "RUNNING");
      },
      absl::Minutes(1));
  Result logs = Exec({Ytf(), "logs", app, "--task", "worker:0", "--file", "stdout"});
  if (logs.exit_code != 0) {
    EXPECT_THAT(logs.err, HasSubstr("HTTP 500")) << logs.err;
  }

  Result status = Exec({Ytf(), "status", app});
  EXPECT_EQ(status.exit_code, 0) << status.err;
  EXPECT_THAT(status.out, HasSubstr("SUCCEEDED"));
}

// What crosses loopback while a secure job runs (tcpdump, every packet whole), searched for what
// must never travel in the clear: the job secret, a value passed with -e, every token password
// of the AM's credentials (AMRMToken, HDFS delegation token) and the broker's TLS key. The RPCs
// are privacy-only (the AM's DIGEST-MD5 token connections to the RM and NodeManagers included),
// WebHDFS is HTTPS-only, the broker speaks TLS.
TEST(SecureTest, NoSecretTokenOrEnvValueCrossesTheWireInTheClear) {
  if (::geteuid() != 0 || ::access("/usr/bin/tcpdump", X_OK) != 0) {
    GTEST_SKIP() << "needs root and tcpdump";
  }
  const std::string pcap = ::testing::TempDir() + "/secure-wire.pcap";
  SubprocessOptions capture;
  capture.argv = {"/usr/bin/tcpdump", "-i", "lo", "-s", "0", "-U", "-n", "-w", pcap};
  capture.stderr_path = pcap + ".log";
  auto tcpdump = Subprocess::Spawn(capture);
  ASSERT_TRUE(tcpdump.ok()) << tcpdump.status();
  ASSERT_TRUE(testing::WaitUntil(
      [&] {
        return absl::StrContains(ReadFileToString(pcap + ".log").value_or(""), "listening on");
      },
      absl::Seconds(20)))
      << "tcpdump did not start";
  const std::string password = absl::StrCat("pw-", absl::Uniform<uint64_t>(absl::BitGen()));
  Result r = Exec({Submit(), "--yarn", "-n", "secure-wire", "-r", "worker:2", "-m", "256m", "-e",
                   "MYPASSWORD=" + password, "test -n \"$MYPASSWORD\""},
                  {}, absl::Minutes(5));
  (*tcpdump)->Signal(SIGINT);
  (void)(*tcpdump)->Wait(absl::Seconds(20));
  const std::string app = AppIdOf(r.out);
  ASSERT_FALSE(app.empty()) << r.out << r.err;
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const std::string wire = ReadFileToString(pcap).value_or("");
  ASSERT_GT(wire.size(), 10000u) << "the capture holds almost nothing";

  const char* home = std::getenv("HOME");
  const std::string secret =
      ReadFileToString(absl::StrCat(home != nullptr ? home : "", "/.tony/apps/", app, "/secret"))
          .value_or("");
  ASSERT_EQ(secret.size(), 64u);
  std::map<std::string, std::string> needles = {{"the job secret", secret},
                                                {"the -e value", password}};
  for (const auto& [container, creds] : ContainerTokenFiles(app)) {
    if (!absl::EndsWith(container, "_000001")) continue;  // the AM's holds every kind
    for (const auto& [alias, t] : creds.tokens()) {
      needles[absl::StrCat(t.kind, " password")] = t.password;
      // Hadoop clients send passwords base64-encoded in DIGEST-MD5 and in URLs.
      needles[absl::StrCat(t.kind, " password (base64)")] = absl::Base64Escape(t.password);
    }
    if (auto key = creds.FindSecret(broker::kTlsKeyCredentialAlias)) {
      needles["the broker's TLS key"] = key->substr(40, 64);  // a line of its PEM body
    }
  }
  ASSERT_GE(needles.size(), 5u) << "no AM token file found for " << app;
  int leaked = 0;
  for (const auto& [what, value] : needles) {
    ASSERT_GE(value.size(), 16u) << what;
    const bool found = absl::StrContains(wire, value);
    leaked += found ? 1 : 0;
    EXPECT_FALSE(found) << what << " crossed loopback in the clear (" << pcap << ")";
  }
  if (leaked == 0)
    std::printf("captured %zu bytes of loopback during %s: none of %zu secrets in the clear\n",
                wire.size(), app.c_str(), needles.size());
}

// The HDFS delegation token lives one renew interval (2 minutes on the test cluster) unless YARN
// renews it: a task that uses HDFS only after that interval, with nothing but the token in its
// container, still gets through, and the job (whose AM writes its history and removes its
// staging with the same token at the end) SUCCEEDED.
TEST(SecureTest, AJobThatOutlivesTheTokenRenewIntervalStillUsesHdfs) {
  auto renew_ms = Cluster().conf().GetInt("dfs.namenode.delegation.token.renew-interval", 86400000);
  ASSERT_TRUE(renew_ms.ok()) << renew_ms.status();
  if (*renew_ms > 5 * 60 * 1000) GTEST_SKIP() << "renew interval " << *renew_ms << " ms: too long";
  const int64_t wait_s = *renew_ms / 1000 + 20;
  const std::string hdfs_ls = HdfsLsWithOnlyTheToken();
  const absl::Time start = absl::Now();
  Result r =
      Exec({Submit(), "--yarn", "-n", "secure-renew", "-r", "worker:1", "-m", "1g", "-e",
            "TEST_HADOOP_CP=" + HadoopClasspath(), absl::StrCat("sleep ", wait_s, " && ", hdfs_ls)},
           {}, absl::Minutes(10));
  const std::string app = AppIdOf(r.out);
  ASSERT_FALSE(app.empty()) << r.out << r.err;
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_THAT(r.err, HasSubstr("SUCCEEDED"));
  EXPECT_GE(absl::Now() - start, absl::Milliseconds(*renew_ms));
  const std::string worker_out = ContainersStdout(app);
  EXPECT_THAT(worker_out, HasSubstr("HDFS-LS-OK"));
}

TEST(SecureTest, KillListAndStatusWorkWithTheUsersTicket) {
  Result r = Exec({Submit(), "--yarn", "--detach", "-n", "secure-kill", "-r", "worker:1", "-m",
                   "128m", "exec sleep 600"});
  const std::string app = AppIdOf(r.out);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  ASSERT_FALSE(app.empty());

  Result list = Exec({Ytf(), "list"});
  EXPECT_EQ(list.exit_code, 0) << list.err;
  EXPECT_THAT(list.out, HasSubstr(app));

  // While the task runs: the job secret is in no process's command line or environment and in
  // no file the NodeManagers keep for the application (launch scripts, logs).
  const char* home = std::getenv("HOME");
  const std::string app_dir = absl::StrCat(home != nullptr ? home : "/tmp", "/.tony/apps/", app);
  const std::string secret = ReadFileToString(app_dir + "/secret").value_or("");
  ASSERT_EQ(secret.size(), 64u);
  EXPECT_TRUE(ReadFileToString(app_dir + "/tls.cert").ok()) << "no pinned certificate";
  testing::WaitUntil(
      [&] {
        return absl::StrContains(Exec({Ytf(), "status", app}).out, "1 running");
      },
      absl::Minutes(1));
  glob_t procs{};
  int scanned = 0;
  if (glob("/proc/[0-9]*", 0, nullptr, &procs) == 0) {
    for (size_t i = 0; i < procs.gl_pathc; ++i) {
      for (const char* f : {"/cmdline", "/environ"}) {
        auto text = ReadFileToString(std::string(procs.gl_pathv[i]) + f);
        if (!text.ok()) continue;
        ++scanned;
        EXPECT_THAT(*text, Not(HasSubstr(secret))) << procs.gl_pathv[i] << f;
      }
    }
  }
  globfree(&procs);
  EXPECT_GT(scanned, 10);
  std::string state = Cluster().conf_dir();
  state = state.substr(0, state.rfind('/'));
  glob_t files{};
  int kept = 0;
  if (glob((state + "/data/nm*/logs/" + app + "/*/*").c_str(), 0, nullptr, &files) == 0) {
    for (size_t i = 0; i < files.gl_pathc; ++i) {
      ++kept;
      EXPECT_THAT(ReadFileToString(files.gl_pathv[i]).value_or(""), Not(HasSubstr(secret)))
          << files.gl_pathv[i];
    }
  }
  globfree(&files);
  EXPECT_GT(kept, 0) << "no NodeManager files of " << app;

  // Only the AM (container 1) holds the broker's TLS private key; the executor's token file has
  // the certificate it pins, the job secret and the HDFS delegation token, whose renewer is the
  // ResourceManager (so YARN renews it), and no AMRMToken.
  const std::map<std::string, ipc::Credentials> tokens = ContainerTokenFiles(app);
  ASSERT_EQ(tokens.size(), 2u) << "token files of the AM and worker:0";
  const std::string rm_principal =
      Cluster().conf().Get("yarn.resourcemanager.principal", "").value_or("");
  ASSERT_FALSE(rm_principal.empty());
  for (const auto& [container, creds] : tokens) {
    const bool am = absl::EndsWith(container, "_000001");
    EXPECT_EQ(creds.FindSecret(broker::kTlsKeyCredentialAlias).has_value(), am) << container;
    EXPECT_TRUE(creds.FindSecret(broker::kTlsCertCredentialAlias).has_value()) << container;
    EXPECT_EQ(creds.FindTokenByKind(ipc::kAmRmTokenKind).has_value(), am) << container;
    auto hdfs = creds.FindTokenByKind(ipc::kHdfsDelegationTokenKind);
    ASSERT_TRUE(hdfs.has_value()) << container;
    // The NameNode keeps the renewer's short name (auth_to_local): the RM's, which the test
    // bed maps to the user the daemons run as, like every TONY.TEST principal.
    EXPECT_EQ(RenewerOf(*hdfs), ShortName(rm_principal)) << container;
  }

  // The broker, at the address YARN reports for the AM, answers only TLS with the job's
  // certificate and the job's secret: another job's secret, another job's certificate and
  // plaintext are all refused. Its status page (through YARN's proxy) shows no secret.
  http::Client http;
  http::Request report;
  report.url = absl::StrCat(Cluster().rm_web_url(), "/ws/v1/cluster/apps/", app);
  report.negotiate = true;
  auto got = http.Do(report);
  ASSERT_TRUE(got.ok()) << got.status();
  ASSERT_TRUE(got->ok()) << got->status << " " << got->body;
  auto json = http::ParseJson(got->body, "app report");
  ASSERT_TRUE(json.ok()) << json.status();
  const std::string broker = (*json)["app"].value("amRPCAddress", "");
  ASSERT_FALSE(broker.empty()) << got->body;
  const std::string cert = ReadFileToString(app_dir + "/tls.cert").value_or("");
  auto other = broker::GenerateTlsIdentity();
  ASSERT_TRUE(other.ok()) << other.status();
  broker::BrokerClientOptions pinned;
  pinned.tls_cert_pem = cert;
  broker::BrokerClientOptions wrong_cert;
  wrong_cert.tls_cert_pem = other->cert_pem;
  EXPECT_TRUE(broker::BrokerClient(broker, secret, pinned).GetStatus().ok());
  EXPECT_EQ(broker::BrokerClient(broker, std::string(64, 'a'), pinned).GetStatus().status().code(),
            absl::StatusCode::kUnauthenticated);
  EXPECT_FALSE(broker::BrokerClient(broker, secret, wrong_cert).GetStatus().ok());
  EXPECT_FALSE(broker::BrokerClient(broker, secret).GetStatus().ok());  // plaintext
  const std::string tracking = (*json)["app"].value("trackingUrl", "");
  EXPECT_FALSE(tracking.empty()) << got->body;
  if (!tracking.empty()) {
    http::Request page;
    page.url = tracking;
    page.negotiate = true;
    page.follow_redirects = true;
    auto shown = http.Do(page);
    ASSERT_TRUE(shown.ok()) << shown.status();
    EXPECT_THAT(shown->body, HasSubstr(app)) << shown->status;
    EXPECT_THAT(shown->body, Not(HasSubstr(secret)));
  }

  Result kill = Exec({Ytf(), "kill", app});
  EXPECT_EQ(kill.exit_code, 0) << kill.out << kill.err;
  Result status = Exec({Ytf(), "status", app});
  EXPECT_THAT(status.out, HasSubstr("KILLED")) << status.err;
}

// The IPv4 address `host` resolves to (the test bed's names are in /etc/hosts).
absl::StatusOr<std::string> ResolveIpv4(const std::string& host) {
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (::getaddrinfo(host.c_str(), nullptr, &hints, &found) != 0 || found == nullptr) {
    return absl::NotFoundError(absl::StrCat("cannot resolve ", host));
  }
  std::string ip = SockaddrToString(found->ai_addr);
  ::freeaddrinfo(found);
  return ip;
}

// Another user of the test bed (scripts/hadoop-cluster OTHER_USERS) signed in: `name`'s ticket
// in a cache of its own, from the keytab beside the cluster user's. The environment to run as
// them, or an empty map when that failed.
std::map<std::string, std::string> SignInAs(const std::string& name, const std::string& realm) {
  std::string keytab = Cluster().keytab();
  keytab = keytab.substr(0, keytab.rfind('/')) + "/" + name + ".keytab";
  const std::string cache =
      absl::StrCat("FILE:", ::testing::TempDir(), "/", name, "-", ::getpid(), ".ccache");
  Result kinit =
      Exec({"/usr/bin/kinit", "-kt", keytab, name + "@" + realm}, {{"KRB5CCNAME", cache}});
  if (kinit.exit_code != 0) {
    ADD_FAILURE() << "kinit as " << name << ": " << kinit.err;
    return {};
  }
  return {{"KRB5CCNAME", cache}};
}

// ytf history-server --spnego_keytab on the Kerberos cluster, as Hadoop's own pages: a client
// with the user's ticket sees the jobs (SPNEGO), one without credentials gets 401 Negotiate and
// nothing else, `ytf history --server` signs in by itself; a server reachable beyond loopback
// without a keytab, or with a keytab holding no HTTP key, does not start (exit 2, one line).
// Another signed-in user sees only the jobs whose view_acls name them: mallory none of the
// cluster user's, bob the one shared with him.
TEST(SecureTest, TheHistoryServerAsksForKerberosAndShowsJobsOnlyToTheSignedIn) {
  // Where the daemons listen: the name the HTTP/_HOST principal carries, and its address.
  std::smatch m;
  const std::string rm_web = Cluster().rm_web_url();
  ASSERT_TRUE(std::regex_search(rm_web, m, std::regex("//([^:/]+)"))) << rm_web;
  const std::string host = m[1].str();
  auto ip = ResolveIpv4(host);
  ASSERT_TRUE(ip.ok()) << ip.status();
  const std::string realm = Cluster().principal().substr(Cluster().principal().find('@') + 1);
  std::string service_keytab = Cluster().keytab();
  service_keytab = service_keytab.substr(0, service_keytab.rfind('/')) + "/service.keytab";

  // Every interface: beyond loopback (the test bed may run all on localhost).
  Result open = Exec({Ytf(), "history-server", "--listen_host", "0.0.0.0", "--port", "0"}, {},
                     absl::Seconds(30));
  EXPECT_EQ(open.exit_code, 2) << open.out << open.err;
  EXPECT_EQ(Lines(open.err), 1) << open.err;
  EXPECT_THAT(open.err, HasSubstr("--spnego_keytab"));
  Result no_key =
      Exec({Ytf(), "history-server", "--listen_host", *ip, "--port", "0", "--spnego_keytab",
            Cluster().keytab(), "--spnego_principal", "HTTP/_HOST@" + realm});
  EXPECT_EQ(no_key.exit_code, 2) << no_key.out << no_key.err;
  EXPECT_EQ(Lines(no_key.err), 1) << no_key.err;
  EXPECT_THAT(no_key.err, HasSubstr("--spnego_keytab: no key for HTTP/"));

  // A file of an earlier run would name an old port.
  const std::string base = absl::StrCat(::testing::TempDir(), "/history-spnego-", ::getpid());
  SubprocessOptions options;
  options.argv = {Ytf(),
                  "history-server",
                  "--listen_host",
                  *ip,
                  "--port",
                  "0",
                  "--spnego_keytab",
                  service_keytab,
                  "--spnego_principal",
                  "HTTP/_HOST@" + realm,
                  "--admin_acl",
                  "nobody-is-admin",
                  "--scan_interval",
                  "1s"};
  options.env = CurrentEnvironment();
  options.env["HADOOP_CONF_DIR"] = Cluster().conf_dir();
  options.stdout_path = base + ".out";
  options.stderr_path = base + ".err";
  auto server = Subprocess::Spawn(options);
  ASSERT_TRUE(server.ok()) << server.status();
  std::string port;
  EXPECT_TRUE(testing::WaitUntil(
      [&] {
        std::smatch p;
        const std::string out = ReadFileToString(options.stdout_path).value_or("");
        if (std::regex_search(out, p, std::regex(":([0-9]+)/ over .*Kerberos sign-in"))) {
          port = p[1].str();
        }
        return !port.empty() || (*server)->Poll().has_value();
      },
      absl::Seconds(60)));
  ASSERT_FALSE(port.empty()) << ReadFileToString(options.stderr_path).value_or("");
  const std::string url = absl::StrCat("http://", host, ":", port);

  http::Client client;
  auto anonymous = client.Get(url + "/api/jobs");
  ASSERT_TRUE(anonymous.ok()) << anonymous.status();
  EXPECT_EQ(anonymous->status, 401);
  EXPECT_EQ(anonymous->Header("www-authenticate").value_or(""), "Negotiate");
  EXPECT_THAT(anonymous->body, Not(HasSubstr("application_")));
  http::Request signed_in;
  signed_in.url = url + "/api/jobs";
  signed_in.negotiate = true;
  auto jobs = client.Do(signed_in);
  ASSERT_TRUE(jobs.ok()) << jobs.status();
  EXPECT_EQ(jobs->status, 200) << jobs->body;
  EXPECT_THAT(jobs->body, HasSubstr("\"total\""));
  // Made up, or from another service: refused.
  auto forged = client.Get(url + "/api/jobs", {{"Authorization", "Negotiate YIIBAAYGKwYBBQUC"}});
  ASSERT_TRUE(forged.ok()) << forged.status();
  EXPECT_EQ(forged->status, 403);

  Result listed = Exec({Ytf(), "history", "--server", url, "--json"});
  EXPECT_EQ(listed.exit_code, 0) << listed.err;
  EXPECT_THAT(listed.out, HasSubstr("\"total\""));
  Result without_ticket = Exec({Ytf(), "history", "--server", url, "--json"},
                               {{"KRB5CCNAME", "FILE:/nonexistent/no-ticket"}});
  EXPECT_NE(without_ticket.exit_code, 0);
  EXPECT_THAT(without_ticket.err, HasSubstr("answered 401"));

  // Two jobs of the cluster user's, one shared with bob; what each other user sees of them.
  Result own = Exec({Submit(), "--yarn", "-n", "secure-private", "-r", "worker:1", "-m", "128m",
                     "echo private-tail-17 >&2; exit 4"});
  Result shared = Exec({Submit(), "--yarn", "-n", "secure-shared", "--view_acls", "bob", "-r",
                        "worker:1", "-m", "128m", "true"});
  const std::string own_app = AppIdOf(own.out), shared_app = AppIdOf(shared.out);
  ASSERT_FALSE(own_app.empty()) << own.out << own.err;
  ASSERT_FALSE(shared_app.empty()) << shared.out << shared.err;
  EXPECT_TRUE(testing::WaitUntil(
      [&] {
        Result r = Exec({Ytf(), "history", "--server", url, "--json"});
        return r.out.find(own_app) != std::string::npos &&
               r.out.find(shared_app) != std::string::npos;
      },
      absl::Seconds(60)))
      << "the owner never saw both jobs";
  const std::map<std::string, std::string> mallory = SignInAs("mallory", realm);
  const std::map<std::string, std::string> bob = SignInAs("bob", realm);
  ASSERT_FALSE(mallory.empty() || bob.empty());
  Result seen_by_mallory = Exec({Ytf(), "history", "--server", url, "--json"}, mallory);
  EXPECT_EQ(seen_by_mallory.exit_code, 0) << seen_by_mallory.err;
  EXPECT_THAT(seen_by_mallory.out, Not(HasSubstr(own_app)));
  EXPECT_THAT(seen_by_mallory.out, Not(HasSubstr(shared_app)));
  Result seen_by_bob = Exec({Ytf(), "history", "--server", url, "--json"}, bob);
  EXPECT_THAT(seen_by_bob.out, HasSubstr(shared_app));
  EXPECT_THAT(seen_by_bob.out, Not(HasSubstr(own_app)));
  // The failed job's page, its diagnostics and stderr tail: the owner's, not mallory's.
  for (const auto& [who, env, code] :
       std::vector<std::tuple<std::string, std::map<std::string, std::string>, std::string>>{
           {"mallory", mallory, "404"}, {"owner", {}, "200"}}) {
    Result page = Exec({"/usr/bin/curl", "-s", "--negotiate", "-u", ":", "-o", "/dev/stdout", "-w",
                        "\n%{http_code}", url + "/api/jobs/" + own_app},
                       env);
    EXPECT_THAT(page.out, ::testing::EndsWith("\n" + code)) << who << ": " << page.out;
    if (code == "404") {
      EXPECT_THAT(page.out, Not(HasSubstr("private-tail-17"))) << who;
    } else {
      EXPECT_THAT(page.out, HasSubstr("private-tail-17")) << who;
    }
  }
  // Its task's stderr through the server's log route: mallory gets the job page's refusal
  // before anything is read; the owner's request is read (this test bed's NodeManagers cannot
  // serve logs in secure mode and aggregation is off: it is looked for and not found).
  for (const auto& [who, env, code, says] : std::vector<
           std::tuple<std::string, std::map<std::string, std::string>, std::string, std::string>>{
           {"mallory", mallory, "404", "No such job"}, {"owner", {}, "", "worker:0 stderr"}}) {
    Result log = Exec({"/usr/bin/curl", "-s", "--negotiate", "-u", ":", "-o", "/dev/stdout", "-w",
                       "\n%{http_code}", url + "/jobs/" + own_app + "/logs/worker:0/stderr"},
                      env);
    if (!code.empty()) {
      EXPECT_THAT(log.out, ::testing::EndsWith("\n" + code)) << who << log.out;
    }
    EXPECT_THAT(log.out, HasSubstr(says)) << who << ": " << log.out;
    if (who == "mallory") {
      EXPECT_THAT(log.out, Not(HasSubstr("private-tail-17"))) << log.out;
      EXPECT_THAT(log.out, Not(HasSubstr("NodeManager"))) << log.out;
      EXPECT_THAT(log.out, Not(HasSubstr("worker:0 stderr"))) << log.out;
    }
  }
  (*server)->Terminate(absl::Seconds(10));
}

// mallory, signed in as herself and with a home of her own (no job secret of anyone else's),
// against the cluster user's running job: YARN's application ACLs (yarn.acl.enable on the test
// bed) refuse her kill; the AM page through the ResourceManager's proxy, which checks no view
// ACL itself but names her, refuses her too. The job runs on; its owner sees the page and may
// kill it (docs/security.md, "Tenants").
TEST(SecureTest, AnotherUserCanNeitherKillNorViewAJobThroughYarn) {
  const std::string realm = Cluster().principal().substr(Cluster().principal().find('@') + 1);
  Result sub = Exec({Submit(), "--yarn", "--detach", "-n", "secure-victim", "-r", "worker:1", "-m",
                     "128m", "sleep 600"});
  const std::string app = AppIdOf(sub.out);
  ASSERT_FALSE(app.empty()) << sub.out << sub.err;
  ASSERT_TRUE(testing::WaitUntil(
      [&] {
        return absl::StrContains(Exec({Ytf(), "status", app}).out, "1 running");
      },
      absl::Minutes(3)));
  std::map<std::string, std::string> mallory = SignInAs("mallory", realm);
  ASSERT_FALSE(mallory.empty());
  const std::string home = absl::StrCat(::testing::TempDir(), "/mallory-home-", ::getpid());
  ASSERT_TRUE(MakeDirectories(home, 0700).ok());
  mallory["HOME"] = home;

  Result kill = Exec({Ytf(), "kill", app}, mallory);
  EXPECT_NE(kill.exit_code, 0) << kill.out << kill.err;
  EXPECT_EQ(Lines(kill.err), 1) << kill.err;
  EXPECT_THAT(kill.err, HasSubstr("mallory")) << kill.err;
  EXPECT_THAT(Exec({Ytf(), "status", app}).out, HasSubstr("RUNNING"));

  // The AM page through the proxy, with mallory's SPNEGO.
  http::Client http;
  http::Request page;
  page.url = absl::StrCat(Cluster().rm_web_url(), "/proxy/", app, "/");
  page.negotiate = true;
  page.gss_ccache = mallory["KRB5CCNAME"];
  auto seen = http.Do(page);
  ASSERT_TRUE(seen.ok()) << seen.status();
  EXPECT_EQ(seen->status, 403) << seen->body.substr(0, 400);
  EXPECT_THAT(seen->body, Not(HasSubstr("worker")));
  page.gss_ccache.clear();  // the owner's own ticket
  auto owners = http.Do(page);
  ASSERT_TRUE(owners.ok()) << owners.status();
  EXPECT_EQ(owners->status, 200) << owners->body.substr(0, 400);
  EXPECT_THAT(owners->body, HasSubstr("worker"));

  Result own_kill = Exec({Ytf(), "kill", app});
  EXPECT_EQ(own_kill.exit_code, 0) << own_kill.err;
}

TEST(SecureTest, KeytabLoginWorksWithoutATicketCache) {
  Result r =
      Exec({Ytf(), "list", "--principal", Cluster().principal(), "--keytab", Cluster().keytab()},
           {{"KRB5CCNAME", "FILE:/nonexistent/no-ticket"}});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
}

// As spark-submit --principal --keytab: ytf-submit logs in from the keytab in-process, with no
// ticket cache at all, and the job runs to SUCCEEDED (the keytab itself never leaves the client).
TEST(SecureTest, KeytabLoginSubmitsAJobWithoutATicketCache) {
  Result r =
      Exec({Submit(), "--yarn", "--principal", Cluster().principal(), "--keytab",
            Cluster().keytab(), "-n", "secure-keytab", "-r", "worker:1", "-m", "128m", "true"},
           {{"KRB5CCNAME", "FILE:/nonexistent/no-ticket"}});
  const std::string app = AppIdOf(r.out);
  ASSERT_FALSE(app.empty()) << r.out << r.err;
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_THAT(r.err, HasSubstr("SUCCEEDED"));
  // The AM's DIGEST-MD5 token connections (RM, NodeManager) under privacy: Hadoop's servers
  // offer 3des,rc4,des,rc4-56,rc4-40 and the AM takes 3des (docs/security.md).
  const std::string am_log = AmStderr(app);
  EXPECT_THAT(am_log, HasSubstr("DIGEST-MD5: confidentiality (auth-conf) with cipher 3des"))
      << am_log;
  EXPECT_THAT(am_log, Not(HasSubstr("with cipher rc4")));
  Result status = Exec(
      {Ytf(), "status", app, "--principal", Cluster().principal(), "--keytab", Cluster().keytab()},
      {{"KRB5CCNAME", "FILE:/nonexistent/no-ticket"}});
  EXPECT_EQ(status.exit_code, 0) << status.err;
  EXPECT_THAT(status.out, HasSubstr("SUCCEEDED"));
}

// auth_to_local may map a principal to a name that is not its first component (the test bed
// maps the daemons' principals to the cluster user): the client takes the name HDFS gives it,
// so the job's staging, its AM's ownership checks and the own listing agree with YARN's user
// (before, the client said "HTTP": its own job was missing from its own listing, and a
// scheduler re-attaching by tag would have submitted anew).
TEST(SecureTest, APrincipalMappedToAnotherNameIsThatNameEverywhere) {
  const std::string realm = Cluster().principal().substr(Cluster().principal().find('@') + 1);
  std::string keytab = Cluster().keytab();
  keytab = keytab.substr(0, keytab.rfind('/')) + "/service.keytab";
  const std::string principal = "HTTP/localhost@" + realm;
  const std::map<std::string, std::string> no_cache = {
      {"KRB5CCNAME", "FILE:/nonexistent/no-ticket"}};
  Result r = Exec({Submit(), "--yarn", "--principal", principal, "--keytab", keytab, "-n",
                   "secure-mapped", "-r", "worker:1", "-m", "128m", "true"},
                  no_cache);
  const std::string app = AppIdOf(r.out);
  ASSERT_FALSE(app.empty()) << r.out << r.err;
  EXPECT_EQ(r.exit_code, 0) << r.err;
  Result list =
      Exec({Ytf(), "list", "--all", "--principal", principal, "--keytab", keytab}, no_cache);
  EXPECT_EQ(list.exit_code, 0) << list.err;
  EXPECT_THAT(list.out, HasSubstr(app));
}

TEST(SecureTest, NoTicketIsOneLineExit3) {
  Result r = Exec({Ytf(), "list"}, {{"KRB5CCNAME", "FILE:/nonexistent/no-ticket"}});
  ExpectOneLineExit3(r, "no Kerberos ticket");
  Result s = Exec({Submit(), "--yarn", "-r", "worker:1", "true"},
                  {{"KRB5CCNAME", "FILE:/nonexistent/no-ticket"}});
  ExpectOneLineExit3(s, "kinit");
}

TEST(SecureTest, ExpiredTicketIsOneLineExit3) {
  const std::string cache = ::testing::TempDir() + "/secure_itest_short.ccache";
  Result kinit =
      Exec({"/usr/bin/kinit", "-l", "2s", "-kt", Cluster().keytab(), Cluster().principal()},
           {{"KRB5CCNAME", "FILE:" + cache}});
  ASSERT_EQ(kinit.exit_code, 0) << kinit.err;
  // Until the ticket has expired: klist -s fails once the cache holds no valid ticket.
  ASSERT_TRUE(testing::WaitUntil(
      [&] {
        return Exec({"/usr/bin/klist", "-s"}, {{"KRB5CCNAME", "FILE:" + cache}}).exit_code != 0;
      },
      absl::Seconds(30)))
      << "the 2 s ticket in " << cache << " is still valid";
  Result r = Exec({Ytf(), "list"}, {{"KRB5CCNAME", "FILE:" + cache}});
  ExpectOneLineExit3(r, "expired");
}

TEST(SecureTest, WrongKeytabOrPrincipalIsOneLineExit3) {
  // The daemons' keytab holds no key for the user.
  std::string service_keytab = Cluster().keytab();
  service_keytab = service_keytab.substr(0, service_keytab.rfind('/')) + "/service.keytab";
  Result wrong_keytab =
      Exec({Ytf(), "list", "--principal", Cluster().principal(), "--keytab", service_keytab});
  ExpectOneLineExit3(wrong_keytab, "--keytab");

  Result unknown =
      Exec({Ytf(), "list", "--principal", "nobody-here@TONY.TEST", "--keytab", Cluster().keytab()});
  ExpectOneLineExit3(unknown, "--principal");

  Result missing = Exec(
      {Ytf(), "list", "--principal", Cluster().principal(), "--keytab", "/nonexistent.keytab"});
  ExpectOneLineExit3(missing, "--keytab");

  Result half = Exec({Ytf(), "list", "--principal", Cluster().principal()});
  EXPECT_EQ(half.exit_code, 2) << half.err;
  EXPECT_THAT(half.err, HasSubstr("--keytab"));
}

// The user's clock 15 minutes ahead of the KDC's (MIT's default tolerance is 5): libfaketime
// (Debian's faketime, LD_PRELOAD) moves only the client's clock. With a fresh ticket cache the
// KDC refuses the service-ticket request; with the service ticket already cached the server's
// GSS acceptor refuses it (and Hadoop says only "GSS initiate failed"): both name the clock.
TEST(SecureTest, AClockSkewTheKdcRejectsIsOneLineExit3) {
  ASSERT_EQ(access("/usr/bin/faketime", X_OK), 0) << "scripts/install-deps installs faketime";
  const std::string cache = "FILE:" + ::testing::TempDir() + "/secure_itest_skew.ccache";
  Result kinit = Exec({"/usr/bin/kinit", "-kt", Cluster().keytab(), Cluster().principal()},
                      {{"KRB5CCNAME", cache}});
  ASSERT_EQ(kinit.exit_code, 0) << kinit.err;
  Result list = Exec({"/usr/bin/faketime", "+15 minutes", Ytf(), "list"}, {{"KRB5CCNAME", cache}});
  ExpectOneLineExit3(list, "clock skew too great");
  Result submit =
      Exec({"/usr/bin/faketime", "+15 minutes", Submit(), "--yarn", "-r", "worker:1", "true"},
           {{"KRB5CCNAME", cache}});
  ExpectOneLineExit3(submit, "clock skew");
  EXPECT_TRUE(AppIdOf(submit.out + submit.err).empty()) << "nothing submitted: " << submit.err;
  // The service tickets are cached now (ytf list got them): the servers refuse.
  Result cached = Exec({Ytf(), "list"}, {{"KRB5CCNAME", cache}});
  ASSERT_EQ(cached.exit_code, 0) << cached.err;
  Result refused =
      Exec({"/usr/bin/faketime", "+15 minutes", Ytf(), "list"}, {{"KRB5CCNAME", cache}});
  ExpectOneLineExit3(refused, "clock");
}

TEST(SecureTest, ServerPrincipalMismatchIsOneLineExit3) {
  Result r = Exec({Ytf(), "list", "-D", "yarn.resourcemanager.principal=rm/other.host@TONY.TEST"});
  ExpectOneLineExit3(r, "server principal mismatch");
}

}  // namespace
}  // namespace tony
