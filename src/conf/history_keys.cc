// Copyright libtony authors.

#include "conf/history_keys.h"

#include <cstdint>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "conf/duration_key.h"

namespace tony::history {

namespace {

constexpr conf::DurationKey kUsageInterval = {kUsageIntervalKey, kDefaultUsageInterval,
                                              absl::Seconds(1), "(e.g. 15s or 1m)"};

}  // namespace

absl::StatusOr<absl::Duration> UsageIntervalFromConf(const conf::Configuration& conf) {
  return conf::DurationFromConf(conf, kUsageInterval);
}

absl::Duration UsageIntervalFromEnv(const char* value) {
  return conf::DurationFromEnvSeconds(value, kUsageInterval);
}

std::string EventLogPath(absl::string_view history_dir, absl::string_view app_id) {
  return absl::StrCat(absl::StripSuffix(history_dir, "/"), "/", app_id, ".jsonl");
}

}  // namespace tony::history
