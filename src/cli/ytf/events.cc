// Copyright libtony authors.
//
// ytf events: a job's event log, as a timeline or as JSON lines.

#include "cli/event_timeline.h"
#include "cli/submit_command.h"
#include "cli/ytf/subcommand.h"
#include "conf/history_keys.h"
#include "history/job_history.h"
#include "submit/contract.h"

namespace tony::cli::ytf {
namespace {

// The job's event log from the history directory (docs/events.md).
int Events(submit::YarnCluster& cluster, const std::string& app, bool json, std::ostream& out,
           std::ostream& err) {
  auto dir = ClusterHistoryDir(cluster);
  if (!dir.ok()) {
    err << "ytf: " << dir.status().message() << "\n";
    return kExitInternal;
  }
  // The caller's private copy first: an AM that found the shared log's name taken by another
  // user (or the directory open to others) logged there (history::HdfsEventSink).
  std::string path = submit::PrivateEventLogPath(cluster.user, app);
  auto text = cluster.hdfs->ReadToString(path);
  if (absl::IsNotFound(text.status())) {
    path = history::EventLogPath(*dir, app);
    text = cluster.hdfs->ReadToString(path);
    // Anyone may have made a log of that name first: say whose it is when it is not ours.
    if (auto st = cluster.hdfs->Stat(path); text.ok() && st.ok() && st->owner != cluster.user) {
      err << "ytf: warning: " << path << " belongs to " << st->owner << ", not to " << cluster.user
          << "; it is this job's log only if " << st->owner << " ran the job\n";
    }
  }
  if (!text.ok()) {
    err << "ytf: no event log for " << app << " at " << path << " (" << text.status().message()
        << "); jobs submitted with an empty " << history::kHistoryDirKey
        << " or by a libtony without event logs have none\n";
    return kExitInternal;
  }
  PrintEventTimeline(*text, json, out, err);
  if (!json) out << "\n" << GoodputText(history::ReadJobHistory(app, *text).summary.goodput);
  return kExitOk;
}

int RunEvents(const Args& args, std::ostream& out, std::ostream& err) {
  int code = kExitOk;
  std::shared_ptr<submit::YarnCluster> cluster = ConnectCluster(args, err, &code);
  if (cluster == nullptr) return code;
  return Events(*cluster, args.app, args.json, out, err);
}

constexpr const Flag* kEventsFlags[] = {&kJsonFlag};

}  // namespace

const Command& EventsCommand() {
  static const Command kCommand = {
      "events",
      "ytf events APP [--json]     the job's event log: each task's life, restarts, the outcome\n",
      R"(ytf events - a job's event log: what happened to it and its tasks, when

Usage: ytf events APP [--json]

Prints the job's event log (docs/events.md) from the history directory in HDFS
(tony.history.dir, default /tmp/tony-history), kept after the job: one line per event, with its
time since the first, the attempt, the task and its facts (containers, nodes, addresses, exit
codes, stderr tails, restart reasons, the outcome). While the job runs it shows what the
ApplicationMaster has written so far (it writes every 2 s). Then the job's goodput: its wall
time split into waiting for containers, starting, training, recovering (restarts, relaunches,
preemption, elastic re-forms, suspension, a new AM attempt) and stopping (docs/events.md).
      --json                the log's lines as they are (JSON objects, schema in docs/events.md)
A line that is not JSON (the last one, cut short when an AM was killed mid-write) is named on
stderr and skipped.
Exit codes: 0 ok, 2 bad usage, 3 cluster not reachable or no event log for the job.
)",
      kEventsFlags,
      AppOperand,
      RunEvents};
  return kCommand;
}

}  // namespace tony::cli::ytf
