// Copyright libtony authors.

#include "spec/parse_util.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tony::spec {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Pair;

TEST(ParseMemoryMbTest, AcceptsPlainMegabytesAndUnits) {
  EXPECT_EQ(*ParseMemoryMb("4096"), 4096);
  EXPECT_EQ(*ParseMemoryMb("512m"), 512);
  EXPECT_EQ(*ParseMemoryMb("512M"), 512);
  EXPECT_EQ(*ParseMemoryMb("4g"), 4096);
  EXPECT_EQ(*ParseMemoryMb("4G"), 4096);
  EXPECT_EQ(*ParseMemoryMb("2gb"), 2048);
  EXPECT_EQ(*ParseMemoryMb("1t"), 1024 * 1024);
}

TEST(ParseMemoryMbTest, RejectsZeroNegativeAndGarbage) {
  for (const char* bad :
       {"0", "0g", "-1", "-4g", "four", "", "4k", "4.5g", "g", "99999999999999999999"}) {
    EXPECT_FALSE(ParseMemoryMb(bad).ok()) << bad;
  }
  EXPECT_THAT(std::string(ParseMemoryMb("lots").status().message()), HasSubstr("512m, 4g"));
}

TEST(ParsePositiveIntTest, Bounds) {
  EXPECT_EQ(*ParsePositiveInt("7"), 7);
  EXPECT_FALSE(ParsePositiveInt("0").ok());
  EXPECT_FALSE(ParsePositiveInt("-2").ok());
  EXPECT_FALSE(ParsePositiveInt("x").ok());
  EXPECT_FALSE(ParsePositiveInt("3000000000").ok());
  EXPECT_THAT(std::string(ParsePositiveInt("-2").status().message()), HasSubstr("negative"));
}

TEST(ParseTimeoutTest, DurationsAndNone) {
  EXPECT_EQ(*ParseTimeout("30s"), absl::Seconds(30));
  EXPECT_EQ(*ParseTimeout("1h30m"), absl::Minutes(90));
  EXPECT_EQ(*ParseTimeout("none"), absl::InfiniteDuration());
  EXPECT_FALSE(ParseTimeout("0s").ok());
  EXPECT_FALSE(ParseTimeout("soon").ok());
  EXPECT_EQ(*ParseTimeout(FormatTimeout(absl::Minutes(10))), absl::Minutes(10));
  EXPECT_EQ(*ParseTimeout(FormatTimeout(absl::InfiniteDuration())), absl::InfiniteDuration());
}

TEST(ParseClusterRequirementTest, ParsesInOrder) {
  auto r = ParseClusterRequirement("ps:1, worker:4 ,chief:1");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_THAT(*r, ElementsAre(Pair("ps", 1), Pair("worker", 4), Pair("chief", 1)));
}

TEST(ParseClusterRequirementTest, RejectsMalformed) {
  struct Case {
    const char* text;
    const char* why;
  } cases[] = {
      {"", "empty"},
      {"   ", "empty"},
      {"ps", "no count"},
      {"ps:", "count of 'ps'"},
      {"ps:0", "at least 1"},
      {"ps:-1", "negative"},
      {"ps:two", "not a positive integer"},
      {"ps:1,,worker:2", "empty entry"},
      {"ps:1,worker:2,", "empty entry"},
      {"ps:1,ps:2", "appears twice"},
      {"Worker:1", "not a job name"},
      {"1w:1", "not a job name"},
  };
  for (const Case& c : cases) {
    auto r = ParseClusterRequirement(c.text);
    ASSERT_FALSE(r.ok()) << c.text;
    EXPECT_THAT(std::string(r.status().message()), HasSubstr(c.why)) << c.text;
  }
}

TEST(ParseResourceAssignmentsTest, ThreeForms) {
  auto r = ParseResourceAssignments("4");
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->size(), 1u);
  EXPECT_EQ((*r)[0].job, "");
  EXPECT_FALSE((*r)[0].index);
  EXPECT_EQ((*r)[0].value, "4");

  r = ParseResourceAssignments("worker:2,ps[0]:4g");
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->size(), 2u);
  EXPECT_EQ((*r)[0].job, "worker");
  EXPECT_FALSE((*r)[0].index);
  EXPECT_EQ((*r)[1].job, "ps");
  EXPECT_EQ(*(*r)[1].index, 0);
  EXPECT_EQ((*r)[1].value, "4g");
}

TEST(ParseResourceAssignmentsTest, RejectsMalformed) {
  for (const char* bad :
       {"", "worker[0:4", "worker[x]:4", "worker[-1]:4", "Bad:4", "worker:", "4,,"}) {
    EXPECT_FALSE(ParseResourceAssignments(bad).ok()) << bad;
  }
}

TEST(ParseUtilTest, IsValidUtf8) {
  EXPECT_TRUE(IsValidUtf8(""));
  EXPECT_TRUE(IsValidUtf8("plain ascii\n"));
  EXPECT_TRUE(IsValidUtf8("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x91\x8b \xf4\x8f\xbf\xbf"));
  EXPECT_TRUE(IsValidUtf8(std::string("nul\0inside", 11)));
  EXPECT_FALSE(IsValidUtf8("caf\xe9"));               // Latin-1
  EXPECT_FALSE(IsValidUtf8("\xc3"));                  // truncated
  EXPECT_FALSE(IsValidUtf8("\xc3\x28"));              // bad continuation
  EXPECT_FALSE(IsValidUtf8("\xc0\x80"));              // overlong
  EXPECT_FALSE(IsValidUtf8("\xe0\x80\xaf"));          // overlong
  EXPECT_FALSE(IsValidUtf8("\xed\xa0\x80"));          // surrogate
  EXPECT_FALSE(IsValidUtf8("\xf4\x90\x80\x80"));      // above U+10FFFF
  EXPECT_FALSE(IsValidUtf8("\xf8\x88\x80\x80\x80"));  // 5-byte form
  EXPECT_FALSE(IsValidUtf8("\x80"));
}

}  // namespace
}  // namespace tony::spec
