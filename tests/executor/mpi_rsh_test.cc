// Copyright libtony authors.

#include "executor/mpi_rsh.h"

#include <map>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tony::executor {
namespace {

TEST(MpiRshTest, TheCommandIsTheWordsJoinedWithoutDaemonize) {
  EXPECT_EQ(MpiDaemonCommand({"orted", "--daemonize", "-mca", "ess", "\"env\""}),
            "orted -mca ess \"env\"");
  EXPECT_EQ(MpiDaemonCommand({"orted"}), "orted");
}

TEST(MpiRshTest, AHostThatNamesNoTaskFailsAsSshWouldWithoutCallingAnyone) {
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(RunMpiRsh({"node1.example.com", "orted"}, {}), kMpiRshFailure);
  EXPECT_THAT(::testing::internal::GetCapturedStderr(),
              ::testing::HasSubstr("'node1.example.com' names no task of this job; let mpirun use "
                                   "TONY_MPI_HOSTS"));
  EXPECT_EQ(RunMpiRsh({"tony-worker-0"}, {}), kMpiRshFailure);  // no command
}

TEST(MpiRshTest, WithoutTheExecutorsConfigurationItNamesWhatIsMissing) {
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(RunMpiRsh({"tony-worker-0", "orted"}, {}), kMpiRshFailure);
  EXPECT_THAT(::testing::internal::GetCapturedStderr(), ::testing::HasSubstr("TONY_AM_ADDRESS"));
}

}  // namespace
}  // namespace tony::executor
