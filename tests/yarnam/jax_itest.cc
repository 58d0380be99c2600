// Copyright libtony authors.
//
// JAX jobs on the real test YARN (--framework jax, docs/task-environment.md#jax), with jax[cpu]
// from PyPI (scripts/python-env): two processes on two nodes (5 GB tasks cannot share an 8 GB
// node) find each other with jax.distributed.initialize() and no argument, and a collective's
// result shows both took part; one process killing itself ends the attempt and the whole gang
// restarts, resuming from the checkpoint (TONY_RESUMED); Keras 3 trains data parallel on JAX.
// After every test no container or process remains.

#include <stdlib.h>

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "http/json.h"
#include "tests/harness/hadoop_cluster.h"

#include "tests/yarnam/job_itest_util.h"

namespace tony::itest {
namespace {

using ::testing::HasSubstr;

std::string Example(const std::string& name) {
  return harness::HadoopCluster::Get().source_dir() + "/examples/" + name;
}

TEST(YarnJaxExclusiveTest, AllreduceAcrossTwoNodesSurvivesAKillByAWholeGangRestart) {
  char tmpl[] = "/tmp/tony-jax-XXXXXX";
  ASSERT_NE(::mkdtemp(tmpl), nullptr);
  const std::string out = tmpl;
  // Attempt 1: process 1 SIGKILLs itself at step 1; the JAX default (on-failure, scope job)
  // ends the attempt and attempt 2 runs both again with TONY_RESUMED set.
  Result r =
      RunCommand({Submit(), "--yarn", "-n", "itest-jax", "--framework", "jax", "-r", "worker:2",
                  "-m", "5g", "--max_attempts", "2", "-o", out, "-s", Example("jax_allreduce.py"),
                  Python() + " ${DTF_TASK_SCRIPT} --steps 3 --crash_at_step 1"},
                 absl::Minutes(10));
  std::string app = AppIdOf(r);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(WaitForEnd(app), "FINISHED/SUCCEEDED");
  EXPECT_THAT(r.err, HasSubstr("attempt 2 of 2"));
  http::Json attempts = Rm("/ws/v1/cluster/apps/" + app + "/appattempts");
  ASSERT_TRUE(attempts.contains("appAttempts")) << app;
  EXPECT_EQ(attempts["appAttempts"]["appAttempt"].size(), 2u);

  Result killed = RunCommand({Ytf(), "logs", app, "--task", "worker:1@1"});
  EXPECT_THAT(killed.out, HasSubstr("jax_allreduce: process 1 kills itself at step 1"));
  Result am = RunCommand({Ytf(), "logs", app, "--task", "am@1"});
  EXPECT_THAT(am.out + am.err, HasSubstr("whole-job restart 1 of 1 (attempt 2)"));
  std::vector<std::string> nodes;
  for (int i = 0; i < 2; ++i) {
    const std::string task = absl::StrCat("worker:", i);
    Result logs = RunCommand({Ytf(), "logs", app, "--task", task});
    EXPECT_THAT(logs.out, HasSubstr("TONY_RESUMED=1")) << logs.out;
    EXPECT_THAT(logs.out, HasSubstr("jax_allreduce: resumed from step ")) << logs.out;
    // 11 = 10^0 from process 0 + 10^1 from process 1, times 1 + 2 + 3 over the steps.
    EXPECT_THAT(logs.out,
                HasSubstr(absl::StrCat("jax_allreduce done: process ", i, "/2 total 66 (want 66)")))
        << logs.out;
    nodes.push_back(NodeInLogs(app, task, "process [0-9]/2 on ([^,]+),"));
  }
  EXPECT_NE(nodes[0], "");
  EXPECT_NE(nodes[0], nodes[1]);
  ExpectNothingLeft(app);
}

TEST(YarnJaxExclusiveTest, Keras3DataParallelOnJaxTrainsAcrossTwoNodes) {
  Result r = RunCommand(
      {Submit(), "--yarn", "-n", "itest-keras3-jax", "--framework", "jax", "-r", "worker:2", "-m",
       "5g", "-s", Example("keras3_jax_data_parallel.py"), Python() + " ${DTF_TASK_SCRIPT}"},
      absl::Minutes(10));
  std::string app = AppIdOf(r);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(WaitForEnd(app), "FINISHED/SUCCEEDED");
  std::vector<std::string> nodes;
  for (int i = 0; i < 2; ++i) {
    const std::string task = absl::StrCat("worker:", i);
    Result logs = RunCommand({Ytf(), "logs", app, "--task", task});
    EXPECT_THAT(logs.out, HasSubstr(absl::StrCat("keras3_jax done: process ", i, "/2")))
        << logs.out;
    EXPECT_THAT(logs.out, HasSubstr("agree True")) << logs.out;
    nodes.push_back(NodeInLogs(app, task, "process [0-9]/2 on ([^,]+),"));
  }
  EXPECT_NE(nodes[0], "");
  EXPECT_NE(nodes[0], nodes[1]);
  ExpectNothingLeft(app);
}

}  // namespace
}  // namespace tony::itest
