// Copyright libtony authors.

#include "common/repeated_line.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tony {
namespace {

using ::testing::ElementsAre;

const absl::Time kT0 = absl::UnixEpoch() + absl::Hours(1);

absl::Time At(absl::Duration d) { return kT0 + d; }

TEST(RepeatedLineTest, TableOfRuns) {
  struct Step {
    const char* line;  // nullptr: Flush()
    absl::Duration at;
    std::vector<std::string> logged;
  };
  const std::vector<Step> steps = {
      {"attempt not found", absl::ZeroDuration(), {"attempt not found"}},
      {"attempt not found", absl::Milliseconds(100), {}},
      {"attempt not found", absl::Milliseconds(200), {}},
      // Every 30 s at most: the count, once.
      {"attempt not found",
       absl::Seconds(30),
       {"attempt not found (3 more times in the last 29.9s)"}},
      {"attempt not found", absl::Seconds(31), {}},
      // A different line: the previous run's repeats first, then the new line at once.
      {"connection refused",
       absl::Seconds(32),
       {"attempt not found (1 more time in the last 1s)", "connection refused"}},
      // A different line without repeats before it: only the new line.
      {"attempt not found", absl::Seconds(33), {"attempt not found"}},
      {"attempt not found", absl::Seconds(34), {}},
      {nullptr, absl::Seconds(35), {"attempt not found (1 more time in the last 1s)"}},
      // After a flush the same line starts a new run: logged at once.
      {"attempt not found", absl::Seconds(36), {"attempt not found"}},
      {nullptr, absl::Seconds(37), {}},
  };
  RepeatedLine repeated;
  for (size_t i = 0; i < steps.size(); ++i) {
    const Step& s = steps[i];
    std::vector<std::string> got;
    if (s.line == nullptr) {
      if (std::optional<std::string> l = repeated.Flush(At(s.at))) got.push_back(*l);
    } else {
      got = repeated.Add(s.line, At(s.at));
    }
    EXPECT_EQ(got, s.logged) << "step " << i;
  }
}

TEST(RepeatedLineTest, ARetryStormIsAFewLines) {
  // The storm: a failure every 100 ms for 22 s.
  RepeatedLine repeated;
  int lines = 0;
  for (int i = 0; i < 221; ++i) {
    lines += repeated.Add("scheduler heartbeat failed", At(absl::Milliseconds(100) * i)).size();
  }
  EXPECT_EQ(lines, 1);
  EXPECT_THAT(repeated.Flush(At(absl::Seconds(22))),
              ::testing::Optional(
                  std::string("scheduler heartbeat failed (220 more times in the last 21.9s)")));
  EXPECT_EQ(repeated.Flush(At(absl::Seconds(23))), std::nullopt);
  EXPECT_THAT(RepeatedLine(absl::Seconds(1)).Add("x", kT0), ElementsAre("x"));
  RepeatedLine nothing;
  EXPECT_THAT(nothing.Flush(kT0), ::testing::Eq(std::nullopt));
}

}  // namespace
}  // namespace tony
