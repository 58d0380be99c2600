// Copyright libtony authors.
//
// ytf suspend and ytf resume: stop a job's tasks for a while, and start them again.

#include "absl/strings/str_format.h"
#include "cli/submit_command.h"
#include "cli/ytf/subcommand.h"

namespace tony::cli::ytf {
namespace {

// Until the job is SUSPENDED (suspend --wait) or every task that is not done runs again
// (resume --wait), printing each change of the task counts.
int WaitForSuspension(const Args& args, Application& app, std::ostream& out, std::ostream& err) {
  const bool suspend = args.command == "suspend";
  Cancellation reached;
  std::string last;
  auto final = app.Wait(
      args.wait_timeout,
      [&](const ApplicationStatus& s) {
        int total = 0, running = 0, done = 0;
        for (const auto& [job, p] : s.progress) {
          total += p.total;
          running += p.running;
          done += p.succeeded + p.failed;
        }
        const std::string line =
            s.state == AppState::kSuspended
                ? "suspended"
                : absl::StrFormat("%s: %d of %d tasks running", AppStateName(s.state), running,
                                  total - done);
        if (line != last) out << line << "\n" << std::flush;
        last = line;
        const bool there = suspend ? s.state == AppState::kSuspended
                                   : s.state == AppState::kRunning && running == total - done;
        if (there) reached.Cancel();
      },
      reached);
  if (reached.cancelled()) return kExitOk;
  if (final.ok()) {
    err << "ytf: " << args.app << " ended (" << AppStateName(final->state) << ") before it "
        << (suspend ? "was suspended" : "ran again") << "\n";
    return kExitJobFailed;
  }
  err << "ytf: " << args.app << ": " << final.status().message() << "\n";
  return kExitInternal;
}

// Both commands: which one is args.command.
int RunSuspend(const Args& args, std::ostream& out, std::ostream& err) {
  const bool suspend = args.command == "suspend";
  int code = kExitOk;
  std::unique_ptr<Application> app = OpenApplication(args, err, &code);
  if (app == nullptr) return code;
  auto before = StatusBeforeChange(args, *app, err, &code);
  if (!before.ok()) return code;
  absl::Status s = suspend ? app->Suspend() : app->Resume();
  if (!s.ok()) {
    err << "ytf: " << args.command << " " << args.app << ": " << s.message() << "\n";
    // A job that cannot be suspended now (not running yet, finishing, client mode) is not an
    // internal error: it is what was asked.
    return absl::IsFailedPrecondition(s) ? kExitJobFailed : kExitInternal;
  }
  const bool already = suspend == (before->state == AppState::kSuspended);
  out << args.app << ": "
      << (already ? (suspend ? "already suspended" : "already running")
                  : (suspend ? "suspending (its tasks stop; their containers are released)"
                             : "resuming (its tasks are asked for again)"))
      << "\n";
  return args.wait ? WaitForSuspension(args, *app, out, err) : kExitOk;
}

constexpr const Flag* kSuspendFlags[] = {&kWaitFlag, &kTimeoutFlag};

// One text for both.
constexpr char kHelp[] =
    R"(ytf suspend, ytf resume - stop a job's tasks for a while, and start them again

Usage: ytf suspend APP [--wait [--timeout <d>]]
       ytf resume APP [--wait [--timeout <d>]]

suspend: the ApplicationMaster stops every task that has not finished (not a failure) and
releases its container; the application, its staging, tokens and event log stay, and ytf status
says SUSPENDED since when. The job timeout does not run meanwhile. resume: the tasks are asked
for again as one gang and start afresh with the cluster spec's next version; training scripts go
on from their checkpoints. Both are harmless when the job already is as asked.
      --wait                then wait until it is suspended (every container released), or
                            until every task that has not finished runs again
      --timeout <d>         stop waiting after this long (10m, 1h; default none): exit 3
Exit codes: 0 the request was taken (with --wait: done), 1 the job had already finished, ended
while waiting, or cannot be suspended now (not running yet, finishing, client mode), 2 bad
usage, 3 cluster or job not found (or, with --wait, not done before --timeout).
)";

}  // namespace

const Command& SuspendCommand() {
  static const Command kCommand = {
      "suspend",
      "ytf suspend APP             stop every task and release its containers (SUSPENDED)\n",
      kHelp,
      kSuspendFlags,
      AppOperand,
      RunSuspend};
  return kCommand;
}

const Command& ResumeCommand() {
  static const Command kCommand = {
      "resume",
      "ytf resume APP              ask for a suspended job's tasks again (from checkpoints)\n",
      kHelp,
      kSuspendFlags,
      AppOperand,
      RunSuspend};
  return kCommand;
}

}  // namespace tony::cli::ytf
