// Copyright libtony authors.
//
// ytf status: a job's state, tracking URL, per-role progress and diagnostics.

#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "cli/submit_command.h"
#include "cli/ytf/subcommand.h"
#include "http/json.h"

namespace tony::cli::ytf {
namespace {

void PrintStatus(const ApplicationStatus& s, std::ostream& out) {
  out << s.id << "  " << AppStateName(s.state);
  if (s.state == AppState::kSuspended) {
    out << " since "
        << absl::FormatTime("%Y-%m-%d %H:%M:%S %Z", s.suspended_since, absl::LocalTimeZone())
        << " ("
        << absl::FormatDuration(absl::Trunc(absl::Now() - s.suspended_since, absl::Seconds(1)))
        << ")";
  }
  out << "\n";
  if (s.attempt > 1) {
    out << "  attempt: " << s.attempt;
    if (s.max_attempts > 0) out << " of " << s.max_attempts;
    out << "\n";
  }
  if (!s.tracking_url.empty()) out << "  tracking URL: " << s.tracking_url << "\n";
  if (!s.tensorboard_url.empty()) out << "  TensorBoard: " << s.tensorboard_url << "\n";
  for (const auto& [job, p] : s.progress) {
    out << absl::StrFormat(
        "  %-12s %d tasks: %d allocated, %d registered, %d running, %d succeeded, %d failed\n", job,
        p.total, p.allocated, p.registered, p.running, p.succeeded, p.failed);
    if (p.restarts > 0) {
      out << absl::StrFormat("  %-12s restarted %d times\n", "", p.restarts);
    }
  }
  if (!s.pending.empty()) out << "  waiting: " << s.pending << "\n";
  if (!s.wait_reason.empty()) out << "  why: " << s.wait_reason << "\n";
  if (!s.diagnostics.empty()) out << "  diagnostics: " << s.diagnostics << "\n";
}

http::Json StatusJson(const ApplicationStatus& s) {
  http::Json progress = http::Json::object();
  for (const auto& [job, p] : s.progress) {
    progress[job] = {{"total", p.total},           {"allocated", p.allocated},
                     {"registered", p.registered}, {"running", p.running},
                     {"succeeded", p.succeeded},   {"failed", p.failed},
                     {"restarts", p.restarts}};
  }
  return {{"id", s.id},
          {"state", AppStateName(s.state)},
          {"tracking_url", s.tracking_url},
          {"tensorboard_url", s.tensorboard_url},
          {"attempt", s.attempt},
          {"progress", progress},
          {"pending", s.pending},
          {"wait_reason", s.wait_reason},
          {"wait_kind", s.wait_kind},
          {"suspended_since",
           s.state == AppState::kSuspended
               ? absl::FormatTime(absl::RFC3339_sec, s.suspended_since, absl::UTCTimeZone())
               : ""},
          {"diagnostics", s.diagnostics}};
}

int RunStatus(const Args& args, std::ostream& out, std::ostream& err) {
  int code = kExitOk;
  std::unique_ptr<Application> app = OpenApplication(args, err, &code);
  if (app == nullptr) return code;
  if (args.wait) {
    auto final = app->Wait(args.wait_timeout);
    if (!final.ok()) {
      err << "ytf: " << args.app << ": " << final.status().message() << "\n";
      return kExitInternal;
    }
  }
  auto s = app->Status();
  if (!s.ok()) {
    err << "ytf: " << s.status().message() << "\n";
    return kExitInternal;
  }
  if (args.json) {
    out << StatusJson(*s).dump(2) << "\n";
  } else {
    PrintStatus(*s, out);
  }
  return s->state == AppState::kFailed || s->state == AppState::kKilled ? kExitJobFailed : kExitOk;
}

constexpr const Flag* kStatusFlags[] = {&kJsonFlag, &kWaitFlag, &kTimeoutFlag};

}  // namespace

const Command& StatusCommand() {
  static const Command kCommand = {
      "status",
      "ytf status APP [--json]     state, tracking URL, per-job progress and diagnostics\n",
      R"(ytf status - a job's state

Usage: ytf status APP [--json] [--wait [--timeout <d>]]

Prints the state, the tracking URL, each job type's tasks (allocated, registered, running,
succeeded, failed; for a finished job as it ended) and the diagnostics; while the job waits on
YARN, what for and why, in the scheduler's terms (see docs/troubleshooting.md).
      --json                the same as one JSON object
      --wait                first wait until the job has ended (ytf-submit --detach, then
                            this: what a scheduler runs to reap a job)
      --timeout <d>         stop waiting after this long (10m, 1h; default none): exit 3
Exit codes: 0 running or succeeded, 1 failed or killed, 2 bad usage, 3 cluster or job not found
(or, with --wait, still running when --timeout passed).
)",
      kStatusFlags,
      AppOperand,
      RunStatus};
  return kCommand;
}

}  // namespace tony::cli::ytf
