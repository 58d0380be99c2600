// Copyright libtony authors.

#include "common/file_util.h"

#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>

#include "gtest/gtest.h"

namespace tony {
namespace {

class FileUtilTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = ::testing::TempDir() + "/file_util_test.XXXXXX";
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
  }
  std::string dir_;
};

TEST(TempDirectoryTest, TmpdirElseTmp) {
  const char* saved = std::getenv("TMPDIR");
  const std::string before = saved != nullptr ? saved : "";
  setenv("TMPDIR", "/var/tmp/x", 1);
  EXPECT_EQ(TempDirectory(), "/var/tmp/x");
  setenv("TMPDIR", "", 1);
  EXPECT_EQ(TempDirectory(), "/tmp");
  unsetenv("TMPDIR");
  EXPECT_EQ(TempDirectory(), "/tmp");
  if (saved != nullptr) setenv("TMPDIR", before.c_str(), 1);
}

TEST_F(FileUtilTest, WriteFileAtomicallyThenRead) {
  const std::string path = dir_ + "/a.txt";
  ASSERT_TRUE(WriteFileAtomically(path, "first", 0600).ok());
  ASSERT_TRUE(WriteFileAtomically(path, "second").ok());  // replaces, not appends
  absl::StatusOr<std::string> got = ReadFileToString(path);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(*got, "second");
  // No temporary left beside it.
  EXPECT_NE(::access((path + ".tmp." + std::to_string(::getpid())).c_str(), F_OK), 0);
}

TEST_F(FileUtilTest, WriteFileAtomicallyIntoAMissingDirectoryFails) {
  absl::Status s = WriteFileAtomically(dir_ + "/no/such/dir/f", "x");
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("cannot create"), absl::string_view::npos) << s;
}

TEST_F(FileUtilTest, ReadFileToStringOfAMissingFileIsNotFound) {
  EXPECT_EQ(ReadFileToString(dir_ + "/missing").status().code(), absl::StatusCode::kNotFound);
}

TEST_F(FileUtilTest, ReadRegularFileLimitsAndKinds) {
  const std::string path = dir_ + "/f";
  ASSERT_TRUE(WriteFileAtomically(path, "12345").ok());
  absl::StatusOr<std::string> got = ReadRegularFile(path, 5);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(*got, "12345");
  EXPECT_EQ(ReadRegularFile(path, 4).status().code(), absl::StatusCode::kOutOfRange);
  EXPECT_EQ(ReadRegularFile(dir_, 100).status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(ReadRegularFile(dir_ + "/missing", 100).status().code(), absl::StatusCode::kNotFound);
  // A FIFO without a writer: refused at once instead of blocking.
  const std::string fifo = dir_ + "/fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_EQ(ReadRegularFile(fifo, 100).status().code(), absl::StatusCode::kFailedPrecondition);
}

TEST_F(FileUtilTest, MakeDirectoriesIsMkdirP) {
  const std::string deep = dir_ + "/a/b/c";
  ASSERT_TRUE(MakeDirectories(deep).ok());
  ASSERT_TRUE(MakeDirectories(deep).ok());  // already there
  struct stat st;
  ASSERT_EQ(::stat(deep.c_str(), &st), 0);
  EXPECT_TRUE(S_ISDIR(st.st_mode));
  ASSERT_TRUE(WriteFileAtomically(dir_ + "/file", "x").ok());
  EXPECT_FALSE(MakeDirectories(dir_ + "/file").ok());  // a file, not a directory
}

TEST_F(FileUtilTest, CopyFileKeepsContentsAndMode) {
  const std::string from = dir_ + "/from.sh";
  const std::string to = dir_ + "/to.sh";
  std::string big(200000, 'y');  // more than one read buffer
  ASSERT_TRUE(WriteFileAtomically(from, big, 0750).ok());
  ASSERT_TRUE(CopyFile(from, to).ok());
  absl::StatusOr<std::string> got = ReadFileToString(to);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(*got, big);
  struct stat st;
  ASSERT_EQ(::stat(to.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0750u);
  EXPECT_FALSE(CopyFile(dir_ + "/missing", to).ok());
}

TEST(FileUtilNamesTest, BaseName) {
  EXPECT_EQ(BaseName("a/b.py"), "b.py");
  EXPECT_EQ(BaseName("b.py"), "b.py");
  EXPECT_EQ(BaseName("/x/"), "");
}

}  // namespace
}  // namespace tony
