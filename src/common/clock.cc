// Copyright libtony authors.

#include "common/clock.h"

#include "absl/time/clock.h"

namespace tony {
namespace {

class Real : public Clock {
 public:
  absl::Time Now() const override { return absl::Now(); }
  bool AwaitWithDeadline(absl::Mutex* mu, const absl::Condition& cond,
                         absl::Time deadline) const override ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    return mu->AwaitWithDeadline(cond, deadline);
  }
};

}  // namespace

Clock* RealClock() {
  static Clock* const clock = new Real();
  return clock;
}

SimulatedClock::SimulatedClock(absl::Time start) : now_(start) {}

absl::Time SimulatedClock::Now() const {
  absl::MutexLock lock(&mu_);
  return now_;
}

bool SimulatedClock::AwaitWithDeadline(absl::Mutex* mu, const absl::Condition& cond,
                                       absl::Time deadline) const {
  while (!mu->AwaitWithTimeout(cond, absl::Milliseconds(1))) {
    if (Now() >= deadline) return cond.Eval();
  }
  return true;
}

void SimulatedClock::Advance(absl::Duration d) {
  absl::MutexLock lock(&mu_);
  now_ += d;
}

void SimulatedClock::Set(absl::Time t) {
  absl::MutexLock lock(&mu_);
  now_ = t;
}

}  // namespace tony
