// Copyright libtony authors.
//
// BrokerClockSeam: runs a ClusterSpecBroker's deadlines (registration, heartbeats, status
// long-polls) on a clock a test drives, so that a test advances time instead of sleeping, and
// can tell when the broker has acted on the time it set. Internal: the public API takes no clock.
//
// Thread-safe: UseClock() before the broker's Start(); AwaitTimerPass() from any thread.

#ifndef TONY_BROKER_CLOCK_SEAM_H_
#define TONY_BROKER_CLOCK_SEAM_H_

#include "absl/time/time.h"
#include "common/clock.h"
#include "tony/cluster_spec_broker.h"

namespace tony::broker {

class BrokerClockSeam {
 public:
  // Before Start(): the broker reads the time from `clock` (not owned; outlives the broker).
  static void UseClock(tony::ClusterSpecBroker* broker, Clock* clock);
  // Waits, at most `timeout` of real time, until the broker's timer has made a full pass
  // (deadlines and heartbeats) at clock time `t` or later; whether it did.
  static bool AwaitTimerPass(tony::ClusterSpecBroker* broker, absl::Time t, absl::Duration timeout);
};

}  // namespace tony::broker

#endif  // TONY_BROKER_CLOCK_SEAM_H_
