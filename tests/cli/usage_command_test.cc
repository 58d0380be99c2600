// Copyright libtony authors.
//
// `ytf usage` over a fixture event log (the user's local jobs directory), its bad usage, and a
// history server's /api/usage saying what `ytf usage --server --json` does.

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "cli/ytf_command.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "history/history_server.h"
#include "http/client.h"

namespace tony::cli {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// worker:0 held 2 vcores, 2 GiB and a GPU for an hour, using 1 core and 1 GiB (sampled); ps:0
// held 1 vcore and 1 GiB for half an hour (no samples); one idle GPU reported; a last line cut
// short.
constexpr char kUsageLog[] =
    R"({"v":1,"seq":1,"attempt":1,"time":"2026-11-26T10:00:00.000Z","event":"am_started","user":"alice","queue":"research"}
{"v":1,"seq":2,"attempt":1,"time":"2026-11-26T10:00:00.000Z","event":"task_requested","task":"worker:0","memory_mb":2048,"vcores":2,"gpus":1}
{"v":1,"seq":3,"attempt":1,"time":"2026-11-26T10:00:00.000Z","event":"task_requested","task":"ps:0","memory_mb":1024,"vcores":1,"gpus":0}
{"v":1,"seq":4,"attempt":1,"time":"2026-11-26T10:00:00.000Z","event":"task_allocated","task":"worker:0","container":"c_1"}
{"v":1,"seq":5,"attempt":1,"time":"2026-11-26T10:00:00.000Z","event":"task_allocated","task":"ps:0","container":"c_2"}
{"v":1,"seq":6,"attempt":1,"time":"2026-11-26T10:30:00.000Z","event":"task_usage","task":"worker:0","cpu_cores":1.0,"rss_bytes":1073741824}
{"v":1,"seq":7,"attempt":1,"time":"2026-11-26T10:30:00.000Z","event":"container_completed","task":"ps:0","container":"c_2"}
{"v":1,"seq":8,"attempt":1,"time":"2026-11-26T10:40:00.000Z","event":"task_gpu_idle","task":"worker:0","gpu":0}
{"v":1,"seq":9,"attempt":1,"time":"2026-11-26T11:00:00.000Z","event":"job_finished","state":"SUCCEEDED"}
not json, cut short
)";

class UsageCommandTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = ::testing::TempDir() + "/usage_command_test.XXXXXX";
    tmp_ = mkdtemp(tmpl.data());
    const char* old = std::getenv("TMPDIR");
    if (old != nullptr) old_tmpdir_ = old;
    ::setenv("TMPDIR", tmp_.c_str(), 1);
    const std::string root = absl::StrCat(tmp_, "/tony-jobs-", ::geteuid());
    ASSERT_EQ(::mkdir(root.c_str(), 0700), 0);
    ASSERT_EQ(::mkdir((root + "/local_0001").c_str(), 0700), 0);
    FILE* f = std::fopen((root + "/local_0001/events.jsonl").c_str(), "w");
    ASSERT_NE(f, nullptr);
    std::fputs(kUsageLog, f);
    std::fclose(f);
  }
  void TearDown() override {
    if (old_tmpdir_.empty()) {
      ::unsetenv("TMPDIR");
    } else {
      ::setenv("TMPDIR", old_tmpdir_.c_str(), 1);
    }
    (void)std::system(absl::StrCat("rm -rf '", tmp_, "'").c_str());
  }
  int Run(std::vector<std::string> words) {
    words.insert(words.begin(), "usage");
    out_.str("");
    err_.str("");
    return RunYtf(words, out_, err_);
  }
  std::string tmp_, old_tmpdir_;
  std::ostringstream out_, err_;
};

TEST_F(UsageCommandTest, TableByQueue) {
  ASSERT_EQ(Run({"--local", "--by", "queue"}), 0) << err_.str();
  const std::vector<std::string> lines = absl::StrSplit(out_.str(), '\n');
  ASSERT_GE(lines.size(), 3u);
  EXPECT_THAT(lines[0], HasSubstr("QUEUE"));
  EXPECT_THAT(lines[0], HasSubstr("VCORE-HOURS"));
  // 2 x 1 h + 1 x 0.5 h vcores; 2 x 1 + 1 x 0.5 GB; 1 GPU-hour; CPU 1 of 2, memory 1 of 2.
  EXPECT_THAT(lines[1], HasSubstr("research"));
  EXPECT_THAT(lines[1], HasSubstr("1         2.50         2.50       1.00     50%     50%"));
  EXPECT_THAT(lines[2], HasSubstr("total"));
}

TEST_F(UsageCommandTest, CsvAndJson) {
  ASSERT_EQ(Run({"--local", "--csv", "--by", "job"}), 0) << err_.str();
  EXPECT_THAT(out_.str(), HasSubstr("\nlocal_0001,1,2.5000,2.5000,1.0000,1.0000,1.0000,0.5000,"
                                    "0.5000,1,"
                                    // goodput: 1 h, half starting, half training
                                    "1.0000,0.0000,0.5000,0.5000,0.0000,0.0000,0.5000\n"));
  ASSERT_EQ(Run({"--local", "--json"}), 0) << err_.str();
  EXPECT_THAT(out_.str(), HasSubstr("\"by\": \"user\""));
  EXPECT_THAT(out_.str(), HasSubstr("\"vcore_hours\": 2.5"));
  EXPECT_THAT(out_.str(), HasSubstr("\"idle_gpus\": 1"));
}

TEST_F(UsageCommandTest, FromAndToLeaveOutJobsStartedOutside) {
  ASSERT_EQ(Run({"--local", "--csv", "--from", "2026-11-26T10:00:01Z"}), 0) << err_.str();
  EXPECT_THAT(out_.str(), Not(HasSubstr("local")));
  EXPECT_THAT(out_.str(), HasSubstr("\ntotal,0,0.0000,"));
  ASSERT_EQ(Run({"--local", "--csv", "--from", "2026-11-26", "--to", "2026-11-27"}), 0);
  EXPECT_THAT(out_.str(), HasSubstr("\ntotal,1,2.5000,"));
}

TEST_F(UsageCommandTest, BadUsageIsOneLineAndExit2) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--local", "--by", "team"}, "--by: 'team' is not user, queue or job"},
      {{"--local", "--from", "yesterday"}, "--from: 'yesterday' is not a date"},
      {{"--local", "--to", "2026-13-01"}, "--to: '2026-13-01' is not a date"},
      {{"--local", "--json", "--csv"}, "--json and --csv: give one of them"},
      {{"--json", "--csv"}, "--json and --csv: give one of them"},  // before any cluster
      {{"--local", "--from", "2026-11-27", "--to", "2026-11-26"}, "--from must be before --to"},
      {{"--local", "extra"}, "unexpected argument 'extra'"},
  };
  for (const auto& [words, message] : cases) {
    EXPECT_EQ(Run(words), 2) << words[1];
    const std::string err = err_.str();
    EXPECT_THAT(err, HasSubstr(message));
    EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
    EXPECT_EQ(out_.str(), "");
  }
}

TEST_F(UsageCommandTest, FromAHistoryServersIndex) {
  const std::string dir = tmp_ + "/history";
  ASSERT_EQ(::mkdir(dir.c_str(), 0700), 0);
  FILE* f = std::fopen((dir + "/application_1_0001.jsonl").c_str(), "w");
  ASSERT_NE(f, nullptr);
  std::fputs(kUsageLog, f);
  std::fclose(f);
  history::HistoryServer server(history::LocalHistoryStore(dir), {});
  ASSERT_TRUE(server.Start().ok());
  const std::string url = absl::StrCat("http://127.0.0.1:", server.port());
  ASSERT_EQ(Run({"--server", url, "--csv", "--by", "queue"}), 0) << err_.str();
  EXPECT_THAT(out_.str(), HasSubstr("\nresearch,1,2.5000,2.5000,1.0000,1.0000,1.0000,0.5000,"
                                    "0.5000,1,"
                                    // goodput: 1 h, half starting, half training
                                    "1.0000,0.0000,0.5000,0.5000,0.0000,0.0000,0.5000\n"));
  ASSERT_EQ(Run({"--server", url, "--csv", "--from", "2026-11-27"}), 0) << err_.str();
  EXPECT_THAT(out_.str(), HasSubstr("\ntotal,0,0.0000,"));
  // The server's own /api/usage says what ytf usage --server --json does.
  http::Client client;
  for (const char* by : {"user", "queue", "job"}) {
    ASSERT_EQ(Run({"--server", url, "--json", "--by", by}), 0) << err_.str();
    absl::StatusOr<http::Response> page = client.Get(absl::StrCat(url, "/api/usage?by=", by));
    ASSERT_TRUE(page.ok()) << page.status();
    EXPECT_EQ(page->status, 200);
    EXPECT_EQ(page->body, out_.str()) << by;
  }
  EXPECT_EQ(Run({"--server", "localhost:1"}), 2);
  EXPECT_THAT(err_.str(), HasSubstr("--server: 'localhost:1' is not a URL"));
  server.Stop();
}

}  // namespace
}  // namespace tony::cli
