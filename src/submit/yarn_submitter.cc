// Copyright libtony authors.
//
// Placeholder until the YARN submitter lands (issue 6): says so plainly instead of failing later.

#include "absl/status/status.h"
#include "tony/submitter.h"

namespace tony {

absl::StatusOr<std::unique_ptr<Submitter>> NewYarnSubmitter(const YarnSubmitterOptions& options) {
  return absl::UnimplementedError(
      "submitting to YARN is not available in this build yet; run with --local");
}

}  // namespace tony
