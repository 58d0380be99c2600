// Copyright libtony authors.
//
// The deadline of one public call (tony::CallOptions) and what is left of it for one request.
//
// Thread-safe: free functions.

#ifndef TONY_COMMON_CALL_DEADLINE_H_
#define TONY_COMMON_CALL_DEADLINE_H_

#include <algorithm>

#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "tony/submitter.h"

namespace tony {

// The earlier of options.deadline and options.timeout from now.
inline absl::Time CallDeadline(const CallOptions& options) {
  if (options.timeout == absl::InfiniteDuration()) return options.deadline;
  return std::min(options.deadline, absl::Now() + options.timeout);
}

// How long one request may take: its own limit `cap`, shortened to what is left before
// `deadline`; zero or less once the deadline has passed.
inline absl::Duration TimeLeft(absl::Time deadline, absl::Duration cap) {
  return std::min(cap, deadline - absl::Now());
}

}  // namespace tony

#endif  // TONY_COMMON_CALL_DEADLINE_H_
