// Copyright libtony authors.
//
// RepeatedLine: one log line for a warning that repeats in a loop, instead of one per turn (a
// retry loop that fails every 100 ms wrote 221 identical lines in 22 s). The first line of a
// run is logged at once; identical ones after it are counted and summed up as one line with the
// count at most every `every`, when a different line comes, or at Flush(). Pure: the caller
// gives the time and logs what comes out.
//
// Thread-compatible: one per loop.

#ifndef TONY_COMMON_REPEATED_LINE_H_
#define TONY_COMMON_REPEATED_LINE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace tony {

class RepeatedLine {
 public:
  // Default: a summary of the repeats at most every 30 seconds.
  explicit RepeatedLine(absl::Duration every = absl::Seconds(30)) : every_(every) {}

  // The lines to log now for `line`, seen at `now`: none (a repeat, counted), the line itself
  // (the first of a run), or the summary of the previous run's repeats before it (a different
  // line), or the summary of this run's repeats (`every` since the last line logged).
  std::vector<std::string> Add(absl::string_view line, absl::Time now);
  // The summary of repeats not logged yet (the loop ended or recovered); none without any. The
  // next Add() starts a new run.
  std::optional<std::string> Flush(absl::Time now);

 private:
  std::string Summary(absl::Time now) const;

  const absl::Duration every_;
  std::string line_;         // the current run's line ("" before the first)
  int64_t repeats_ = 0;      // of line_, not yet logged
  absl::Time first_repeat_;  // of those repeats
  absl::Time logged_at_;     // when a line of this run was last logged
};

}  // namespace tony

#endif  // TONY_COMMON_REPEATED_LINE_H_
