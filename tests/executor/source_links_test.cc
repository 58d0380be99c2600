// Copyright libtony authors.

#include "executor/source_links.h"

#include <unistd.h>

#include <cstdlib>
#include <string>

#include "absl/strings/str_cat.h"
#include "common/file_util.h"
#include "gtest/gtest.h"

namespace tony::executor {
namespace {

TEST(SourceLinksTest, TheSourcesAppearInTheWorkingDirectoryUnderTheirOwnNames) {
  const std::string root = absl::StrCat(::testing::TempDir(), "/source-links-", ::getpid());
  ASSERT_EQ(std::system(absl::StrCat("rm -rf '", root, "'").c_str()), 0);
  const std::string work = root + "/container";
  ASSERT_TRUE(MakeDirectories(work + "/tony-src/pkg").ok());  // as YARN unpacked it
  ASSERT_TRUE(WriteFileAtomically(work + "/tony-src/train.py", "main").ok());
  ASSERT_TRUE(WriteFileAtomically(work + "/tony-src/pkg/m.py", "m").ok());
  ASSERT_TRUE(WriteFileAtomically(work + "/tony-src/data.txt", "sources'").ok());
  ASSERT_TRUE(WriteFileAtomically(work + "/data.txt", "shipped").ok());  // --file's, kept

  ASSERT_TRUE(LinkSourceEntries("tony-src", work).ok());
  EXPECT_EQ(*ReadFileToString(work + "/train.py"), "main");
  EXPECT_EQ(*ReadFileToString(work + "/pkg/m.py"), "m");
  EXPECT_EQ(*ReadFileToString(work + "/data.txt"), "shipped");
  // A task restarted in the same container links again: nothing changes, no error.
  ASSERT_TRUE(LinkSourceEntries("tony-src", work).ok());
  EXPECT_EQ(*ReadFileToString(work + "/train.py"), "main");

  // The local backend gives the submitter's directory itself.
  const std::string local = root + "/local-task";
  ASSERT_TRUE(MakeDirectories(local).ok());
  ASSERT_TRUE(LinkSourceEntries(work + "/tony-src", local).ok());
  EXPECT_EQ(*ReadFileToString(local + "/pkg/m.py"), "m");

  EXPECT_TRUE(absl::IsFailedPrecondition(LinkSourceEntries("missing", work)));
  (void)std::system(absl::StrCat("rm -rf '", root, "'").c_str());
}

}  // namespace
}  // namespace tony::executor
