// Copyright libtony authors.
//
// The local backend keeps each job's secret and spec under one directory of jobs (by default
// $TMPDIR/tony-jobs-<uid>, in a shared /tmp): it is used only when it is this user's alone.
// Another user who made it first, a group- or world-writable mode, or a symlink planted in its
// place would let others read or swap the jobs' secrets. And with $HOME unset, libtony's own
// per-user files never move to the shared /tmp.

#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <memory>
#include <optional>
#include <string>

#include "absl/strings/str_cat.h"
#include "common/file_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tony/submitter.h"

namespace tony {
namespace {

using ::testing::HasSubstr;

class PrivateDirectoryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = ::testing::TempDir() + "/private_dir_test.XXXXXX";
    dir_ = mkdtemp(tmpl.data());
  }
  void TearDown() override {
    EXPECT_EQ(std::system(absl::StrCat("rm -rf '", dir_, "'").c_str()), 0);
  }
  mode_t Mode(const std::string& path) {
    struct stat st;
    EXPECT_EQ(::lstat(path.c_str(), &st), 0) << path;
    return st.st_mode;
  }

  std::string dir_;
};

TEST_F(PrivateDirectoryTest, AMissingDirectoryIsMade0700) {
  const std::string jobs = dir_ + "/jobs";
  const mode_t old_umask = ::umask(0);  // mkdir's mode alone must make it private
  absl::Status s = MakePrivateDirectory(jobs);
  ::umask(old_umask);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(Mode(jobs) & 07777, 0700u);
  EXPECT_TRUE(MakePrivateDirectory(jobs).ok()) << "this user's own 0700 directory is reused";
}

TEST_F(PrivateDirectoryTest, AGroupOrWorldOpenDirectoryIsRefusedNamingTheFix) {
  const std::string jobs = dir_ + "/jobs";
  ASSERT_EQ(::mkdir(jobs.c_str(), 0700), 0);
  for (mode_t mode : {0770, 0707, 0777, 01777, 0750, 0705}) {
    ASSERT_EQ(::chmod(jobs.c_str(), mode), 0);
    absl::Status s = MakePrivateDirectory(jobs);
    EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << std::oct << mode << ": " << s;
    EXPECT_THAT(s.message(), HasSubstr("is open to others"));
    EXPECT_THAT(s.message(), HasSubstr("chmod 700"));
  }
}

TEST_F(PrivateDirectoryTest, ASymlinkInItsPlaceIsRefusedEvenToOurOwnDirectory) {
  const std::string ours = dir_ + "/ours";
  ASSERT_EQ(::mkdir(ours.c_str(), 0700), 0);
  const std::string jobs = dir_ + "/jobs";
  ASSERT_EQ(::symlink(ours.c_str(), jobs.c_str()), 0);
  absl::Status s = MakePrivateDirectory(jobs);
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << s;
  EXPECT_THAT(s.message(), HasSubstr("is not a directory (a symlink"));
  // A dangling one too: mkdir must not follow it to create the target.
  const std::string dangling = dir_ + "/dangling";
  ASSERT_EQ(::symlink((dir_ + "/made-through-the-link").c_str(), dangling.c_str()), 0);
  EXPECT_FALSE(MakePrivateDirectory(dangling).ok());
  EXPECT_NE(::access((dir_ + "/made-through-the-link").c_str(), F_OK), 0);
  ASSERT_TRUE(WriteFileAtomically(dir_ + "/file", "x").ok());
  EXPECT_FALSE(MakePrivateDirectory(dir_ + "/file").ok());
}

TEST_F(PrivateDirectoryTest, ADirectoryOfAnotherUserIsRefused) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to give a directory to another user";
  const std::string jobs = dir_ + "/jobs";
  ASSERT_EQ(::mkdir(jobs.c_str(), 0700), 0);
  ASSERT_EQ(::chown(jobs.c_str(), 65534, 65534), 0);
  absl::Status s = MakePrivateDirectory(jobs);
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << s;
  EXPECT_THAT(s.message(), HasSubstr("belongs to user 65534"));
}

// The submitter checks the directory of jobs before anything is written or started.
TEST_F(PrivateDirectoryTest, TheLocalSubmitterRefusesAnOpenDirectoryOfJobs) {
  const std::string bin = dir_ + "/bin";
  ASSERT_TRUE(MakeDirectories(bin).ok());
  // Stand-ins that would leave a trace if anything were started.
  for (const char* name : {"tony-am", "tony-executor"}) {
    ASSERT_TRUE(WriteFileAtomically(absl::StrCat(bin, "/", name),
                                    absl::StrCat("#!/bin/sh\ntouch '", dir_, "/started'\n"), 0755)
                    .ok());
  }
  const std::string jobs = dir_ + "/root/tony-jobs";
  ASSERT_TRUE(MakeDirectories(jobs, 0700).ok());
  ASSERT_EQ(::chmod(jobs.c_str(), 0777), 0);
  LocalSubmitterOptions options;
  options.bin_dir = bin;
  options.work_root = dir_ + "/root";
  JobSpec spec;
  spec.job_types.push_back({.name = "worker", .instances = 1});
  spec.command = "true";
  auto app = NewLocalSubmitter(options)->Submit(spec);
  ASSERT_FALSE(app.ok());
  EXPECT_EQ(app.status().code(), absl::StatusCode::kFailedPrecondition) << app.status();
  EXPECT_THAT(app.status().message(), HasSubstr(jobs + " is open to others"));
  EXPECT_EQ(std::system(absl::StrCat("test -z \"$(ls -A '", jobs, "')\"").c_str()), 0)
      << "a job directory was made";
  EXPECT_NE(::access((dir_ + "/started").c_str(), F_OK), 0);
}

class HomeDirectoryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (const char* home = std::getenv("HOME")) old_ = home;
  }
  void TearDown() override {
    if (old_) {
      ::setenv("HOME", old_->c_str(), 1);
    } else {
      ::unsetenv("HOME");
    }
  }
  std::optional<std::string> old_;
};

TEST_F(HomeDirectoryTest, WithHomeUnsetOrEmptyItIsThePasswdEntrysNeverTmp) {
  const passwd* pw = ::getpwuid(::geteuid());
  ASSERT_NE(pw, nullptr);
  const std::string expected = pw->pw_dir != nullptr ? pw->pw_dir : "";
  ::unsetenv("HOME");
  EXPECT_EQ(HomeDirectory(), expected);
  ::setenv("HOME", "", 1);
  EXPECT_EQ(HomeDirectory(), expected);
  if (expected != "/tmp") {
    EXPECT_NE(HomeDirectory(), "/tmp");
    EXPECT_NE(HomeDirectory(), TempDirectory());
  }
  ::setenv("HOME", "/home/somebody", 1);
  EXPECT_EQ(HomeDirectory(), "/home/somebody");
}

}  // namespace
}  // namespace tony
