// Copyright libtony authors.

#include "tests/harness/hadoop_cluster.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "common/egress.h"
#include "common/logging.h"
#include "conf/hadoop_addresses.h"

#ifndef TONY_HARNESS_SOURCE_DIR
#define TONY_HARNESS_SOURCE_DIR ""
#endif

namespace tony::harness {
namespace {

HadoopCluster& Instance() {
  static HadoopCluster* cluster = new HadoopCluster();
  return *cluster;
}

std::string Env(const char* name) {
  const char* v = std::getenv(name);
  return v == nullptr ? std::string() : std::string(v);
}

absl::Duration EnvSeconds(const char* name, absl::Duration fallback) {
  int seconds = 0;
  if (absl::SimpleAtoi(Env(name), &seconds) && seconds > 0) return absl::Seconds(seconds);
  return fallback;
}

// Undoes bash's printf %q for the simple cases it produces: quotes and backslash escapes.
std::string Unquote(absl::string_view s) {
  if (s.size() >= 2 && (s.front() == '\'' || s.front() == '"') && s.back() == s.front()) {
    return std::string(s.substr(1, s.size() - 2));
  }
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 1 < s.size()) ++i;
    out.push_back(s[i]);
  }
  return out;
}

std::string LastLine(absl::string_view text) {
  std::string last;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    line = absl::StripAsciiWhitespace(line);
    if (!line.empty()) last = std::string(line);
  }
  return last;
}

}  // namespace

absl::StatusOr<CommandResult> RunCommand(const std::vector<std::string>& argv,
                                         absl::Duration timeout) {
  int pipe_fds[2];
  if (pipe2(pipe_fds, O_CLOEXEC) != 0) {
    return absl::InternalError(absl::StrCat("pipe: ", std::strerror(errno)));
  }
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = fork();
  if (pid < 0) return absl::InternalError(absl::StrCat("fork: ", std::strerror(errno)));
  if (pid == 0) {
    setpgid(0, 0);  // its own process group, so a timeout kills the whole script
    int devnull = open("/dev/null", O_RDONLY);
    dup2(devnull, STDIN_FILENO);
    dup2(pipe_fds[1], STDOUT_FILENO);
    execv(args[0], args.data());
    _exit(127);
  }
  close(pipe_fds[1]);
  const absl::Time deadline = absl::Now() + timeout;
  CommandResult result;
  char buf[4096];
  bool eof = false;
  int status = 0;
  bool exited = false;
  while (!exited) {
    if (absl::Now() >= deadline) {
      kill(-pid, SIGKILL);
      waitpid(pid, &status, 0);
      close(pipe_fds[0]);
      return absl::DeadlineExceededError(absl::StrCat(argv[0], " ", argv.size() > 1 ? argv[1] : "",
                                                      " did not finish within ",
                                                      absl::FormatDuration(timeout)));
    }
    if (!eof) {
      pollfd pfd{pipe_fds[0], POLLIN, 0};
      if (poll(&pfd, 1, 100) > 0) {
        ssize_t n = read(pipe_fds[0], buf, sizeof(buf));
        if (n > 0) {
          result.out.append(buf, static_cast<size_t>(n));
        } else if (n == 0 || errno != EINTR) {
          eof = true;
        }
      }
    } else {
      usleep(50 * 1000);
    }
    pid_t w = waitpid(pid, &status, WNOHANG);
    if (w == pid) exited = true;
  }
  // Drain what the child wrote just before exiting.
  fcntl(pipe_fds[0], F_SETFL, O_NONBLOCK);
  ssize_t n;
  while ((n = read(pipe_fds[0], buf, sizeof(buf))) > 0) result.out.append(buf, n);
  close(pipe_fds[0]);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return result;
}

const HadoopCluster& HadoopCluster::Get() { return Instance(); }

void HadoopClusterEnvironment::SetUp() {
  HadoopCluster& c = Instance();
  c.source_dir_ = Env("TONY_SOURCE_DIR");
  if (c.source_dir_.empty()) c.source_dir_ = TONY_HARNESS_SOURCE_DIR;
  const std::string script = c.source_dir_ + "/scripts/hadoop-cluster";
  ASSERT_EQ(access(script.c_str(), X_OK), 0)
      << script << " is missing or not executable (TONY_SOURCE_DIR=" << Env("TONY_SOURCE_DIR")
      << ")";

  c.secure_ = Env("TONY_HARNESS_SECURE") == "1";
  if (c.secure_) {
    // The script and everything the tests run inherit these.
    setenv("TONY_HADOOP_SECURE", "1", 1);
    std::string port = Env("TONY_SECURE_HADOOP_BASE_PORT");
    setenv("TONY_HADOOP_BASE_PORT", port.empty() ? "18900" : port.c_str(), 1);
    if (std::string home = Env("TONY_SECURE_HADOOP_HOME"); !home.empty()) {
      setenv("TONY_HADOOP_HOME", home.c_str(), 1);
    } else {
      unsetenv("TONY_HADOOP_HOME");
    }
    // This cluster lives for one test binary: recording class-data archives would only add
    // their dump (a minute or more on a loaded machine) to its stop.
    setenv("TONY_HADOOP_CDS", Env("TONY_HADOOP_CDS").empty() ? "0" : Env("TONY_HADOOP_CDS").c_str(),
           1);
  }

  auto status = RunCommand({script, "status"}, absl::Seconds(60));
  ASSERT_TRUE(status.ok()) << status.status();
  // Under ctest the cluster belongs to a fixture (tests/harness/cluster_fixture.sh): a test that
  // finds it damaged (a NodeManager an earlier test killed and failed to restore) repairs it,
  // and never stops it.
  const bool fixture = Env("TONY_HARNESS_FIXTURE") == "1";
  if (status->exit_code == 0) {
    TONY_LOG(INFO) << "reusing the running Hadoop cluster";
  } else if (fixture) {
    TONY_LOG(WARNING) << "the test cluster is not whole; repairing it (" << script << " start)";
    auto repair = RunCommand({script, "start"}, absl::Seconds(300));
    ASSERT_TRUE(repair.ok() && repair->exit_code == 0)
        << "the test cluster is down or damaged and '" << script
        << " start' could not repair it; every test that needs it fails for this one reason";
  } else {
    // Maven resolves the Hadoop jars on a first start: allow for it.
    absl::Duration timeout = EnvSeconds("TONY_HARNESS_START_TIMEOUT", absl::Seconds(540));
    TONY_LOG(INFO) << "starting the Hadoop cluster (" << script << " start)";
    auto start = RunCommand({script, "start"}, timeout);
    ASSERT_TRUE(start.ok()) << start.status();
    ASSERT_EQ(start->exit_code, 0) << script << " start failed (see its messages above)";
    c.started_here_ = true;
    ASSERT_FALSE(LastLine(start->out).empty())
        << script << " start printed no configuration directory";
  }
  auto env = RunCommand({script, "env"}, absl::Seconds(60));
  ASSERT_TRUE(env.ok()) << env.status();
  ASSERT_EQ(env->exit_code, 0) << script << " env failed";
  for (absl::string_view line : absl::StrSplit(env->out, '\n')) {
    if (!absl::ConsumePrefix(&line, "export ")) continue;
    size_t eq = line.find('=');
    if (eq == absl::string_view::npos) continue;
    const std::string name(line.substr(0, eq));
    const std::string value = Unquote(absl::StripAsciiWhitespace(line.substr(eq + 1)));
    if (name == "HADOOP_CONF_DIR") c.conf_dir_ = value;
    if (name == "TONY_KRB5_PRINCIPAL") c.principal_ = value;
    if (name == "TONY_KRB5_KEYTAB") c.keytab_ = value;
    // The egress guard: every client the tests run (in this process or started by it) refuses
    // an address outside the test bed's networks.
    if (c.secure_ || name == "TONY_ALLOWED_NETWORKS") setenv(name.c_str(), value.c_str(), 1);
  }
  ASSERT_FALSE(c.conf_dir_.empty()) << script << " env printed no HADOOP_CONF_DIR";
  ASSERT_NE(std::getenv("TONY_ALLOWED_NETWORKS"), nullptr)
      << script << " env printed no TONY_ALLOWED_NETWORKS (the test bed's networks)";
  if (c.secure_) {
    ASSERT_FALSE(c.principal_.empty()) << script << " env printed no TONY_KRB5_PRINCIPAL";
    // A reused cluster's ticket may be old: a fresh one for this run.
    auto kinit = RunCommand({"/usr/bin/kinit", "-kt", c.keytab_, c.principal_}, absl::Seconds(60));
    ASSERT_TRUE(kinit.ok()) << kinit.status();
    ASSERT_EQ(kinit->exit_code, 0) << "kinit -kt " << c.keytab_ << " " << c.principal_ << " failed";
  }
  struct stat st;
  ASSERT_EQ(stat((c.conf_dir_ + "/core-site.xml").c_str(), &st), 0)
      << "no core-site.xml in " << c.conf_dir_;
  setenv("HADOOP_CONF_DIR", c.conf_dir_.c_str(), 1);

  conf::LoadOptions options;
  options.conf_dir = c.conf_dir_;
  auto conf = conf::Configuration::Load(options);
  ASSERT_TRUE(conf.ok()) << conf.status();
  c.conf_ = *std::move(conf);

  auto rm_web = conf::RmWebUrls(c.conf_);
  ASSERT_TRUE(rm_web.ok()) << rm_web.status();
  c.rm_web_url_ = rm_web->front();
  auto rm = conf::RmAddresses(c.conf_);
  ASSERT_TRUE(rm.ok()) << rm.status();
  c.rm_address_ = rm->front().ToString();
  auto scheduler = conf::RmSchedulerAddress(c.conf_);
  ASSERT_TRUE(scheduler.ok()) << scheduler.status();
  c.scheduler_address_ = scheduler->ToString();
  auto nn = conf::NameNodeWebAddress(c.conf_);
  ASSERT_TRUE(nn.ok()) << nn.status();
  auto scheme = conf::NameNodeWebScheme(c.conf_);
  ASSERT_TRUE(scheme.ok()) << scheme.status();
  c.namenode_web_url_ = absl::StrCat(*scheme, "://", nn->ToString());
  auto fs = conf::DefaultFs(c.conf_);
  ASSERT_TRUE(fs.ok()) << fs.status();
  c.default_fs_ = *fs;
  c.user_ = conf::HadoopUserName();
  // Before any test talks to it: every master address is inside the test bed.
  for (const std::string& host : {rm->front().host, scheduler->host, nn->host}) {
    absl::Status local = CheckEgressToHost(host, "the test cluster");
    ASSERT_TRUE(local.ok()) << local;
  }
}

void HadoopClusterEnvironment::TearDown() {
  HadoopCluster& c = Instance();
  if (!c.started_here_) return;
  const std::string script = c.source_dir_ + "/scripts/hadoop-cluster";
  TONY_LOG(INFO) << "stopping the Hadoop cluster this test binary started";
  // Two rounds of SIGTERM-then-SIGKILL, each up to 2 minutes while archives are written.
  auto stop = RunCommand({script, "stop"}, absl::Seconds(300));
  if (!stop.ok() || stop->exit_code != 0) {
    ADD_FAILURE() << script << " stop failed: "
                  << (stop.ok() ? absl::StrCat("exit ", stop->exit_code)
                                : std::string(stop.status().message()));
  }
}

}  // namespace tony::harness
