// Copyright libtony authors.
//
// SchedulerAnswerRule: the AM's verdict on each scheduler answer, as tables (issue 43).

#include "yarnam/scheduler_answer.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ipc/rpc_errors.h"

namespace tony::yarnam {
namespace {

using ::testing::HasSubstr;
using Verdict = SchedulerAnswerRule::Verdict;

const absl::Time kT0 = absl::UnixEpoch() + absl::Hours(10);

absl::Status Remote(const std::string& cls, const std::string& msg) {
  return ipc::RemoteExceptionToStatus(cls, msg, false, 0);
}

TEST(SchedulerAnswerTest, ClassifiesAllocateFailures) {
  struct Case {
    absl::Status status;
    AllocateFailure want;
  };
  const std::vector<Case> cases = {
      {Remote("org.apache.hadoop.yarn.exceptions.ApplicationAttemptNotFoundException",
              "Application attempt appattempt_1_0001_000001 doesn't exist in "
              "ApplicationMasterService cache."),
       AllocateFailure::kAttemptGone},
      {Remote("org.apache.hadoop.yarn.exceptions.ApplicationMasterNotRegisteredException",
              "AM is not registered for known application attempt"),
       AllocateFailure::kAttemptGone},
      {Remote("org.apache.hadoop.yarn.exceptions.ApplicationNotFoundException", "no app"),
       AllocateFailure::kAttemptGone},
      {absl::UnauthenticatedError("InvalidToken: Invalid AMRMToken from appattempt_1_0001_000001"),
       AllocateFailure::kAttemptGone},
      {absl::UnauthenticatedError("SASL: bad password"), AllocateFailure::kRetry},
      {Remote("org.apache.hadoop.yarn.exceptions.InvalidResourceRequestException", "too big"),
       AllocateFailure::kRefused},
      {Remote("org.apache.hadoop.yarn.exceptions.YarnException",
              "Invalid allocation request: placement constraints are disabled"),
       AllocateFailure::kRefused},
      {Remote("org.apache.hadoop.ipc.StandbyException", "standby"), AllocateFailure::kRetry},
      {absl::UnavailableError("connection refused"), AllocateFailure::kRetry},
      {absl::DeadlineExceededError("call timed out"), AllocateFailure::kRetry},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(ClassifyAllocateFailure(c.status), c.want) << c.status;
  }
}

// The storm: the attempt unknown from one answer on. Before, the AM retried it every
// 100 ms (221 identical warnings in 22 s) and failed the job only after rm_unreachable.
TEST(SchedulerAnswerTest, AnAttemptTheRmNoLongerKnowsEndsAtTheFirstAnswer) {
  SchedulerAnswerRule rule(absl::Seconds(10));
  const absl::Status gone =
      Remote("org.apache.hadoop.yarn.exceptions.ApplicationAttemptNotFoundException",
             "Application attempt appattempt_1_0001_000001 doesn't exist");
  EXPECT_EQ(rule.OnAnswer(kT0, yarn::AmCommand::kNone).verdict, Verdict::kGoOn);
  SchedulerAnswerRule::Decision d = rule.OnFailure(kT0 + absl::Milliseconds(100), gone);
  EXPECT_EQ(d.verdict, Verdict::kAttemptGone);
  EXPECT_THAT(d.why, HasSubstr("no longer knows this attempt"));
  EXPECT_TRUE(d.warnings.empty());
  EXPECT_TRUE(rule.attempt_gone());
  // Decided once; later answers say nothing.
  for (int i = 2; i < 10; ++i) {
    d = rule.OnFailure(kT0 + absl::Milliseconds(100) * i, gone);
    EXPECT_EQ(d.verdict, Verdict::kGoOn);
    EXPECT_TRUE(d.warnings.empty());
  }
}

TEST(SchedulerAnswerTest, AShutdownCommandEndsTheAttempt) {
  SchedulerAnswerRule rule(absl::Seconds(10));
  EXPECT_EQ(rule.OnAnswer(kT0, yarn::AmCommand::kResync).verdict, Verdict::kGoOn);
  EXPECT_EQ(rule.OnAnswer(kT0, yarn::AmCommand::kShutdown).verdict, Verdict::kAttemptGone);
  EXPECT_EQ(rule.OnAnswer(kT0, yarn::AmCommand::kShutdown).verdict, Verdict::kGoOn);
}

// An unreachable scheduler: one warning line, a count every 30 s, the verdict after
// rm_unreachable; an answer ends the run with the count.
TEST(SchedulerAnswerTest, UnreachableIsReportedAfterTheWindowWithRateLimitedWarnings) {
  SchedulerAnswerRule rule(absl::Seconds(10));
  const absl::Status down = absl::UnavailableError("connection refused");
  int warnings = 0;
  std::vector<absl::Duration> reported;
  for (int i = 0; i <= 400; ++i) {  // 40 s of failures every 100 ms
    const absl::Duration at = absl::Milliseconds(100) * i;
    SchedulerAnswerRule::Decision d = rule.OnFailure(kT0 + at, down);
    warnings += d.warnings.size();
    if (d.verdict == Verdict::kUnreachable) {
      reported.push_back(at);
      EXPECT_THAT(d.why, HasSubstr("did not answer for 10s: connection refused"));
    }
    EXPECT_TRUE(rule.failing() || d.verdict == Verdict::kUnreachable);
  }
  EXPECT_EQ(warnings, 2);  // the first line, and the count at 30 s
  // Every rm_unreachable of failures from the one after the last report.
  EXPECT_EQ(reported, (std::vector<absl::Duration>{absl::Seconds(10), absl::Milliseconds(20100),
                                                   absl::Milliseconds(30200)}));
  SchedulerAnswerRule::Decision d = rule.OnAnswer(kT0 + absl::Seconds(41), yarn::AmCommand::kNone);
  EXPECT_EQ(d.verdict, Verdict::kGoOn);
  ASSERT_EQ(d.warnings.size(), 1u);
  EXPECT_THAT(d.warnings[0], HasSubstr("more times in the last"));
  EXPECT_FALSE(rule.failing());
}

TEST(SchedulerAnswerTest, ARefusalIsReportedOnce) {
  SchedulerAnswerRule rule(absl::Seconds(10));
  const absl::Status refused =
      Remote("org.apache.hadoop.yarn.exceptions.InvalidResourceRequestException", "too big");
  EXPECT_EQ(rule.OnFailure(kT0, refused).verdict, Verdict::kRefused);
  EXPECT_EQ(rule.OnFailure(kT0 + absl::Seconds(1), refused).verdict, Verdict::kGoOn);
  EXPECT_FALSE(rule.failing());
}

}  // namespace
}  // namespace tony::yarnam
