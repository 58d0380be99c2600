// Copyright libtony authors.
//
// The real tony-executor binary against an in-process ClusterSpecBroker.

#include <arpa/inet.h>
#include <dirent.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/mutex.h"
#include "common/file_util.h"
#include "common/subprocess.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/http/test_http_server.h"
#include "tests/testing/wait_until.h"
#include "tony/cluster_spec_broker.h"

namespace tony {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr char kSecret[] = "executor-test-secret-0123456789";

std::string BinDir() {
  if (const char* d = std::getenv("TONY_BIN_DIR"); d != nullptr && *d) return d;
  return SelfDirectory() + "/../bin";
}

class Events : public ClusterSpecBrokerObserver {
 public:
  void OnRegistered(absl::string_view job, int index, absl::string_view address) override {
    Add(absl::StrCat("registered ", job, ":", index));
  }
  void OnTaskStarted(absl::string_view job, int index) override {
    Add(absl::StrCat("started ", job, ":", index));
  }
  void OnTaskExited(absl::string_view job, int index, int code, absl::string_view tail) override {
    Add(absl::StrCat("exited ", job, ":", index, " ", code));
    absl::MutexLock lock(&mu_);
    tail_ = std::string(tail);
  }
  std::vector<std::string> events() {
    absl::MutexLock lock(&mu_);
    return events_;
  }
  std::string tail() {
    absl::MutexLock lock(&mu_);
    return tail_;
  }
  bool WaitFor(const std::string& e, absl::Duration timeout) {
    absl::MutexLock lock(&mu_);
    auto has = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return std::find(events_.begin(), events_.end(), e) != events_.end();
    };
    mu_.AwaitWithTimeout(absl::Condition(&has), timeout);
    return has();
  }

 private:
  void Add(std::string e) {
    absl::MutexLock lock(&mu_);
    events_.push_back(std::move(e));
  }
  absl::Mutex mu_;
  std::vector<std::string> events_ ABSL_GUARDED_BY(mu_);
  std::string tail_ ABSL_GUARDED_BY(mu_);
};

class ExecutorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = absl::StrCat(::testing::TempDir(), "/executor-itest-", getpid(), "-",
                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    ASSERT_TRUE(MakeDirectories(dir_ + "/logs").ok());
  }

  void StartBroker(std::map<std::string, int> tasks,
                   absl::Duration registration = absl::Seconds(30)) {
    ClusterSpecBrokerOptions options;
    options.listen_address = "127.0.0.1:0";
    options.secret = kSecret;
    options.expected_tasks = std::move(tasks);
    options.registration_timeout = registration;
    options.observer = &events_;
    broker_ = std::make_unique<ClusterSpecBroker>(options);
    ASSERT_TRUE(broker_->Start().ok());
  }

  // A spec with `jobs` ("worker: {instances: 1}" lines) and `command`.
  void WriteSpec(const std::string& jobs, const std::string& command,
                 const std::string& extra = "") {
    std::string yaml = absl::StrCat("command: '", command, "'\n", extra, "jobs:\n", jobs);
    ASSERT_TRUE(WriteFileAtomically(dir_ + "/job.yaml", yaml).ok());
  }

  std::unique_ptr<Subprocess> StartExecutor(const std::string& job, int index,
                                            const std::string& secret = kSecret,
                                            std::map<std::string, std::string> extra = {}) {
    SubprocessOptions o;
    o.argv = {BinDir() + "/tony-executor"};
    o.env = {{"PATH", "/usr/bin:/bin"},
             {"TONY_AM_ADDRESS", absl::StrCat("127.0.0.1:", broker_->port())},
             {"TONY_JOB_NAME", job},
             {"TONY_TASK_INDEX", std::to_string(index)},
             {"TONY_SPEC_FILE", dir_ + "/job.yaml"},
             {"TONY_TASK_LOG_DIR", dir_ + "/logs"},
             {"TONY_TASK_HOST", "127.0.0.1"},
             {"TONY_HEARTBEAT_INTERVAL", "200ms"}};
    std::string secret_file = dir_ + "/secret";
    EXPECT_TRUE(WriteFileAtomically(secret_file, secret, 0600).ok());
    o.env["TONY_SECRET_FILE"] = secret_file;
    for (auto& [k, v] : extra) o.env[k] = v;
    o.stderr_path = dir_ + "/executor.log";
    auto p = Subprocess::Spawn(o);
    EXPECT_TRUE(p.ok()) << p.status();
    return p.ok() ? *std::move(p) : nullptr;
  }

  std::string Read(const std::string& name) {
    auto s = ReadFileToString(dir_ + "/" + name);
    return s.ok() ? *s : "";
  }

  // Waits (at most 20 s) until the task's stderr says "ready": its command has set its trap.
  bool WaitForReady() {
    return testing::WaitUntil(
        [&] { return Read("logs/stderr").find("ready") != std::string::npos; }, absl::Seconds(20));
  }

  std::string dir_;
  Events events_;
  std::unique_ptr<ClusterSpecBroker> broker_;
};

TEST_F(ExecutorTest, RunsTheTaskWithItsEnvironmentAndReportsTheExit) {
  StartBroker({{"ps", 1}, {"worker", 1}});
  WriteSpec("  ps: {instances: 1}\n  worker: {instances: 1}\n",
            "echo hosts=$DTF_PS_HOSTS,$DTF_WORKER_HOSTS; echo tf=$TF_CONFIG; "
            "env | grep -c TONY_SECRET; echo to-stderr >&2; exit 3");
  auto ps = StartExecutor("ps", 0);
  auto worker = StartExecutor("worker", 0);
  ASSERT_TRUE(ps && worker);
  auto code = worker->Wait(absl::Seconds(30));
  ASSERT_TRUE(code.ok()) << Read("executor.log");
  EXPECT_EQ(*code, 3) << Read("executor.log");
  EXPECT_TRUE(events_.WaitFor("exited worker:0 3", absl::Seconds(5)));
  EXPECT_EQ(events_.tail(), "to-stderr");
  ps->Terminate(absl::Seconds(5));
  auto spec = broker_->cluster_spec();
  ASSERT_TRUE(spec.has_value());
  std::string out = Read("logs/stdout");
  EXPECT_THAT(out,
              HasSubstr(absl::StrCat("hosts=", spec->jobs["ps"][0], ",", spec->jobs["worker"][0])));
  EXPECT_THAT(out, HasSubstr("\"task\":{\"type\":\"worker\",\"index\":0}"));
  EXPECT_THAT(out, HasSubstr("\n0\n"));  // no TONY_SECRET* variable reached the task
  EXPECT_THAT(Read("logs/stderr"), HasSubstr("to-stderr"));
  EXPECT_THAT(Read("executor.log"), Not(HasSubstr(kSecret)));
}

TEST_F(ExecutorTest, SigtermIsForwardedToTheTaskGroup) {
  StartBroker({{"worker", 1}});
  WriteSpec("  worker: {instances: 1}\n",
            "trap \"echo got-term >&2; exit 7\" TERM; echo ready >&2; sleep 60 & wait");
  // A host name rather than an address: resolved by the executor.
  auto worker = StartExecutor("worker", 0, kSecret,
                              {{"TONY_AM_ADDRESS", absl::StrCat("localhost:", broker_->port())}});
  ASSERT_TRUE(events_.WaitFor("started worker:0", absl::Seconds(20)));
  ASSERT_TRUE(WaitForReady()) << Read("executor.log");  // bash has set its trap
  worker->Signal(SIGTERM);
  auto code = worker->Wait(absl::Seconds(20));
  ASSERT_TRUE(code.ok());
  EXPECT_EQ(*code, 7) << Read("executor.log");
  EXPECT_TRUE(events_.WaitFor("exited worker:0 7", absl::Seconds(5)));
  EXPECT_THAT(events_.tail(), HasSubstr("got-term"));
}

// Processes (other than this one) whose environment mentions `needle`.
std::vector<int> ProcessesWith(const std::string& needle) {
  std::vector<int> out;
  DIR* proc = opendir("/proc");
  if (proc == nullptr) return out;
  while (dirent* e = readdir(proc)) {
    int pid = std::atoi(e->d_name);
    if (pid <= 0 || pid == getpid()) continue;
    auto env = ReadFileToString(absl::StrCat("/proc/", pid, "/environ"));
    if (env.ok() && env->find(needle) != std::string::npos) out.push_back(pid);
  }
  closedir(proc);
  return out;
}

TEST_F(ExecutorTest, InAYarnContainerSigtermStillReachesTheTask) {
  StartBroker({{"worker", 1}});
  WriteSpec("  worker: {instances: 1}\n",
            "trap \"echo got-term >&2; exit 7\" TERM; echo ready >&2; sleep 60 & wait");
  auto worker =
      StartExecutor("worker", 0, kSecret, {{"CONTAINER_ID", "container_1_0001_01_000002"}});
  ASSERT_TRUE(events_.WaitFor("started worker:0", absl::Seconds(20)));
  ASSERT_TRUE(WaitForReady()) << Read("executor.log");  // bash has set its trap
  ::kill(worker->pid(), SIGTERM);  // the executor alone: it forwards to the task
  auto code = worker->Wait(absl::Seconds(20));
  ASSERT_TRUE(code.ok());
  EXPECT_EQ(*code, 7) << Read("executor.log");
  EXPECT_THAT(events_.tail(), HasSubstr("got-term"));
}

TEST_F(ExecutorTest, ContainerKilledLikeTheNodeManagerDoesLeavesNoTaskProcess) {
  // The NodeManager signals the container's process group: SIGTERM, then SIGKILL 250 ms later,
  // too soon for the executor to stop a task that ignores SIGTERM. The task must die with it.
  StartBroker({{"worker", 1}});
  WriteSpec("  worker: {instances: 1}\n", "trap \"\" TERM; echo ready >&2; sleep 600; echo never");
  auto worker =
      StartExecutor("worker", 0, kSecret, {{"CONTAINER_ID", "container_1_0001_01_000003"}});
  ASSERT_TRUE(events_.WaitFor("started worker:0", absl::Seconds(20)));
  // SIGTERM is ignored from here on.
  ASSERT_TRUE(WaitForReady()) << Read("executor.log");
  const std::string marker = dir_ + "/logs";  // in every task process's environment
  ASSERT_FALSE(ProcessesWith(marker).empty());
  worker->Signal(SIGTERM);  // the whole group, as the NodeManager does
  absl::SleepFor(absl::Milliseconds(250));
  worker->Signal(SIGKILL);
  (void)worker->Wait(absl::Seconds(10));
  std::vector<int> left;
  testing::WaitUntil([&] { return (left = ProcessesWith(marker)).empty(); }, absl::Seconds(5));
  EXPECT_TRUE(left.empty()) << left.size() << " task processes survived the container";
  for (int pid : left) ::kill(pid, SIGKILL);
}

TEST_F(ExecutorTest, ATaskProcessThatLeftWithSetsidDoesNotOutliveTheTask) {
  // A daemonising task: its child leaves the process group and the tree (setsid, orphaned when
  // the shell exits). Found by the executor's mark in its environment, in a YARN container and
  // locally alike.
  for (const bool container : {true, false}) {
    SCOPED_TRACE(container ? "in a YARN container" : "locally");
    StartBroker({{"worker", 1}});
    WriteSpec("  worker: {instances: 1}\n",
              "setsid sleep 300 </dev/null >/dev/null 2>&1 & echo ready >&2; exit 0");
    std::map<std::string, std::string> extra;
    if (container) extra["CONTAINER_ID"] = "container_1_0001_01_000004";
    auto worker = StartExecutor("worker", 0, kSecret, extra);
    ASSERT_TRUE(worker);
    auto code = worker->Wait(absl::Seconds(30));
    ASSERT_TRUE(code.ok()) << Read("executor.log");
    EXPECT_EQ(*code, 0);
    const std::string marker = dir_ + "/logs";  // in every task process's environment
    std::vector<int> left;
    testing::WaitUntil([&] { return (left = ProcessesWith(marker)).empty(); }, absl::Seconds(5));
    EXPECT_TRUE(left.empty()) << left.size() << " task processes outlived the task";
    for (int pid : left) ::kill(pid, SIGKILL);
    broker_.reset();
  }
}

TEST_F(ExecutorTest, WithoutItsApplicationMasterTheExecutorStopsItsTaskAndExits) {
  StartBroker({{"worker", 1}});
  WriteSpec("  worker: {instances: 1}\n",
            "trap \"echo got-term >&2; exit 9\" TERM; echo ready >&2; sleep 600 & wait",
            "timeouts: {am_unreachable: 2s, stop_grace: 2s}\n");
  auto worker = StartExecutor("worker", 0);
  ASSERT_TRUE(events_.WaitFor("started worker:0", absl::Seconds(20)));
  ASSERT_TRUE(WaitForReady()) << Read("executor.log");  // bash has set its trap
  // The AM goes away (its node died): nobody answers the heartbeats any more.
  broker_->Stop();
  absl::Time stopped = absl::Now();
  auto code = worker->Wait(absl::Seconds(30));
  ASSERT_TRUE(code.ok()) << "the executor outlived its AM: " << Read("executor.log");
  EXPECT_EQ(*code, 9) << Read("executor.log");
  EXPECT_LT(absl::Now() - stopped, absl::Seconds(25));
  EXPECT_THAT(Read("executor.log"), HasSubstr("has not answered for 2s"));
  EXPECT_THAT(Read("logs/stderr"), HasSubstr("got-term"));
}

TEST_F(ExecutorTest, TaskIgnoringSigtermIsKilledAfterTheGrace) {
  StartBroker({{"worker", 1}});
  WriteSpec("  worker: {instances: 1}\n", "trap \"\" TERM; echo ready >&2; sleep 60",
            "timeouts: {stop_grace: 1s}\n");
  auto worker = StartExecutor("worker", 0);
  ASSERT_TRUE(events_.WaitFor("started worker:0", absl::Seconds(20)));
  ASSERT_TRUE(WaitForReady()) << Read("executor.log");  // SIGTERM is ignored from here on
  absl::Time start = absl::Now();
  worker->Signal(SIGTERM);
  auto code = worker->Wait(absl::Seconds(20));
  ASSERT_TRUE(code.ok());
  EXPECT_EQ(*code, 128 + SIGKILL);
  EXPECT_LT(absl::Now() - start, absl::Seconds(5));
}

TEST_F(ExecutorTest, HoldsThePortUntilTheTaskListensOnIt) {
  StartBroker({{"worker", 1}});
  // The task binds its port with SO_REUSEPORT (as TensorFlow's gRPC server does) and listens.
  WriteSpec("  worker: {instances: 1}\n",
            "exec python3 -c \"import os,socket,time; s=socket.socket(); "
            "s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1); "
            "s.bind((chr(48)+chr(46)+chr(48)+chr(46)+chr(48)+chr(46)+chr(48), "
            "int(os.environ[chr(84)+chr(79)+chr(78)+chr(89)+chr(95)+chr(84)+chr(65)+chr(83)+"
            "chr(75)+chr(95)+chr(80)+chr(79)+chr(82)+chr(84)]))); s.listen(); time.sleep(1.5)\"");
  auto worker = StartExecutor("worker", 0);
  ASSERT_TRUE(events_.WaitFor("registered worker:0", absl::Seconds(20)));
  auto spec = broker_->cluster_spec();
  ASSERT_TRUE(spec.has_value());
  const std::string& address = spec->jobs["worker"][0];
  int port = std::stoi(address.substr(address.rfind(':') + 1));
  // Meanwhile nobody else can take the port (no SO_REUSEPORT).
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  EXPECT_NE(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  close(fd);
  auto code = worker->Wait(absl::Seconds(30));
  ASSERT_TRUE(code.ok());
  EXPECT_EQ(*code, 0) << Read("executor.log") << Read("logs/stderr");
  EXPECT_THAT(Read("executor.log"), HasSubstr("listens on port"));
}

TEST_F(ExecutorTest, WrongSecretIsRefused) {
  StartBroker({{"worker", 1}});
  WriteSpec("  worker: {instances: 1}\n", "echo never");
  auto worker = StartExecutor("worker", 0, "not-the-secret-at-all-123456");
  auto code = worker->Wait(absl::Seconds(30));
  ASSERT_TRUE(code.ok());
  EXPECT_EQ(*code, 125);
  EXPECT_THAT(Read("executor.log"), HasSubstr("UNAUTHENTICATED"));
  EXPECT_TRUE(events_.events().empty());
  EXPECT_EQ(Read("logs/stdout"), "");
}

TEST_F(ExecutorTest, RegistrationDeadlineEndsTheExecutor) {
  StartBroker({{"worker", 2}}, absl::Seconds(1));
  WriteSpec("  worker: {instances: 2}\n", "echo never");
  auto worker = StartExecutor("worker", 1);
  absl::Time start = absl::Now();
  auto code = worker->Wait(absl::Seconds(30));
  ASSERT_TRUE(code.ok());
  EXPECT_EQ(*code, 125);
  EXPECT_LT(absl::Now() - start, absl::Seconds(10));
  EXPECT_THAT(Read("executor.log"), HasSubstr("never registered: worker:0"));
}

TEST_F(ExecutorTest, SigtermWhileWaitingForTheSpecExitsAtOnce) {
  StartBroker({{"worker", 2}});
  WriteSpec("  worker: {instances: 2}\n", "echo never");
  auto worker = StartExecutor("worker", 0);
  ASSERT_TRUE(events_.WaitFor("registered worker:0", absl::Seconds(20)));
  worker->Signal(SIGTERM);
  auto code = worker->Wait(absl::Seconds(5));
  ASSERT_TRUE(code.ok());
  EXPECT_EQ(*code, 128 + SIGTERM);
}

// Work-preserving AM restart without YARN: a test NameNode lists the AM attempts' addresses
// (broker/am_address.h); the first broker goes away and a second one appears.
class MovingAmTest : public ExecutorTest {
 protected:
  void SetUp() override {
    ExecutorTest::SetUp();
    namenode_ = std::make_unique<testing::TestHttpServer>(
        [this](const testing::TestHttpServer::Request& r) {
          testing::TestHttpServer::Reply reply;
          if (r.path != "/webhdfs/v1/s/am-address" || r.Param("user.name") != "u") {
            reply.status = 404;
            return reply;
          }
          absl::MutexLock lock(&listing_mu_);
          reply.body = absl::StrCat(R"({"FileStatuses":{"FileStatus":[)", listing_, "]}}");
          return reply;
        });
  }

  std::map<std::string, std::string> LocatorEnvironment() {
    return {{"TONY_AM_ADDRESS_DIR", "/s/am-address"},
            {"TONY_NAMENODE_WEB", absl::StrCat("127.0.0.1:", namenode_->port())},
            {"HADOOP_USER_NAME", "u"}};
  }

  // Publishes `broker` as attempt `attempt`.
  void Publish(int attempt, const ClusterSpecBroker& broker) {
    absl::MutexLock lock(&listing_mu_);
    if (!listing_.empty()) listing_ += ",";
    absl::StrAppend(&listing_, R"({"pathSuffix":")", attempt, "_127.0.0.1_", broker.port(),
                    R"(","type":"DIRECTORY"})");
  }

  std::unique_ptr<ClusterSpecBroker> SecondBroker(Events* events) {
    ClusterSpecBrokerOptions options;
    options.listen_address = "127.0.0.1:0";
    options.secret = kSecret;
    options.expected_tasks = {{"worker", 1}};
    options.registration_timeout = absl::Seconds(30);
    options.observer = events;
    auto broker = std::make_unique<ClusterSpecBroker>(options);
    EXPECT_TRUE(broker->Start().ok());
    return broker;
  }

  std::unique_ptr<testing::TestHttpServer> namenode_;
  absl::Mutex listing_mu_;
  std::string listing_ ABSL_GUARDED_BY(listing_mu_);
};

TEST_F(MovingAmTest, TheTaskRunsOnAndRegistersWithTheNextAttempt) {
  StartBroker({{"worker", 1}});
  Publish(1, *broker_);
  const std::string end = dir_ + "/end";
  WriteSpec("  worker: {instances: 1}\n",
            absl::StrCat("echo $$ > ", dir_, "/pid; while [ ! -e ", end,
                         " ]; do sleep 0.1; done; echo finished"));
  auto worker = StartExecutor("worker", 0, kSecret, LocatorEnvironment());
  ASSERT_TRUE(events_.WaitFor("started worker:0", absl::Seconds(20)));
  std::string pid;
  testing::WaitUntil([&] { return !(pid = Read("pid")).empty(); }, absl::Seconds(10));
  ASSERT_FALSE(pid.empty());
  broker_->Stop();  // the AM died
  Events second;
  auto next = SecondBroker(&second);
  Publish(2, *next);
  ASSERT_TRUE(second.WaitFor("started worker:0", absl::Seconds(20))) << Read("executor.log");
  EXPECT_EQ(Read("pid"), pid);  // the same task process
  ASSERT_TRUE(WriteFileAtomically(end, "").ok());
  ASSERT_TRUE(second.WaitFor("exited worker:0 0", absl::Seconds(20))) << Read("executor.log");
  auto code = worker->Wait(absl::Seconds(10));
  ASSERT_TRUE(code.ok());
  EXPECT_EQ(*code, 0);
  EXPECT_THAT(Read("executor.log"), HasSubstr("the ApplicationMaster moved (attempt 2"));
}

TEST_F(MovingAmTest, AnExitWhileNoAmIsUpIsReportedToTheNextAttempt) {
  StartBroker({{"worker", 1}});
  Publish(1, *broker_);
  const std::string end = dir_ + "/end";
  WriteSpec("  worker: {instances: 1}\n",
            absl::StrCat("while [ ! -e ", end, " ]; do sleep 0.1; done; exit 7"));
  auto worker = StartExecutor("worker", 0, kSecret, LocatorEnvironment());
  ASSERT_TRUE(events_.WaitFor("started worker:0", absl::Seconds(20)));
  broker_->Stop();
  ASSERT_TRUE(WriteFileAtomically(end, "").ok());  // ends with no AM up
  // The executor has seen the task end and failed to report it to the stopped AM.
  ASSERT_TRUE(testing::WaitUntil(
      [&] { return Read("executor.log").find("could not report the exit") != std::string::npos; },
      absl::Seconds(20)))
      << Read("executor.log");
  Events second;
  auto next = SecondBroker(&second);
  Publish(2, *next);
  ASSERT_TRUE(second.WaitFor("exited worker:0 7", absl::Seconds(20))) << Read("executor.log");
  EXPECT_TRUE(second.WaitFor("registered worker:0", absl::ZeroDuration()));
  auto code = worker->Wait(absl::Seconds(10));
  ASSERT_TRUE(code.ok());
  EXPECT_EQ(*code, 7);
}

TEST_F(MovingAmTest, AnAmThatDiesDuringRegistrationIsFollowedToTheNextAttempt) {
  StartBroker({{"worker", 2}});  // worker:1 never comes: the registration waits
  Publish(1, *broker_);
  WriteSpec("  worker: {instances: 2}\n", "echo ran");
  auto worker = StartExecutor("worker", 0, kSecret, LocatorEnvironment());
  ASSERT_TRUE(events_.WaitFor("registered worker:0", absl::Seconds(20)));
  broker_->Stop();
  Events second;
  auto next = SecondBroker(&second);  // expects worker:0 only
  Publish(2, *next);
  // Within one look-out slice (15 s) of the executor's registration.
  ASSERT_TRUE(second.WaitFor("exited worker:0 0", absl::Seconds(40))) << Read("executor.log");
  auto code = worker->Wait(absl::Seconds(10));
  ASSERT_TRUE(code.ok());
  EXPECT_EQ(*code, 0);
  EXPECT_THAT(Read("executor.log"), HasSubstr("while registering"));
}

TEST_F(MovingAmTest, AnEarlierAttemptsAddressIsNeverFollowed) {
  // Launched by attempt 2 (its container id says so), which did not publish its address (it
  // started every task afresh); attempt 1's address is stale.
  StartBroker({{"worker", 1}});
  {
    absl::MutexLock lock(&listing_mu_);
    listing_ = absl::StrCat(R"({"pathSuffix":"1_127.0.0.1_)", tony::testing::UnusedLoopbackPort(),
                            R"(","type":"DIRECTORY"})");
  }
  WriteSpec("  worker: {instances: 1}\n", "exec sleep 600",
            "timeouts: {am_unreachable: 2s, stop_grace: 1s}\n");
  std::map<std::string, std::string> env = LocatorEnvironment();
  env["CONTAINER_ID"] = "container_1700000000000_0001_02_000002";
  auto worker = StartExecutor("worker", 0, kSecret, env);
  ASSERT_TRUE(events_.WaitFor("started worker:0", absl::Seconds(20)));
  broker_->Stop();
  auto code = worker->Wait(absl::Seconds(20));
  ASSERT_TRUE(code.ok());
  EXPECT_THAT(Read("executor.log"), HasSubstr("timeouts.am_unreachable"));
  EXPECT_THAT(Read("executor.log"), Not(HasSubstr("moved")));
}

TEST_F(MovingAmTest, WithoutANextAttemptTheDeadManSwitchStillStopsTheTask) {
  StartBroker({{"worker", 1}});
  Publish(1, *broker_);
  WriteSpec("  worker: {instances: 1}\n", "exec sleep 600",
            "timeouts: {am_unreachable: 2s, stop_grace: 1s}\n");
  auto worker = StartExecutor("worker", 0, kSecret, LocatorEnvironment());
  ASSERT_TRUE(events_.WaitFor("started worker:0", absl::Seconds(20)));
  broker_->Stop();
  const absl::Time stopped = absl::Now();
  auto code = worker->Wait(absl::Seconds(20));
  ASSERT_TRUE(code.ok());
  EXPECT_LT(absl::Now() - stopped, absl::Seconds(10));
  EXPECT_THAT(Read("executor.log"), HasSubstr("timeouts.am_unreachable"));
}

TEST_F(ExecutorTest, MissingConfigurationIsNamed) {
  SubprocessOptions o;
  o.argv = {BinDir() + "/tony-executor"};
  o.env = {{"TONY_AM_ADDRESS", "127.0.0.1:1"}};
  o.stderr_path = dir_ + "/executor.log";
  auto p = Subprocess::Spawn(o);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(*(*p)->Wait(absl::Seconds(10)), 125);
  EXPECT_THAT(Read("executor.log"), HasSubstr("TONY_JOB_NAME"));
}

}  // namespace
}  // namespace tony
