// Copyright libtony authors.

#include "conf/history_keys.h"

#include <cstdint>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "common/status_macros.h"

namespace tony::history {

absl::StatusOr<absl::Duration> UsageIntervalFromConf(const conf::Configuration& conf) {
  TONY_ASSIGN_OR_RETURN(
      absl::Duration every,
      conf.GetDuration(kUsageIntervalKey, kDefaultUsageInterval, absl::Seconds(1)));
  if (every < absl::Seconds(1)) {
    return absl::InvalidArgumentError(absl::StrCat(kUsageIntervalKey, " is ",
                                                   absl::FormatDuration(every),
                                                   "; give at least 1s (e.g. 15s or 1m)"));
  }
  return every;
}

absl::Duration UsageIntervalFromEnv(const char* value) {
  int64_t seconds = 0;
  if (value == nullptr || !absl::SimpleAtoi(value, &seconds) || seconds < 1) {
    return kDefaultUsageInterval;
  }
  return absl::Seconds(seconds);
}

std::string EventLogPath(absl::string_view history_dir, absl::string_view app_id) {
  return absl::StrCat(absl::StripSuffix(history_dir, "/"), "/", app_id, ".jsonl");
}

}  // namespace tony::history
