// Copyright libtony authors.

#include "am/restart_policy.h"

#include <string.h>

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace tony::am {

std::string ExitCause(int code) {
  switch (code) {
    case -100:
      return "exit status -100: its node was lost or the container released";
    case -101:
      return "exit status -101: its node's disks failed";
    case -102:
      return "exit status -102: preempted by the scheduler";
    case -106:
      return "exit status -106: killed by the ResourceManager";
    case -108:
      return "exit status -108: killed by the container scheduler";
    default:
      break;
  }
  if (code > 128 && code < 160) {
    const char* name = sigabbrev_np(code - 128);
    return absl::StrCat("exit code ", code, ": signal ", code - 128,
                        name != nullptr ? absl::StrCat(" (SIG", name, ")") : "");
  }
  return absl::StrCat("exit code ", code);
}

RestartDecision DecideRestart(const RestartInput& in) {
  using Verdict = RestartDecision::Verdict;
  RestartDecision d;
  if (in.policy == nullptr) return d;
  const RestartSpec& r = *in.policy;
  const std::string policy =
      absl::StrCat("restart policy ", RestartPolicyName(r.policy), "/", RestartScopeName(r.scope));
  const std::string cause = ExitCause(in.exit_code);
  const std::string when = absl::FormatTime("%H:%M:%S UTC ", in.now, absl::UTCTimeZone());
  if (!IsRetryableExit(r.policy, in.exit_code)) {
    d.verdict = Verdict::kFinal;
    d.job_restart_allowed = false;
    d.note = absl::StrCat(" (", policy, ": ", cause, " is final; no restart)");
    return d;
  }
  if (r.scope == RestartScope::kJob) {
    const int done = in.attempt - 1;
    if (done >= r.max_restarts) {
      d.verdict = Verdict::kFinal;
      d.job_restart_allowed = false;
      d.note = absl::StrCat(" (", policy, ": the job was restarted ", done,
                            " times already, max_restarts ", r.max_restarts, ")");
      return d;
    }
    d.verdict = Verdict::kJobRestart;
    d.line = absl::StrCat(when, in.task, ": ", cause, "; whole-job restart ", done + 1, " of ",
                          r.max_restarts, " (attempt ", in.attempt + 1, ")");
    d.note =
        absl::StrCat(" (", policy, ": the whole job restarts as attempt ", in.attempt + 1, ")");
    return d;
  }
  if (in.restarts_so_far >= r.max_restarts) {
    // The job fails, but YARN's next attempt may still run it.
    d.verdict = Verdict::kFinal;
    d.note = absl::StrCat(" (", policy, ": restarted ", in.restarts_so_far,
                          " times already, max_restarts ", r.max_restarts, ")");
    return d;
  }
  const int restart = in.restarts_so_far + 1;
  absl::Duration backoff = r.backoff;
  for (int i = 1; i < restart && backoff < in.max_backoff; ++i) backoff *= 2;
  d.verdict = Verdict::kRelaunch;
  d.backoff = std::min(backoff, in.max_backoff);
  d.avoid_host = in.exit_code == -100 || in.exit_code == -101;
  d.line = absl::StrCat(when, in.task, ": ", cause, "; task restart ", restart, " of ",
                        r.max_restarts, " after ", absl::FormatDuration(d.backoff));
  d.note = absl::StrCat(" (", policy, ": relaunching it in ", absl::FormatDuration(d.backoff),
                        ", restart ", restart, " of ", r.max_restarts, ")");
  return d;
}

}  // namespace tony::am
