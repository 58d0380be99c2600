// Copyright libtony authors.
//
// Which shared history directories and existing event logs an AM trusts with its job's events
// (history::HdfsEventSink): the decisions as a table. The whole path, with another user's file
// under the job's log name, runs on the real cluster (yarnam_security_itest).

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "history/hdfs_event_sink.h"

namespace tony::history {
namespace {

using ::testing::HasSubstr;

hdfs::FileStatus Entry(hdfs::FileType type, int mode, const std::string& owner) {
  hdfs::FileStatus st;
  st.path = "/tmp/tony-history/application_1_0001.jsonl";
  st.type = type;
  st.permission = mode;
  st.owner = owner;
  return st;
}

TEST(HdfsEventSinkTest, ADirectoryOthersMayWriteMustBeSticky) {
  struct Case {
    int mode;
    hdfs::FileType type;
    std::string refusal;  // "" when trusted
  } cases[] = {
      {01777, hdfs::FileType::kDirectory, ""},
      {00755, hdfs::FileType::kDirectory, ""},
      {00700, hdfs::FileType::kDirectory, ""},
      {01770, hdfs::FileType::kDirectory, ""},
      {00777, hdfs::FileType::kDirectory, "may be written by others and is not sticky"},
      {00775, hdfs::FileType::kDirectory, "mode 0775"},
      {00757, hdfs::FileType::kDirectory, "not sticky"},
      {00644, hdfs::FileType::kFile, "is not a directory"},
  };
  for (const Case& c : cases) {
    const std::string why = UntrustedHistoryDir(Entry(c.type, c.mode, "hdfs"));
    if (c.refusal.empty()) {
      EXPECT_EQ(why, "") << std::oct << c.mode;
    } else {
      EXPECT_THAT(why, HasSubstr(c.refusal)) << std::oct << c.mode;
    }
  }
}

TEST(HdfsEventSinkTest, AnExistingLogIsOursAndNoOneElsesToWrite) {
  struct Case {
    std::string owner;
    int mode;
    hdfs::FileType type;
    std::string refusal;
  } cases[] = {
      {"bob", 0640, hdfs::FileType::kFile, ""},
      {"bob", 0600, hdfs::FileType::kFile, ""},
      {"bob", 0644, hdfs::FileType::kFile, ""},
      // Squatted: made by another user before this job's AM, open or not.
      {"mallory", 0666, hdfs::FileType::kFile, "belongs to mallory, not to bob"},
      {"mallory", 0600, hdfs::FileType::kFile, "belongs to mallory"},
      // Ours, but others may write it (an older version's, or chmod'ed): they could add lines.
      {"bob", 0666, hdfs::FileType::kFile, "may be written by others"},
      {"bob", 0660, hdfs::FileType::kFile, "mode 0660"},
      {"bob", 0755, hdfs::FileType::kDirectory, "is a directory"},
  };
  for (const Case& c : cases) {
    const std::string why = UntrustedEventLog(Entry(c.type, c.mode, c.owner), "bob");
    if (c.refusal.empty()) {
      EXPECT_EQ(why, "") << c.owner << " " << std::oct << c.mode;
    } else {
      EXPECT_THAT(why, HasSubstr(c.refusal)) << c.owner << " " << std::oct << c.mode;
    }
  }
}

TEST(HdfsEventSinkTest, LogsOfTheSharedDirectoryAndThePrivateFallbackLiveApart) {
  EXPECT_EQ(EventLogPath("/tmp/tony-history/", "application_1_0001"),
            "/tmp/tony-history/application_1_0001.jsonl");
}

}  // namespace
}  // namespace tony::history
