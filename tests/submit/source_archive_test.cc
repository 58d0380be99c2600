// Copyright libtony authors.

#include "submit/source_archive.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/file_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tony::submit {
namespace {

using ::testing::HasSubstr;

class SourceArchiveTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = absl::StrCat(::testing::TempDir(), "/source-archive-", ::getpid(), "-",
                         ::testing::UnitTest::GetInstance()->current_test_info()->name());
    ASSERT_EQ(std::system(absl::StrCat("rm -rf '", root_, "'").c_str()), 0);
    src_ = root_ + "/src";
    ASSERT_TRUE(MakeDirectories(src_).ok());
  }
  void TearDown() override { (void)std::system(absl::StrCat("rm -rf '", root_, "'").c_str()); }
  void Write(const std::string& rel, const std::string& contents, int mode = 0644) {
    const std::string path = src_ + "/" + rel;
    ASSERT_TRUE(MakeDirectories(path.substr(0, path.rfind('/'))).ok());
    ASSERT_TRUE(WriteFileAtomically(path, contents, mode).ok());
  }
  // Unpacks `tar` with the system's tar, as YARN's NodeManager does; its exit code.
  int Untar(const std::string& tar, const std::string& into) {
    EXPECT_TRUE(MakeDirectories(into).ok());
    return std::system(absl::StrCat("tar -xf '", tar, "' -C '", into, "' 2>&1").c_str());
  }
  std::string root_, src_;
};

TEST_F(SourceArchiveTest, TarUnpacksTheTreeWithItsModesAndLongPaths) {
  Write("train.py", "print('hi')\n", 0755);
  Write("pkg/__init__.py", "");
  Write("pkg/model.py", std::string(5000, 'x'));  // more than one block, not a multiple
  const std::string deep = std::string(90, 'd') + "/" + std::string(90, 'e') + "/leaf.py";
  Write(deep, "deep\n");  // over ustar's 100-byte name: split into prefix and name
  ASSERT_TRUE(MakeDirectories(src_ + "/empty").ok());
  ASSERT_EQ(::symlink("train.py", (src_ + "/alias.py").c_str()), 0);  // followed
  ASSERT_EQ(::mkfifo((src_ + "/pipe").c_str(), 0600), 0);             // left out, never read

  const std::string tar = root_ + "/src.tar";
  ASSERT_TRUE(WriteSourceArchive(src_, tar).ok());
  const std::string out = root_ + "/out";
  ASSERT_EQ(Untar(tar, out), 0);
  EXPECT_EQ(*ReadFileToString(out + "/train.py"), "print('hi')\n");
  EXPECT_EQ(*ReadFileToString(out + "/alias.py"), "print('hi')\n");
  EXPECT_EQ(*ReadFileToString(out + "/pkg/model.py"), std::string(5000, 'x'));
  EXPECT_EQ(*ReadFileToString(out + "/" + deep), "deep\n");
  struct stat st;
  ASSERT_EQ(::stat((out + "/train.py").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0755u);
  ASSERT_EQ(::stat((out + "/empty").c_str(), &st), 0);
  EXPECT_TRUE(S_ISDIR(st.st_mode));
  EXPECT_NE(::access((out + "/pipe").c_str(), F_OK), 0);

  // Same tree, same bytes: names in order, nothing of the packing machine's users.
  const std::string again = root_ + "/again.tar";
  ASSERT_TRUE(WriteSourceArchive(src_, again).ok());
  EXPECT_EQ(*ReadFileToString(tar), *ReadFileToString(again));
}

TEST_F(SourceArchiveTest, WhatCannotBePackedIsNamed) {
  const std::string too_long = std::string(200, 'a') + "/" + std::string(120, 'b');
  Write(too_long, "x");
  auto s = WriteSourceArchive(src_, root_ + "/long.tar");
  EXPECT_TRUE(absl::IsInvalidArgument(s)) << s;
  EXPECT_THAT(s.message(), HasSubstr("--src_dir"));
  EXPECT_THAT(s.message(), HasSubstr("255 bytes"));
  ASSERT_EQ(std::system(absl::StrCat("rm -rf '", src_, "/", std::string(200, 'a'), "'").c_str()),
            0);

  Write("a.py", "1");
  Write("b.py", "2");
  Write("c.py", "3");
  s = WriteSourceArchive(src_, root_ + "/many.tar", {.max_files = 2});
  EXPECT_THAT(s.message(), HasSubstr("more than 2 files"));
  s = WriteSourceArchive(src_, root_ + "/big.tar", {.max_bytes = 2});
  EXPECT_THAT(s.message(), HasSubstr("more than 2 bytes"));

  ASSERT_TRUE(MakeDirectories(src_ + "/sub").ok());
  ASSERT_EQ(::symlink("..", (src_ + "/sub/loop").c_str()), 0);
  s = WriteSourceArchive(src_, root_ + "/loop.tar");
  EXPECT_THAT(s.message(), HasSubstr("a loop"));
  ASSERT_EQ(::unlink((src_ + "/sub/loop").c_str()), 0);

  s = WriteSourceArchive(root_ + "/nowhere", root_ + "/none.tar");
  EXPECT_TRUE(absl::IsInvalidArgument(s)) << s;
  // Never through an existing file or link at the output path.
  s = WriteSourceArchive(src_, src_ + "/a.py");
  EXPECT_TRUE(absl::IsInternal(s)) << s;
  EXPECT_EQ(*ReadFileToString(src_ + "/a.py"), "1");
}

// A cloned repository's symlink to ~/.ssh/id_rsa must not ship the key to every container.
TEST_F(SourceArchiveTest, ASymlinkOutOfTheTreeIsRefusedNamingLinkAndTarget) {
  Write("train.py", "print(1)");
  ASSERT_TRUE(WriteFileAtomically(root_ + "/id_rsa", "PRIVATE KEY", 0600).ok());
  ASSERT_TRUE(MakeDirectories(root_ + "/elsewhere").ok());
  ASSERT_TRUE(WriteFileAtomically(root_ + "/elsewhere/key", "PRIVATE KEY", 0600).ok());
  struct Link {
    std::string name, target;
  };
  for (const Link& link : {Link{"pkg/key", "../../id_rsa"}, Link{"abs", root_ + "/id_rsa"},
                           Link{"dir", "../elsewhere"}, Link{"root", "/"}}) {
    SCOPED_TRACE(link.name);
    Write("pkg/ok.py", "");
    ASSERT_EQ(::symlink(link.target.c_str(), (src_ + "/" + link.name).c_str()), 0);
    const std::string tar = root_ + "/out.tar";
    ::unlink(tar.c_str());
    absl::Status s = WriteSourceArchive(src_, tar);
    EXPECT_TRUE(absl::IsInvalidArgument(s)) << s;
    EXPECT_THAT(s.message(), HasSubstr("--src_dir"));
    EXPECT_THAT(s.message(), HasSubstr(absl::StrCat("'", src_, "/", link.name, "'")));
    EXPECT_THAT(s.message(), HasSubstr(absl::StrCat("symlink to '", link.target, "'")));
    EXPECT_THAT(s.message(), HasSubstr("outside the directory"));
    EXPECT_EQ(s.message().find('\n'), absl::string_view::npos);
    auto written = ReadFileToString(tar);
    EXPECT_FALSE(written.ok() && absl::StrContains(*written, "PRIVATE KEY"));
    ASSERT_EQ(::unlink((src_ + "/" + link.name).c_str()), 0);
  }

  // Links that stay inside, relative or absolute, through a symlinked source directory too.
  ASSERT_EQ(::symlink((src_ + "/train.py").c_str(), (src_ + "/abs.py").c_str()), 0);
  ASSERT_EQ(::symlink("../train.py", (src_ + "/pkg/up.py").c_str()), 0);
  ASSERT_EQ(::symlink("src", (root_ + "/via").c_str()), 0);
  const std::string tar = root_ + "/in.tar";
  ASSERT_TRUE(WriteSourceArchive(root_ + "/via", tar).ok());
  ASSERT_EQ(Untar(tar, root_ + "/out"), 0);
  EXPECT_EQ(*ReadFileToString(root_ + "/out/abs.py"), "print(1)");
  EXPECT_EQ(*ReadFileToString(root_ + "/out/pkg/up.py"), "print(1)");
}

TEST_F(SourceArchiveTest, APackedSourceLivesInItsOwnTemporaryDirectoryUntilDestroyed) {
  Write("train.py", "print(1)");
  const char* tmpdir = std::getenv("TMPDIR");
  const std::string saved = tmpdir == nullptr ? "" : tmpdir;
  setenv("TMPDIR", root_.c_str(), 1);
  auto packed = PackedSource::Pack(src_);
  ASSERT_TRUE(packed.ok()) << packed.status();
  const std::string tar = (*packed)->tar();
  EXPECT_EQ(tar.rfind(root_ + "/tony-src-", 0), 0u) << tar;
  EXPECT_EQ(Untar(tar, root_ + "/out"), 0);
  EXPECT_EQ(*ReadFileToString(root_ + "/out/train.py"), "print(1)");
  const std::string dir = tar.substr(0, tar.rfind('/'));
  packed->reset();
  EXPECT_NE(::access(dir.c_str(), F_OK), 0);

  // A tree that cannot be packed leaves no temporary directory behind.
  ASSERT_EQ(::symlink("..", (src_ + "/loop").c_str()), 0);
  auto refused = PackedSource::Pack(src_);
  if (tmpdir == nullptr) {
    unsetenv("TMPDIR");
  } else {
    setenv("TMPDIR", saved.c_str(), 1);
  }
  EXPECT_TRUE(absl::IsInvalidArgument(refused.status())) << refused.status();
  EXPECT_NE(std::system(absl::StrCat("ls -d '", root_, "'/tony-src-* >/dev/null 2>&1").c_str()), 0);
}

}  // namespace
}  // namespace tony::submit
