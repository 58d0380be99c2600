// Copyright libtony authors.
//
// Faults on the real test YARN: the fault matrix (AM and client signals), AM restarts that keep
// or restart tasks, a relaunched PS-strategy worker; and, with the cluster to themselves
// (*Exclusive*), lost NodeManagers, preemption and two jobs competing for the whole cluster.
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
#include <regex>
#include <set>
#include <sstream>

#include "absl/strings/match.h"
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

TEST(YarnFaultTest, PsStrategyWorkerKilledMidTrainingIsRelaunchedAloneAndTheJobSucceeds) {
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
  WaitUntil([&] { return absl::StrContains(ChiefOutput(app), "chief: step 25"); },
            absl::Minutes(3));
  ASSERT_THAT(ChiefOutput(app), HasSubstr("chief: step 25"));
  const int chief = TaskProcess(app, "chief", 0);
  const int worker = TaskProcess(app, "worker", 1);
  ASSERT_GT(chief, 0);
  ASSERT_GT(worker, 0);
  ASSERT_EQ(kill(worker, SIGKILL), 0);
  const absl::Time killed = absl::Now();
  // Relaunched: a new worker:1 process, while the chief's is the same one.
  int back = -1;
  WaitUntil([&] { return (back = TaskProcess(app, "worker", 1)) > 0 && back != worker; },
            killed + absl::Minutes(2) - absl::Now(), absl::Milliseconds(200));
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

// Bad nodes: a task that fails on its first node (every time there) is relaunched there once,
// fails again, and the node is excluded (YARN's blacklist): its third run is elsewhere and
// succeeds. The task tells the nodes apart by a marker file all NodeManagers of the test
// cluster see (they share this machine).
TEST(YarnFaultTest, ANodeWhereATaskFailedTwiceIsExcludedAndTheTaskEndsUpElsewhere) {
  std::string tmpl = ::testing::TempDir() + "/bad-node.XXXXXX";
  const std::string dir = mkdtemp(tmpl.data());
  ASSERT_EQ(chmod(dir.c_str(), 0777), 0);
  const std::string marker = dir + "/first-node";
  Result r = RunCommand(
      {Submit(), "--yarn", "-n", "itest-bad-node", "-r", "worker:1", "-m", "256m", "--restart",
       "worker:policy=on-failure,scope=task,max_restarts=3,backoff=1s,on_address_change=accept",
       absl::StrCat("[ -s ", marker, " ] || echo \"$NM_HOST\" > ", marker,
                    "; echo \"on $NM_HOST\"; ", "[ \"$(cat ", marker, ")\" != \"$NM_HOST\" ]")});
  const std::string app = AppIdOf(r);
  ASSERT_NE(app, "") << r.out << r.err;
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  // Succeeded: its last run was not on the first node, where the command always fails.
  std::string first;
  std::ifstream in(marker);
  std::getline(in, first);
  ASSERT_FALSE(first.empty());
  Result events = RunCommand({Ytf(), "events", app});
  EXPECT_THAT(events.out, HasSubstr("node_excluded")) << events.out;
  EXPECT_THAT(events.out, HasSubstr(first)) << events.out;
  Result status = RunCommand({Ytf(), "status", app});
  EXPECT_THAT(status.out, HasSubstr(absl::StrCat("node ", first, " excluded: 2 task failures")))
      << status.out;
  ExpectNothingLeft(app);
}

TEST(YarnFaultTest, FaultMatrixAmSigtermEndsTheJobKilledNamingTheSignal) {
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

TEST(YarnFaultTest, FaultMatrixCtrlCOfTheClientKillsTheJob) {
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
  WaitUntil(
      [&] {
        Result seen;
        seen.out = ReadFileToString(dir + "/out").value_or("") +
                   ReadFileToString(dir + "/err").value_or("");
        app = AppIdOf(seen);
        return !app.empty();
      },
      absl::Minutes(2));
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

TEST(YarnFaultTest, FaultMatrixAmSigkillWithOneAttemptFailsTheJobNamingTheAm) {
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

TEST(YarnFaultTest, FaultMatrixClientSigkillInClientModeFailsTheJobNamingTheClient) {
  // Client mode: ytf-submit runs client:0 here and heartbeats for it. SIGKILL of ytf-submit
  // takes the client task with it (its parent-death signal) and its heartbeats stop: the AM
  // fails the job after its heartbeat timeout naming the client, and stops the rest. The
  // timeout is 30 s (three of the client's 10 s heartbeats, six of an executor's) instead of
  // the default minute, which the test only waited out.
  std::string tmpl = ::testing::TempDir() + "/client-kill.XXXXXX";
  const std::string dir = mkdtemp(tmpl.data());
  SubprocessOptions options;
  options.argv = {Submit(),
                  "--yarn",
                  "--client",
                  "-n",
                  "itest-client-kill",
                  "-D",
                  "tony.task.heartbeat-timeout=30s",
                  "-r",
                  "ps:1,worker:1",
                  "-m",
                  "256m",
                  "exec sleep 600"};
  options.env = Environment();
  options.stdout_path = dir + "/out";
  options.stderr_path = dir + "/err";
  auto submit = Subprocess::Spawn(options);
  ASSERT_TRUE(submit.ok()) << submit.status();
  std::string app;
  int client_pid = -1;
  static const std::regex started_re("client task started \\(pid ([0-9]+)\\)");
  WaitUntil(
      [&] {
        Result seen;
        seen.out = ReadFileToString(dir + "/out").value_or("") +
                   ReadFileToString(dir + "/err").value_or("");
        app = AppIdOf(seen);
        std::smatch m;
        if (std::regex_search(seen.out, m, started_re)) client_pid = std::atoi(m[1].str().c_str());
        return client_pid > 0;
      },
      absl::Minutes(3));
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
  EXPECT_THAT(status.out, HasSubstr("sent no heartbeat for 30s")) << status.out;
  EXPECT_THAT(status.out, HasSubstr("ytf-submit")) << status.out;
  std::printf(
      "fault matrix: client SIGKILL (--client) -> FAILED after %s, no process left after %s\n",
      absl::FormatDuration(ended).c_str(), absl::FormatDuration(gone).c_str());
  ExpectNothingLeft(app);
}

TEST(YarnFaultTest, FaultMatrixAmSigkillWithTwoAttemptsKeepsEveryTaskRunning) {
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
  for (int pid : {ps, w0, w1}) {  // else the attempt takes a just-launched container along
    const std::string container = ContainerOf(pid);
    ASSERT_TRUE(WaitUntil([&] { return RmContainerRunning(app, container); }, absl::Seconds(30)))
        << container << " never RUNNING at the ResourceManager";
  }
  const int am_pid = AmProcess(app);
  ASSERT_GT(am_pid, 0);
  ASSERT_EQ(kill(am_pid, SIGKILL), 0);
  const absl::Time killed = absl::Now();
  ASSERT_TRUE(WriteFileAtomically(dir + "/end-1", "").ok());  // worker:1 ends with no AM up
  // Its process ends well before any new attempt can be up.
  const bool w1_ended_early = EndsBy(w1, killed + absl::Seconds(5));

  // The second attempt runs, the others are back with it, worker:1's exit is known.
  absl::Duration back_after;
  http::Json last;
  const bool back = WaitUntil(
      [&] {
        last = StatusJsonOf(app);
        if (!last.is_object() || last["attempt"].get<int>() != 2 ||
            !last["progress"].contains("worker")) {
          return false;
        }
        back_after = absl::Now() - killed;
        return last["progress"]["worker"]["running"].get<int>() == 1 &&
               last["progress"]["worker"]["succeeded"].get<int>() == 1 &&
               last["progress"]["ps"]["running"].get<int>() == 1;
      },
      killed + absl::Minutes(1) - absl::Now(), absl::Milliseconds(500));
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
  // Goodput: the AM's death and return are recovering; the adopted tasks train again after.
  http::Json goodput;
  EXPECT_TRUE(WaitUntil(
      [&] {
        Result usage = RunCommand({Ytf(), "usage", "--by", "job", "--json"});
        auto report = http::ParseJson(usage.out, "usage");
        if (!report.ok() || !report->contains("groups")) return false;
        for (const http::Json& g : (*report)["groups"]) {
          if (g.value("key", "") == app && g.contains("goodput")) goodput = g["goodput"];
        }
        return goodput.is_object() && goodput.value("stopping_hours", 0.0) > 0;  // job_finished
      },
      absl::Seconds(30)))
      << goodput.dump();
  double parts = 0;
  for (const char* part : {"waiting", "starting", "training", "recovering", "stopping"}) {
    parts += goodput.value(absl::StrCat(part, "_hours"), -1.0);
  }
  EXPECT_GT(goodput.value("recovering_hours", 0.0), 0) << goodput.dump();
  EXPECT_GT(goodput.value("training_hours", 0.0), 0) << goodput.dump();
  EXPECT_NEAR(parts, goodput.value("wall_hours", -1.0), 1e-9) << goodput.dump();
  std::printf(
      "fault matrix: AM SIGKILL, 2 attempts -> tasks back under attempt 2 after %s (same pids; "
      "worker:1's exit meanwhile reported), job SUCCEEDED %s after the kill\n",
      absl::FormatDuration(back_after).c_str(), absl::FormatDuration(ended).c_str());
  ExpectNothingLeft(app);
}

TEST(YarnFaultTest, AnAmRestartAfterATaskEndedStartsEveryTaskAfresh) {
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
  const bool w1_done = WaitUntil(
      [&] {
        http::Json s = StatusJsonOf(app);
        return s.is_object() && s["progress"].contains("worker") &&
               s["progress"]["worker"]["succeeded"].get<int>() == 1;
      },
      absl::Minutes(1));
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

TEST(YarnFaultTest, AnAmRestartAdoptsATaskRelaunchedBeforeIt) {
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
  WaitUntil(
      [&] {
        return (w1 = TaskProcess(app, "worker", 1)) > 0 && ContainerOf(w1) != first_container;
      },
      absl::Minutes(1));
  ASSERT_GT(w1, 0);
  const std::string w1_container = ContainerOf(w1);
  ASSERT_NE(w1_container, first_container);
  // The AM adopts by the history: wait until it names the new container.
  ASSERT_TRUE(
      WaitUntil([&] { return HistoryNames(app, "worker:1", w1_container); }, absl::Seconds(30)))
      << "the history of " << app << " never named worker:1's new container " << w1_container;
  // Killed before the NodeManager reported the new container, the attempt would take it along
  // (YARN keeps only RUNNING containers): seen once in 13 runs under load.
  ASSERT_TRUE(WaitUntil([&] { return RmContainerRunning(app, w1_container); }, absl::Seconds(30)))
      << "YARN never had worker:1's new container " << w1_container << " RUNNING";
  const int am_pid = AmProcess(app);
  ASSERT_GT(am_pid, 0);
  ASSERT_EQ(kill(am_pid, SIGKILL), 0);
  const absl::Time killed = absl::Now();
  const bool back = WaitUntil(
      [&] {
        http::Json s = StatusJsonOf(app);
        return s.is_object() && s["attempt"].get<int>() == 2 && s["progress"].contains("worker") &&
               s["progress"]["worker"]["running"].get<int>() == 2 &&
               s["progress"]["ps"]["running"].get<int>() == 1;
      },
      killed + absl::Minutes(1) - absl::Now(), absl::Milliseconds(500));
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

TEST(YarnFaultExclusiveTest, LosingTheAmsNodeManagerLeavesNoProcessOfTheJob) {
  // The AM's NodeManager dies (SIGKILL): YARN loses the AM's node after its liveness expiry
  // (15 s on the test cluster) and ends the attempt; the AM ends the job and, while it lives,
  // tells every executor that heartbeats to stop (issue 26); the executors on the dead node,
  // which no NodeManager will ever kill, stop their tasks then, not a minute after the AM is
  // gone (the default am_unreachable, kept here on purpose).
  std::string yaml = ::testing::TempDir() + "/itest-nm-loss.yaml";
  ASSERT_TRUE(WriteFileAtomically(yaml,
                                  "timeouts: {stop_grace: 2s}\n"
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

  // Bound: NM expiry 15 s + the AM's shutdown + a heartbeat + grace 2 s (without the AM's word:
  // + am_unreachable, 1 min).
  std::vector<int> left;
  WaitUntil([&] { return (left = ProcessesOf(app)).empty(); },
            killed + absl::Minutes(3) - absl::Now());
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

TEST(YarnFaultExclusiveTest, AWorkerOnAKilledNodeManagerIsRelaunchedElsewhereAndNothingIsLeft) {
  // Node loss from the real RM: the NodeManager of worker:0 dies (SIGKILL); after the test
  // cluster's 15 s liveness expiry the RM reports its containers lost (-100), which the restart
  // policy retries: worker:0 runs again on the other node, at a new address (accepted), and the
  // old executor, orphaned on the dead node, is told it was superseded and stops its task.
  // A first run sleeps 45 s, past the expiry and the relaunch, so the orphan is still there to
  // be superseded; the relaunched one (TONY_TASK_RESTARTS set) runs until the test has seen the
  // restarted NodeManager's node back in the job's use (node_included), at most 2 minutes.
  std::string tmpl = ::testing::TempDir() + "/node-loss.XXXXXX";
  const std::string dir = mkdtemp(tmpl.data());
  ASSERT_EQ(chmod(dir.c_str(), 0777), 0);
  const std::string done = dir + "/done";
  std::string yaml = ::testing::TempDir() + "/itest-node-loss.yaml";
  ASSERT_TRUE(WriteFileAtomically(yaml,
                                  "timeouts: {stop_grace: 2s}\n"
                                  "jobs:\n  worker:\n    instances: 2\n    memory: 3g\n"
                                  "    restart: {policy: exit-code, scope: task, backoff: 1s, "
                                  "on_address_change: accept}\n")
                  .ok());
  // The AM on the labelled node: losing a worker's node must not take the AM with it.
  Result r = RunCommand({Submit(), "--yarn", "--detach", "-n", "itest-node-loss", "--spec", yaml,
                         "--am_node_label", "gpu",
                         absl::StrCat("echo \"on $NM_HOST\"; if [ -n \"$TONY_TASK_RESTARTS\" ]; "
                                      "then for i in $(seq 240); do [ -e ",
                                      done, " ] && break; sleep 0.5; done; else sleep 45; fi")});
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
  WaitUntil(
      [&] {
        for (int pid : ProcessesOf(app)) {
          std::vector<std::string> vars = EnvironOf(pid);
          if (pid != worker && Has(vars, "DTF_TASK_JOB_NAME=worker") &&
              Has(vars, "DTF_TASK_INDEX=0") && NodeManagerOf(pid) > 0 && NodeManagerOf(pid) != nm &&
              std::any_of(vars.begin(), vars.end(),
                          [](const std::string& v) { return absl::StartsWith(v, "TF_CONFIG="); })) {
            back = pid;
          }
        }
        return back > 0;
      },
      killed + absl::Minutes(3) - absl::Now(), absl::Milliseconds(500));
  const absl::Duration relaunched = absl::Now() - killed;
  EXPECT_GT(back, 0) << "worker:0 never ran again";
  // The orphan on the dead node stops once superseded.
  EXPECT_TRUE(EndsBy(worker, absl::Now() + absl::Seconds(30)))
      << "the old worker:0 still runs on the dead node";
  const absl::Duration orphan_gone = absl::Now() - killed;
  // The NodeManager restarted while the job runs (a rolling restart): once YARN runs its node
  // again the job may use it again (node_included; excluded for YARN's report alone).
  Result restart =
      RunCommand({"/bin/bash",
                  harness::HadoopCluster::Get().source_dir() + "/scripts/hadoop-cluster", "start"},
                 absl::Minutes(4));
  EXPECT_EQ(restart.exit_code, 0) << restart.err;
  std::string events;
  WaitUntil(
      [&] {
        events = RunCommand({Ytf(), "events", app}).out;
        return absl::StrContains(events, "node_included");
      },
      absl::Minutes(2), absl::Seconds(1));
  EXPECT_THAT(events, HasSubstr("node_excluded")) << events;
  EXPECT_THAT(events, HasSubstr("node_included")) << events;
  const absl::Duration included = absl::Now() - killed;
  ASSERT_TRUE(WriteFileAtomically(done, "").ok());
  const std::string end = WaitForEnd(app);
  const absl::Duration ended = absl::Now() - killed;
  Result status = RunCommand({Ytf(), "status", app});
  EXPECT_EQ(end, "FINISHED/SUCCEEDED");
  EXPECT_THAT(status.out, HasSubstr("worker:0: exit status -100: its node was lost")) << status.out;
  EXPECT_THAT(status.out, HasSubstr("back at a new address"));
  std::printf(
      "NodeManager of worker:0 killed: relaunched after %s, orphan gone after %s, its node back "
      "in use after %s (NodeManager restarted), job SUCCEEDED %s after the kill\n",
      absl::FormatDuration(relaunched).c_str(), absl::FormatDuration(orphan_gone).c_str(),
      absl::FormatDuration(included).c_str(), absl::FormatDuration(ended).c_str());
  ExpectNothingLeft(app);
}

// An event's time (the AM's clock), InfinitePast when it has none.
absl::Time EventTime(const http::Json& e) {
  absl::Time t;
  std::string err;
  if (!e.is_object() || !absl::ParseTime("%Y-%m-%dT%H:%M:%E*SZ", e.value("time", ""), &t, &err)) {
    return absl::InfinitePast();
  }
  return t;
}

// One container YARN's scheduler announced it would preempt, from the job's history.
struct Preempted {
  std::string task;
  absl::Time noticed = absl::InfinitePast();  // task_preempt_notice
  absl::Time stopped = absl::InfinitePast();  // task_preempt_stop: the AM's, after its grace
  int64_t grace_ms = 0;
  absl::Time taken = absl::InfinitePast();  // container_completed
  int exit_status = 0;
};

// The job's preempted containers (those YARN announced) by container id.
std::map<std::string, Preempted> PreemptionsOf(const std::string& app) {
  std::map<std::string, Preempted> out;
  for (const http::Json& e : JobEvents(app)) {
    if (!e.is_object()) continue;
    const std::string event = e.value("event", ""), container = e.value("container", "");
    if (event == "task_preempt_notice" && !out.count(container)) {
      out[container].task = e.value("task", "");
      out[container].noticed = EventTime(e);
    }
    auto it = out.find(container);
    if (it == out.end()) continue;
    if (event == "task_preempt_stop") {
      it->second.stopped = EventTime(e);
      it->second.grace_ms = e.value("grace_ms", int64_t{0});
    } else if (event == "container_completed" && it->second.taken == absl::InfinitePast()) {
      it->second.taken = EventTime(e);
      it->second.exit_status = e.value("exit_status", 0);
    }
  }
  return out;
}

// examples/preempt_checkpoint.py's checkpoint of `task` ("worker:1") in `dir`: when its last one
// was written on a notice (InfinitePast: never).
absl::Time CheckpointedAt(const std::string& dir, const std::string& task) {
  const std::string index = task.substr(task.find(':') + 1);
  absl::StatusOr<std::string> text =
      ReadRegularFile(absl::StrCat(dir, "/worker-", index, ".json"), 1 << 16);
  EXPECT_TRUE(text.ok()) << task << ": " << text.status();
  if (!text.ok()) return absl::InfinitePast();
  auto ckpt = http::ParseJson(*text, "checkpoint");
  EXPECT_TRUE(ckpt.ok()) << ckpt.status();
  if (!ckpt.ok() || ckpt->value("checkpoints", 0) < 1) return absl::InfinitePast();
  return absl::FromUnixMillis(ckpt->value("checkpointed_at_ms", int64_t{0}));
}

// Submits examples/preempt_checkpoint.py as 4 restartable workers of 3 GB in queue research
// (30 % share; they hold most of the cluster) with `extra` flags, then a job of 2 such workers
// in queue default (70 %) that makes the RM take containers of the first back; both must
// SUCCEED. The first job's id.
std::string PreemptACheckpointingJob(const std::string& name, const std::string& dir,
                                     const std::vector<std::string>& extra) {
  const std::string script =
      harness::HadoopCluster::Get().source_dir() + "/examples/preempt_checkpoint.py";
  std::vector<std::string> argv = {
      Submit(),
      "--yarn",
      "--detach",
      "-n",
      name,
      "--queue",
      "research",
      "-r",
      "worker:4",
      "-m",
      "3g",
      "--restart",
      "worker:policy=on-failure,max_restarts=3,scope=task,on_address_change=accept,backoff=1s",
      "-s",
      script};
  argv.insert(argv.end(), extra.begin(), extra.end());
  // A first run of 20 s outlasts the preemption (YARN's kill 10 s after the mark); a resumed
  // one (TONY_RESUMED set) steps fast, instead of the job waiting out its remaining steps.
  argv.push_back(absl::StrCat("python3 ${DTF_TASK_SCRIPT} --steps 200 --checkpoint_dir ", dir,
                              " ${TONY_RESUMED:+--step_seconds 0.01}"));
  Result first = RunCommand(argv);
  const std::string app = AppIdOf(first);
  EXPECT_EQ(first.exit_code, 0) << first.out << first.err;
  if (app.empty()) return app;
  WaitUntil(
      [&] {
        return absl::StrContains(RunCommand({Ytf(), "status", app}).out, "4 running");
      },
      absl::Minutes(2));
  EXPECT_THAT(RunCommand({Ytf(), "status", app}).out, HasSubstr("4 running"));
  const absl::Time asked = absl::Now();
  Result second = RunCommand({Submit(), "--yarn", "-n", name + "-taker", "--queue", "default", "-r",
                              "worker:2", "-m", "3g", "sleep 2"});
  const absl::Duration second_took = absl::Now() - asked;
  EXPECT_EQ(second.exit_code, 0) << second.out << second.err;
  EXPECT_THAT(second.err, HasSubstr("SUCCEEDED"));
  EXPECT_EQ(WaitForEnd(app), "FINISHED/SUCCEEDED");
  std::printf("preempting job SUCCEEDED %s after it was submitted; the preempted one %s after\n",
              absl::FormatDuration(second_took).c_str(),
              absl::FormatDuration(absl::Now() - asked).c_str());
  return app;
}

std::string Secs(absl::Duration d) { return absl::StrFormat("%.1fs", absl::ToDoubleSeconds(d)); }

// Preemption with a checkpoint, by the real ResourceManager (the test cluster runs the
// CapacityScheduler's preemption monitor, which kills a marked container 10 s after marking it):
// the scheduler's notice reaches the preempted workers (examples/preempt_checkpoint.py catches
// SIGUSR1), each writes its checkpoint before YARN takes its container (exit status -102), and
// the restart policy relaunches it; the relaunched worker resumes from it (TONY_RESUMED,
// TONY_TASK_RESTARTS); the job succeeds and its history holds the notices.
TEST(YarnFaultExclusiveTest, APreemptedTaskHearsTheNoticeCheckpointsAndResumes) {
  std::string tmpl = ::testing::TempDir() + "/preempt-ckpt.XXXXXX";
  const std::string dir = mkdtemp(tmpl.data());
  ASSERT_EQ(chmod(dir.c_str(), 0777), 0);
  const std::string app = PreemptACheckpointingJob("itest-preempt-ckpt", dir, {});
  ASSERT_FALSE(app.empty());
  Result status = RunCommand({Ytf(), "status", app});
  EXPECT_THAT(status.out, HasSubstr("exit status -102: preempted by the scheduler")) << status.out;
  EXPECT_THAT(status.out, HasSubstr("task restart 1")) << status.out;

  // The history: each notice, then its container's end as preempted, by YARN (no grace).
  const std::map<std::string, Preempted> preempted = PreemptionsOf(app);
  ASSERT_FALSE(preempted.empty()) << "no task_preempt_notice in the history";
  std::map<std::string, absl::Time> taken;  // by task: its first container YARN took
  for (const auto& [container, p] : preempted) {
    EXPECT_EQ(p.stopped, absl::InfinitePast()) << container << ": the AM stopped it (no grace)";
    if (p.exit_status == -102 && !taken.count(p.task)) taken[p.task] = p.taken;
  }
  ASSERT_FALSE(taken.empty()) << "no noticed task's container ended preempted";
  // Each preempted worker's checkpoint, written on the notice; its next run resumed from it
  // (ytf logs shows each task's last container).
  for (const auto& [task, at] : taken) {
    const absl::Time written = CheckpointedAt(dir, task);
    EXPECT_NE(written, absl::InfinitePast()) << task << " never checkpointed on the notice";
    absl::Time noticed = absl::InfinitePast();
    for (const auto& [c, p] : preempted) {
      if (p.task == task && p.taken == at) noticed = p.noticed;
    }
    std::printf(
        "%s: notice -> checkpoint written %s, -> container taken by YARN %s (notice to "
        "taken %s)\n",
        task.c_str(), Secs(written - noticed).c_str(), Secs(at - written).c_str(),
        Secs(at - noticed).c_str());
  }
  EXPECT_THAT(RunCommand({Ytf(), "logs", app}).out,
              ::testing::ContainsRegex("resumed from step [0-9]+ \\(TONY_RESUMED=1, "
                                       "restart 1\\)"));
  ExpectNothingLeft(app);
}

// The same preemption with a preemption grace (--preemption_grace) shorter than YARN's wait:
// the AM stops each noticed task itself once the grace since the notice is over
// (task_preempt_stop), after its checkpoint and before YARN would have killed it, and releases
// the container; the task's end counts as the preemption (exit status -102 in its status), so
// the restart policy relaunches it (TONY_RESUMED=1) and the job succeeds.
//
// The grace must cover the notice's way to the task (the executor's next heartbeat, at most
// 5 s after the AM heard it) and end before YARN's kill (10 s after the mark; the AM hears of
// the mark within its 1 s scheduler heartbeat): 6.5 s leaves about a second and a half either
// side.
TEST(YarnFaultExclusiveTest, PreemptedWorkersStoppedByTheAmAfterTheirGraceResumeAndTheJobSucceeds) {
  std::string tmpl = ::testing::TempDir() + "/preempt-grace.XXXXXX";
  const std::string dir = mkdtemp(tmpl.data());
  ASSERT_EQ(chmod(dir.c_str(), 0777), 0);
  const std::string app =
      PreemptACheckpointingJob("itest-preempt-grace", dir, {"--preemption_grace", "6500ms"});
  ASSERT_FALSE(app.empty());
  Result status = RunCommand({Ytf(), "status", app});
  EXPECT_THAT(status.out, HasSubstr("exit status -102: preempted by the scheduler")) << status.out;
  EXPECT_THAT(status.out, HasSubstr("task restart 1")) << status.out;

  // The history: each notice, the AM's stop after the grace, then the container's end, which
  // was not YARN's preemption (-102): the AM's stop came first.
  const std::map<std::string, Preempted> preempted = PreemptionsOf(app);
  ASSERT_FALSE(preempted.empty()) << "no task_preempt_notice in the history";
  std::map<std::string, std::string> last;  // task -> its last noticed container
  for (const auto& [container, p] : preempted) {
    if (!last.count(p.task) || preempted.at(last[p.task]).noticed < p.noticed) {
      last[p.task] = container;
    }
  }
  int stopped = 0;
  for (const auto& [container, p] : preempted) {
    SCOPED_TRACE(absl::StrCat(p.task, " in ", container));
    EXPECT_NE(p.exit_status, -102) << "YARN took the container before the AM stopped it";
    if (p.stopped == absl::InfinitePast()) continue;  // ended by itself first
    ++stopped;
    EXPECT_EQ(p.grace_ms, 6500);
    EXPECT_GT(p.stopped, p.noticed);
    EXPECT_GT(p.taken, p.stopped);
    // The task's checkpoint file holds its last one only.
    if (last[p.task] != container) continue;
    const absl::Time written = CheckpointedAt(dir, p.task);
    EXPECT_GT(written, p.noticed) << "no checkpoint on the notice";
    EXPECT_LT(written, p.stopped) << "the checkpoint came after the AM's stop";
    std::printf(
        "%s: notice -> checkpoint written %s, -> stopped by the AM %s, -> container "
        "released %s (notice to released %s, exit status %d)\n",
        p.task.c_str(), Secs(written - p.noticed).c_str(), Secs(p.stopped - written).c_str(),
        Secs(p.taken - p.stopped).c_str(), Secs(p.taken - p.noticed).c_str(), p.exit_status);
  }
  EXPECT_GE(stopped, 1) << "no task_preempt_stop in the history";
  EXPECT_THAT(RunCommand({Ytf(), "logs", app}).out,
              ::testing::ContainsRegex("resumed from step [0-9]+ \\(TONY_RESUMED=1, "
                                       "restart 1\\)"));
  ExpectNothingLeft(app);
}

TEST(YarnFaultExclusiveTest, TwoJobsOfSixtyPercentEachSubmittedAtOnceBothSucceedOneAfterTheOther) {
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
  const bool saw_pending = WaitUntil(
      [&] {
        bool seen = false;
        for (const std::string& app : apps) {
          Result st = RunCommand({Ytf(), "status", app});
          if (absl::StrContains(st.out, "3072 MB, 1 vcore>") &&
              absl::StrContains(st.out, "pending") &&
              absl::StrContains(st.out, "queue headroom <")) {
            seen = true;
          }
        }
        return seen;
      },
      absl::Minutes(1));
  EXPECT_TRUE(saw_pending);
  const absl::Time start = absl::Now();
  std::vector<std::string> ends;
  for (const std::string& app : apps) {
    std::string state;
    WaitUntil(
        [&] {
          state = AppState(app);
          return absl::StartsWith(state, "FINISHED") || absl::StartsWith(state, "FAILED") ||
                 absl::StartsWith(state, "KILLED");
        },
        absl::Minutes(5));
    ends.push_back(state);
  }
  EXPECT_THAT(ends, ::testing::ElementsAre("FINISHED/SUCCEEDED", "FINISHED/SUCCEEDED"));
  std::printf("two 60%% jobs submitted at once: both SUCCEEDED within %s of the first status\n",
              absl::FormatDuration(absl::Now() - start).c_str());
  for (const std::string& app : apps) ExpectNothingLeft(app);
}

}  // namespace
}  // namespace tony::itest
