// Copyright libtony authors.
//
// StopRule as a table: time, what the executor knows, what it does.

#include "executor/stop_rule.h"

#include <signal.h>

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tony::executor {
namespace {

using ::testing::HasSubstr;
using Action = StopRule::Action;

const absl::Time kStart = absl::UnixEpoch() + absl::Hours(24);

struct Row {
  absl::Duration at;  // after kStart
  StopRule::Facts facts;
  Action expected;
  std::string why = "";  // a part of the decision's reason, with kTerminate
};

void RunTable(StopRule& rule, const std::vector<Row>& rows) {
  for (const Row& row : rows) {
    StopRule::Decision d = rule.Next(kStart + row.at, row.facts);
    EXPECT_EQ(d.action, row.expected) << "at " << row.at;
    if (!row.why.empty()) {
      EXPECT_THAT(d.why, HasSubstr(row.why)) << "at " << row.at;
    }
  }
}

StopRule::Facts Silent(absl::Duration silence) {
  return {.am_silence = silence, .am_address = "am:1"};
}

TEST(StopRuleTest, AnAmSilentPastItsLimitStopsTheTaskThenKillsItAfterTheGrace) {
  StopRule rule(absl::Minutes(1), absl::Seconds(10));
  RunTable(rule, {
                     {absl::Seconds(1), Silent(absl::Seconds(5)), Action::kNone},
                     // Exactly the limit is not past it.
                     {absl::Seconds(60), Silent(absl::Minutes(1)), Action::kNone},
                     {absl::Seconds(61), Silent(absl::Seconds(61)), Action::kTerminate,
                      "the ApplicationMaster at am:1 has not answered for 1m"},
                     // Once: the silence goes on, nothing new until the grace is over.
                     {absl::Seconds(62), Silent(absl::Seconds(62)), Action::kNone},
                     {absl::Seconds(70), Silent(absl::Seconds(70)), Action::kNone},
                     {absl::Seconds(71), Silent(absl::Seconds(71)), Action::kKill},
                     {absl::Seconds(90), Silent(absl::Seconds(90)), Action::kNone},
                 });
  EXPECT_TRUE(rule.stopping());
  EXPECT_EQ(rule.NextWake(), absl::InfiniteFuture());
}

TEST(StopRuleTest, ATaskThatExitsInTheGraceIsNotKilled) {
  StopRule rule(absl::Minutes(1), absl::Seconds(10));
  StopRule::Facts superseded = Silent(absl::ZeroDuration());
  superseded.superseded = "relaunched on another node";
  StopRule::Facts exited = superseded;
  exited.exited = true;
  RunTable(rule, {
                     {absl::Seconds(1), superseded, Action::kTerminate, "relaunched on another"},
                 });
  EXPECT_EQ(rule.NextWake(), kStart + absl::Seconds(11));
  RunTable(rule, {
                     {absl::Seconds(5), exited, Action::kNone},
                     {absl::Seconds(30), exited, Action::kNone},
                 });
  EXPECT_EQ(rule.NextWake(), absl::InfiniteFuture());
}

TEST(StopRuleTest, AStopSignalIsForwardedFirstAndNothingStopsAnExitedTask) {
  StopRule rule(absl::Minutes(1), absl::Seconds(3));
  StopRule::Facts signalled = Silent(absl::Minutes(5));  // also silent: the signal says why
  signalled.stop_signal = SIGTERM;
  RunTable(rule, {
                     {absl::Seconds(1), signalled, Action::kTerminate, "signal 15"},
                     {absl::Seconds(2), signalled, Action::kNone},
                     {absl::Seconds(4), signalled, Action::kKill},
                 });
  StopRule quiet(absl::Minutes(1), absl::Seconds(3));
  StopRule::Facts done = Silent(absl::Minutes(5));
  done.exited = true;
  RunTable(quiet, {{absl::Minutes(10), done, Action::kNone}});
  EXPECT_FALSE(quiet.stopping());
}

}  // namespace
}  // namespace tony::executor
