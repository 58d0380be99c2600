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

}  // namespace
}  // namespace tony
