// Copyright libtony authors.
//
// Waiting in tests for a condition with a deadline, never sleeping a fixed time and hoping:
// WaitUntil polls the condition (every 10 ms at first, growing to 200 ms) until it holds or the
// timeout has passed. For what offers nothing to wait on: another process's files, /proc, a
// server's answers.
//
// Thread-compatible: `done` runs on the calling thread only.

#ifndef TONY_TESTS_TESTING_WAIT_UNTIL_H_
#define TONY_TESTS_TESTING_WAIT_UNTIL_H_

#include <algorithm>
#include <functional>

#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace tony::testing {

// Polls `done` until it returns true or `timeout` has passed; whether it returned true. `done`
// is called at least once, even with a zero timeout.
inline bool WaitUntil(const std::function<bool()>& done, absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  absl::Duration interval = absl::Milliseconds(10);
  while (!done()) {
    const absl::Time now = absl::Now();
    if (now >= deadline) return false;
    absl::SleepFor(std::min(interval, deadline - now));
    interval = std::min(interval * 2, absl::Milliseconds(200));
  }
  return true;
}

}  // namespace tony::testing

#endif  // TONY_TESTS_TESTING_WAIT_UNTIL_H_
