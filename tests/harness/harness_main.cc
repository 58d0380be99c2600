// Copyright libtony authors.
//
// main() of integration tests that need the real Hadoop cluster (tony_test(... ITEST HADOOP)).

#include "gtest/gtest.h"
#include "tests/harness/hadoop_cluster.h"

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  // gtest owns and deletes the environment.
  ::testing::AddGlobalTestEnvironment(new tony::harness::HadoopClusterEnvironment());
  return RUN_ALL_TESTS();
}
