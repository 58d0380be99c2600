// Copyright libtony authors.

#include "conf/duration_key.h"

#include <cstdint>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace tony::conf {

absl::StatusOr<absl::Duration> DurationFromConf(const Configuration& conf, const DurationKey& k) {
  TONY_ASSIGN_OR_RETURN(absl::Duration d,
                        conf.GetDuration(k.key, k.default_value, absl::Seconds(1)));
  if (d < k.min) {
    return absl::InvalidArgumentError(absl::StrCat(k.key, " is ", absl::FormatDuration(d),
                                                   "; give at least ", absl::FormatDuration(k.min),
                                                   " ", k.hint));
  }
  return d;
}

absl::Duration DurationFromEnvSeconds(const char* value, const DurationKey& k) {
  int64_t seconds = 0;
  if (value == nullptr || !absl::SimpleAtoi(value, &seconds) || absl::Seconds(seconds) < k.min) {
    return k.default_value;
  }
  return absl::Seconds(seconds);
}

}  // namespace tony::conf
