// Copyright libtony authors.
//
// Configuration keys of the AM's watch over its tasks, and what the client hands the AM of them
// (environment variables), with their parsers. The client (submit/) reads and passes them on;
// the AM (yarnam/) reads them back here, so the two sides never disagree on a name.
//
// Thread-safe (constants and pure functions).

#ifndef TONY_CONF_TASK_KEYS_H_
#define TONY_CONF_TASK_KEYS_H_

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "conf/configuration.h"

namespace tony::conf {

// How long a registered task (or --client mode's client) may send no heartbeat before the AM
// fails it: a Hadoop duration ("90s", "2m"; a bare number is seconds). At least
// kMinHeartbeatTimeout: the executors heartbeat every 5 s, ytf-submit for its client every 10 s.
inline constexpr char kHeartbeatTimeoutKey[] = "tony.task.heartbeat-timeout";
inline constexpr absl::Duration kDefaultHeartbeatTimeout = absl::Minutes(1);
inline constexpr absl::Duration kMinHeartbeatTimeout = absl::Seconds(20);
inline constexpr char kEnvHeartbeatTimeout[] = "TONY_TASK_HEARTBEAT_TIMEOUT";  // whole seconds

// kHeartbeatTimeoutKey of `conf` (default kDefaultHeartbeatTimeout); InvalidArgument naming the
// key for a value that does not parse or is under kMinHeartbeatTimeout.
absl::StatusOr<absl::Duration> HeartbeatTimeoutFromConf(const Configuration& conf);
// kEnvHeartbeatTimeout's value as the AM gets it; kDefaultHeartbeatTimeout when unset or
// invalid (under kMinHeartbeatTimeout included).
absl::Duration HeartbeatTimeoutFromEnv(const char* value);

}  // namespace tony::conf

#endif  // TONY_CONF_TASK_KEYS_H_
