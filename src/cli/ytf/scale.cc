// Copyright libtony authors.
//
// ytf scale: an elastic role's new number of tasks.

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "cli/submit_command.h"
#include "cli/ytf/subcommand.h"
#include "common/status_macros.h"

namespace tony::cli::ytf {
namespace {

// ROLE=N.
absl::Status ParseTarget(absl::string_view target, Args& args) {
  const size_t eq = target.find('=');
  int tasks = 0;
  if (eq == absl::string_view::npos || eq == 0 ||
      !absl::SimpleAtoi(target.substr(eq + 1), &tasks) || tasks < 0) {
    return Usage("scale", absl::StrCat("'", target,
                                       "' is not ROLE=N (a role and its new number of tasks, "
                                       "e.g. worker=4)"));
  }
  args.scale_role = std::string(target.substr(0, eq));
  args.scale_tasks = tasks;
  return absl::OkStatus();
}

// APP ROLE=N.
absl::Status Operands(const std::vector<std::string>& words, Args& args) {
  if (words.size() == 1) {
    return Usage("scale", "scale needs the role and its new number of tasks, e.g. worker=4");
  }
  std::vector<std::string> rest = words;
  if (words.size() >= 2) {
    TONY_RETURN_IF_ERROR(ParseTarget(words[1], args));
    rest.erase(rest.begin() + 1);
  }
  return AppOperand(rest, args);  // and no more
}

// Scale's refusals for what was asked (a role that is not elastic, a number outside its range)
// are bad usage; the rest (the AM unreachable) not.
int ScaleExit(const absl::Status& s) {
  return absl::IsInvalidArgument(s) || absl::IsFailedPrecondition(s) ? kExitUsage : kExitInternal;
}

// Until the role runs the tasks asked for and no others (scale --wait), printing each change.
int WaitForScale(const Args& args, Application& app, std::ostream& out, std::ostream& err) {
  Cancellation reached;
  std::string last;
  auto final = app.Wait(
      args.wait_timeout,
      [&](const ApplicationStatus& s) {
        auto p = s.progress.find(args.scale_role);
        if (p == s.progress.end()) return;
        const std::string line = absl::StrFormat("%s: %d of %d tasks running", args.scale_role,
                                                 p->second.running, p->second.total);
        if (line != last) out << line << "\n" << std::flush;
        last = line;
        if (p->second.total == args.scale_tasks && p->second.running == args.scale_tasks) {
          reached.Cancel();
        }
      },
      reached);
  if (reached.cancelled()) return kExitOk;
  if (final.ok()) {
    err << "ytf: " << args.app << " ended (" << AppStateName(final->state) << ") before "
        << args.scale_role << " ran " << args.scale_tasks << " tasks\n";
    return kExitJobFailed;
  }
  err << "ytf: " << args.app << ": " << final.status().message() << "\n";
  return kExitInternal;
}

int RunScale(const Args& args, std::ostream& out, std::ostream& err) {
  int code = kExitOk;
  std::unique_ptr<Application> app = OpenApplication(args, err, &code);
  if (app == nullptr) return code;
  auto before = StatusBeforeChange(args, *app, err, &code);
  if (!before.ok()) return code;
  if (absl::Status s = app->Scale(args.scale_role, args.scale_tasks); !s.ok()) {
    err << "ytf: scale " << args.app << ": " << s.message() << "\n";
    return ScaleExit(s);
  }
  auto p = before->progress.find(args.scale_role);
  out << args.app << " " << args.scale_role << ": " << args.scale_tasks << " tasks asked for"
      << (p == before->progress.end() ? std::string()
                                      : absl::StrCat(" (it had ", p->second.total, ")"))
      << "\n";
  return args.wait ? WaitForScale(args, *app, out, err) : kExitOk;
}

constexpr const Flag* kScaleFlags[] = {&kWaitFlag, &kTimeoutFlag};

}  // namespace

const Command& ScaleCommand() {
  static const Command kCommand = {
      "scale",
      "ytf scale APP worker=4      an elastic role's new number of tasks\n",
      R"(ytf scale - change the number of tasks of an elastic role

Usage: ytf scale APP ROLE=N [--wait [--timeout <d>]]

Asks the ApplicationMaster for ROLE, an elastic role (ytf-submit --elastic worker=2:4), to have
N tasks from now on, within its range: tasks numbered N and above are stopped (not a failure),
those below it that are not running are asked for again. ytf status and ytf-submit's progress
line show the role's tasks as they follow; the event log records role_scaled.
      --wait                then wait until the role runs exactly N tasks, printing each change
      --timeout <d>         stop waiting after this long (10m, 1h; default none): exit 3
Exit codes: 0 the request was taken (with --wait: N tasks run), 1 the job had already finished
(or ended while waiting), 2 bad usage (not ROLE=N, a role that is not elastic, N outside its
range), 3 cluster or job not found (or, with --wait, not reached before --timeout).
)",
      kScaleFlags,
      Operands,
      RunScale};
  return kCommand;
}

}  // namespace tony::cli::ytf
