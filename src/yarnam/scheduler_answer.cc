// Copyright libtony authors.

#include "yarnam/scheduler_answer.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "ipc/rpc_errors.h"

namespace tony::yarnam {

bool IsPlacementRefusal(const absl::Status& status) {
  // A ResourceManager whose placement-constraints handler is "disabled" (the default) fails the
  // whole allocate call that carries a SchedulingRequest.
  return ipc::IsRemoteException(status, "YarnException") &&
         absl::StrContains(status.message(), "placement constraints");
}

AllocateFailure ClassifyAllocateFailure(const absl::Status& status) {
  // The RM's ApplicationMasterService no longer has the attempt: it failed it (its node was
  // lost, the AM expired) or the application ended. The AmRmClient already tried to register
  // again where that can help (an RM restart): a NotRegistered answer here is its last word.
  for (const char* name : {"ApplicationAttemptNotFoundException", "ApplicationNotFoundException",
                           "ApplicationMasterNotRegisteredException"}) {
    if (ipc::IsRemoteException(status, name)) return AllocateFailure::kAttemptGone;
  }
  // The attempt's AMRMToken was removed with it (a new connection is refused).
  if (absl::IsUnauthenticated(status) && absl::StrContains(status.message(), "AMRMToken")) {
    return AllocateFailure::kAttemptGone;
  }
  // Exceptions by which the scheduler rejects the requests themselves (a label the queue may
  // not use, a resource beyond the maximum): not a failure to reach it.
  for (const char* name :
       {"InvalidLabelResourceRequestException", "InvalidResourceRequestException",
        "InvalidResourceBlacklistRequestException", "SchedulerInvalidResoureRequestException"}) {
    if (ipc::IsRemoteException(status, name)) return AllocateFailure::kRefused;
  }
  if (IsPlacementRefusal(status)) return AllocateFailure::kRefused;
  return AllocateFailure::kRetry;
}

SchedulerAnswerRule::Decision SchedulerAnswerRule::Gone(absl::Time now, std::string why) {
  Decision d;
  if (gone_) return d;
  gone_ = true;
  if (std::optional<std::string> summary = warnings_.Flush(now)) d.warnings.push_back(*summary);
  d.verdict = Verdict::kAttemptGone;
  d.why = std::move(why);
  return d;
}

SchedulerAnswerRule::Decision SchedulerAnswerRule::OnAnswer(absl::Time now,
                                                            yarn::AmCommand command) {
  if (gone_) return {};
  failing_since_ = absl::InfiniteFuture();
  if (command == yarn::AmCommand::kShutdown) {
    return Gone(now, "the ResourceManager ordered the ApplicationMaster to shut down");
  }
  Decision d;
  if (std::optional<std::string> summary = warnings_.Flush(now)) d.warnings.push_back(*summary);
  return d;
}

SchedulerAnswerRule::Decision SchedulerAnswerRule::OnFailure(absl::Time now,
                                                             const absl::Status& status) {
  if (gone_) return {};
  switch (ClassifyAllocateFailure(status)) {
    case AllocateFailure::kAttemptGone:
      return Gone(now, absl::StrCat("the ResourceManager no longer knows this attempt (",
                                    status.message(), "): YARN has ended it"));
    case AllocateFailure::kRefused: {
      // The scheduler answered, and will answer the same to every retry: say so at once.
      Decision d;
      if (refusal_reported_) return d;
      refusal_reported_ = true;
      d.verdict = Verdict::kRefused;
      d.why = std::string(status.message());
      return d;
    }
    case AllocateFailure::kRetry:
      break;
  }
  Decision d;
  d.warnings = warnings_.Add(absl::StrCat("scheduler heartbeat failed: ", status.ToString()), now);
  if (failing_since_ == absl::InfiniteFuture()) failing_since_ = now;
  if (now - failing_since_ >= rm_unreachable_) {
    d.verdict = Verdict::kUnreachable;
    d.why = absl::StrCat("the ResourceManager's scheduler did not answer for ",
                         absl::FormatDuration(now - failing_since_), ": ", status.message());
    failing_since_ = absl::InfiniteFuture();
  }
  return d;
}

}  // namespace tony::yarnam
