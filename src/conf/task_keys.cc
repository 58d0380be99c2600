// Copyright libtony authors.

#include "conf/task_keys.h"

#include "conf/duration_key.h"

namespace tony::conf {

namespace {

constexpr DurationKey kHeartbeatTimeout = {
    kHeartbeatTimeoutKey, kDefaultHeartbeatTimeout, kMinHeartbeatTimeout,
    "(executors heartbeat every 5s, a --client job's client every 10s)"};

}  // namespace

absl::StatusOr<absl::Duration> HeartbeatTimeoutFromConf(const Configuration& conf) {
  return DurationFromConf(conf, kHeartbeatTimeout);
}

absl::Duration HeartbeatTimeoutFromEnv(const char* value) {
  return DurationFromEnvSeconds(value, kHeartbeatTimeout);
}

}  // namespace tony::conf
