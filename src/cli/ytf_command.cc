// Copyright libtony authors.

#include "cli/ytf_command.h"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <optional>
#include <set>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "cli/event_timeline.h"
#include "cli/history_command.h"
#include "cli/submit_command.h"
#include "common/file_util.h"
#include "common/status_macros.h"
#include "common/utf8.h"
#include "conf/history_keys.h"
#include "http/client.h"
#include "http/json.h"
#include "local/local_am.h"
#include "spec/parse_util.h"
#include "submit/contract.h"
#include "submit/yarn_submitter.h"
#include "tony/version.h"

namespace tony::cli {
namespace {

struct YtfArgs {
  std::string command;
  std::string app;
  std::string task;                                       // logs --task
  std::vector<std::string> files = {"stdout", "stderr"};  // logs --file
  bool follow = false;
  bool all = false;                                        // list --all
  bool all_users = false;                                  // list --all_users
  std::vector<std::string> tags;                           // list --tag
  bool json = false;                                       // status, list --json
  bool wait = false;                                       // status, scale, ... --wait
  absl::Duration wait_timeout = absl::InfiniteDuration();  // status, scale, ... --timeout
  std::string scale_role;                                  // scale ROLE=N
  int scale_tasks = 0;
  bool help = false;
  bool version = false;
  HistoryArgs history;  // history, history-server
  YarnSubmitterOptions cluster;
};

struct YtfFlag {
  char short_name;        // 0 when none
  const char* long_name;  // without "--"
  bool takes_value;
  const char* commands;  // the commands that take it, space-separated; "" for all
};

constexpr YtfFlag kYtfFlags[] = {
    {0, "json", false, "status list events history"},
    {0, "all", false, "list"},
    {0, "all_users", false, "list"},
    {0, "tag", true, "list history"},
    {0, "user", true, "history"},
    {0, "queue", true, "history"},
    {0, "state", true, "history"},
    {0, "name", true, "history"},
    {0, "from", true, "history"},
    {0, "to", true, "history"},
    {0, "offset", true, "history"},
    {0, "limit", true, "history"},
    {0, "server", true, "history"},
    {0, "history_dir", true, "history history-server"},
    {0, "local", false, "history history-server"},
    {0, "listen_host", true, "history-server"},
    {0, "port", true, "history-server"},
    {0, "scan_interval", true, "history-server"},
    {0, "max_age", true, "history-server"},
    {0, "max_jobs", true, "history-server"},
    {0, "index_file", true, "history-server"},
    {0, "init_dir", false, "history-server"},
    {0, "group", true, "history-server"},
    {0, "spnego_principal", true, "history-server"},
    {0, "spnego_keytab", true, "history-server"},
    {0, "admin_acl", true, "history-server"},
    {0, "tensorboard_command", true, "history-server"},
    {0, "tensorboard_idle", true, "history-server"},
    {0, "tensorboard_max", true, "history-server"},
    {0, "wait", false, "status scale suspend resume"},
    {0, "timeout", true, "status scale suspend resume"},
    {0, "task", true, "logs"},
    {0, "file", true, "logs"},
    {'f', "follow", false, "logs"},
    {0, "conf_dir", true, ""},
    {'D', "define", true, ""},
    {'h', "help", false, ""},
    {0, "version", false, ""},
    {0, "principal", true, ""},
    {0, "keytab", true, ""},
};

constexpr const char* kCommands[] = {"status", "kill",    "scale",         "suspend",
                                     "resume", "list",    "logs",          "events",
                                     "clean",  "history", "history-server"};

bool IsCommand(absl::string_view c) {
  return std::find(std::begin(kCommands), std::end(kCommands), c) != std::end(kCommands);
}

absl::Status Usage(absl::string_view command, absl::string_view msg) {
  return absl::InvalidArgumentError(absl::StrCat(
      msg, " (see ytf ", command.empty() ? "" : absl::StrCat(command, " "), "--help)"));
}

const YtfFlag* FindYtfFlag(absl::string_view long_name, char short_name) {
  for (const YtfFlag& f : kYtfFlags) {
    if (short_name != 0 ? f.short_name == short_name : long_name == f.long_name) return &f;
  }
  // Dashes for underscores (--conf-dir) as ytf-submit accepts them.
  if (short_name == 0) {
    std::string wanted(long_name);
    std::replace(wanted.begin(), wanted.end(), '-', '_');
    for (const YtfFlag& f : kYtfFlags) {
      if (wanted == f.long_name) return &f;
    }
  }
  return nullptr;
}

// ytf scale's ROLE=N.
absl::Status ParseScaleTarget(absl::string_view arg, YtfArgs* out) {
  const size_t eq = arg.find('=');
  int tasks = 0;
  if (eq == absl::string_view::npos || eq == 0 || !absl::SimpleAtoi(arg.substr(eq + 1), &tasks) ||
      tasks < 0) {
    return Usage("scale", absl::StrCat("'", arg,
                                       "' is not ROLE=N (a role and its new number of tasks, "
                                       "e.g. worker=4)"));
  }
  out->scale_role = std::string(arg.substr(0, eq));
  out->scale_tasks = tasks;
  return absl::OkStatus();
}

// The flags of history and history-server.
absl::Status ParseHistoryFlag(const std::string& name, const std::string& value, YtfArgs* out) {
  HistoryArgs& h = out->history;
  for (const char* filter : {"user", "queue", "state", "name", "from", "to", "offset", "limit"}) {
    if (name == filter) h.filters.emplace_back(name, value);
  }
  if (name == "server") {
    if (!absl::StartsWith(value, "http://") && !absl::StartsWith(value, "https://")) {
      return Usage(out->command,
                   absl::StrCat("--server: '", value, "' is not a URL (http://host:18890)"));
    }
    h.server = value;
  } else if (name == "history_dir") {
    h.history_dir = value;
  } else if (name == "local") {
    h.local = true;
  } else if (name == "index_file") {
    h.index_file = value;
  } else if (name == "init_dir") {
    h.init_dir = true;
  } else if (name == "group") {
    h.group = value;
  } else if (name == "spnego_principal") {
    h.spnego_principal = value;
  } else if (name == "spnego_keytab") {
    h.spnego_keytab = value;
  } else if (name == "admin_acl") {
    h.admin_acl = value;
  } else if (name == "tensorboard_command") {
    h.tensorboard_command = value;
  } else if (name == "tensorboard_max") {
    if (!absl::SimpleAtoi(value, &h.tensorboard_max) || h.tensorboard_max < 1) {
      return Usage(out->command,
                   absl::StrCat("--tensorboard_max: '", value, "' is not a number of at least 1"));
    }
  } else if (name == "listen_host") {
    h.listen_host = value;
  } else if (name == "port") {
    if (!absl::SimpleAtoi(value, &h.port) || h.port < 0 || h.port > 65535) {
      return Usage(out->command, absl::StrCat("--port: '", value, "' is not a port (0-65535)"));
    }
  } else if (name == "max_jobs") {
    if (!absl::SimpleAtoi(value, &h.max_jobs) || h.max_jobs < 0) {
      return Usage(out->command,
                   absl::StrCat("--max_jobs: '", value, "' is not a number (0: no limit)"));
    }
  } else if (name == "scan_interval" || name == "max_age" || name == "tensorboard_idle") {
    // Days too, for retention: "30d".
    int days = 0;
    absl::StatusOr<absl::Duration> d =
        absl::EndsWith(value, "d") && absl::SimpleAtoi(value.substr(0, value.size() - 1), &days)
            ? absl::StatusOr<absl::Duration>(absl::Hours(24) * days)
            : spec::ParseTimeout(value);
    if (!d.ok() || *d <= absl::ZeroDuration()) {
      return Usage(out->command, absl::StrCat("--", name, ": '", value,
                                              "' is not a duration (30s, 10m, 12h, 30d)"));
    }
    (name == "max_age"            ? h.max_age
     : name == "tensorboard_idle" ? h.tensorboard_idle
                                  : h.scan_interval) = *d;
  }
  return absl::OkStatus();
}

absl::StatusOr<YtfArgs> Parse(const std::vector<std::string>& args) {
  YtfArgs out;
  bool files_given = false;
  std::vector<std::pair<const YtfFlag*, std::string>> flags;
  std::vector<std::string> positional;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    const YtfFlag* def = nullptr;
    std::optional<std::string> value;
    if (absl::StartsWith(a, "--") && a.size() > 2) {
      std::string name = a.substr(2);
      if (size_t eq = name.find('='); eq != std::string::npos) {
        value = name.substr(eq + 1);
        name = name.substr(0, eq);
      }
      def = FindYtfFlag(name, 0);
      if (def == nullptr) return Usage(out.command, absl::StrCat("unknown option '--", name, "'"));
    } else if (a.size() >= 2 && a[0] == '-' && a[1] != '-') {
      def = FindYtfFlag("", a[1]);
      if (def == nullptr) return Usage(out.command, absl::StrCat("unknown option '", a, "'"));
      if (a.size() > 2) {
        if (!def->takes_value) {
          return Usage(out.command, absl::StrCat("unknown option '", a, "'"));
        }
        value = a.substr(2);
      }
    } else {
      if (out.command.empty()) {
        out.command = a;
      } else {
        positional.push_back(a);
      }
      continue;
    }
    const std::string name =
        def->short_name != 0
            ? absl::StrCat("-", std::string(1, def->short_name), "/--", def->long_name)
            : absl::StrCat("--", def->long_name);
    if (!def->takes_value) {
      if (value) return Usage(out.command, absl::StrCat(name, " takes no value"));
    } else if (!value) {
      if (i + 1 >= args.size()) return Usage(out.command, absl::StrCat(name, " needs a value"));
      value = args[++i];
    }
    flags.emplace_back(def, value.value_or(""));
  }
  for (const auto& [def, value] : flags) {
    const std::string name = def->long_name;
    if (name == "help") out.help = true;
    if (name == "version") out.version = true;
  }
  if (out.help || out.version) {
    if (!out.command.empty() && !IsCommand(out.command)) {
      return Usage("", absl::StrCat("unknown command '", out.command, "'"));
    }
    return out;
  }
  if (out.command.empty()) {
    return Usage("",
                 "no command; use status, kill, scale, suspend, resume, list, logs, events, "
                 "history or history-server");
  }
  if (!IsCommand(out.command)) {
    return Usage("", absl::StrCat("unknown command '", out.command, "'"));
  }
  for (const auto& [def, value] : flags) {
    const std::string name = def->long_name;
    if (*def->commands != '\0') {
      std::vector<absl::string_view> allowed = absl::StrSplit(def->commands, ' ');
      if (std::find(allowed.begin(), allowed.end(), out.command) == allowed.end()) {
        return Usage(out.command,
                     absl::StrCat("--", name, " is not an option of ytf ", out.command,
                                  "; it belongs to ytf ", absl::StrJoin(allowed, ", ytf ")));
      }
    }
    if (absl::Status s = ParseHistoryFlag(name, value, &out); !s.ok()) return s;
    if (name == "task") {
      out.task = value;
    } else if (name == "file") {
      if (!files_given) out.files.clear();
      files_given = true;
      out.files.push_back(value);
    } else if (name == "follow") {
      out.follow = true;
    } else if (name == "all") {
      out.all = true;
    } else if (name == "all_users") {
      out.all_users = true;
    } else if (name == "tag") {
      out.tags.push_back(value);
      out.history.filters.emplace_back("tag", value);
    } else if (name == "wait") {
      out.wait = true;
    } else if (name == "timeout") {
      absl::StatusOr<absl::Duration> d = spec::ParseTimeout(value);
      if (!d.ok()) return Usage(out.command, absl::StrCat("--timeout: ", d.status().message()));
      out.wait_timeout = *d;
    } else if (name == "json") {
      out.json = true;
      out.history.json = true;
    } else if (name == "conf_dir") {
      out.cluster.conf_dir = value;
    } else if (name == "principal") {
      out.cluster.principal = value;
    } else if (name == "keytab") {
      out.cluster.keytab = value;
    } else if (name == "define") {
      size_t eq = value.find('=');
      if (eq == std::string::npos || eq == 0) {
        return Usage(out.command, absl::StrCat("-D/--define: '", value, "' is not key=value"));
      }
      out.cluster.conf_overrides[value.substr(0, eq)] = value.substr(eq + 1);
    }
  }
  if (out.command == "list" || out.command == "clean" || out.command == "history" ||
      out.command == "history-server") {
    if (!positional.empty()) {
      return Usage(out.command, absl::StrCat("unexpected argument '", positional[0], "'"));
    }
    return out;
  }
  if (positional.empty()) {
    return Usage(out.command, absl::StrCat(out.command,
                                           " needs an application id, e.g. "
                                           "application_1700000000000_0001"));
  }
  out.app = positional[0];
  if (out.command == "scale") {
    if (positional.size() < 2) {
      return Usage(out.command, "scale needs the role and its new number of tasks, e.g. worker=4");
    }
    TONY_RETURN_IF_ERROR(ParseScaleTarget(positional[1], &out));
    positional.erase(positional.begin() + 1);
  }
  if (positional.size() > 1) {
    return Usage(out.command, absl::StrCat("unexpected argument '", positional[1], "'"));
  }
  return out;
}

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
          {"suspended_since",
           s.state == AppState::kSuspended
               ? absl::FormatTime(absl::RFC3339_sec, s.suspended_since, absl::UTCTimeZone())
               : ""},
          {"diagnostics", s.diagnostics}};
}

int Status(std::unique_ptr<Application> app, bool json, std::ostream& out, std::ostream& err) {
  auto s = app->Status();
  if (!s.ok()) {
    err << "ytf: " << s.status().message() << "\n";
    return kExitInternal;
  }
  if (json) {
    out << StatusJson(*s).dump(2) << "\n";
  } else {
    PrintStatus(*s, out);
  }
  return s->state == AppState::kFailed || s->state == AppState::kKilled ? kExitJobFailed : kExitOk;
}

// Scale's refusals for what was asked (a role that is not elastic, a number outside its range)
// are bad usage; the rest (the AM unreachable) not.
int ScaleExit(const absl::Status& s) {
  return absl::IsInvalidArgument(s) || absl::IsFailedPrecondition(s) ? kExitUsage : kExitInternal;
}

// Until `role` runs `tasks` tasks and no others (scale --wait), printing each change.
int WaitForScale(const YtfArgs& args, Application& app, std::ostream& out, std::ostream& err) {
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

// kill's and scale's first step: the job's status, or the exit code when it cannot be changed
// any more (or its status is not known).
absl::StatusOr<ApplicationStatus> StatusBeforeChange(const std::string& command,
                                                     const std::string& app_id, Application& app,
                                                     std::ostream& err, int* exit_code) {
  auto before = app.Status();
  if (!before.ok()) {
    err << "ytf: " << command << " " << app_id << ": " << before.status().message() << "\n";
    *exit_code = kExitInternal;
  } else if (IsFinal(before->state)) {
    err << "ytf: " << app_id << " had already finished: " << AppStateName(before->state) << "\n";
    *exit_code = kExitJobFailed;
    return absl::FailedPreconditionError("finished");
  }
  return before;
}

int Scale(const YtfArgs& args, Application& app, std::ostream& out, std::ostream& err) {
  int code = kExitOk;
  auto before = StatusBeforeChange("scale", args.app, app, err, &code);
  if (!before.ok()) return code;
  if (absl::Status s = app.Scale(args.scale_role, args.scale_tasks); !s.ok()) {
    err << "ytf: scale " << args.app << ": " << s.message() << "\n";
    return ScaleExit(s);
  }
  auto p = before->progress.find(args.scale_role);
  out << args.app << " " << args.scale_role << ": " << args.scale_tasks << " tasks asked for"
      << (p == before->progress.end() ? std::string()
                                      : absl::StrCat(" (it had ", p->second.total, ")"))
      << "\n";
  return args.wait ? WaitForScale(args, app, out, err) : kExitOk;
}

// Until the job is SUSPENDED (suspend --wait) or every task that is not done runs again
// (resume --wait), printing each change of the task counts.
int WaitForSuspension(const YtfArgs& args, Application& app, std::ostream& out, std::ostream& err) {
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

int Suspend(const YtfArgs& args, Application& app, std::ostream& out, std::ostream& err) {
  const bool suspend = args.command == "suspend";
  int code = kExitOk;
  auto before = StatusBeforeChange(args.command, args.app, app, err, &code);
  if (!before.ok()) return code;
  absl::Status s = suspend ? app.Suspend() : app.Resume();
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
  return args.wait ? WaitForSuspension(args, app, out, err) : kExitOk;
}

// The ApplicationMaster's own files are tony-am.stdout/tony-am.stderr (its launch command
// names them), in the container of "am" and, after a restart, "am@1", ...
int Logs(const YtfArgs& args, submit::YarnCluster& cluster, const yarn::ApplicationId& id,
         Application& app, std::ostream& out, std::ostream& err) {
  http::Client http;
  std::map<std::string, size_t> printed;  // "container/file" -> bytes already shown
  std::set<std::string> missing;          // "container/file" reported as not available
  // Following several logs at once, each line says where it comes from.
  const bool prefixed = args.follow && (args.task.empty() || args.files.size() > 1);
  while (true) {
    auto containers = submit::RecordedTaskContainers(cluster, args.app);
    auto status = app.Status();
    bool final = status.ok() && IsFinal(status->state);
    if (!containers.ok()) {
      if (containers.status().code() != absl::StatusCode::kNotFound || final || !args.follow) {
        err << "ytf: no task containers recorded for " << args.app << " ("
            << containers.status().message() << ")\n";
        return kExitInternal;
      }
    } else {
      bool found = false;
      for (const submit::TaskContainer& c : *containers) {
        if (!args.task.empty() && c.task != args.task) continue;
        found = true;
        for (const std::string& file : args.files) {
          auto r = submit::FetchContainerLog(cluster, http, c, file);
          std::string key = c.container_id + "/" + file;
          if (!r.ok()) {
            // While following, a file may still appear; it is missing once the job is over.
            if ((!args.follow || final) && !printed.count(key) && !missing.count(key)) {
              err << "ytf: " << r.status().message() << "\n";
              missing.insert(key);
            }
            continue;
          }
          size_t& done = printed[key];
          if (prefixed) {
            // Whole lines only while the job runs: a line is never split between two prefixes.
            size_t upto = r->size();
            if (!final) upto = r->rfind('\n') == std::string::npos ? 0 : r->rfind('\n') + 1;
            if (upto > done) {
              for (absl::string_view line :
                   absl::StrSplit(absl::string_view(*r).substr(done, upto - done), '\n')) {
                if (!line.empty()) out << c.task << " " << file << "| " << line << "\n";
              }
              done = upto;
            }
          } else if (r->size() > done) {
            if (done == 0) {
              out << "==> " << c.task << " " << file << " (" << c.container_id << " on "
                  << c.node_http_address << ") <==\n";
            }
            out << r->substr(done);
            if (!r->empty() && r->back() != '\n') out << "\n";
            done = r->size();
          }
        }
      }
      if (!found) {
        std::vector<std::string> tasks;
        for (const submit::TaskContainer& c : *containers) tasks.push_back(c.task);
        err << "ytf: " << args.app << " has no task '" << args.task
            << "'; its tasks are: " << absl::StrJoin(tasks, ", ") << "\n";
        return kExitUsage;
      }
    }
    out.flush();
    // A log that was asked for and cannot be shown is an error, after showing the others.
    if (!args.follow || final) return missing.empty() ? kExitOk : kExitInternal;
    absl::SleepFor(absl::Seconds(1));
  }
}

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
  return kExitOk;
}

}  // namespace

std::string TerminalSafe(absl::string_view text) {
  std::string out;
  const std::string valid = ToValidUtf8(text);
  for (size_t i = 0; i < valid.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(valid[i]);
    // C0 controls and DEL; C1 controls (U+0080..U+009F, two bytes C2 80..C2 9F in UTF-8), which
    // some terminals obey as escape sequences too.
    if (c < 0x20 || c == 0x7f) {
      out += '?';
    } else if (c == 0xC2 && i + 1 < valid.size() &&
               static_cast<unsigned char>(valid[i + 1]) <= 0x9F) {
      out += '?';
      ++i;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

namespace {

// Where the local backend keeps a job (LocalSubmitterOptions::work_root's default).
std::string LocalJobDir(const std::string& id) {
  return absl::StrCat(local::DefaultWorkRoot(), "/", id);
}

}  // namespace

std::string YtfUsage(absl::string_view command) {
  static constexpr char kCommon[] = R"(
Options of every command:
      --conf_dir <dir>      Hadoop configuration directory (default $HADOOP_CONF_DIR, else
                            $YARN_CONF_DIR, else $HADOOP_HOME/etc/hadoop)
      --principal <p>       Kerberos cluster: log in as this principal from --keytab
                            (default: the ticket cache, KRB5CCNAME / kinit)
      --keytab <file>       the keytab for --principal
  -D, --define key=value    override a Hadoop configuration key; repeatable
  -h, --help                this help
Options take their value as the next word or after '=' (--task=worker:1).
)";
  if (command == "status") {
    return absl::StrCat(R"(ytf status - a job's state

Usage: ytf status APP [--json] [--wait [--timeout <d>]]

Prints the state, the tracking URL, each job type's tasks (allocated, registered, running,
succeeded, failed; for a finished job as it ended) and the diagnostics.
      --json                the same as one JSON object
      --wait                first wait until the job has ended (ytf-submit --detach, then
                            this: what a scheduler runs to reap a job)
      --timeout <d>         stop waiting after this long (10m, 1h; default none): exit 3
Exit codes: 0 running or succeeded, 1 failed or killed, 2 bad usage, 3 cluster or job not found
(or, with --wait, still running when --timeout passed).
)",
                        kCommon);
  }
  if (command == "kill") {
    return absl::StrCat(R"(ytf kill - stop a job

Usage: ytf kill APP

The ApplicationMaster stops every task and the job ends KILLED (YARN kills it when its AM does
not answer). Exit codes: 0 killed, 1 the job had already finished (its final state is
printed), 2 bad usage, 3 cluster or job not found.
)",
                        kCommon);
  }
  if (command == "scale") {
    return absl::StrCat(R"(ytf scale - change the number of tasks of an elastic role

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
                        kCommon);
  }
  if (command == "suspend" || command == "resume") {
    return absl::StrCat(
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
)",
        kCommon);
  }
  if (command == "clean") {
    return absl::StrCat(R"(ytf clean - remove what your finished or abandoned jobs left in HDFS

Usage: ytf clean

Removes the staging directories (/user/<you>/.tony/staging/<cluster>/<app>) that nothing else will
remove: those of jobs YARN reports finished whose ApplicationMaster was killed before it could
clean up, and those of submissions that never reached YARN (their client died while uploading):
at once when the client that made it ran on this machine and is gone, else once an hour old
(-D tony.staging.orphan-age=<duration> changes that). ytf-submit does the same after each
submission. Prints what it removed.
Exit codes: 0 ok, 2 bad usage, 3 cluster not reachable.
)",
                        kCommon);
  }
  if (command == "list") {
    return absl::StrCat(R"(ytf list - libtony jobs on the cluster

Usage: ytf list [--all] [--all_users] [--tag <tag>]... [--json]

Lists the jobs libtony submitted as your user (whatever their application type) that are
still running.
      --all                 finished jobs too
      --all_users           every user's jobs, not only yours (a tag is anyone's to give: never
                            take another user's job for your own submission)
      --tag <tag>           only jobs carrying this YARN application tag (all of those given;
                            YARN keeps tags in lower case): a scheduler finds its submission
                            again by the tag it gave it (ytf-submit --tag)
      --json                one JSON array of {id, state, user, queue, name, type, tags}
Exit codes: 0 ok, 2 bad usage, 3 cluster not reachable.
)",
                        kCommon);
  }
  if (command == "events") {
    return absl::StrCat(R"(ytf events - a job's event log: what happened to it and its tasks, when

Usage: ytf events APP [--json]

Prints the job's event log (docs/events.md) from the history directory in HDFS
(tony.history.dir, default /tmp/tony-history), kept after the job: one line per event, with its
time since the first, the attempt, the task and its facts (containers, nodes, addresses, exit
codes, stderr tails, restart reasons, the outcome). While the job runs it shows what the
ApplicationMaster has written so far (it writes every 2 s).
      --json                the log's lines as they are (JSON objects, schema in docs/events.md)
A line that is not JSON (the last one, cut short when an AM was killed mid-write) is named on
stderr and skipped.
Exit codes: 0 ok, 2 bad usage, 3 cluster not reachable or no event log for the job.
)",
                        kCommon);
  }
  if (command == "history") {
    return absl::StrCat(R"(ytf history - finished and running jobs from their event logs

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
      --init_dir            make the history directory for every user's ApplicationMaster
                            and exit, run once by an HDFS admin: mode 1777, owned by the
                            HDFS superuser (AMs refuse a shared directory another user
                            owns); run it as the superuser
      --group <g>           with --init_dir: the directory's group, the history server's
                            (logs are 0640 and take the directory's group)
      --local               this user's local jobs (ytf-submit --local) instead, from
                            $TMPDIR/tony-jobs-<uid>/<id>/events.jsonl; needs no cluster
Exit codes: 0 ok, 2 bad usage, 3 the directory or the server cannot be read.
)",
                        kCommon);
  }
  if (command == "history-server") {
    return absl::StrCat(R"(ytf history-server - a web server over the jobs' event logs

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
  /jobs/<app id>/tensorboard      TensorBoard over an ended job's output path, started on
                      demand (with --tensorboard_command): a redirect to it
  /metrics            Prometheus text: jobs by state, scans, logs read, requests
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
Exit codes: 0 stopped by a signal, 2 bad usage (a keytab without the key included), 3 the
directory cannot be read or the port cannot be had.
)",
                        kCommon);
  }
  if (command == "logs") {
    return absl::StrCat(R"(ytf logs - task logs from the NodeManagers

Usage: ytf logs APP [--task <task>] [--file <name>]... [--follow]

      --task <task>         one task: worker:1, ps:0, am (the ApplicationMaster); after a
                            whole-job restart the earlier attempts' as worker:1@1, am@1
                            (default: every task)
      --file <name>         stdout, stderr (default both) or another file of the container's
                            log directory; repeatable
  -f, --follow              keep printing as the logs grow, until the job ends; with several
                            logs each line starts with "<task> <file>| "
Exit codes: 0 ok, 2 bad usage or no such task, 3 a log asked for is not available (the others
are printed), or the cluster or job not found.
)",
                        kCommon);
  }
  return absl::StrCat(R"(ytf - follow and control libtony jobs on YARN

Usage: ytf status APP [--json]     state, tracking URL, per-job progress and diagnostics
       ytf kill APP                stop the job (it ends KILLED)
       ytf scale APP worker=4      an elastic role's new number of tasks
       ytf suspend APP             stop every task and release its containers (SUSPENDED)
       ytf resume APP              ask for a suspended job's tasks again (from checkpoints)
       ytf list [--all] [--json]   your libtony jobs (running; --all: finished too)
       ytf logs APP [--task worker:1] [--file stderr] [--follow]
                                   task logs from the NodeManagers (--task am: the AM's)
       ytf events APP [--json]     the job's event log: each task's life, restarts, the outcome
       ytf clean                   remove the HDFS staging your finished or abandoned jobs left
       ytf history [--state FAILED] [--json]
                                   jobs from their event logs, kept after YARN forgets them
       ytf history-server [--port 18890]
                                   a web server over the event logs: job list, job pages
       ytf <command> --help        a command's options
       ytf --version               print the version

Local jobs (ytf-submit --local) are followed by the ytf-submit that runs them; their logs and
event log (events.jsonl) are in $TMPDIR/tony-jobs-<uid>/<id>/ (default /tmp).
)",
                      kCommon,
                      "Exit codes: 0 ok, 1 the job failed or was killed (status) or was already "
                      "finished (kill),\n"
                      "            2 bad usage, 3 cluster or job not found, or a log not "
                      "available.\n");
}

int RunYtf(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  auto parsed = Parse(args);
  if (!parsed.ok()) {
    err << "ytf: " << parsed.status().message() << "\n";
    return kExitUsage;
  }
  if (parsed->help) {
    out << YtfUsage(parsed->command);
    return kExitOk;
  }
  if (parsed->version) {
    out << "ytf " << TONY_VERSION_STRING << "\n";
    return kExitOk;
  }
  yarn::ApplicationId id;
  if (absl::StartsWith(parsed->app, "local_")) {
    // Local jobs live only as long as their ytf-submit, which shows their progress.
    err << "ytf: " << parsed->app << " is a local job (--local): ytf follows YARN jobs only; "
        << "its ytf-submit shows its progress and stops it on Ctrl-C, and its logs and event log "
           "(events.jsonl) are in "
        << LocalJobDir(parsed->app) << "/\n";
    return kExitUsage;
  }
  if (!parsed->app.empty()) {
    auto p = yarn::ParseApplicationId(parsed->app);
    if (!p.ok()) {
      err << "ytf: '" << parsed->app << "' is not an application id; use e.g. "
          << "application_1700000000000_0001\n";
      return kExitUsage;
    }
    id = *p;
  }
  if (parsed->command == "history" && !parsed->history.server.empty()) {
    return RunHistory(parsed->history, nullptr, out, err);  // no cluster needed
  }
  if ((parsed->command == "history" || parsed->command == "history-server") &&
      parsed->history.local) {
    if (auto q = HistoryQueryString(parsed->history); !q.ok()) {
      err << "ytf: " << q.status().message() << " (see ytf history --help)\n";
      return kExitUsage;
    }
    return parsed->command == "history" ? RunHistory(parsed->history, nullptr, out, err)
                                        : RunHistoryServer(parsed->history, nullptr, out, err);
  }
  if (parsed->command == "history") {
    // Bad filters are bad usage before anything is contacted.
    if (auto q = HistoryQueryString(parsed->history); !q.ok()) {
      err << "ytf: " << q.status().message() << " (see ytf history --help)\n";
      return kExitUsage;
    }
  }
  auto connected = submit::ConnectYarnCluster(parsed->cluster);
  if (!connected.ok()) {
    err << "ytf: " << connected.status().message() << "\n";
    // Flags that do not fit together (--principal without --keytab) are bad usage.
    return absl::IsInvalidArgument(connected.status()) ? kExitUsage : kExitInternal;
  }
  auto cluster = std::make_shared<submit::YarnCluster>(std::move(*connected));

  if (parsed->command == "clean") {
    submit::StagingSweepOptions o;
    o.max_entries = 100000;  // asked for: all of them
    auto swept = submit::SweepStaging(*cluster, o);
    if (!swept.ok()) {
      err << "ytf: " << swept.status().message() << "\n";
      return kExitInternal;
    }
    for (const std::string& app : swept->removed) out << "removed the staging of " << app << "\n";
    out << swept->removed.size() << " staging directories removed, " << swept->kept
        << " kept (jobs still running or being submitted)\n";
    return kExitOk;
  }
  if (parsed->command == "list") {
    ListOptions options;
    options.include_finished = parsed->all;
    options.tags = parsed->tags;
    options.all_users = parsed->all_users;
    auto found = submit::ListYarnApplications(*cluster, options);
    if (!found.ok()) {
      err << "ytf: " << found.status().message() << "\n";
      return kExitInternal;
    }
    if (parsed->json) {
      http::Json list = http::Json::array();
      for (const ApplicationSummary& a : *found) {
        list.push_back({{"id", a.id},
                        {"state", AppStateName(a.state)},
                        {"user", a.user},
                        {"queue", a.queue},
                        {"name", a.name},
                        {"type", a.type},
                        {"tags", a.tags}});
      }
      // Other users' names may be any bytes: invalid UTF-8 becomes U+FFFD instead of an
      // exception out of the JSON writer.
      out << list.dump(2, ' ', false, http::Json::error_handler_t::replace) << "\n";
      return kExitOk;
    }
    out << absl::StrFormat("%-32s %-10s %-10s %-12s %s\n", "APPLICATION", "STATE", "USER", "QUEUE",
                           "NAME");
    // Users, queues and names are other users' strings: no terminal escape sequence of theirs
    // reaches this terminal.
    for (const ApplicationSummary& a : *found) {
      out << absl::StrFormat("%-32s %-10s %-10s %-12s %s\n", TerminalSafe(a.id),
                             AppStateName(a.state), TerminalSafe(a.user), TerminalSafe(a.queue),
                             TerminalSafe(a.name));
    }
    return kExitOk;
  }

  if (parsed->command == "events") return Events(*cluster, parsed->app, parsed->json, out, err);
  if (parsed->command == "history") return RunHistory(parsed->history, cluster.get(), out, err);
  if (parsed->command == "history-server") {
    return RunHistoryServer(parsed->history, cluster.get(), out, err);
  }

  auto opened = submit::OpenYarnApplicationById(cluster, parsed->app);
  if (!opened.ok()) {
    err << "ytf: " << parsed->app << ": " << opened.status().message() << "\n";
    return kExitInternal;
  }
  std::unique_ptr<Application> app = *std::move(opened);
  if (parsed->command == "status" && parsed->wait) {
    auto final = app->Wait(parsed->wait_timeout);
    if (!final.ok()) {
      err << "ytf: " << parsed->app << ": " << final.status().message() << "\n";
      return kExitInternal;
    }
  }
  if (parsed->command == "status") return Status(std::move(app), parsed->json, out, err);
  if (parsed->command == "scale") return Scale(*parsed, *app, out, err);
  if (parsed->command == "suspend" || parsed->command == "resume") {
    return Suspend(*parsed, *app, out, err);
  }
  if (parsed->command == "kill") {
    int code = kExitOk;
    if (!StatusBeforeChange("kill", parsed->app, *app, err, &code).ok()) return code;
    if (absl::Status s = app->Kill(); !s.ok()) {
      err << "ytf: kill " << parsed->app << ": " << s.message() << "\n";
      return kExitInternal;
    }
    auto s = app->Status();
    out << parsed->app << " " << (s.ok() ? AppStateName(s->state) : "KILLED") << "\n";
    return kExitOk;
  }
  return Logs(*parsed, *cluster, id, *app, out, err);
}

}  // namespace tony::cli
