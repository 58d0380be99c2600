// Copyright libtony authors.

#include "tony/submitter.h"

namespace tony {

absl::string_view AppStateName(AppState state) {
  switch (state) {
    case AppState::kSubmitted:
      return "SUBMITTED";
    case AppState::kAccepted:
      return "ACCEPTED";
    case AppState::kRunning:
      return "RUNNING";
    case AppState::kSucceeded:
      return "SUCCEEDED";
    case AppState::kFailed:
      return "FAILED";
    case AppState::kKilled:
      return "KILLED";
    case AppState::kSuspended:
      return "SUSPENDED";
  }
  return "UNKNOWN";
}

}  // namespace tony
