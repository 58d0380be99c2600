// Copyright libtony authors.

#include "conf/task_keys.h"

#include <cstdint>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace tony::conf {

absl::StatusOr<absl::Duration> HeartbeatTimeoutFromConf(const Configuration& conf) {
  TONY_ASSIGN_OR_RETURN(
      absl::Duration timeout,
      conf.GetDuration(kHeartbeatTimeoutKey, kDefaultHeartbeatTimeout, absl::Seconds(1)));
  if (timeout < kMinHeartbeatTimeout) {
    return absl::InvalidArgumentError(
        absl::StrCat(kHeartbeatTimeoutKey, " is ", absl::FormatDuration(timeout),
                     "; give at least ", absl::FormatDuration(kMinHeartbeatTimeout),
                     " (executors heartbeat every 5s, a --client job's client every 10s)"));
  }
  return timeout;
}

absl::Duration HeartbeatTimeoutFromEnv(const char* value) {
  int64_t seconds = 0;
  if (value == nullptr || !absl::SimpleAtoi(value, &seconds) ||
      absl::Seconds(seconds) < kMinHeartbeatTimeout) {
    return kDefaultHeartbeatTimeout;
  }
  return absl::Seconds(seconds);
}

}  // namespace tony::conf
