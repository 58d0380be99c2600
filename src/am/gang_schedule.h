// Copyright libtony authors.
//
// GangSchedule: the timing of all-or-nothing allocation. When not every task has a container
// `allocation_timeout` after they were asked for, JobState releases every container and
// withdraws every request; after a backoff (the base, doubled per round, at most a minute or
// the base if longer, times a random factor in [0.5, 1.5)) it asks again, once every released
// container has ended. Until the cluster spec is published: then the gang is whole for good.
//
// Thread-compatible.

#ifndef TONY_AM_GANG_SCHEDULE_H_
#define TONY_AM_GANG_SCHEDULE_H_

#include <functional>
#include <optional>
#include <string>

#include "absl/time/time.h"

namespace tony::am {

class GangSchedule {
 public:
  // `jitter` returns the random factor; tests pass a constant.
  GangSchedule(absl::Duration allocation_timeout, absl::Duration backoff,
               std::function<double()> jitter);

  // Every container was asked for (again) at `now`.
  void Asked(absl::Time now);
  // The gang is whole for good (the cluster spec is out, or every task had a container by the
  // deadline): no more releases.
  void Settle();
  // A new gang (a resumed job), every container asked for at `now`: releases allowed again,
  // the backoff from its start.
  void Renew(absl::Time now);
  // Whether the gang should be released now (the deadline passed and it is incomplete: the
  // caller knows the latter).
  bool ReleaseDue(absl::Time now) const;
  // Releases: returns the backoff after which AskAgainDue() turns true.
  absl::Duration Release(absl::Time now);
  bool released() const { return ask_again_at_.has_value(); }
  bool AskAgainDue(absl::Time now) const;

  // The earliest time something here is due; none when nothing is.
  std::optional<absl::Time> NextWake() const;
  // For the status's `pending`: "; released everything after 1m without a whole gang
  // (all-or-nothing), asking again in 7s", "; asked 3 times (all-or-nothing)", or "".
  std::string PendingNote(absl::Time now) const;

 private:
  const absl::Duration timeout_;
  const absl::Duration backoff_;
  const std::function<double()> jitter_;
  bool settled_ = false;
  std::optional<absl::Time> deadline_;
  std::optional<absl::Time> ask_again_at_;
  int rounds_ = 0;  // releases so far
};

}  // namespace tony::am

#endif  // TONY_AM_GANG_SCHEDULE_H_
