// Copyright libtony authors.

#include "cli/event_timeline.h"

#include <sstream>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tony::cli {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr char kLog[] =
    R"({"v":1,"seq":1,"time":"2026-11-26T02:37:08.939Z","attempt":1,"event":"am_started","app_id":"application_1_0002"})"
    "\n"
    R"({"v":1,"seq":2,"time":"2026-11-26T02:37:08.940Z","attempt":1,"event":"job_spec","yaml":"name: x\n"})"
    "\n"
    R"({"v":1,"seq":3,"time":"2026-11-26T02:37:10.439Z","attempt":1,"event":"task_exited","task":"worker:1","exit_code":3,"stderr_tail":"line one\nbad \u001b[31mred"})"
    "\n";

TEST(EventTimelineTest, OneLinePerEventWithItsOffsetAttemptTaskAndFacts) {
  std::ostringstream out, err;
  EXPECT_EQ(PrintEventTimeline(kLog, false, out, err), 0);
  EXPECT_EQ(err.str(), "");
  const std::string text = out.str();
  EXPECT_THAT(text, HasSubstr("+0.000s    #1  -            am_started               "
                              "app_id=application_1_0002\n"));
  EXPECT_THAT(text, HasSubstr("yaml=(8 bytes)"));
  // Newlines shown as " | ", escape sequences defused.
  EXPECT_THAT(text, HasSubstr("+1.500s    #1  worker:1     task_exited              exit_code=3 "
                              "stderr_tail=\"line one | bad ?[31mred\"\n"));
  EXPECT_THAT(text, Not(HasSubstr("\x1b")));
}

TEST(EventTimelineTest, JsonPassesTheLinesThroughAndABadLineIsNamedAndSkipped) {
  std::ostringstream out, err;
  const std::string cut = std::string(kLog) + R"({"v":1,"seq":4,"ti)";
  EXPECT_EQ(PrintEventTimeline(cut, true, out, err), 1);
  EXPECT_EQ(out.str(), kLog);
  EXPECT_THAT(err.str(), HasSubstr("line 4 of the event log is not a JSON object (cut short"));

  std::ostringstream out2, err2;
  EXPECT_EQ(PrintEventTimeline("[1]\n" + std::string(kLog), false, out2, err2), 1);
  EXPECT_THAT(err2.str(), HasSubstr("line 1 of the event log is not a JSON object; skipped"));
  EXPECT_THAT(out2.str(), HasSubstr("task_exited"));
}

TEST(EventTimelineTest, GoodputIsALineAndAPartPerRowThatAddUp) {
  history::Goodput g;
  g[history::GoodputPart::kWaiting] = absl::Seconds(2);
  g[history::GoodputPart::kTraining] = absl::Seconds(15);
  g[history::GoodputPart::kRecovering] = absl::Seconds(3);
  EXPECT_EQ(GoodputText(g),
            "goodput: 15.0 s of 20.0 s training (75%)\n"
            "  waiting            2.0 s  10%\n"
            "  starting           0.0 s   0%\n"
            "  training          15.0 s  75%\n"
            "  recovering         3.0 s  15%\n"
            "  stopping           0.0 s   0%\n");
  EXPECT_THAT(GoodputText({}), HasSubstr("goodput: 0.0 s of 0.0 s training (-)\n"));
}

}  // namespace
}  // namespace tony::cli
