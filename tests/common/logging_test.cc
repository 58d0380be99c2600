// Copyright libtony authors.

#include "common/logging.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace tony {
namespace {

TEST(LoggingTest, HostSinkCapturesLinesAtOrAboveMinSeverity) {
  std::vector<std::string> lines;
  SetLogSink([&](LogSeverity severity, absl::string_view file, int line, absl::string_view msg) {
    lines.push_back(std::string(msg));
  });
  SetMinLogSeverity(LogSeverity::kInfo);
  TONY_LOG(DEBUG) << "hidden";
  TONY_LOG(INFO) << "shown " << 42;
  TONY_LOG(ERROR) << "bad";
  SetLogSink(nullptr);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0], "shown 42");
  EXPECT_EQ(lines[1], "bad");
}

TEST(LoggingTest, SinkGetsSourceRelativePaths) {
  std::string file;
  SetLogSink(
      [&](LogSeverity, absl::string_view f, int, absl::string_view) { file = std::string(f); });
  TONY_LOG(INFO) << "where";
  SetLogSink(nullptr);
  EXPECT_EQ(file, "tests/common/logging_test.cc");
}

TEST(LoggingTest, SinkThatLogsDoesNotDeadlockOrRecurse) {
  int calls = 0;
  SetLogSink([&](LogSeverity, absl::string_view, int, absl::string_view msg) {
    ++calls;
    TONY_LOG(INFO) << "sink saw: " << msg;  // goes to stderr, not back into this sink
  });
  TONY_LOG(INFO) << "outer";
  SetLogSink(nullptr);
  EXPECT_EQ(calls, 1);
}

TEST(LoggingTest, SinkMayReplaceItselfWhileRunning) {
  int first = 0, second = 0;
  LogSink replacement = [&](LogSeverity, absl::string_view, int, absl::string_view) { ++second; };
  SetLogSink([&](LogSeverity, absl::string_view, int, absl::string_view) {
    ++first;
    SetLogSink(replacement);  // destroys this sink's holder only after it returns
  });
  TONY_LOG(INFO) << "one";
  TONY_LOG(INFO) << "two";
  SetLogSink(nullptr);
  EXPECT_EQ(first, 1);
  EXPECT_EQ(second, 1);
}

}  // namespace
}  // namespace tony
