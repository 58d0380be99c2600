// Copyright libtony authors.
//
// Jobs that change shape on the real test YARN (docs/elastic.md): elastic PyTorch, whose
// torchrun agents find each other through the rendezvous task libtony adds, train with
// whichever of them run, and absorb the loss of one (its whole container's process tree
// SIGKILLed), the model coming out as a single process computes it; and a TensorFlow job
// suspended (every container released) and resumed from its checkpoint. After every test no
// container or process remains.

#include <signal.h>
#include <stdlib.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iostream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "common/file_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "http/json.h"
#include "tests/harness/hadoop_cluster.h"

#include "tests/yarnam/job_itest_util.h"

namespace tony::itest {
namespace {

using ::testing::HasSubstr;

struct Progress {
  int step = -1;
  int world = 0;
};

// What rank 0 of examples/elastic_ddp.py last wrote: "<step> <world size> <time>".
Progress ReadProgress(const std::string& dir) {
  std::ifstream in(dir + "/progress");
  Progress p;
  in >> p.step >> p.world;
  return in ? p : Progress{};
}

std::string ReadLine(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return std::string(absl::StripAsciiWhitespace(line));
}

std::string MakeTempDir() {
  char tmpl[] = "/tmp/tony-elastic-XXXXXX";
  const char* dir = mkdtemp(tmpl);
  return dir == nullptr ? "" : dir;
}

// examples/elastic_ddp.py's final weights after `steps`, trained by one process here.
std::string ReferenceWeights(const std::string& script, int steps) {
  const std::string dir = MakeTempDir();
  Result ref = RunCommand({Python(), script, "--steps", absl::StrCat(steps), "--checkpoint", dir,
                           "--step-seconds", "0"});
  EXPECT_EQ(ref.exit_code, 0) << ref.out << ref.err;
  return ReadLine(dir + "/final");
}

// Whether the weights `got` (elastic_ddp.py's "final", 6 decimals) are the single-process run's
// `want`: equal to within one unit of the last decimal, since averaging the workers' identical
// gradients can round one way or the other (0.944751 against 0.944750 was seen). A step lost or
// taken twice differs by more at the step counts these tests reach.
::testing::AssertionResult SameWeights(const std::string& got, const std::string& want) {
  std::vector<std::string> a = absl::StrSplit(got, ' ', absl::SkipEmpty());
  std::vector<std::string> b = absl::StrSplit(want, ' ', absl::SkipEmpty());
  bool same = !a.empty() && a.size() == b.size();
  for (size_t i = 0; same && i < a.size(); ++i) {
    double x = 0, y = 0;
    same = absl::SimpleAtod(a[i], &x) && absl::SimpleAtod(b[i], &y) && std::abs(x - y) <= 1.5e-6;
  }
  if (same) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << "final weights \"" << got << "\", a single process's \"" << want << "\"";
}

// Also scaled by hand (ytf scale) down to two and back to three while it trains.
TEST(YarnElasticTest, ADdpJobGrowsToMaxAbsorbsALostWorkerIsScaledAndEndsWithTheRightModel) {
  const std::string src = harness::HadoopCluster::Get().source_dir();
  const std::string script = src + "/examples/elastic_ddp.py";
  const std::string shared = MakeTempDir();  // the tasks' shared checkpoint directory
  ASSERT_FALSE(shared.empty());
  // An upper bound: the test ends the training once it saw every phase (--stop-file).
  const std::string steps = "1000";
  const std::string stop = shared + "/stop";

  Result r = RunCommand(
      {Submit(), "--yarn", "--detach", "-n", "itest-elastic", "--framework", "pytorch", "-r",
       "worker:3", "--elastic", "worker=2:3", "-m", "1g", "-s", script, "-e",
       "TONY_RENDEZVOUS_PYTHON=" + Python(),
       absl::StrCat(Python(), " -m torch.distributed.run ${DTF_TASK_SCRIPT} ", "--steps ", steps,
                    " --step-seconds 0.2 --checkpoint ", shared, " --stop-file ", stop)});
  const std::string app = AppIdOf(r);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const absl::Time submitted = absl::Now();

  // It trains, and with all three once YARN granted them.
  ASSERT_TRUE(WaitUntil([&] { return ReadProgress(shared).world == 3; }, absl::Minutes(3)))
      << "never trained with 3 workers; progress: " << ReadProgress(shared).step << " steps, "
      << ReadProgress(shared).world << " workers";
  std::cout << "[ figure ] submission to training with 3 workers: "
            << absl::FormatDuration(absl::Trunc(absl::Now() - submitted, absl::Milliseconds(100)))
            << "\n";

  // SIGKILL worker:1's whole container: its executor, torchrun's agent and its trainer.
  const int agent = WaitForTaskProcess(app, "worker", 1);
  ASSERT_GT(agent, 0);
  const std::string container = ContainerOf(agent);
  ASSERT_FALSE(container.empty());
  const int step_at_kill = ReadProgress(shared).step;
  for (int pid : ProcessesOf(app)) {
    if (ContainerOf(pid) == container) kill(pid, SIGKILL);
  }
  const absl::Time killed = absl::Now();
  // Training goes on past the step it had reached (the others re-rendezvous and resume from
  // the checkpoint), then the lost worker is back (its container asked for again).
  ASSERT_TRUE(
      WaitUntil([&] { return ReadProgress(shared).step > step_at_kill + 5; }, absl::Minutes(3)))
      << "training never resumed after the loss";
  std::cout << "[ figure ] SIGKILL of a worker's container to training again: "
            << absl::FormatDuration(absl::Trunc(absl::Now() - killed, absl::Milliseconds(100)))
            << "\n";
  const bool full = WaitUntil(
      [&] {
        Progress p = ReadProgress(shared);
        return p.world == 3 || p.step >= std::stoi(steps);
      },
      absl::Minutes(3));
  if (full && ReadProgress(shared).world == 3) {
    std::cout << "[ figure ] SIGKILL to 3 workers again: "
              << absl::FormatDuration(absl::Trunc(absl::Now() - killed, absl::Milliseconds(100)))
              << "\n";
  }

  // ytf scale: refused outside the range and for a role that is not elastic, then down to two
  // (worker:2 stopped, not a failure) and back to three, training on throughout.
  Result over = RunCommand({Ytf(), "scale", app, "worker=4"});
  EXPECT_EQ(over.exit_code, 2) << over.out << over.err;
  EXPECT_THAT(over.err, HasSubstr("worker may have 2 to 3 tasks, not 4"));
  Result fixed = RunCommand({Ytf(), "scale", app, "rendezvous=2"});
  EXPECT_EQ(fixed.exit_code, 2) << fixed.out << fixed.err;
  EXPECT_THAT(fixed.err, HasSubstr("rendezvous is not elastic"));
  for (int tasks : {2, 3}) {
    const absl::Time asked = absl::Now();
    Result scaled = RunCommand(
        {Ytf(), "scale", app, absl::StrCat("worker=", tasks), "--wait", "--timeout", "3m"},
        absl::Minutes(4));
    EXPECT_EQ(scaled.exit_code, 0) << scaled.out << scaled.err;
    EXPECT_THAT(scaled.out, HasSubstr(absl::StrCat("worker: ", tasks, " tasks asked for")));
    EXPECT_THAT(scaled.out,
                HasSubstr(absl::StrCat("worker: ", tasks, " of ", tasks, " tasks running")));
    const bool trains = WaitUntil(
        [&] {
          Progress p = ReadProgress(shared);
          return p.world == tasks || p.step >= std::stoi(steps);
        },
        absl::Minutes(3));
    EXPECT_TRUE(trains && ReadProgress(shared).world == tasks)
        << "never trained with " << tasks << " workers after ytf scale";
    std::cout << "[ figure ] ytf scale worker=" << tasks << " to training with " << tasks
              << " workers: "
              << absl::FormatDuration(absl::Trunc(absl::Now() - asked, absl::Milliseconds(100)))
              << "\n";
    if (tasks == 2) {
      Result status = RunCommand({Ytf(), "status", app});
      EXPECT_THAT(status.out, HasSubstr("worker       2 tasks")) << status.out;
    }
  }

  std::ofstream(stop).put('\n');
  EXPECT_EQ(WaitForEnd(app), "FINISHED/SUCCEEDED");
  EXPECT_TRUE(SameWeights(ReadLine(shared + "/final"),
                          ReferenceWeights(script, ReadProgress(shared).step)));
  int restarts = 0;
  std::vector<int> scaled;
  for (const http::Json& e : JobEvents(app)) {
    if (e.is_object() && e["event"] == "task_restart_scheduled" && e["task"] == "worker:1") {
      ++restarts;
    }
    if (e.is_object() && e["event"] == "role_scaled" && e["role"] == "worker") {
      scaled.push_back(e["tasks"].get<int>());
    }
  }
  EXPECT_EQ(restarts, 1) << "the loss is not in the job's events";
  EXPECT_EQ(scaled, std::vector<int>({2, 3})) << "ytf scale is not in the job's events";
  Result status = RunCommand({Ytf(), "status", app});
  EXPECT_THAT(status.out, HasSubstr("worker:1"));
  ExpectNothingLeft(app);
}

// The memory of each running node of the default partition (no label), MB.
std::vector<int64_t> DefaultPartitionNodesMb() {
  std::vector<int64_t> out;
  http::Json nodes = Rm("/ws/v1/cluster/nodes");
  if (!nodes.is_object() || !nodes["nodes"].is_object()) return out;
  for (const http::Json& n : nodes["nodes"]["node"]) {
    if (n["state"] != "RUNNING" || (n.contains("nodeLabels") && !n["nodeLabels"].empty())) {
      continue;
    }
    out.push_back(n["availMemoryMB"].get<int64_t>() + n["usedMemoryMB"].get<int64_t>());
  }
  return out;
}

// With the cluster to itself: a job holding most of one node leaves room for two workers of
// three on the other (each 40 % of a node); the elastic job trains with two and grows to three
// once that job ends. Sized from the nodes the test cluster has.
TEST(YarnElasticExclusiveTest, AJobStartedWithTwoGrowsToThreeWhenACompetingJobEnds) {
  const std::vector<int64_t> nodes = DefaultPartitionNodesMb();
  if (nodes.size() != 2 || nodes[0] != nodes[1] || nodes[0] < 4096) {
    GTEST_SKIP() << "needs two equal nodes of at least 4 GB in the default partition";
  }
  const int64_t node = nodes[0];
  const int64_t worker = node * 2 / 5 / 512 * 512;  // two fit a node with the AM, three do not
  const int64_t hog_mb = node - worker + 512;       // leaves less than a worker beside it
  const std::string src = harness::HadoopCluster::Get().source_dir();
  const std::string script = src + "/examples/elastic_ddp.py";
  const std::string shared = MakeTempDir();
  ASSERT_FALSE(shared.empty());
  const std::string stop = shared + "/stop";
  Result hog = RunCommand({Submit(), "--yarn", "--detach", "-n", "itest-elastic-hog", "-r", "hog:1",
                           "-m", absl::StrCat(hog_mb, "m"), "exec sleep 600"});
  const std::string hog_app = AppIdOf(hog);
  ASSERT_EQ(hog.exit_code, 0) << hog.out << hog.err;
  ASSERT_GT(WaitForTaskProcess(hog_app, "hog", 0), 0);

  Result r = RunCommand({Submit(), "--yarn", "--detach", "-n", "itest-elastic-grow", "--framework",
                         "pytorch", "-r", "worker:3", "--elastic", "worker=2:3", "-m",
                         absl::StrCat(worker, "m"), "-s", script, "-e",
                         "TONY_RENDEZVOUS_PYTHON=" + Python(),
                         absl::StrCat(Python(), " -m torch.distributed.run ${DTF_TASK_SCRIPT} ",
                                      "--steps 1000 --step-seconds 0.1 --checkpoint ", shared,
                                      " --stop-file ", stop)});
  const std::string app = AppIdOf(r);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  ASSERT_TRUE(WaitUntil(
      [&] {
        Progress p = ReadProgress(shared);
        return p.world == 2 && p.step > 10;
      },
      absl::Minutes(3)))
      << "never trained with 2 workers";
  EXPECT_EQ(TaskProcess(app, "worker", 2), -1);  // no room for it yet
  Result kill = RunCommand({Ytf(), "kill", hog_app});
  EXPECT_EQ(kill.exit_code, 0) << kill.out << kill.err;
  const absl::Time freed = absl::Now();
  ASSERT_TRUE(WaitUntil([&] { return ReadProgress(shared).world == 3; }, absl::Minutes(3)))
      << "never grew to 3 workers";
  std::cout << "[ figure ] competing job killed to training with 3 workers: "
            << absl::FormatDuration(absl::Trunc(absl::Now() - freed, absl::Milliseconds(100)))
            << "\n";
  std::ofstream(stop).put('\n');
  EXPECT_EQ(WaitForEnd(app), "FINISHED/SUCCEEDED");
  EXPECT_TRUE(SameWeights(ReadLine(shared + "/final"),
                          ReferenceWeights(script, ReadProgress(shared).step)));
  ExpectNothingLeft(app);
  ExpectNothingLeft(hog_app);
}

// The YARN containers `app` holds now (its AM's included).
int RunningContainers(const std::string& app) {
  http::Json a = Rm("/ws/v1/cluster/apps/" + app);
  return a.contains("app") ? a["app"].value("runningContainers", -1) : -1;
}

// A TF2 ParameterServerStrategy job (examples/tf2_ps_strategy.py) is suspended once it wrote a
// checkpoint: every task stops and its container goes back to YARN while the application stays;
// resumed, its tasks start afresh with a new cluster spec and the chief goes on from the
// checkpoint to the end.
// Work-preserving AM restart of a job scaled down: the second attempt adopts the running tasks
// (the elastic role's stopped one is not "missing"), keeps the size from the event log's
// role_scaled line instead of growing back to the maximum, and still scales up. The workers are
// plain loops (no torch): what is tested is the AM, not torchrun.
TEST(YarnElasticTest, AnAmRestartKeepsAScaledJobsSizeAndItsRunningTasks) {
  const std::string dir = MakeTempDir();
  ASSERT_FALSE(dir.empty());
  Result r = RunCommand(
      {Submit(),
       "--yarn",
       "--detach",
       "-n",
       "itest-elastic-am-restart",
       "--framework",
       "pytorch",
       "-r",
       "worker:3",
       "--elastic",
       "worker=2:3",
       "-m",
       "256m",
       "--am_memory",
       "256m",
       "--max_attempts",
       "2",
       "-e",
       "TONY_RENDEZVOUS_PYTHON=" + Python(),
       absl::StrCat("for i in $(seq 3000); do [ -e ", dir, "/end ] && break; sleep 0.2; done")});
  const std::string app = AppIdOf(r);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  std::vector<int> workers;
  for (int i = 0; i < 3; ++i) workers.push_back(WaitForTaskProcess(app, "worker", i));
  ASSERT_GT(*std::min_element(workers.begin(), workers.end()), 0);

  Result down = RunCommand({Ytf(), "scale", app, "worker=2", "--wait"});
  ASSERT_EQ(down.exit_code, 0) << down.out << down.err;
  // The event log has the line (it is flushed every 2 s) before the AM dies.
  ASSERT_TRUE(WaitUntil(
      [&] {
        return RunCommand({Ytf(), "events", app}).out.find("role_scaled") != std::string::npos;
      },
      absl::Seconds(30)));
  const int am = AmProcess(app);
  ASSERT_GT(am, 0);
  ASSERT_EQ(kill(am, SIGKILL), 0);

  http::Json last;
  const bool back = WaitUntil(
      [&] {
        last = StatusJsonOf(app);
        return last.is_object() && last["attempt"].get<int>() == 2 &&
               last["progress"].contains("worker") &&
               last["progress"]["worker"]["running"].get<int>() == 2;
      },
      absl::Minutes(2), absl::Milliseconds(500));
  ASSERT_TRUE(back) << "the two workers never ran under attempt 2: " << last.dump();
  EXPECT_EQ(last["progress"]["worker"]["total"].get<int>(), 2) << last.dump();
  EXPECT_EQ(TaskProcess(app, "worker", 0), workers[0]);  // adopted, not started afresh
  EXPECT_EQ(TaskProcess(app, "worker", 1), workers[1]);
  EXPECT_LE(TaskProcess(app, "worker", 2), 0);
  Result status = RunCommand({Ytf(), "status", app});
  EXPECT_THAT(status.out, HasSubstr("took over its 3 running task containers")) << status.out;

  // Scaling up still works under the new attempt.
  Result up = RunCommand({Ytf(), "scale", app, "worker=3", "--wait"});
  EXPECT_EQ(up.exit_code, 0) << up.out << up.err;
  EXPECT_GT(WaitForTaskProcess(app, "worker", 2), 0);
  ASSERT_TRUE(WriteFileAtomically(dir + "/end", "").ok());
  EXPECT_EQ(WaitForEnd(app), "FINISHED/SUCCEEDED");
  ExpectNothingLeft(app);
}

TEST(YarnSuspendTest, APsJobSuspendedReleasesItsContainersAndResumesFromItsCheckpoint) {
  const std::string out = MakeTempDir();
  ASSERT_FALSE(out.empty());
  const std::string src = harness::HadoopCluster::Get().source_dir();
  Result r =
      RunCommand({Submit(), "--yarn", "--detach", "-n", "itest-suspend", "-r",
                  "chief:1,ps:1,worker:2", "-m", "768m", "-s", src + "/examples/tf2_ps_strategy.py",
                  "-o", out, Python() + " ${DTF_TASK_SCRIPT} --steps 1200"});
  const std::string app = AppIdOf(r);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  ASSERT_TRUE(WaitUntil([&] { return ReadFileToString(out + "/checkpoints/checkpoint").ok(); },
                        absl::Minutes(4)))
      << "no checkpoint written: " << ChiefOutput(app);
  const int chief = TaskProcess(app, "chief", 0);
  ASSERT_GT(chief, 0);

  const absl::Time asked = absl::Now();
  Result suspend = RunCommand({Ytf(), "suspend", app, "--wait", "--timeout", "3m"});
  const absl::Duration suspending = absl::Now() - asked;
  ASSERT_EQ(suspend.exit_code, 0) << suspend.out << suspend.err;
  EXPECT_THAT(suspend.out, HasSubstr("suspended"));
  Result status = RunCommand({Ytf(), "status", app});
  EXPECT_THAT(status.out, HasSubstr("SUSPENDED since")) << status.out;
  // Only the ApplicationMaster is left, on YARN and on the nodes.
  EXPECT_TRUE(WaitUntil([&] { return RunningContainers(app) == 1; }, absl::Seconds(30)))
      << RunningContainers(app);
  // The NodeManagers' SIGKILL of what is left of a task follows the containers' completion.
  const int am = AmProcess(app);
  ASSERT_GT(am, 0);
  const std::string am_container = ContainerOf(am);
  std::vector<int> left;
  EXPECT_TRUE(WaitUntil(
      [&] {
        left = ProcessesOf(app);
        return std::all_of(left.begin(), left.end(),
                           [&](int pid) { return ContainerOf(pid) == am_container; });
      },
      absl::Seconds(30)))
      << left.size() << " processes";
  EXPECT_EQ(AppState(app), "RUNNING/UNDEFINED");
  // Suspending again changes nothing.
  Result again = RunCommand({Ytf(), "suspend", app});
  EXPECT_EQ(again.exit_code, 0) << again.err;
  EXPECT_THAT(again.out, HasSubstr("already suspended"));

  const absl::Time resumed_at = absl::Now();
  Result resume = RunCommand({Ytf(), "resume", app, "--wait", "--timeout", "4m"});
  const absl::Duration resuming = absl::Now() - resumed_at;
  ASSERT_EQ(resume.exit_code, 0) << resume.out << resume.err;
  EXPECT_THAT(resume.out, HasSubstr("resuming"));
  EXPECT_NE(TaskProcess(app, "chief", 0), chief);
  EXPECT_EQ(WaitForEnd(app), "FINISHED/SUCCEEDED");
  const std::string chief_out = ChiefOutput(app);
  EXPECT_THAT(chief_out, HasSubstr("chief: resumed from")) << chief_out;
  std::smatch resumed;
  if (std::regex_search(chief_out, resumed, std::regex("chief: resumed from [^\\n]*"))) {
    std::cout << resumed.str() << "\n";
  }
  EXPECT_THAT(chief_out, HasSubstr("chief done")) << chief_out;
  std::vector<std::string> kinds;
  for (const http::Json& e : JobEvents(app)) kinds.push_back(e.value("event", ""));
  for (const char* kind : {"suspend_requested", "job_suspending", "job_suspended",
                           "resume_requested", "job_resumed"}) {
    EXPECT_NE(std::find(kinds.begin(), kinds.end(), kind), kinds.end()) << kind;
  }
  std::cout << "[ figure ] suspend to SUSPENDED (containers released): "
            << absl::FormatDuration(absl::Trunc(suspending, absl::Milliseconds(100)))
            << "; resume to every task running: "
            << absl::FormatDuration(absl::Trunc(resuming, absl::Milliseconds(100))) << "\n";
  ExpectNothingLeft(app);
}

}  // namespace
}  // namespace tony::itest
