// Copyright libtony authors.
//
// `ytf history --local` and `ytf history-server --local` read only the user's own private jobs
// directory, and --group goes with --init_dir.

#include "cli/history_command.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <sstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tony::cli {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

class HistoryLocalTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = ::testing::TempDir() + "/history_local_test.XXXXXX";
    tmp_ = mkdtemp(tmpl.data());
    const char* old = std::getenv("TMPDIR");
    if (old != nullptr) old_tmpdir_ = old;
    ::setenv("TMPDIR", tmp_.c_str(), 1);
    root_ = absl::StrCat(tmp_, "/tony-jobs-", ::geteuid());
  }
  void TearDown() override {
    if (old_tmpdir_.empty()) {
      ::unsetenv("TMPDIR");
    } else {
      ::setenv("TMPDIR", old_tmpdir_.c_str(), 1);
    }
    (void)std::system(absl::StrCat("rm -rf '", tmp_, "'").c_str());
  }
  std::string tmp_, old_tmpdir_, root_;
};

TEST_F(HistoryLocalTest, AJobsDirectoryOpenToOthersIsRefusedNotRead) {
  // Another local user made it first (here: the same user, open to all) and planted a job.
  ASSERT_EQ(::mkdir(root_.c_str(), 0777), 0);
  ASSERT_EQ(::chmod(root_.c_str(), 0777), 0);
  ASSERT_EQ(::mkdir((root_ + "/local_planted").c_str(), 0755), 0);
  FILE* f = std::fopen((root_ + "/local_planted/events.jsonl").c_str(), "w");
  ASSERT_NE(f, nullptr);
  std::fputs("{\"v\":1,\"event\":\"am_started\",\"name\":\"planted\"}\n", f);
  std::fclose(f);
  HistoryArgs args;
  args.local = true;
  std::ostringstream out, err;
  EXPECT_NE(RunHistory(args, nullptr, out, err), 0);
  EXPECT_THAT(err.str(), HasSubstr("is open to others"));
  EXPECT_THAT(out.str(), Not(HasSubstr("planted")));
}

TEST_F(HistoryLocalTest, ThePrivateDirectoryIsMadeAndListed) {
  HistoryArgs args;
  args.local = true;
  std::ostringstream out, err;
  EXPECT_EQ(RunHistory(args, nullptr, out, err), 0) << err.str();
  struct stat st {};
  ASSERT_EQ(::stat(root_.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
}

TEST(HistoryServerArgsTest, GroupWithoutInitDirIsBadUsage) {
  HistoryArgs args;
  args.group = "hadoop";
  std::ostringstream out, err;
  EXPECT_EQ(RunHistoryServer(args, nullptr, out, err), 2);
  EXPECT_THAT(err.str(), HasSubstr("--group goes with --init_dir"));
  args.init_dir = true;
  args.local = true;
  EXPECT_EQ(RunHistoryServer(args, nullptr, out, err), 2);
  EXPECT_THAT(err.str(), HasSubstr("drop --local"));
}

}  // namespace
}  // namespace tony::cli
