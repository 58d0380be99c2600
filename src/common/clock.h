// Copyright libtony authors.
//
// Clock: where the logic that decides (the AM core, the broker's deadlines, the executor's
// supervision) reads the time, so that tests drive it instead of sleeping.
//
//   RealClock()        absl::Now(), and real waits.
//   SimulatedClock     a time that moves only when the test says so (Advance/Set); waits on it
//                      end when it passes their deadline, or when their condition holds.
//
// Thread-safe: both may be read, advanced and waited on from any thread.

#ifndef TONY_COMMON_CLOCK_H_
#define TONY_COMMON_CLOCK_H_

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace tony {

class Clock {
 public:
  virtual ~Clock() = default;
  virtual absl::Time Now() const = 0;
  // With `mu` held: waits until `cond` holds or this clock reaches `deadline`; whether `cond`
  // holds. `mu` is released while waiting, as absl::Mutex::AwaitWithDeadline does.
  virtual bool AwaitWithDeadline(absl::Mutex* mu, const absl::Condition& cond,
                                 absl::Time deadline) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) = 0;
};

// The process's real clock (a static instance; never destroyed).
Clock* RealClock();

class SimulatedClock : public Clock {
 public:
  // Starts at `start`. Default: the Unix epoch plus a day, far from both ends of absl::Time.
  explicit SimulatedClock(absl::Time start = absl::UnixEpoch() + absl::Hours(24));

  absl::Time Now() const override;
  // Waiters look at the simulated time every millisecond of real time: a test that advances the
  // clock sees a waiter whose deadline passed wake within about that.
  bool AwaitWithDeadline(absl::Mutex* mu, const absl::Condition& cond,
                         absl::Time deadline) const override ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu);

  void Advance(absl::Duration d);
  void Set(absl::Time t);

 private:
  mutable absl::Mutex mu_;
  absl::Time now_ ABSL_GUARDED_BY(mu_);
};

}  // namespace tony

#endif  // TONY_COMMON_CLOCK_H_
