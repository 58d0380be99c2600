// Copyright libtony authors.
//
// ytf usage: what the jobs held and used, per user, queue or job, from their event logs; what it
// does is cli/history_command.h's RunUsage over history/usage_report.h.

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "cli/submit_command.h"
#include "cli/ytf/subcommand.h"
#include "history/history_index.h"
#include "history/usage_report.h"

namespace tony::cli::ytf {
namespace {

absl::Status By(absl::string_view, const std::string& value, Args& args) {
  absl::StatusOr<history::UsageBy> by = history::ParseUsageBy(value);
  if (!by.ok()) return Usage(args.command, by.status().message());
  args.history.usage.by = *by;
  return absl::OkStatus();
}

// --from, --to.
absl::Status Date(absl::string_view name, const std::string& value, Args& args) {
  absl::StatusOr<absl::Time> t = history::ParseHistoryDate(absl::StrCat("--", name), value);
  if (!t.ok()) return Usage(args.command, t.status().message());
  (name == "from" ? args.history.usage.from : args.history.usage.to) = *t;
  return absl::OkStatus();
}

absl::Status Server(absl::string_view, const std::string& value, Args& args) {
  if (!absl::StartsWith(value, "http://") && !absl::StartsWith(value, "https://")) {
    return Usage(args.command,
                 absl::StrCat("--server: '", value, "' is not a URL (http://host:18890)"));
  }
  args.history.server = value;
  return absl::OkStatus();
}

constexpr Flag kBy = {0, "by", true, By};
constexpr Flag kFrom = {0, "from", true, Date};
constexpr Flag kTo = {0, "to", true, Date};
constexpr Flag kJson = {0, "json", false, Set<&HistoryArgs::json>};
constexpr Flag kCsv = {0, "csv", false, Set<&HistoryArgs::csv>};
constexpr Flag kHistoryDir = {0, "history_dir", true, Set<&HistoryArgs::history_dir>};
constexpr Flag kLocal = {0, "local", false, Set<&HistoryArgs::local>};
constexpr Flag kServer = {0, "server", true, Server};
constexpr const Flag* kUsageFlags[] = {&kBy,  &kFrom,       &kTo,    &kJson,
                                       &kCsv, &kHistoryDir, &kLocal, &kServer};

int RunUsage(const Args& args, std::ostream& out, std::ostream& err) {
  std::shared_ptr<submit::YarnCluster> cluster;  // none for a server or local jobs
  // Bad usage is said before anything is contacted.
  if (args.history.server.empty() && !args.history.local && CheckUsageArgs(args.history).ok()) {
    int code = kExitOk;
    cluster = ConnectCluster(args, err, &code);
    if (cluster == nullptr) return code;
  }
  return RunUsage(args.history, cluster.get(), out, err);
}

}  // namespace

const Command& UsageCommand() {
  static const Command kCommand = {
      "usage",
      "ytf usage [--by user|queue|job] [--from <date>] [--csv]\n"
      "                            vcore-, GB- and GPU-hours the jobs held, and what they used\n",
      R"(ytf usage - what the jobs held and used, per user, queue or job

Usage: ytf usage [--by user|queue|job] [--from <date>] [--to <date>] [--json | --csv]
                 [--server <url> | --history_dir <dir> | --local]

Reads the event logs in the history directory (tony.history.dir, default /tmp/tony-history;
docs/events.md) you may read and sums, per group: jobs; vcore-hours, GB-hours and GPU-hours
held (each container's size times how long the job held it, from its allocation to YARN's
report of its end); CPU% and MEM%, the cores and memory the tasks used against what their
containers held, over the tasks that sent usage samples ("-": none did); IDLE-GPUS, the GPUs
reported idle while holding memory; GOODPUT% and RECOVER%, the share of the jobs' wall time
spent training and recovering from faults (restarts, preemption, re-forms, suspension, AM
attempts; docs/events.md). The group with the most vcore-hours comes first, the total last.
A running job counts up to its log's last event.
      --by <g>              user (default), queue or job (its application id)
      --from, --to <date>   jobs started at or after, before: 2026-11-26 or
                            2026-11-26T10:00:00Z
      --json                {"by", "groups": [...], "total": {...}}, hours as numbers,
                            efficiencies 0..1 (null without samples), each group's
                            "goodput": hours per part and training_share
      --csv                 a header line, a line per group, the total last
      --server <url>        ask a running history server (ytf history-server) instead of
                            reading every log: its index keeps each job's figures, so this
                            is fast with many jobs (only those the server lets you view)
      --history_dir <dir>   another directory than tony.history.dir
      --local               this user's local jobs (ytf-submit --local) instead; needs no
                            cluster
Exit codes: 0 ok, 2 bad usage, 3 the directory or the server cannot be read.
)",
      kUsageFlags,
      NoOperands,
      RunUsage};
  return kCommand;
}

}  // namespace tony::cli::ytf
