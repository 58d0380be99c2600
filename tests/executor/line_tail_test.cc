// Copyright libtony authors.

#include "executor/line_tail.h"

#include <string>

#include "common/utf8.h"
#include "gtest/gtest.h"

namespace tony::executor {
namespace {

TEST(LineTailTest, KeepsTheLastLinesAndCutsLongOnes) {
  LineTail tail(/*max_lines=*/2, /*max_line_bytes=*/5);
  tail.Append("one\ntwo\nthree\nfour-and-more\nunterminated");
  EXPECT_EQ(tail.Tail(), "four-...\nunter");
}

TEST(LineTailTest, AnyBytesComeOutAsUtf8) {
  // The field report: a task printed \377\376 to stderr and exited 3; the exit report then
  // failed protobuf's UTF-8 check and never reached the AM.
  LineTail tail;
  tail.Append("Traceback\n\xFF\xFE\n");
  const std::string out = tail.Tail();
  EXPECT_TRUE(IsValidUtf8(out));
  EXPECT_EQ(out, "Traceback\n\xEF\xBF\xBD\xEF\xBF\xBD");
  // A line cut inside a multibyte character by the byte limit.
  LineTail cut(/*max_lines=*/1, /*max_line_bytes=*/4);
  cut.Append("ab\xE2\x82\xAC\n");  // "ab€"
  EXPECT_TRUE(IsValidUtf8(cut.Tail()));
  EXPECT_EQ(cut.Tail(), "ab\xEF\xBF\xBD\xEF\xBF\xBD...");
}

}  // namespace
}  // namespace tony::executor
