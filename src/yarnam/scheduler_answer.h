// Copyright libtony authors.
//
// SchedulerAnswerRule: what the ApplicationMaster makes of each answer to its scheduler
// heartbeat (allocate), decided from the answer and a time it is given, never by sleeping:
//   - the ResourceManager no longer knows this attempt (ApplicationAttemptNotFoundException;
//     ApplicationMasterNotRegisteredException or an invalid AMRMToken after the client's own
//     re-registration; an AM_SHUTDOWN command): the attempt is over at once. YARN has released
//     its containers, so nothing is stopped and nothing waits; retrying cannot help.
//   - the scheduler refused the requests themselves: reported once.
//   - it could not be reached: reported after `rm_unreachable` of failures in a row.
// Warnings that repeat every turn are logged once with a count (RepeatedLine).
//
// Thread-compatible: one per heartbeat loop.

#ifndef TONY_YARNAM_SCHEDULER_ANSWER_H_
#define TONY_YARNAM_SCHEDULER_ANSWER_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "common/repeated_line.h"
#include "yarn/am_rm_client.h"

namespace tony::yarnam {

// How the AM takes a failed allocate call.
enum class AllocateFailure {
  kRetry,        // transient (unreachable, failing over): try again
  kRefused,      // the scheduler rejects the requests: the same answer on every retry
  kAttemptGone,  // the ResourceManager has ended this attempt
};
AllocateFailure ClassifyAllocateFailure(const absl::Status& status);
// The scheduler refused the placement constraints (the handler is off): the hint applies.
bool IsPlacementRefusal(const absl::Status& status);

class SchedulerAnswerRule {
 public:
  enum class Verdict {
    kGoOn,         // nothing to report
    kRefused,      // report `why` once: the requests cannot be served
    kUnreachable,  // report `why`: the scheduler failed for rm_unreachable in a row
    kAttemptGone,  // report `why`; the attempt is over, stop heartbeating
  };
  struct Decision {
    Verdict verdict = Verdict::kGoOn;
    std::string why;
    std::vector<std::string> warnings;  // to log, already rate-limited
  };

  // `warning_every`: the longest a repeated warning goes without a line (RepeatedLine).
  explicit SchedulerAnswerRule(absl::Duration rm_unreachable,
                               absl::Duration warning_every = absl::Seconds(30))
      : rm_unreachable_(rm_unreachable), warnings_(warning_every) {}

  // An answer, with the command it carried.
  Decision OnAnswer(absl::Time now, yarn::AmCommand command);
  // A failed call.
  Decision OnFailure(absl::Time now, const absl::Status& status);
  // Whether calls are failing (the heartbeat is then fast).
  bool failing() const { return failing_since_ != absl::InfiniteFuture(); }
  // Whether the attempt is over (every later answer is ignored).
  bool attempt_gone() const { return gone_; }

 private:
  Decision Gone(absl::Time now, std::string why);

  const absl::Duration rm_unreachable_;
  RepeatedLine warnings_;
  absl::Time failing_since_ = absl::InfiniteFuture();
  bool refusal_reported_ = false;
  bool gone_ = false;
};

}  // namespace tony::yarnam

#endif  // TONY_YARNAM_SCHEDULER_ANSWER_H_
