// Copyright libtony authors.
//
// ytf history (jobs from their event logs) and ytf history-server (a web server over them):
// their options; what they do is cli/history_command.h.

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "cli/submit_command.h"
#include "cli/ytf/subcommand.h"
#include "spec/parse_util.h"

namespace tony::cli::ytf {
namespace {

// --user, --queue, ..., --tag: the server's query parameters.
absl::Status Filter(absl::string_view name, const std::string& value, Args& args) {
  args.history.filters.emplace_back(std::string(name), value);
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

// --scan_interval, --max_age, --tensorboard_idle; in days too, for retention: "30d".
absl::Status Duration(absl::string_view name, const std::string& value, Args& args) {
  int days = 0;
  absl::StatusOr<absl::Duration> d =
      absl::EndsWith(value, "d") && absl::SimpleAtoi(value.substr(0, value.size() - 1), &days)
          ? absl::StatusOr<absl::Duration>(absl::Hours(24) * days)
          : spec::ParseTimeout(value);
  if (!d.ok() || *d <= absl::ZeroDuration()) {
    return Usage(args.command, absl::StrCat("--", name, ": '", value,
                                            "' is not a duration (30s, 10m, 12h, 30d)"));
  }
  HistoryArgs& h = args.history;
  (name == "max_age"            ? h.max_age
   : name == "tensorboard_idle" ? h.tensorboard_idle
                                : h.scan_interval) = *d;
  return absl::OkStatus();
}

// --port, --max_jobs, --tensorboard_max.
absl::Status Number(absl::string_view name, const std::string& value, Args& args) {
  HistoryArgs& h = args.history;
  if (name == "port") {
    if (!absl::SimpleAtoi(value, &h.port) || h.port < 0 || h.port > 65535) {
      return Usage(args.command, absl::StrCat("--port: '", value, "' is not a port (0-65535)"));
    }
  } else if (name == "max_jobs") {
    if (!absl::SimpleAtoi(value, &h.max_jobs) || h.max_jobs < 0) {
      return Usage(args.command,
                   absl::StrCat("--max_jobs: '", value, "' is not a number (0: no limit)"));
    }
  } else if (!absl::SimpleAtoi(value, &h.tensorboard_max) || h.tensorboard_max < 1) {
    return Usage(args.command,
                 absl::StrCat("--tensorboard_max: '", value, "' is not a number of at least 1"));
  }
  return absl::OkStatus();
}

constexpr Flag kJson = {0, "json", false, Set<&HistoryArgs::json>};
constexpr Flag kTag = {0, "tag", true, Filter};
constexpr Flag kUser = {0, "user", true, Filter};
constexpr Flag kQueue = {0, "queue", true, Filter};
constexpr Flag kState = {0, "state", true, Filter};
constexpr Flag kName = {0, "name", true, Filter};
constexpr Flag kFrom = {0, "from", true, Filter};
constexpr Flag kTo = {0, "to", true, Filter};
constexpr Flag kOffset = {0, "offset", true, Filter};
constexpr Flag kLimit = {0, "limit", true, Filter};
constexpr Flag kServer = {0, "server", true, Server};
constexpr Flag kHistoryDir = {0, "history_dir", true, Set<&HistoryArgs::history_dir>};
constexpr Flag kLocal = {0, "local", false, Set<&HistoryArgs::local>};
constexpr const Flag* kHistoryFlags[] = {&kJson,   &kTag,        &kUser, &kQueue,  &kState,
                                         &kName,   &kFrom,       &kTo,   &kOffset, &kLimit,
                                         &kServer, &kHistoryDir, &kLocal};

constexpr Flag kListenHost = {0, "listen_host", true, Set<&HistoryArgs::listen_host>};
constexpr Flag kPort = {0, "port", true, Number};
constexpr Flag kScanInterval = {0, "scan_interval", true, Duration};
constexpr Flag kMaxAge = {0, "max_age", true, Duration};
constexpr Flag kMaxJobs = {0, "max_jobs", true, Number};
constexpr Flag kIndexFile = {0, "index_file", true, Set<&HistoryArgs::index_file>};
constexpr Flag kInitDir = {0, "init_dir", false, Set<&HistoryArgs::init_dir>};
constexpr Flag kGroup = {0, "group", true, Set<&HistoryArgs::group>};
constexpr Flag kSpnegoPrincipal = {0, "spnego_principal", true,
                                   Set<&HistoryArgs::spnego_principal>};
constexpr Flag kSpnegoKeytab = {0, "spnego_keytab", true, Set<&HistoryArgs::spnego_keytab>};
constexpr Flag kAdminAcl = {0, "admin_acl", true, Set<&HistoryArgs::admin_acl>};
constexpr Flag kTensorboardCommand = {0, "tensorboard_command", true,
                                      Set<&HistoryArgs::tensorboard_command>};
constexpr Flag kTensorboardIdle = {0, "tensorboard_idle", true, Duration};
constexpr Flag kTensorboardMax = {0, "tensorboard_max", true, Number};
constexpr const Flag* kServerFlags[] = {&kHistoryDir,      &kLocal,
                                        &kListenHost,      &kPort,
                                        &kScanInterval,    &kMaxAge,
                                        &kMaxJobs,         &kIndexFile,
                                        &kInitDir,         &kGroup,
                                        &kSpnegoPrincipal, &kSpnegoKeytab,
                                        &kAdminAcl,        &kTensorboardCommand,
                                        &kTensorboardIdle, &kTensorboardMax};

int RunHistoryCommand(const Args& args, std::ostream& out, std::ostream& err) {
  std::shared_ptr<submit::YarnCluster> cluster;  // none for a server or local jobs
  if (args.history.server.empty() && !args.history.local) {
    // Bad filters are bad usage before anything is contacted.
    if (auto q = HistoryQueryString(args.history); !q.ok()) {
      err << "ytf: " << q.status().message() << " (see ytf history --help)\n";
      return kExitUsage;
    }
    int code = kExitOk;
    cluster = ConnectCluster(args, err, &code);
    if (cluster == nullptr) return code;
  }
  return RunHistory(args.history, cluster.get(), out, err);
}

int RunHistoryServerCommand(const Args& args, std::ostream& out, std::ostream& err) {
  std::shared_ptr<submit::YarnCluster> cluster;  // none for local jobs
  if (!args.history.local) {
    int code = kExitOk;
    cluster = ConnectCluster(args, err, &code);
    if (cluster == nullptr) return code;
  }
  return RunHistoryServer(args.history, cluster.get(), out, err);
}

}  // namespace

const Command& HistoryCommand() {
  static const Command kCommand = {
      "history",
      "ytf history [--state FAILED] [--json]\n"
      "                            jobs from their event logs, kept after YARN forgets them\n",
      R"(ytf history - finished and running jobs from their event logs

Usage: ytf history [--user <u>] [--queue <q>] [--state <s>] [--name <part>] [--tag <t>]
                   [--from <date>] [--to <date>] [--offset <n>] [--limit <n>] [--json]
                   [--server <url> | --history_dir <dir> | --local]

Lists the jobs whose event logs are in the history directory (tony.history.dir, default
/tmp/tony-history; docs/events.md), newest first, every user's you may read: state, user,
queue, start, tasks, name. Kept after YARN has forgotten the job.
      --user, --queue       only this user's, this queue's jobs
      --state <s>           SUCCEEDED, FAILED, KILLED or RUNNING (no end in its log yet)
      --name <part>         names containing this (any case)
      --tag <t>             jobs carrying this tag
      --from, --to <date>   started at or after, before: 2026-11-26 or 2026-11-26T10:00:00Z
      --offset, --limit <n> paging (default the newest 50; --limit at most 1000)
      --json                {"total", "offset", "limit", "jobs": [...]}, as the server's
                            /api/jobs
      --server <url>        ask a running history server (ytf history-server) instead of
                            reading every log: fast with many jobs
      --history_dir <dir>   another directory than tony.history.dir
      --local               this user's local jobs (ytf-submit --local) instead, from
                            $TMPDIR/tony-jobs-<uid>/<id>/events.jsonl; needs no cluster
Exit codes: 0 ok, 2 bad usage, 3 the directory or the server cannot be read.
)",
      kHistoryFlags,
      NoOperands,
      RunHistoryCommand};
  return kCommand;
}

const Command& HistoryServerCommand() {
  static const Command kCommand = {
      "history-server",
      "ytf history-server [--port 18890]\n"
      "                            a web server over the event logs: job list, job pages\n",
      R"(ytf history-server - a web server over the jobs' event logs

Usage: ytf history-server [--listen_host <ip>] [--port <n>] [--scan_interval <d>]
                          [--max_age <d>] [--max_jobs <n>] [--index_file <file>]
                          [--spnego_keytab <file> [--spnego_principal <p>]
                           [--admin_acl <acl>]]
                          [--tensorboard_command <cmd> [--tensorboard_idle <d>]
                           [--tensorboard_max <n>]]
                          [--history_dir <dir> | --local]
       ytf history-server --init_dir [--group <g>] [--history_dir <dir>]

Serves the history directory (tony.history.dir) until SIGINT or SIGTERM:
  /                   the job list, with filters and paging
  /jobs/<app id>      one job: summary, tasks (address, node, container, exit code, restarts),
                      a timeline of each task's phases, memory and CPU over time, stderr tails
                      of failed tasks, the job spec
  /api/jobs, /api/jobs/<app id>   the same as JSON
  /jobs/<app id>/logs/<task>/stdout (or stderr)   the end of a task's log, from its
                      NodeManager or, once YARN aggregated the job's logs, from HDFS
  /jobs/<app id>/tensorboard      TensorBoard over an ended job's output path, started on
                      demand (with --tensorboard_command): a redirect to it
  /usage              what the jobs held and used per user, queue or job (ytf usage's
                      figures; by, from, to), with a bar chart; /api/usage the same as JSON
  /metrics            Prometheus text: jobs by state, scans, logs read, requests; vcore-,
                      GB- and GPU-seconds held and jobs ended, per user and queue
It lists the directory every --scan_interval and reads only new or changed logs.
      --listen_host <ip>    where to listen (default 127.0.0.1: the pages show every job it
                            can read; 0.0.0.0 opens it to the network)
      --port <n>            default 18890 (0: any free port, printed)
      --scan_interval <d>   default 10s
      --max_age <d>         delete the logs of jobs that ended longer ago (30d, 12h; default
                            keep)
      --max_jobs <n>        keep the logs of each user's newest n ended jobs only (default
                            all). Age and order are the logs' HDFS modification times
      --index_file <file>   keep the index here across restarts (written 0600 after each
                            scan that changed it): a restart reads only the logs that changed,
                            not every log (default none)
      --spnego_keytab <file>  ask every client for Kerberos (SPNEGO, as Hadoop's web pages):
                            the server's keys (HTTP/host@REALM). On a Kerberos cluster a
                            server listening beyond loopback needs it
      --spnego_principal <p>  the principal of those keys (HTTP/_HOST@REALM: _HOST is this
                            host's name; default: any in the keytab)
      --admin_acl <acl>     with sign-in, a user sees only the jobs they may view: their own,
                            those whose view_acls name them or their group, and every job if
                            this ACL does ("user1,user2 group1", "*"; default: yarn.admin.acl
                            when yarn.acl.enable is true, else everyone)
      --tensorboard_command <cmd>  start TensorBoard for an ended job when its page's link
                            is followed: <cmd> --logdir <dir> --host <listen_host> --port 0
                            (e.g. tensorboard, or 'python -m tensorboard.main'); event files
                            in HDFS are copied to ~/.cache/libtony/history-tensorboard first.
                            TensorBoard has no sign-in: not with --spnego_keytab beyond
                            loopback
      --tensorboard_idle <d>  stop one not opened for this long (default 30m)
      --tensorboard_max <n>   at most n at once, the least recently opened stopped first
                            (default 4)
      --history_dir <dir>   another directory than tony.history.dir
      --local               this user's local jobs (ytf-submit --local) instead; needs no
                            cluster, deletes nothing
      --init_dir            make the history directory for every user's ApplicationMaster
                            and exit, run once by an HDFS admin: mode 1777, owned by the
                            HDFS superuser (AMs refuse a shared directory another user
                            owns); run it as the superuser
      --group <g>           with --init_dir: the directory's group, the history server's
                            (logs are 0640 and take the directory's group)
Exit codes: 0 stopped by a signal, 2 bad usage (a keytab without the key included), 3 the
directory cannot be read or the port cannot be had.
)",
      kServerFlags,
      NoOperands,
      RunHistoryServerCommand};
  return kCommand;
}

}  // namespace tony::cli::ytf
