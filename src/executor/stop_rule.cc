// Copyright libtony authors.

#include "executor/stop_rule.h"

#include "absl/strings/str_cat.h"

namespace tony::executor {

StopRule::Decision StopRule::Next(absl::Time now, const Facts& facts) {
  if (facts.exited) {
    kill_at_.reset();
    return {};
  }
  if (kill_at_) {
    if (now < *kill_at_) return {};
    kill_at_.reset();
    return {Action::kKill, "still running after the stop grace"};
  }
  if (stopping_) return {};  // SIGTERM and SIGKILL sent; nothing more to do
  std::string why;
  if (facts.stop_signal != 0) {
    why = absl::StrCat("signal ", facts.stop_signal, "; forwarding SIGTERM");
  } else if (facts.am_silence > am_unreachable_) {
    why = absl::StrCat("the ApplicationMaster at ", facts.am_address, " has not answered for ",
                       absl::FormatDuration(am_unreachable_), " (timeouts.am_unreachable)");
  } else if (!facts.superseded.empty()) {
    why = facts.superseded;
  } else {
    return {};
  }
  stopping_ = true;
  kill_at_ = now + stop_grace_;
  return {Action::kTerminate, std::move(why)};
}

}  // namespace tony::executor
