// Copyright libtony authors.
//
// A duration setting with a floor, read the two ways the AM meets it: from a job's configuration
// (the client checks it and names the key) and from the environment the client set for the AM
// (whole seconds, already checked: an unusable value falls back to the default). Pure.

#ifndef TONY_CONF_DURATION_KEY_H_
#define TONY_CONF_DURATION_KEY_H_

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "conf/configuration.h"

namespace tony::conf {

struct DurationKey {
  const char* key;  // e.g. "tony.task.heartbeat-timeout"
  absl::Duration default_value;
  absl::Duration min;
  const char* hint;  // appended to the error, e.g. "(e.g. 15s or 1m)"
};

// `k.key` of `conf` (a Hadoop duration; a bare number is seconds), `k.default_value` when unset;
// InvalidArgument naming the key for a value that does not parse or is under `k.min`.
absl::StatusOr<absl::Duration> DurationFromConf(const Configuration& conf, const DurationKey& k);
// Whole seconds from an environment variable's `value`; `k.default_value` when it is unset, not
// a number, or under `k.min`.
absl::Duration DurationFromEnvSeconds(const char* value, const DurationKey& k);

}  // namespace tony::conf

#endif  // TONY_CONF_DURATION_KEY_H_
