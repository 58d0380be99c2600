// Copyright libtony authors.
//
// End to end through the local backend, with the real binaries (tony-am, tony-executor) and real
// TensorFlow (examples/). After every test no process of the job may be left: they all carry
// TONY_APP_ID=<id> in their environment (or the id on their command line).

#include <dirent.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <future>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "broker/broker_client.h"
#include "common/file_util.h"
#include "common/subprocess.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "http/json.h"
#include "local/process_sweep.h"
#include "tony/application_monitor.h"
#include "tony/submitter.h"
// local_itest has neither tests/ nor the source root on its include path.
#include "tests/testing/wait_until.h"

namespace tony {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

std::string SourceDir() {
  if (const char* d = std::getenv("TONY_SOURCE_DIR"); d != nullptr && *d) return d;
  return SelfDirectory() + "/../..";
}

std::string BinDir() {
  if (const char* d = std::getenv("TONY_BIN_DIR"); d != nullptr && *d) return d;
  return SelfDirectory() + "/../bin";
}

bool PythonHasTensorFlow() {
  return std::system("python -c 'import tensorflow' >/dev/null 2>&1") == 0;
}

// Puts a Python with TensorFlow first on PATH (scripts/python-env makes one if needed); tasks
// inherit the submitter's environment.
std::string EnsureTensorFlow() {
  if (PythonHasTensorFlow()) return "";
  std::string cmd = SourceDir() + "/scripts/python-env";
  FILE* p = ::popen(cmd.c_str(), "r");
  std::string out;
  char buf[512];
  while (p != nullptr && fgets(buf, sizeof(buf), p) != nullptr) out += buf;
  if (p != nullptr) ::pclose(p);
  std::string bin(absl::StripAsciiWhitespace(out));
  if (!bin.empty()) {
    std::string path = absl::StrCat(bin, ":", std::getenv("PATH") ? std::getenv("PATH") : "");
    setenv("PATH", path.c_str(), 1);
  }
  if (PythonHasTensorFlow()) return "";
  return "TensorFlow is not importable by `python` on PATH, and scripts/python-env could not "
         "provide it: run scripts/python-env (it creates ~/.cache/libtony/venv with "
         "tensorflow-cpu) and put its output first on PATH";
}

JobTypeSpec Job(const std::string& name, int instances) {
  JobTypeSpec jt;
  jt.name = name;
  jt.instances = instances;
  return jt;
}

class LocalJobTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { tf_problem_ = new std::string(EnsureTensorFlow()); }

  void SetUp() override {
    ASSERT_EQ(*tf_problem_, "") << *tf_problem_;
    work_root_ = absl::StrCat(::testing::TempDir(), "/tony-local-itest-", getpid());
    ASSERT_TRUE(MakeDirectories(work_root_).ok());
    LocalSubmitterOptions options;
    options.bin_dir = BinDir();
    options.work_root = work_root_;
    submitter_ = NewLocalSubmitter(options);
  }

  void TearDown() override {
    for (const std::string& id : ids_) {
      EXPECT_THAT(local::FindJobProcesses(id, /*match_cmdline=*/true), IsEmpty())
          << "processes of " << id << " left running";
      local::KillJobProcesses(id);
    }
  }

  std::unique_ptr<Application> Submit(const JobSpec& spec) {
    auto app = submitter_->Submit(spec);
    EXPECT_TRUE(app.ok()) << app.status();
    if (!app.ok()) return nullptr;
    ids_.push_back((*app)->id());
    return *std::move(app);
  }

  // ps:1,worker:2 running examples/classic_ps_worker.py, the seed's classic form.
  JobSpec ClassicSpec() {
    JobSpec spec;
    spec.name = "classic";
    spec.job_types = {Job("ps", 1), Job("worker", 2)};
    spec.script_file = SourceDir() + "/examples/classic_ps_worker.py";
    spec.output_path = work_root_ + "/classic-out";
    spec.command =
        "python ${DTF_TASK_SCRIPT} --job_name ${DTF_TASK_JOB_NAME} --task_index "
        "${DTF_TASK_INDEX} --ps_hosts ${DTF_PS_HOSTS} --worker_hosts ${DTF_WORKER_HOSTS} "
        "--train_dir ${DTF_OUTPUT_PATH} --steps 100";
    spec.timeouts.stop_grace = absl::Seconds(5);
    return spec;
  }

  std::string ReadLog(const ApplicationStatus& s, const std::string& name) {
    auto text = ReadFileToString(s.log_dir + "/" + name);
    return text.ok() ? *text : "";
  }

  static std::string* tf_problem_;
  std::string work_root_;
  std::unique_ptr<Submitter> submitter_;
  std::vector<std::string> ids_;
};

std::string* LocalJobTest::tf_problem_ = nullptr;

TEST_F(LocalJobTest, PsAndTwoWorkersSucceed) {
  auto app = Submit(ClassicSpec());
  ASSERT_NE(app, nullptr);
  EXPECT_THAT(app->id(), ::testing::StartsWith("local_"));
  std::vector<AppState> seen;
  int max_registered = 0;
  auto final = app->Wait(absl::Minutes(4), [&](const ApplicationStatus& s) {
    seen.push_back(s.state);
    int registered = 0;
    for (const auto& [name, p] : s.progress) registered += p.registered;
    max_registered = std::max(max_registered, registered);
  });
  ASSERT_TRUE(final.ok()) << final.status();
  EXPECT_EQ(final->state, AppState::kSucceeded) << final->diagnostics;
  EXPECT_EQ(final->diagnostics, "");
  EXPECT_EQ(final->progress["worker"].succeeded, 2);
  EXPECT_EQ(final->progress["worker"].failed, 0);
  EXPECT_EQ(final->progress["ps"].total, 1);
  EXPECT_EQ(max_registered, 3);
  EXPECT_FALSE(seen.empty());
  EXPECT_THAT(ReadLog(*final, "worker-0/stdout"), HasSubstr("worker 0 done: loss"));
  EXPECT_THAT(ReadLog(*final, "worker-1/stdout"), HasSubstr("worker 1 done: loss"));
  EXPECT_THAT(ReadLog(*final, "ps-0/stdout"), HasSubstr("ps 0 serving"));
  // The secret: a 0600 file, never in a log.
  struct stat st;
  ASSERT_EQ(stat((final->log_dir + "/secret").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  std::string secret(absl::StripAsciiWhitespace(ReadLog(*final, "secret")));
  EXPECT_EQ(secret.size(), 64u);
  for (const char* log : {"am.log", "worker-0/executor.log", "worker-0/stdout", "worker-0/stderr",
                          "ps-0/executor.log", "events.jsonl"}) {
    EXPECT_THAT(ReadLog(*final, log), Not(HasSubstr(secret))) << log;
  }
  // The event log (docs/events.md) is complete once the job is.
  std::vector<std::string> lines =
      absl::StrSplit(ReadLog(*final, "events.jsonl"), '\n', absl::SkipEmpty());
  ASSERT_GE(lines.size(), 10u);
  auto first = http::ParseJson(lines.front(), "first line");
  auto last = http::ParseJson(lines.back(), "last line");
  ASSERT_TRUE(first.ok() && last.ok()) << lines.front() << "\n" << lines.back();
  EXPECT_EQ(first->value("event", ""), "am_started");
  EXPECT_EQ(last->value("event", ""), "job_finished");
  EXPECT_EQ(last->value("state", ""), "SUCCEEDED");
  EXPECT_EQ((*last)["progress"]["worker"].value("succeeded", 0), 2);
}

TEST_F(LocalJobTest, WorkerExitingThreeFailsTheJobAndStopsPs) {
  JobSpec spec = ClassicSpec();
  // worker:1 fails once the parameter server's task runs (its marker file; 30 s at most), so
  // that stopping the job has a ps task to stop.
  const std::string ps_started = work_root_ + "/worker-exiting-three.ps-started";
  ::unlink(ps_started.c_str());
  spec.command =
      absl::StrCat("if [ \"$DTF_TASK_JOB_NAME\" = ps ]; then touch ", ps_started, "; fi; ",
                   "if [ \"$DTF_TASK_JOB_NAME:$DTF_TASK_INDEX\" = worker:1 ]; then "
                   "for i in $(seq 300); do [ -e ",
                   ps_started,
                   " ] && break; sleep 0.1; done; "
                   "echo 'worker 1: cannot read its shard' >&2; exit 3; fi; exec ",
                   spec.command);
  auto app = Submit(spec);
  ASSERT_NE(app, nullptr);
  auto final = app->Wait(absl::Minutes(4));
  ASSERT_TRUE(final.ok()) << final.status();
  EXPECT_EQ(final->state, AppState::kFailed);
  EXPECT_THAT(final->diagnostics, HasSubstr("worker:1 failed with exit code 3"));
  EXPECT_THAT(final->diagnostics, HasSubstr("worker 1: cannot read its shard"));
  EXPECT_EQ(final->progress["worker"].failed, 1);
  // The parameter server was stopped (it never exits by itself).
  EXPECT_THAT(ReadLog(*final, "ps-0/executor.log"), HasSubstr("forwarding SIGTERM"));
  EXPECT_THAT(ReadLog(*final, "am.log"), HasSubstr("ps:0 stopped"));
}

TEST_F(LocalJobTest, TaskDyingBeforeRegisteringFailsPromptly) {
  // A tony-executor that dies at once for worker:1 (as a broken container would), the real one
  // for the others.
  std::string bin = work_root_ + "/bin-crash";
  ASSERT_TRUE(MakeDirectories(bin).ok());
  ASSERT_EQ(symlink((BinDir() + "/tony-am").c_str(), (bin + "/tony-am").c_str()), 0);
  ASSERT_TRUE(WriteFileAtomically(
                  bin + "/tony-executor",
                  absl::StrCat("#!/bin/bash\n"
                               "if [ \"$TONY_JOB_NAME:$TONY_TASK_INDEX\" = worker:1 ]; then\n"
                               "  echo 'simulated crash before registering' >&2; exit 42\n"
                               "fi\n"
                               "exec ",
                               BinDir(), "/tony-executor\n"),
                  0755)
                  .ok());
  LocalSubmitterOptions options;
  options.bin_dir = bin;
  options.work_root = work_root_;
  auto submitter = NewLocalSubmitter(options);
  JobSpec spec = ClassicSpec();
  spec.timeouts.registration = absl::Minutes(10);  // the failure must not wait for this
  auto app = submitter->Submit(spec);
  ASSERT_TRUE(app.ok()) << app.status();
  ids_.push_back((*app)->id());
  absl::Time start = absl::Now();
  auto final = (*app)->Wait(absl::Minutes(2));
  ASSERT_TRUE(final.ok()) << final.status();
  EXPECT_LT(absl::Now() - start, absl::Seconds(60));
  EXPECT_EQ(final->state, AppState::kFailed);
  EXPECT_THAT(final->diagnostics, HasSubstr("worker:1 exited with code 42 before registering"));
}

TEST_F(LocalJobTest, WrongSecretIsRejectedAndKillLeavesNothing) {
  JobSpec spec;
  spec.job_types = {Job("worker", 2)};
  spec.command = "sleep 300";
  spec.timeouts.stop_grace = absl::Seconds(2);
  auto app = Submit(spec);
  ASSERT_NE(app, nullptr);
  // Wait until both tasks run.
  ApplicationStatus status;
  absl::Status failed;
  testing::WaitUntil(
      [&] {
        auto s = app->Status();
        if (!s.ok()) {
          failed = s.status();
          return true;
        }
        status = *s;
        return status.progress["worker"].running == 2;
      },
      absl::Seconds(60));
  ASSERT_TRUE(failed.ok()) << failed;
  ASSERT_EQ(status.progress["worker"].running, 2) << status.diagnostics;
  auto port = ReadFileToString(status.log_dir + "/am.port");
  ASSERT_TRUE(port.ok());
  std::string address = absl::StrCat("127.0.0.1:", absl::StripAsciiWhitespace(*port));
  broker::BrokerClient wrong(address, std::string(64, 'a'));
  EXPECT_EQ(wrong.GetStatus().status().code(), absl::StatusCode::kUnauthenticated);
  EXPECT_EQ(wrong.Kill("not mine").code(), absl::StatusCode::kUnauthenticated);
  EXPECT_EQ(wrong.Register("worker", 0, "127.0.0.1", 1, absl::Seconds(5)).status().code(),
            absl::StatusCode::kUnauthenticated);
  EXPECT_EQ(wrong.ReportExit("worker", 0, 1, "forged").code(), absl::StatusCode::kUnauthenticated);
  auto still = app->Status();
  ASSERT_TRUE(still.ok());
  EXPECT_EQ(still->state, AppState::kRunning);

  ASSERT_TRUE(app->Kill().ok());
  auto final = app->Status();
  ASSERT_TRUE(final.ok());
  EXPECT_EQ(final->state, AppState::kKilled);
  EXPECT_THAT(local::FindJobProcesses(app->id(), true), IsEmpty());
  EXPECT_TRUE(app->Kill().ok());  // harmless when final
}

// This process's children that are zombies (exited, never reaped).
std::vector<std::string> ZombieChildren() {
  std::vector<std::string> out;
  DIR* d = opendir("/proc");
  if (d == nullptr) return out;
  while (dirent* e = readdir(d)) {
    auto stat = ReadFileToString(absl::StrCat("/proc/", e->d_name, "/stat"));
    if (!stat.ok()) continue;
    // pid (comm) state ppid ...
    const size_t paren = stat->rfind(')');
    if (paren == std::string::npos) continue;
    std::vector<std::string> fields = absl::StrSplit(stat->substr(paren + 2), ' ');
    if (fields.size() > 1 && fields[0] == "Z" && fields[1] == std::to_string(getpid())) {
      out.push_back(stat->substr(0, paren + 1));
    }
  }
  closedir(d);
  return out;
}

// The job goes on after its Application is destroyed (as on YARN), and its AM, a child of this
// process, is reaped by the library when it exits: the host is left no zombie.
TEST_F(LocalJobTest, DestroyingARunningApplicationLeavesNoZombieAm) {
  JobSpec spec;
  spec.job_types = {Job("worker", 1)};
  spec.command = "sleep 2";
  auto app = Submit(spec);
  ASSERT_NE(app, nullptr);
  auto s = app->Status();
  ASSERT_TRUE(s.ok()) << s.status();
  ASSERT_FALSE(IsFinal(s->state));
  const std::string id = app->id();
  app.reset();
  const absl::Time deadline = absl::Now() + absl::Seconds(120);
  testing::WaitUntil([&] { return local::FindJobProcesses(id, /*match_cmdline=*/true).empty(); },
                     deadline - absl::Now());
  EXPECT_THAT(local::FindJobProcesses(id, true), IsEmpty()) << "the job did not end by itself";
  std::vector<std::string> zombies;
  testing::WaitUntil([&] { return (zombies = ZombieChildren()).empty(); }, deadline - absl::Now());
  EXPECT_THAT(zombies, IsEmpty());
}

// Destroying an Application never waits for its backend: a Kill in flight (here held by a task
// that ignores SIGTERM for the stop grace) is answered Cancelled at once and goes on without it.
TEST_F(LocalJobTest, DestroyingAnApplicationWithAKillInFlightDoesNotWaitForTheKill) {
  JobSpec spec;
  spec.job_types = {Job("worker", 1)};
  spec.command = "trap '' TERM; echo up; sleep 300";
  spec.timeouts.stop_grace = absl::Seconds(15);
  auto app = Submit(spec);
  ASSERT_NE(app, nullptr);
  const std::string id = app->id();
  testing::WaitUntil(
      [&] {
        auto s = app->Status();
        return s.ok() && s->progress.count("worker") && s->progress.at("worker").running == 1;
      },
      absl::Minutes(1));
  std::atomic<int> answers{0};
  absl::Status answer;
  app->KillAsync({}, [&](absl::Status s) {
    answer = s;
    ++answers;
  });
  app.reset();
  // Had the destructor waited for the kill, the task would be gone: it outlives the grace.
  EXPECT_EQ(answers, 1);
  EXPECT_TRUE(absl::IsCancelled(answer)) << answer;
  EXPECT_THAT(local::FindJobProcesses(id, /*match_cmdline=*/true), Not(IsEmpty()));
  // The kill goes on in the background and leaves nothing.
  const absl::Time deadline = absl::Now() + absl::Seconds(120);
  testing::WaitUntil([&] { return local::FindJobProcesses(id, true).empty(); },
                     deadline - absl::Now());
  EXPECT_THAT(local::FindJobProcesses(id, true), IsEmpty());
  std::vector<std::string> zombies;
  testing::WaitUntil([&] { return (zombies = ZombieChildren()).empty(); }, deadline - absl::Now());
  EXPECT_THAT(zombies, IsEmpty());
}

// Application promises thread-safety: Wait, Status and Kill from several threads at once.
// Status must keep answering while other threads are in Kill's reaping.
TEST_F(LocalJobTest, ConcurrentWaitStatusAndKill) {
  JobSpec spec;
  spec.job_types = {Job("worker", 2)};
  spec.command = "sleep 300";
  spec.timeouts.stop_grace = absl::Seconds(2);
  std::shared_ptr<Application> app = Submit(spec);
  ASSERT_NE(app, nullptr);
  // Two waiters; each sees the job running before it ends.
  std::vector<std::future<absl::StatusOr<ApplicationStatus>>> waiters;
  std::atomic<int> running_seen{0};
  for (int i = 0; i < 2; ++i) {
    waiters.push_back(std::async(std::launch::async, [app, &running_seen] {
      bool seen = false;
      return app->Wait(absl::Minutes(2), [&](const ApplicationStatus& s) {
        if (!seen && s.progress.count("worker") && s.progress.at("worker").running == 2) {
          seen = true;
          ++running_seen;
        }
      });
    }));
  }
  // Status() meanwhile, as a caller polling its job would.
  absl::Status failed;
  testing::WaitUntil(
      [&] {
        if (running_seen.load() >= 2) return true;
        auto s = app->Status();
        failed = s.status();
        return !s.ok();
      },
      absl::Seconds(60));
  ASSERT_TRUE(failed.ok()) << failed;
  ASSERT_EQ(running_seen.load(), 2);
  // Two killers: one reaps the AM, the other waits for it (and a deadline-bound status goes on).
  auto killer = std::async(std::launch::async, [app] { return app->Kill(); });
  auto second_killer = std::async(std::launch::async, [app] { return app->Kill(); });
  int statuses = 0;
  while (killer.wait_for(std::chrono::milliseconds(0)) != std::future_status::ready) {
    auto s = app->Status({.timeout = absl::Seconds(30)});  // never blocked behind the kill
    ASSERT_TRUE(s.ok()) << s.status();
    ++statuses;
  }
  ASSERT_TRUE(killer.get().ok());
  ASSERT_TRUE(second_killer.get().ok());
  EXPECT_GT(statuses, 0);
  for (auto& w : waiters) {
    auto final = w.get();
    ASSERT_TRUE(final.ok()) << final.status();
    EXPECT_EQ(final->state, AppState::kKilled) << final->diagnostics;
  }
  EXPECT_THAT(local::FindJobProcesses(app->id(), true), IsEmpty());
}

// The async twins return at once and answer on the Application's threads; a cancelled wait
// ends at once, and destroying the Application ends the waits still in flight.
TEST_F(LocalJobTest, AsyncTwinsReturnAtOnceAndWaitsAreCancellable) {
  JobSpec spec;
  spec.job_types = {Job("worker", 1)};
  spec.command = "sleep 300";
  spec.timeouts.stop_grace = absl::Seconds(2);
  std::unique_ptr<Application> app = Submit(spec);
  ASSERT_NE(app, nullptr);
  const std::thread::id caller = std::this_thread::get_id();

  std::promise<std::pair<absl::StatusOr<ApplicationStatus>, bool>> status;
  app->StatusAsync({}, [&](absl::StatusOr<ApplicationStatus> s) {
    status.set_value({std::move(s), std::this_thread::get_id() != caller});
  });
  auto [first, elsewhere] = status.get_future().get();
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_TRUE(elsewhere);

  // A blocking Wait on another thread and an async one, both cancelled by one token.
  Cancellation cancel;
  std::promise<absl::StatusOr<ApplicationStatus>> waited;
  app->WaitAsync(
      absl::Hours(1), nullptr,
      [&](absl::StatusOr<ApplicationStatus> s) { waited.set_value(std::move(s)); }, cancel);
  auto blocking =
      std::async(std::launch::async, [&] { return app->Wait(absl::Hours(1), nullptr, cancel); });
  testing::WaitUntil([&] { return app->Status()->state == AppState::kRunning; }, absl::Seconds(60));
  cancel.Cancel();
  // An hour-long wait that returned: the cancellation ended it (the job still runs).
  EXPECT_EQ(waited.get_future().get().status().code(), absl::StatusCode::kCancelled);
  EXPECT_EQ(blocking.get().status().code(), absl::StatusCode::kCancelled);
  EXPECT_EQ(app->Status()->state, AppState::kRunning);

  // A wait still in flight when the Application goes: it ends, Cancelled, before the
  // destructor returns. The job itself is left running, as documented, so a second handle
  // kills it.
  absl::StatusOr<std::unique_ptr<Application>> other = submitter_->Open(app->id());
  ASSERT_TRUE(other.ok()) << other.status();
  std::optional<absl::StatusCode> orphaned;
  app->WaitAsync(absl::Hours(1), nullptr,
                 [&](absl::StatusOr<ApplicationStatus> s) { orphaned = s.status().code(); });
  app.reset();
  EXPECT_EQ(orphaned, absl::StatusCode::kCancelled);

  std::promise<absl::Status> killed;
  (*other)->KillAsync({}, [&](absl::Status s) { killed.set_value(s); });
  EXPECT_TRUE(killed.get_future().get().ok());
  auto final = (*other)->Wait(absl::Minutes(1));
  ASSERT_TRUE(final.ok()) << final.status();
  EXPECT_EQ(final->state, AppState::kKilled);
}

// Three jobs followed from one thread through the monitor's descriptor; one is killed.
TEST_F(LocalJobTest, MonitorFollowsSeveralJobsFromOneThread) {
  ApplicationMonitor monitor;
  ASSERT_TRUE(monitor.Start().ok());
  std::vector<std::shared_ptr<Application>> apps;
  for (const char* command : {"true", "exit 3", "sleep 300"}) {
    JobSpec spec;
    spec.job_types = {Job("worker", 1)};
    spec.command = command;
    spec.timeouts.stop_grace = absl::Seconds(2);
    apps.push_back(Submit(spec));
    ASSERT_NE(apps.back(), nullptr);
    ASSERT_TRUE(monitor.Follow(apps.back(), absl::Minutes(2)).ok());
  }
  std::map<std::string, AppState> final;
  bool killed = false;
  absl::Time deadline = absl::Now() + absl::Minutes(3);
  while (final.size() < 3 && absl::Now() < deadline) {
    pollfd pfd{monitor.fd(), POLLIN, 0};
    ASSERT_GE(poll(&pfd, 1, 1000), 0);
    for (const ApplicationEvent& e : monitor.TakeEvents()) {
      ASSERT_TRUE(e.status.ok()) << e.id << ": " << e.status.status();
      if (e.last) final[e.id] = e.status->state;
      // The sleeping job is killed once it runs.
      if (!killed && e.id == apps[2]->id() && e.status->progress.count("worker") &&
          e.status->progress.at("worker").running == 1) {
        killed = true;
        ASSERT_TRUE(apps[2]->Kill().ok());
      }
    }
  }
  EXPECT_EQ(final[apps[0]->id()], AppState::kSucceeded);
  EXPECT_EQ(final[apps[1]->id()], AppState::kFailed);
  EXPECT_EQ(final[apps[2]->id()], AppState::kKilled);
  EXPECT_EQ(monitor.size(), 0);
}

TEST_F(LocalJobTest, Tf2ParameterServerStrategyExample) {
  JobSpec spec;
  spec.name = "ps-strategy";
  spec.job_types = {Job("chief", 1), Job("ps", 1), Job("worker", 2)};
  spec.script_file = SourceDir() + "/examples/tf2_ps_strategy.py";
  spec.output_path = work_root_ + "/ps-strategy-out";
  spec.command = "python ${DTF_TASK_SCRIPT} --steps 60";
  spec.timeouts.stop_grace = absl::Seconds(5);
  auto app = Submit(spec);
  ASSERT_NE(app, nullptr);
  auto final = app->Wait(absl::Minutes(4));
  ASSERT_TRUE(final.ok()) << final.status();
  EXPECT_EQ(final->state, AppState::kSucceeded) << final->diagnostics;
  EXPECT_THAT(ReadLog(*final, "chief-0/stdout"), HasSubstr("chief done: loss"));
  EXPECT_TRUE(ReadFileToString(spec.output_path + "/checkpoints/checkpoint").ok());
  EXPECT_EQ(std::system(absl::StrCat("ls ", spec.output_path,
                                     "/tensorboard/events.out.tfevents.* >/dev/null 2>&1")
                            .c_str()),
            0);
}

TEST_F(LocalJobTest, ClientModeFailingClientFailsTheJobAndStopsTheServers) {
  // Through ytf-submit, which runs the client: the servers never exit, the client decides.
  std::string out_path = work_root_ + "/client.out", err_path = work_root_ + "/client.err";
  SubprocessOptions options;
  options.argv = {
      BinDir() + "/ytf-submit",
      "--local",
      "--client",
      "-r",
      "ps:1,worker:1",
      "--registration_timeout",
      "2m",
      "if [ $DTF_TASK_JOB_NAME = client ]; then echo \"client sees $DTF_WORKER_HOSTS\"; "
      "echo 'client: no answer' >&2; exit 3; fi; exec sleep 600"};
  options.env = CurrentEnvironment();
  options.env["TMPDIR"] = work_root_;  // the job directory goes under it
  options.stdout_path = out_path;
  options.stderr_path = err_path;
  auto ytf = Subprocess::Spawn(options);
  ASSERT_TRUE(ytf.ok()) << ytf.status();
  auto code = (*ytf)->Wait(absl::Minutes(2));
  ASSERT_TRUE(code.ok()) << code.status();
  std::string out = ReadFileToString(out_path).value_or("");
  std::string err = ReadFileToString(err_path).value_or("");
  EXPECT_EQ(*code, 1) << out << err;
  EXPECT_THAT(out, HasSubstr("client sees 127.0.0.1:"));
  EXPECT_THAT(err, HasSubstr("client task exited with code 3"));
  EXPECT_THAT(err, HasSubstr("client:0 failed with exit code 3"));
  EXPECT_THAT(err, HasSubstr("FAILED"));
  std::string id(absl::StripAsciiWhitespace(out.substr(0, out.find('\n'))));
  ASSERT_THAT(id, ::testing::StartsWith("local_"));
  ids_.push_back(id);  // TearDown checks that nothing of it is left
}

TEST_F(LocalJobTest, TasksGetAMinimalEnvironmentNotTheHosts) {
  ASSERT_EQ(setenv("TONY_ITEST_HOST_ONLY", "yes", 1), 0);
  ASSERT_EQ(setenv("TONY_ITEST_PASSED", "yes", 1), 0);
  LocalSubmitterOptions options;
  options.bin_dir = BinDir();
  options.work_root = work_root_;
  options.pass_environment = {"TONY_ITEST_PASSED"};
  submitter_ = NewLocalSubmitter(options);
  JobSpec spec;
  spec.name = "env";
  spec.job_types = {Job("worker", 1)};
  spec.env["FROM_SPEC"] = "yes";
  spec.command =
      "env; test -z \"${TONY_ITEST_HOST_ONLY+set}\" && test \"$TONY_ITEST_PASSED\" = yes && "
      "test \"$FROM_SPEC\" = yes && test -n \"$PATH\" && test -n \"$DTF_TASK_JOB_NAME\"";
  auto app = Submit(spec);
  unsetenv("TONY_ITEST_HOST_ONLY");
  unsetenv("TONY_ITEST_PASSED");
  ASSERT_NE(app, nullptr);
  auto final = app->Wait(absl::Minutes(2));
  ASSERT_TRUE(final.ok()) << final.status();
  EXPECT_EQ(final->state, AppState::kSucceeded)
      << final->diagnostics << ReadLog(*final, "worker-0/stdout");
  EXPECT_THAT(ReadLog(*final, "worker-0/stdout"), Not(HasSubstr("TONY_ITEST_HOST_ONLY")));
}

TEST_F(LocalJobTest, InvalidSpecIsRejectedBeforeAnythingStarts) {
  JobSpec spec;  // no job types
  auto app = submitter_->Submit(spec);
  EXPECT_EQ(app.status().code(), absl::StatusCode::kInvalidArgument);
  JobSpec docker;
  docker.job_types = {Job("worker", 1)};
  docker.command = "true";
  docker.docker_image = "tensorflow/tensorflow:2.21.0";
  app = submitter_->Submit(docker);
  EXPECT_EQ(app.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(app.status().message(), HasSubstr("--docker_image"));
}

}  // namespace
}  // namespace tony
