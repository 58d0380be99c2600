// Copyright libtony authors.
//
// MPI jobs on the real test YARN (--framework mpi, docs/mpi.md), with Debian's Open MPI and
// mpi4py from PyPI (scripts/install-deps, scripts/python-env): mpirun in the launcher task
// starts its daemons in two worker tasks on two nodes (5 GB tasks cannot share an 8 GB node)
// through libtony's agent, no SSH; an allreduce's result shows both ranks took part. A rank that
// kills itself fails the job, and the failure names its task. After every test no container or
// process remains.

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/harness/hadoop_cluster.h"

#include "tests/yarnam/job_itest_util.h"

namespace tony::itest {
namespace {

using ::testing::AnyOf;
using ::testing::HasSubstr;

std::string Example(const std::string& name) {
  return harness::HadoopCluster::Get().source_dir() + "/examples/" + name;
}

TEST(YarnMpiExclusiveTest, AllreduceAcrossTwoNodesWithoutSsh) {
  Result r = RunCommand({Submit(), "--yarn", "-n", "itest-mpi", "--framework", "mpi", "-r",
                         "launcher:1,worker:2", "-m", "5g", "-m", "launcher:1g", "-s",
                         Example("mpi_allreduce.py"), "mpirun " + Python() + " ${DTF_TASK_SCRIPT}"},
                        absl::Minutes(10));
  std::string app = AppIdOf(r);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(WaitForEnd(app), "FINISHED/SUCCEEDED");
  // mpirun gathers the ranks' output in the launcher's log.
  Result launcher = RunCommand({Ytf(), "logs", app, "--task", "launcher:0"});
  std::vector<std::string> nodes;
  for (int rank = 0; rank < 2; ++rank) {
    // 11 = 10^0 from rank 0 + 10^1 from rank 1.
    EXPECT_THAT(launcher.out,
                HasSubstr(absl::StrCat("mpi_allreduce done: rank ", rank, "/2 total 11 (want 11)")))
        << launcher.out << launcher.err;
    nodes.push_back(NodeInLogs(app, "launcher:0",
                               absl::StrCat("rank ", rank, "/2 on ([^,]+), task worker:[01]")));
  }
  EXPECT_NE(nodes[0], "");
  EXPECT_NE(nodes[0], nodes[1]);
  for (int i = 0; i < 2; ++i) {
    // Each worker task ran a daemon (its log shows the executor starting it).
    Result w = RunCommand({Ytf(), "logs", app, "--task", absl::StrCat("worker:", i)});
    EXPECT_THAT(w.out + w.err, HasSubstr("task started")) << w.out << w.err;
  }
  ExpectNothingLeft(app);
}

TEST(YarnMpiExclusiveTest, ARankThatKillsItselfFailsTheJobNamingItsTask) {
  Result r = RunCommand(
      {Submit(), "--yarn", "-n", "itest-mpi-kill", "--framework", "mpi", "-r",
       "launcher:1,worker:2", "-m", "5g", "-m", "launcher:1g", "-s", Example("mpi_allreduce.py"),
       "mpirun " + Python() + " ${DTF_TASK_SCRIPT} --kill_rank 1"},
      absl::Minutes(10));
  std::string app = AppIdOf(r);
  EXPECT_NE(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(WaitForEnd(app), "FINISHED/FAILED");
  Result launcher = RunCommand({Ytf(), "logs", app, "--task", "launcher:0"});
  EXPECT_THAT(launcher.out, HasSubstr("mpi_allreduce: rank 1 kills itself")) << launcher.out;
  // mpirun names the rank's node, which is the task's name for mpirun.
  EXPECT_THAT(launcher.out + launcher.err, HasSubstr("tony-worker-1"))
      << launcher.out << launcher.err;
  EXPECT_THAT(r.err, AnyOf(HasSubstr("launcher:0"), HasSubstr("worker:1"))) << r.err;
  ExpectNothingLeft(app);
}

}  // namespace
}  // namespace tony::itest
