// Copyright libtony authors.
//
// GPU sampling: nvidia-smi's CSV read as a table, a fake nvidia-smi run for real, and which
// nvidia-smi a task gets.

#include "executor/gpu_usage.h"

#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tony::executor {
namespace {

TEST(GpuUsageTest, ParsesTheQueryAndKeepsTheTasksDevices) {
  const std::string csv = "0, 87, 14012, 16384\n1, 0, 9000, 16384\n2, [N/A], 1, 16384\nbad\n";
  struct Case {
    std::string visible;
    std::vector<int> indices;
  };
  for (const Case& c : std::vector<Case>{{"", {0, 1}}, {"1", {1}}, {"0, 2", {0}}, {"5", {}}}) {
    std::vector<GpuUsage> gpus = ParseNvidiaSmiGpus(csv, c.visible);
    std::vector<int> indices;
    for (const GpuUsage& g : gpus) indices.push_back(g.index);
    EXPECT_EQ(indices, c.indices) << "visible=" << c.visible;
  }
  std::vector<GpuUsage> gpus = ParseNvidiaSmiGpus(csv, "0");
  ASSERT_EQ(gpus.size(), 1u);
  EXPECT_DOUBLE_EQ(gpus[0].utilization, 0.87);
  EXPECT_EQ(gpus[0].memory_used_bytes, int64_t{14012} << 20);
  EXPECT_EQ(gpus[0].memory_total_bytes, int64_t{16384} << 20);
}

class FakeNvidiaSmiTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = ::testing::TempDir() + "/gpu_usage_test.XXXXXX";
    dir_ = mkdtemp(tmpl.data());
  }
  void TearDown() override { (void)system(("rm -rf '" + dir_ + "'").c_str()); }
  std::string Script(const std::string& name, const std::string& body) {
    const std::string path = dir_ + "/" + name;
    std::ofstream(path) << "#!/bin/sh\n" << body << "\n";
    ::chmod(path.c_str(), 0755);
    return path;
  }
  std::string dir_;
};

TEST_F(FakeNvidiaSmiTest, SamplesAndGivesUpOnAHungOne) {
  const std::string smi = Script("nvidia-smi", "echo '0, 42, 1024, 2048'");
  auto gpus = SampleGpus(smi, "", absl::Seconds(10));
  ASSERT_TRUE(gpus.ok()) << gpus.status();
  ASSERT_EQ(gpus->size(), 1u);
  EXPECT_DOUBLE_EQ((*gpus)[0].utilization, 0.42);

  const std::string hung = Script("hung-smi", "exec sleep 30");
  EXPECT_TRUE(absl::IsDeadlineExceeded(SampleGpus(hung, "", absl::Milliseconds(200)).status()));
  const std::string failing = Script("failing-smi", "exit 9");
  EXPECT_TRUE(absl::IsUnavailable(SampleGpus(failing, "", absl::Seconds(10)).status()));
}

TEST_F(FakeNvidiaSmiTest, WhichNvidiaSmiATaskGets) {
  const std::string smi = Script("nvidia-smi", "true");
  EXPECT_EQ(FindNvidiaSmi(1, {{"PATH", "/nonexistent:" + dir_}}), smi);
  EXPECT_EQ(FindNvidiaSmi(0, {{"PATH", dir_}}), "");         // asked for no GPU
  EXPECT_EQ(FindNvidiaSmi(0, {{kNvidiaSmiEnv, smi}}), smi);  // chosen explicitly
  EXPECT_EQ(FindNvidiaSmi(1, {{kNvidiaSmiEnv, dir_ + "/missing"}, {"PATH", dir_}}), "");
  EXPECT_EQ(FindNvidiaSmi(2, {{"PATH", "/nonexistent"}}), "");
}

}  // namespace
}  // namespace tony::executor
