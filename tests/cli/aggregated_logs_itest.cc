// Copyright libtony authors.
//
// `ytf logs` (and Submitter::ReadLog/ReadTaskLog) of a finished job whose logs YARN aggregated
// into HDFS and the NodeManagers deleted, on the real test cluster. It needs a cluster started with
// log aggregation on (TONY_HADOOP_LOG_AGGREGATION=1 scripts/hadoop-cluster start); on the default
// cluster (off, so that the other tests read the NodeManagers' copies) it is skipped, saying so.

#include <filesystem>
#include <memory>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "common/file_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/harness/hadoop_cluster.h"
#include "tests/yarnam/job_itest_util.h"
#include "tony/submitter.h"

namespace tony {
namespace {

using itest::AppIdOf;
using itest::BinDir;
using itest::Result;
using itest::RunCommand;
using itest::WaitUntil;
using ::testing::ContainsRegex;
using ::testing::HasSubstr;
using ::testing::Not;

// Whether the cluster's yarn-site.xml (as scripts/hadoop-cluster writes it) turns aggregation on.
bool AggregationOn() {
  const std::string site =
      ReadFileToString(harness::HadoopCluster::Get().conf_dir() + "/yarn-site.xml").value_or("");
  return absl::StrContains(site, "<name>yarn.log-aggregation-enable</name><value>true</value>");
}

// Every log header of `ytf logs`' output names the aggregated logs (none a NodeManager's: one
// NodeManager may still serve stdout as stderr already comes from HDFS).
bool AllFromHdfs(const std::string& out) {
  int headers = 0;
  for (absl::string_view line : absl::StrSplit(out, '\n')) {
    if (!absl::StartsWith(line, "==> ")) continue;
    ++headers;
    if (!absl::StrContains(line, " from the aggregated logs in ")) return false;
  }
  return headers > 0;
}

TEST(AggregatedLogsTest, LogsOfAFinishedJobComeFromHdfsOnceTheNodeManagersDroppedThem) {
  if (!AggregationOn()) {
    GTEST_SKIP() << "the test cluster runs without log aggregation; to run this test start it "
                    "with TONY_HADOOP_LOG_AGGREGATION=1 scripts/hadoop-cluster start";
  }
  Result r = RunCommand({BinDir() + "/ytf-submit", "--yarn", "-n", "aggregated-logs-itest", "-r",
                         "worker:1", "-m", "128m",
                         "echo \"aggregated-log-marker of $DTF_TASK_JOB_NAME:$DTF_TASK_INDEX\"; "
                         "echo to-stderr >&2"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const std::string app = AppIdOf(r);
  ASSERT_FALSE(app.empty()) << r.out;

  // The NodeManagers upload the logs as the application ends and then delete their copies;
  // until then `ytf logs` reads the NodeManager's (its header says "on <node>").
  Result logs;
  const bool aggregated = WaitUntil(
      [&] {
        logs = RunCommand({BinDir() + "/ytf", "logs", app, "--task", "worker:0"});
        return logs.exit_code == 0 && AllFromHdfs(logs.out);
      },
      absl::Minutes(3));
  ASSERT_TRUE(aggregated) << logs.exit_code << "\n" << logs.out << logs.err;
  EXPECT_THAT(logs.out, HasSubstr("aggregated-log-marker of worker:0\n"));
  EXPECT_THAT(logs.out, HasSubstr("to-stderr\n"));
  EXPECT_THAT(logs.out, HasSubstr("==> worker:0 stdout (container_"));
  EXPECT_THAT(logs.out, HasSubstr(" from the aggregated logs in hdfs://"));
  EXPECT_THAT(logs.out, HasSubstr("/bucket-logs-tfile/"));
  EXPECT_THAT(logs.out, Not(ContainsRegex("container_[0-9_]+ on ")));  // the NodeManager's
  EXPECT_EQ(logs.err, "");

  // The NodeManagers' own copies are gone from disk (the cluster's state directory).
  const std::filesystem::path data =
      std::filesystem::path(harness::HadoopCluster::Get().conf_dir()).parent_path() / "data";
  for (int nm = 1; nm <= 3; ++nm) {
    const auto local = data / absl::StrCat("nm", nm) / "logs" / app;
    EXPECT_TRUE(WaitUntil([&] { return !std::filesystem::exists(local); }, absl::Seconds(30)))
        << local;
  }

  // The C++ API reads the same file, without `ytf logs`' header, and says where it read it.
  YarnSubmitterOptions options;
  options.conf_dir = harness::HadoopCluster::Get().conf_dir();
  options.bin_dir = BinDir();
  absl::StatusOr<std::unique_ptr<Submitter>> submitter = NewYarnSubmitter(options);
  ASSERT_TRUE(submitter.ok()) << submitter.status();
  absl::StatusOr<TaskLog> read = (*submitter)->ReadTaskLog(app, "worker:0", "stdout", {});
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_THAT(read->contents, HasSubstr("aggregated-log-marker of worker:0\n"));
  EXPECT_THAT(read->contents, Not(HasSubstr("==> ")));
  EXPECT_THAT(read->source,
              ContainsRegex("^from the aggregated logs in hdfs://.*/bucket-logs-tfile/"));
  absl::StatusOr<std::string> text = (*submitter)->ReadLog(app, "worker:0", "stderr");
  ASSERT_TRUE(text.ok()) << text.status();
  EXPECT_THAT(*text, HasSubstr("to-stderr\n"));
  EXPECT_THAT(*text, Not(HasSubstr("==>")));

  // The AM's files, by their task names, and --aggregated alone.
  Result am = RunCommand({BinDir() + "/ytf", "logs", app, "--task", "am", "--aggregated"});
  EXPECT_EQ(am.exit_code, 0) << am.err;
  EXPECT_THAT(am.out, HasSubstr("==> am stderr (container_"));
  EXPECT_THAT(am.out, HasSubstr("from the aggregated logs in hdfs://"));

  // A file the container never had: one line, naming both places looked at.
  Result missing =
      RunCommand({BinDir() + "/ytf", "logs", app, "--task", "worker:0", "--file", "nope"});
  EXPECT_EQ(missing.exit_code, 3) << missing.out << missing.err;
  EXPECT_THAT(missing.err, HasSubstr("not in the aggregated logs in hdfs://"));
}

}  // namespace
}  // namespace tony
