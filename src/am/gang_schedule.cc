// Copyright libtony authors.

#include "am/gang_schedule.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace tony::am {

GangSchedule::GangSchedule(absl::Duration allocation_timeout, absl::Duration backoff,
                           std::function<double()> jitter)
    : timeout_(allocation_timeout), backoff_(backoff), jitter_(std::move(jitter)) {}

void GangSchedule::Asked(absl::Time now) {
  ask_again_at_.reset();
  if (!settled_ && timeout_ != absl::InfiniteDuration()) deadline_ = now + timeout_;
}

void GangSchedule::Settle() {
  settled_ = true;
  deadline_.reset();
}

void GangSchedule::Renew(absl::Time now) {
  settled_ = false;
  rounds_ = 0;
  Asked(now);
}

bool GangSchedule::ReleaseDue(absl::Time now) const {
  return !settled_ && deadline_ && !ask_again_at_ && now >= *deadline_;
}

absl::Duration GangSchedule::Release(absl::Time now) {
  deadline_.reset();
  ++rounds_;
  // Randomised, so that two jobs that released at the same moment do not ask again at the same
  // moment, split the cluster again and starve each other forever.
  const absl::Duration backoff =
      std::min(backoff_ * (1 << std::min(rounds_ - 1, 4)), std::max(backoff_, absl::Minutes(1))) *
      jitter_();
  ask_again_at_ = now + backoff;
  return backoff;
}

bool GangSchedule::AskAgainDue(absl::Time now) const {
  return ask_again_at_ && now >= *ask_again_at_;
}

std::optional<absl::Time> GangSchedule::NextWake() const {
  if (ask_again_at_) return ask_again_at_;
  return deadline_;
}

std::string GangSchedule::PendingNote(absl::Time now) const {
  if (ask_again_at_) {
    return absl::StrCat(
        "; released everything after ", absl::FormatDuration(timeout_),
        " without a whole gang (all-or-nothing), asking again in ",
        absl::FormatDuration(
            absl::Ceil(std::max(*ask_again_at_ - now, absl::ZeroDuration()), absl::Seconds(1))));
  }
  if (rounds_ > 0) return absl::StrCat("; asked ", rounds_ + 1, " times (all-or-nothing)");
  return "";
}

}  // namespace tony::am
