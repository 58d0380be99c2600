// Copyright libtony authors.

#include "common/utf8.h"

#include <string>

#include "gtest/gtest.h"

namespace tony {
namespace {

const std::string kReplacement = "\xEF\xBF\xBD";

TEST(Utf8Test, ValidTextIsUnchanged) {
  for (const std::string& s : {std::string(""), std::string("plain ascii\n"),
                               std::string("caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80"),
                               std::string("nul \0 inside", 12), std::string("\xF4\x8F\xBF\xBF")}) {
    EXPECT_TRUE(IsValidUtf8(s));
    EXPECT_EQ(ToValidUtf8(s), s);
  }
}

TEST(Utf8Test, EveryInvalidByteBecomesOneReplacement) {
  // The report from the field: a task printed \377\376 to stderr.
  EXPECT_EQ(ToValidUtf8("\xFF\xFE"), kReplacement + kReplacement);
  EXPECT_FALSE(IsValidUtf8("\xFF\xFE"));
  // A character cut by the 1024-byte line limit (the first two bytes of a euro sign).
  EXPECT_EQ(ToValidUtf8("price 5\xE2\x82"), "price 5" + kReplacement + kReplacement);
  // Overlong forms, surrogates, beyond U+10FFFF, a lone continuation byte.
  EXPECT_EQ(ToValidUtf8("\xC0\xAF"), kReplacement + kReplacement);
  EXPECT_EQ(ToValidUtf8("\xE0\x80\xAF"), kReplacement + kReplacement + kReplacement);
  EXPECT_EQ(ToValidUtf8("\xED\xA0\x80"), kReplacement + kReplacement + kReplacement);
  EXPECT_EQ(ToValidUtf8("\xF4\x90\x80\x80"),
            kReplacement + kReplacement + kReplacement + kReplacement);
  EXPECT_EQ(ToValidUtf8("a\x80z"), "a" + kReplacement + "z");
  for (const char* bad : {"\xC0\xAF", "\xED\xA0\x80", "\xF5\x80\x80\x80", "\x80"}) {
    EXPECT_FALSE(IsValidUtf8(bad)) << bad;
    EXPECT_TRUE(IsValidUtf8(ToValidUtf8(bad)));
  }
}

}  // namespace
}  // namespace tony
