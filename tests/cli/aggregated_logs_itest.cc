// Copyright libtony authors.
//
// `ytf logs` of a finished job whose logs YARN aggregated into HDFS and the NodeManagers
// deleted, on the real test cluster. It needs a cluster started with log aggregation on
// (TONY_HADOOP_LOG_AGGREGATION=1 scripts/hadoop-cluster start); on the default cluster (off, so
// that the other tests read the NodeManagers' copies) it is skipped, saying so.

#include <filesystem>
#include <map>
#include <regex>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "common/file_util.h"
#include "common/subprocess.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/harness/hadoop_cluster.h"
#include "tests/testing/wait_until.h"

namespace tony {
namespace {

using ::testing::ContainsRegex;
using ::testing::HasSubstr;
using ::testing::Not;
using ::tony::testing::WaitUntil;

struct Result {
  int exit_code = -1;
  std::string out;
  std::string err;
};

std::string BinDir() {
  const char* d = std::getenv("TONY_BIN_DIR");
  return d != nullptr ? d : "build/bin";
}

Result Exec(std::vector<std::string> argv) {
  static int counter = 0;
  static const std::string dir = [] {
    std::string tmpl = ::testing::TempDir() + "/aggregated_logs_itest.XXXXXX";
    return std::string(mkdtemp(tmpl.data()));
  }();
  const std::string base = absl::StrCat(dir, "/run", ++counter);
  SubprocessOptions options;
  options.argv = std::move(argv);
  options.env = CurrentEnvironment();
  options.env["HADOOP_CONF_DIR"] = harness::HadoopCluster::Get().conf_dir();
  options.stdout_path = base + ".out";
  options.stderr_path = base + ".err";
  Result r;
  auto p = Subprocess::Spawn(options);
  if (!p.ok()) {
    r.err = std::string(p.status().message());
    return r;
  }
  auto code = (*p)->Wait(absl::Minutes(5));
  r.exit_code = code.ok() ? *code : (*p)->Terminate(absl::Seconds(5));
  r.out = ReadFileToString(base + ".out").value_or("");
  r.err = ReadFileToString(base + ".err").value_or("");
  return r;
}

// Whether the cluster's yarn-site.xml (as scripts/hadoop-cluster writes it) turns aggregation on.
bool AggregationOn() {
  const std::string site =
      ReadFileToString(harness::HadoopCluster::Get().conf_dir() + "/yarn-site.xml").value_or("");
  return absl::StrContains(site, "<name>yarn.log-aggregation-enable</name><value>true</value>");
}

TEST(AggregatedLogsTest, LogsOfAFinishedJobComeFromHdfsOnceTheNodeManagersDroppedThem) {
  if (!AggregationOn()) {
    GTEST_SKIP() << "the test cluster runs without log aggregation; to run this test start it "
                    "with TONY_HADOOP_LOG_AGGREGATION=1 scripts/hadoop-cluster start";
  }
  Result r = Exec({BinDir() + "/ytf-submit", "--yarn", "-n", "aggregated-logs-itest", "-r",
                   "worker:1", "-m", "128m",
                   "echo \"aggregated-log-marker of $DTF_TASK_JOB_NAME:$DTF_TASK_INDEX\"; "
                   "echo to-stderr >&2"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  std::smatch m;
  static const std::regex re("application_[0-9]+_[0-9]+");
  ASSERT_TRUE(std::regex_search(r.out, m, re)) << r.out;
  const std::string app = m.str();

  // The NodeManagers upload the logs as the application ends and then delete their copies;
  // until then `ytf logs` reads the NodeManager's (its header says "on <node>").
  Result logs;
  const bool aggregated = WaitUntil(
      [&] {
        logs = Exec({BinDir() + "/ytf", "logs", app, "--task", "worker:0"});
        return logs.exit_code == 0 && absl::StrContains(logs.out, "from the aggregated logs in");
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

  // The AM's files, by their task names, and --aggregated alone.
  Result am = Exec({BinDir() + "/ytf", "logs", app, "--task", "am", "--aggregated"});
  EXPECT_EQ(am.exit_code, 0) << am.err;
  EXPECT_THAT(am.out, HasSubstr("==> am stderr (container_"));
  EXPECT_THAT(am.out, HasSubstr("from the aggregated logs in hdfs://"));

  // A file the container never had: one line, naming both places looked at.
  Result missing = Exec({BinDir() + "/ytf", "logs", app, "--task", "worker:0", "--file", "nope"});
  EXPECT_EQ(missing.exit_code, 3) << missing.out << missing.err;
  EXPECT_THAT(missing.err, HasSubstr("not in the aggregated logs in hdfs://"));
}

}  // namespace
}  // namespace tony
