// Copyright libtony authors.
//
// `ytf logs` (and Submitter::ReadLog/ReadTaskLog) of a finished job whose logs YARN aggregated
// into HDFS and the NodeManagers deleted, on the real test cluster. It needs a cluster started with
// log aggregation on: TONY_HADOOP_LOG_AGGREGATION=keep, which ctest's fixture and scripts/test
// start (the NodeManagers keep their local copies for the tests that look into their
// directories; this test deletes the job's local logs itself, as the NodeManager would), or 1/gz
// (the NodeManagers delete them). On a cluster without aggregation it is skipped, saying so.
// The history server's job page links each task's log to its own route, which reads the same
// aggregated file once the NodeManager no longer serves it.

#include <unistd.h>

#include <filesystem>
#include <memory>
#include <regex>
#include <string>
#include <system_error>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "common/file_util.h"
#include "common/subprocess.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "http/client.h"
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

// How the cluster's yarn-site.xml (as scripts/hadoop-cluster writes it) handles finished
// applications' logs.
enum class Aggregation {
  kOff,   // the NodeManagers keep and serve them (the other modes' NodeManagers serve none)
  kDrop,  // aggregated; the NodeManagers delete their copies at once (1, gz)
  kKeep,  // aggregated; the NodeManagers leave their copies on disk for the debug delay (keep)
};

Aggregation ClusterAggregation() {
  const std::string site =
      ReadFileToString(harness::HadoopCluster::Get().conf_dir() + "/yarn-site.xml").value_or("");
  if (!absl::StrContains(site, "<name>yarn.log-aggregation-enable</name><value>true</value>")) {
    return Aggregation::kOff;
  }
  return absl::StrContains(site, "<name>yarn.nodemanager.delete.debug-delay-sec</name><value>0<")
             ? Aggregation::kDrop
             : Aggregation::kKeep;
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

// `ytf history-server --port 0` over the cluster's history directory; its URL
// ("http://127.0.0.1:N/") once printed, "" when it never was.
std::string StartHistoryServer(std::unique_ptr<Subprocess>* process) {
  SubprocessOptions options;
  options.argv = {BinDir() + "/ytf", "history-server", "--port", "0"};
  options.env = CurrentEnvironment();
  options.env["HADOOP_CONF_DIR"] = harness::HadoopCluster::Get().conf_dir();
  const std::string base = absl::StrCat(::testing::TempDir(), "/aggregated-history-", ::getpid());
  options.stdout_path = base + ".out";
  options.stderr_path = base + ".err";
  ::unlink(options.stdout_path.c_str());  // Spawn appends: an old line would name an old port
  auto spawned = Subprocess::Spawn(options);
  if (!spawned.ok()) {
    ADD_FAILURE() << spawned.status();
    return "";
  }
  *process = *std::move(spawned);
  std::string url;
  WaitUntil(
      [&] {
        std::smatch m;
        static const std::regex re("http://127\\.0\\.0\\.1:[0-9]+/");
        const std::string out = ReadFileToString(options.stdout_path).value_or("");
        if (std::regex_search(out, m, re)) url = m.str();
        return !url.empty() || (*process)->Poll().has_value();
      },
      absl::Seconds(60));
  if (url.empty()) ADD_FAILURE() << ReadFileToString(options.stderr_path).value_or("");
  return url;
}

TEST(AggregatedLogsTest, LogsOfAFinishedJobComeFromHdfsOnceTheNodeManagersDroppedThem) {
  const Aggregation mode = ClusterAggregation();
  if (mode == Aggregation::kOff) {
    GTEST_SKIP() << "the running test cluster has no log aggregation (started by hand without "
                    "it?); to run this test restart it with TONY_HADOOP_LOG_AGGREGATION=keep "
                    "scripts/hadoop-cluster start (as ctest's fixture and scripts/test start it)";
  }
  Result r = RunCommand({BinDir() + "/ytf-submit", "--yarn", "-n", "aggregated-logs-itest", "-r",
                         "worker:1", "-m", "128m",
                         "echo \"aggregated-log-marker of $DTF_TASK_JOB_NAME:$DTF_TASK_INDEX\"; "
                         "echo to-stderr >&2"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const std::string app = AppIdOf(r);
  ASSERT_FALSE(app.empty()) << r.out;

  // The NodeManagers upload the logs as the application ends, then forget it: from then on their
  // web services answer 404 for its containers, even while (keep) the files are still on their
  // disks. Until then `ytf logs` reads the NodeManager's copy (its header says "on <node>").
  Result logs;
  const bool aggregated = WaitUntil(
      [&] {
        logs = RunCommand({BinDir() + "/ytf", "logs", app, "--task", "worker:0"});
        return logs.exit_code == 0 && AllFromHdfs(logs.out);
      },
      absl::Minutes(3));
  ASSERT_TRUE(aggregated) << logs.exit_code << "\n" << logs.out << logs.err;

  // The NodeManagers' own copies (the cluster's state directory): with 1/gz they delete them; with
  // keep they are still there (so the answer above came from HDFS although the NodeManager had
  // the files), and the test deletes them as a NodeManager would after the upload.
  const std::filesystem::path data =
      std::filesystem::path(harness::HadoopCluster::Get().conf_dir()).parent_path() / "data";
  int kept = 0;
  for (int nm = 1; nm <= 3; ++nm) {
    const auto local = data / absl::StrCat("nm", nm) / "logs" / app;
    if (mode == Aggregation::kKeep) {
      if (!std::filesystem::exists(local)) continue;
      ++kept;
      std::error_code error;
      std::filesystem::remove_all(local, error);
      ASSERT_FALSE(error) << local << ": " << error.message();
    } else {
      EXPECT_TRUE(WaitUntil([&] { return !std::filesystem::exists(local); }, absl::Seconds(30)))
          << local;
    }
  }
  if (mode == Aggregation::kKeep) {
    EXPECT_GT(kept, 0) << "no NodeManager kept " << app << "'s logs";
  }

  logs = RunCommand({BinDir() + "/ytf", "logs", app, "--task", "worker:0"});
  ASSERT_EQ(logs.exit_code, 0) << logs.out << logs.err;
  EXPECT_TRUE(AllFromHdfs(logs.out)) << logs.out;
  EXPECT_THAT(logs.out, HasSubstr("aggregated-log-marker of worker:0\n"));
  EXPECT_THAT(logs.out, HasSubstr("to-stderr\n"));
  EXPECT_THAT(logs.out, HasSubstr("==> worker:0 stdout (container_"));
  EXPECT_THAT(logs.out, HasSubstr(" from the aggregated logs in hdfs://"));
  EXPECT_THAT(logs.out, HasSubstr("/bucket-logs-tfile/"));
  EXPECT_THAT(logs.out, Not(ContainsRegex("container_[0-9_]+ on ")));  // the NodeManager's
  EXPECT_EQ(logs.err, "");

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

  // The history server's job page links the task's logs to its route, which reads them there.
  std::unique_ptr<Subprocess> server;
  const std::string url = StartHistoryServer(&server);
  ASSERT_FALSE(url.empty());
  http::Client client;
  auto page = client.Get(url + "jobs/" + app);
  ASSERT_TRUE(page.ok()) << page.status();
  EXPECT_EQ(page->status, 200) << page->body;
  const std::string link = absl::StrCat("/jobs/", app, "/logs/worker:0/stdout");
  EXPECT_THAT(page->body, HasSubstr(absl::StrCat("href=\"", link, "\"")));
  auto log = client.Get(url + link.substr(1));
  ASSERT_TRUE(log.ok()) << log.status();
  EXPECT_EQ(log->status, 200) << log->body;
  EXPECT_THAT(log->body, HasSubstr("aggregated-log-marker of worker:0\n"));
  EXPECT_THAT(log->body, ContainsRegex("bytes, read from the aggregated logs in hdfs://"
                                       "[^ ]*/bucket-logs-tfile/"));
  auto no_file = client.Get(url + "jobs/" + app + "/logs/worker:0/nope");
  ASSERT_TRUE(no_file.ok()) << no_file.status();
  EXPECT_EQ(no_file->status, 404);
  server->Terminate(absl::Seconds(10));
}

}  // namespace
}  // namespace tony
