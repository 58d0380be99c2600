// Copyright libtony authors.
//
// The job history's configuration keys and what the client hands the AM of them (environment
// variables), with their parsers and the event log's name. In conf/ though they keep the
// history's namespace: the client (submit/, cli/) reads and passes them on without depending on
// history/, whose event sinks and live view belong to the AM's side; the AM reads them back here
// too, so the two sides can never disagree on a name.
//
// Thread-safe (constants and pure functions).

#ifndef TONY_CONF_HISTORY_KEYS_H_
#define TONY_CONF_HISTORY_KEYS_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "conf/configuration.h"

namespace tony::history {

// The Hadoop configuration key, its default, and the environment variable that carries it from
// the client to the AM. An empty value turns the event log off.
inline constexpr char kHistoryDirKey[] = "tony.history.dir";
inline constexpr char kDefaultHistoryDir[] = "/tmp/tony-history";
inline constexpr char kEnvHistoryDir[] = "TONY_HISTORY_DIR";
// How often each task's CPU and memory go into the event log (the history's usage charts get a
// point each time): a Hadoop duration ("15s", "1m"; a bare number is seconds), at least 1 s.
inline constexpr char kUsageIntervalKey[] = "tony.history.usage-interval";
inline constexpr absl::Duration kDefaultUsageInterval = absl::Minutes(1);
inline constexpr char kEnvUsageInterval[] = "TONY_HISTORY_USAGE_INTERVAL";  // whole seconds

// kUsageIntervalKey of `conf` (default kDefaultUsageInterval); InvalidArgument naming the key for
// a value that does not parse or is under a second.
absl::StatusOr<absl::Duration> UsageIntervalFromConf(const conf::Configuration& conf);
// kEnvUsageInterval's value as the AM gets it; kDefaultUsageInterval when unset or invalid.
absl::Duration UsageIntervalFromEnv(const char* value);

// The job's event log in the history directory: `<history_dir>/<app_id>.jsonl`.
std::string EventLogPath(absl::string_view history_dir, absl::string_view app_id);

}  // namespace tony::history

#endif  // TONY_CONF_HISTORY_KEYS_H_
