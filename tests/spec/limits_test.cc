// Copyright libtony authors.
//
// Bounded inputs: every local input is checked for type and size before anything is submitted,
// without blocking on a FIFO or reading an endless device.

#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "spec/limits.h"
#include "tony/job_spec.h"

namespace tony {
namespace {

using ::testing::HasSubstr;

JobSpec OneWorker() {
  JobSpec spec;
  spec.command = "python train.py";
  spec.job_types.push_back({.name = "worker", .instances = 1});
  return spec;
}

std::string TempPath(absl::string_view name) {
  return absl::StrCat(::testing::TempDir(), "/limits-", getpid(), "-", name);
}

// A FIFO nobody writes to: reading or opening it for reading in blocking mode would hang.
std::string MakeFifo() {
  std::string path = TempPath("fifo");
  unlink(path.c_str());
  EXPECT_EQ(mkfifo(path.c_str(), 0600), 0);
  return path;
}

TEST(SpecFileLimitsTest, EndlessDeviceFifoDirectoryAndHugeFileAreRefused) {
  for (const std::string& path : {std::string("/dev/zero"), MakeFifo(), ::testing::TempDir()}) {
    absl::StatusOr<JobSpec> spec = LoadJobSpecFile(path);
    ASSERT_FALSE(spec.ok()) << path;
    EXPECT_EQ(spec.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(spec.status().message()), HasSubstr("not a regular file")) << path;
  }
  std::string big = TempPath("big.yaml");
  {
    std::ofstream out(big);
    out << "name: x\n" << std::string(spec::kMaxSpecFileBytes, '#') << "\n";
  }
  absl::StatusOr<JobSpec> spec = LoadJobSpecFile(big);
  ASSERT_FALSE(spec.ok());
  EXPECT_THAT(std::string(spec.status().message()), HasSubstr("larger than"));
  unlink(big.c_str());
}

TEST(LocalFileLimitsTest, ShippedFilesMustBeRegularFiles) {
  const std::string fifo = MakeFifo();
  struct Case {
    std::string path;
    std::string expected;
  };
  for (const Case& c : {Case{"/dev/zero", "not a regular file"}, Case{fifo, "not a regular file"},
                        Case{::testing::TempDir(), "is a directory"},
                        Case{TempPath("missing"), "give an existing local file"}}) {
    JobSpec with_file = OneWorker();
    with_file.files = {c.path};
    absl::Status s = ValidateJobSpec(with_file);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << c.path;
    EXPECT_THAT(std::string(s.message()), HasSubstr("--file")) << c.path;
    EXPECT_THAT(std::string(s.message()), HasSubstr(c.expected)) << c.path;

    JobSpec with_script = OneWorker();
    with_script.script_file = c.path;
    EXPECT_THAT(std::string(ValidateJobSpec(with_script).message()), HasSubstr("--script"));

    JobSpec with_archive = OneWorker();
    with_archive.archives = {c.path};
    EXPECT_THAT(std::string(ValidateJobSpec(with_archive).message()), HasSubstr("--archive"));
  }
  unlink(fifo.c_str());
}

TEST(LocalFileLimitsTest, TheSourceDirectoryMustBeADirectory) {
  const std::string fifo = MakeFifo();
  for (const auto& [path, expected] : std::vector<std::pair<std::string, std::string>>{
           {fifo, "is not a directory"},
           {TempPath("missing"), "give an existing local directory"}}) {
    JobSpec spec = OneWorker();
    spec.source_dir = path;
    absl::Status s = ValidateJobSpec(spec);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << path;
    EXPECT_THAT(std::string(s.message()), HasSubstr("--src_dir")) << path;
    EXPECT_THAT(std::string(s.message()), HasSubstr(expected)) << path;
  }
  JobSpec spec = OneWorker();
  spec.source_dir = ::testing::TempDir();
  EXPECT_TRUE(ValidateJobSpec(spec).ok());
  unlink(fifo.c_str());
}

TEST(LocalFileLimitsTest, OversizedScriptIsRefused) {
  std::string script = TempPath("big.py");
  { std::ofstream out(script); }
  ASSERT_EQ(truncate(script.c_str(), spec::kMaxScriptBytes + 1), 0);  // sparse: no disk used
  JobSpec spec = OneWorker();
  spec.script_file = script;
  absl::Status s = ValidateJobSpec(spec);
  EXPECT_THAT(std::string(s.message()), HasSubstr("more than the"));
  unlink(script.c_str());
}

TEST(ValueLimitsTest, LongNamesCommandsAndHugeJobsAreRefused) {
  JobSpec spec = OneWorker();
  spec.name = std::string(100000, 'n');
  EXPECT_THAT(std::string(ValidateJobSpec(spec).message()), HasSubstr("name (-n/--name)"));

  spec = OneWorker();
  spec.queue = std::string(spec::kMaxNameLength + 1, 'q');
  EXPECT_THAT(std::string(ValidateJobSpec(spec).message()), HasSubstr("queue"));

  spec = OneWorker();
  spec.command = std::string(spec::kMaxCommandBytes + 1, 'c');
  EXPECT_THAT(std::string(ValidateJobSpec(spec).message()), HasSubstr("command"));

  spec = OneWorker();
  spec.env["BIG"] = std::string(spec::kMaxEnvValueBytes + 1, 'v');
  EXPECT_THAT(std::string(ValidateJobSpec(spec).message()), HasSubstr("env.BIG"));

  spec = OneWorker();
  spec.tags = std::vector<std::string>(spec::kMaxTags + 1, "t");
  EXPECT_THAT(std::string(ValidateJobSpec(spec).message()), HasSubstr("--tag"));

  spec = OneWorker();
  spec.job_types[0].instances = spec::kMaxTotalTasks;
  EXPECT_TRUE(ValidateJobSpec(spec).ok());
  spec.job_types.push_back({.name = "ps", .instances = 1});
  EXPECT_THAT(std::string(ValidateJobSpec(spec).message()), HasSubstr("more than 10000 tasks"));

  // No overflow with counts near INT_MAX.
  spec.job_types[0].instances = 2147483647;
  spec.job_types[1].instances = 2147483647;
  EXPECT_FALSE(ValidateJobSpec(spec).ok());
}

TEST(ValueLimitsTest, OversizedYamlStringIsRefusedBeforeParsing) {
  std::string yaml = absl::StrCat("name: x\n", std::string(spec::kMaxSpecFileBytes, '#'));
  absl::StatusOr<JobSpec> spec = ParseJobSpecYaml(yaml, "big.yaml");
  ASSERT_FALSE(spec.ok());
  EXPECT_THAT(std::string(spec.status().message()), HasSubstr("larger than"));
}

}  // namespace
}  // namespace tony
