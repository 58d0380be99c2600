// Copyright libtony authors.

#include "cli/history_command.h"

#include <unistd.h>

#include <cstdlib>
#include <memory>
#include <optional>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/synchronization/notification.h"
#include "cli/submit_command.h"
#include "cli/ytf_command.h"
#include "common/egress.h"
#include "common/file_util.h"
#include "common/logging.h"
#include "common/signal_watcher.h"
#include "common/status_macros.h"
#include "conf/history_keys.h"
#include "history/hdfs_event_sink.h"
#include "history/history_server.h"
#include "history/job_history.h"
#include "history/tensorboard_launcher.h"
#include "history/usage_report.h"
#include "http/client.h"
#include "http/json.h"
#include "ipc/kerberos.h"
#include "ipc/spnego_acceptor.h"
#include "local/local_am.h"
#include "spec/access_control.h"
#include "submit/contract.h"
#include "submit/yarn_submitter.h"
#include "yarn/records.h"

namespace tony::cli {
namespace {

std::string FormEncode(absl::string_view in) {
  std::string out;
  for (char c : in) {
    if (absl::ascii_isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~' || c == ':') {
      out += c;
    } else {
      absl::StrAppend(&out, absl::StrFormat("%%%02X", static_cast<unsigned char>(c)));
    }
  }
  return out;
}

absl::StatusOr<std::string> HistoryDir(const HistoryArgs& args, submit::YarnCluster& cluster) {
  if (!args.history_dir.empty()) return args.history_dir;
  auto dir = ClusterHistoryDir(cluster);
  if (!dir.ok()) {
    return absl::Status(dir.status().code(),
                        absl::StrCat(dir.status().message(), "; give one with --history_dir"));
  }
  return dir;
}

// The list as JSON ({"total", "jobs": [...]}) from a history server.
absl::StatusOr<http::Json> ListFromServer(const std::string& server, const std::string& query) {
  http::Client client;
  http::Request request;
  request.negotiate = true;  // a server with --spnego_keytab asks for Kerberos
  std::string base = server;
  while (absl::EndsWith(base, "/")) base.pop_back();
  request.url = absl::StrCat(base, "/api/jobs?", query);
  auto response = client.Do(request);
  if (!response.ok()) return response.status();
  if (response->status != 200) {
    return absl::UnavailableError(
        absl::StrCat("the history server at ", server, " answered ", response->status));
  }
  return http::ParseJson(response->body, "history server's job list");
}

// The local backend's jobs with --local, else the cluster's history directory in HDFS.
absl::StatusOr<std::unique_ptr<history::HistoryStore>> OpenStore(const HistoryArgs& args,
                                                                 submit::YarnCluster* cluster) {
  if (args.local) {
    // The user's own, private jobs directory, or nothing: another local user could have made
    // $TMPDIR/tony-jobs-<uid> first and filled it with logs of their choosing.
    const std::string root = local::DefaultWorkRoot();
    TONY_RETURN_IF_ERROR(MakePrivateDirectory(root));
    return history::LocalJobsHistoryStore(root);
  }
  absl::StatusOr<std::string> dir = HistoryDir(args, *cluster);
  if (!dir.ok()) return dir.status();
  return history::HdfsHistoryStore(cluster->hdfs.get(), *dir);
}

absl::StatusOr<http::Json> ListFromDirectory(const HistoryArgs& args, submit::YarnCluster* cluster,
                                             const std::string& query) {
  absl::StatusOr<std::unique_ptr<history::HistoryStore>> store = OpenStore(args, cluster);
  if (!store.ok()) return store.status();
  const std::string where = (*store)->Describe();
  history::HistoryServer reader(*std::move(store), {});
  if (absl::Status s = reader.Scan(); !s.ok()) {
    // No local job yet: an empty list, not an error.
    if (args.local && absl::IsNotFound(s))
      return http::Json{{"total", 0}, {"jobs", http::Json::array()}};
    return absl::Status(s.code(), absl::StrCat("history directory ", where, ": ", s.message()));
  }
  httpd::Reply reply = reader.Handle(absl::StrCat("/api/jobs?", query));
  return http::ParseJson(reply.body, "job list");
}

void PrintJobList(const http::Json& list, std::ostream& out) {
  out << absl::StrFormat("%-32s %-10s %-10s %-10s %-20s %5s %s\n", "APPLICATION", "STATE", "USER",
                         "QUEUE", "STARTED (UTC)", "TASKS", "NAME");
  const http::Json* jobs = http::JsonField(list, "jobs");
  int shown = 0;
  if (jobs != nullptr && jobs->is_array()) {
    for (const http::Json& j : *jobs) {
      auto s = [&j](const char* key) {
        const http::Json* v = http::JsonField(j, key);
        return v != nullptr && v->is_string() ? TerminalSafe(v->get<std::string>()) : "";
      };
      const http::Json* tasks = http::JsonField(j, "tasks");
      std::string started = s("started").substr(0, 19);
      for (char& c : started) c = c == 'T' ? ' ' : c;
      out << absl::StrFormat(
          "%-32s %-10s %-10s %-10s %-20s %5d %s\n", s("app_id"), s("state"), s("user"), s("queue"),
          started, tasks != nullptr && tasks->is_number() ? tasks->get<int>() : 0, s("name"));
      ++shown;
    }
  }
  const http::Json* total = http::JsonField(list, "total");
  out << shown << " of " << (total != nullptr && total->is_number() ? total->get<int>() : shown)
      << " matching jobs\n";
}

}  // namespace

absl::StatusOr<std::string> ClusterHistoryDir(const submit::YarnCluster& cluster) {
  auto dir = cluster.conf.Get(history::kHistoryDirKey, history::kDefaultHistoryDir);
  if (!dir.ok() || dir->empty()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "no history directory (", history::kHistoryDirKey, " is empty): jobs keep no event log"));
  }
  return *dir;
}

absl::StatusOr<std::string> HistoryQueryString(const HistoryArgs& args) {
  std::string query;
  for (const auto& [key, value] : args.filters) {
    absl::StrAppend(&query, query.empty() ? "" : "&", key, "=", FormEncode(value));
  }
  if (absl::StatusOr<history::HistoryQuery> q = history::ParseHistoryQuery(query); !q.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("--", q.status().message()));
  }
  return query;
}

int RunHistory(const HistoryArgs& args, submit::YarnCluster* cluster, std::ostream& out,
               std::ostream& err) {
  absl::StatusOr<std::string> query = HistoryQueryString(args);
  if (!query.ok()) {
    err << "ytf: " << query.status().message() << " (see ytf history --help)\n";
    return kExitUsage;
  }
  absl::StatusOr<http::Json> list = args.server.empty() ? ListFromDirectory(args, cluster, *query)
                                                        : ListFromServer(args.server, *query);
  if (!list.ok()) {
    err << "ytf: " << list.status().message() << "\n";
    return kExitInternal;
  }
  if (args.json) {
    out << list->dump(2, ' ', false, http::Json::error_handler_t::replace) << "\n";
  } else {
    PrintJobList(*list, out);
  }
  return kExitOk;
}

namespace {

// Every job's summary (with its usage) in the directory whose start `options` may keep. A log
// last changed before `from` holds a job started before it: not read.
absl::StatusOr<std::vector<history::JobSummary>> ReadUsage(const history::HistoryStore& store,
                                                           const history::UsageOptions& options) {
  absl::StatusOr<std::vector<history::HistoryFile>> listing = store.List();
  if (!listing.ok()) return listing.status();
  std::vector<history::JobSummary> jobs;
  const history::HistoryServerOptions defaults;
  for (const history::HistoryFile& f : *listing) {
    std::optional<std::string> app = history::AppIdOfLogName(f.name);
    if (!app.has_value()) continue;
    if (options.from != absl::InfinitePast() &&
        absl::FromUnixMillis(f.modification_time_ms) < options.from) {
      continue;
    }
    absl::StatusOr<std::string> text = store.Read(f.name, defaults.max_log_bytes);
    if (!text.ok()) {
      // Another user's log this user may not read, or one deleted meanwhile: left out, said.
      TONY_LOG(WARNING) << "ytf usage: " << f.name << " left out: " << text.status().message();
      continue;
    }
    jobs.push_back(history::ReadJobHistory(*app, *text, f.owner).summary);
  }
  return jobs;
}

// The summaries a history server's index keeps (those the asker may view), a page of 1000 at a
// time: no log is read.
absl::StatusOr<std::vector<history::JobSummary>> UsageFromServer(
    const std::string& server, const history::UsageOptions& options) {
  std::string dates;
  if (options.from != absl::InfinitePast()) {
    absl::StrAppend(&dates, "&from=", FormEncode(history::HistoryTime(options.from)));
  }
  if (options.to != absl::InfiniteFuture()) {
    absl::StrAppend(&dates, "&to=", FormEncode(history::HistoryTime(options.to)));
  }
  std::vector<history::JobSummary> jobs;
  constexpr int kPage = 1000;  // the server's largest
  for (int offset = 0;; offset += kPage) {
    absl::StatusOr<http::Json> list =
        ListFromServer(server, absl::StrCat("limit=", kPage, "&offset=", offset, dates));
    if (!list.ok()) return list.status();
    const http::Json* page = http::JsonField(*list, "jobs");
    if (page == nullptr || !page->is_array()) {
      return absl::UnavailableError(
          absl::StrCat("the history server at ", server, " answered a job list without jobs"));
    }
    for (const http::Json& j : *page) jobs.push_back(history::SummaryFromJson(j));
    if (page->size() < static_cast<size_t>(kPage)) return jobs;
  }
}

}  // namespace

absl::Status CheckUsageArgs(const HistoryArgs& args) {
  if (args.json && args.csv) {
    return absl::InvalidArgumentError("--json and --csv: give one of them");
  }
  if (args.usage.from >= args.usage.to) {
    return absl::InvalidArgumentError("--from must be before --to");
  }
  return absl::OkStatus();
}

int RunUsage(const HistoryArgs& args, submit::YarnCluster* cluster, std::ostream& out,
             std::ostream& err) {
  if (absl::Status s = CheckUsageArgs(args); !s.ok()) {
    err << "ytf: " << s.message() << " (see ytf usage --help)\n";
    return kExitUsage;
  }
  absl::StatusOr<std::vector<history::JobSummary>> jobs;
  if (!args.server.empty()) {
    jobs = UsageFromServer(args.server, args.usage);
  } else {
    absl::StatusOr<std::unique_ptr<history::HistoryStore>> store = OpenStore(args, cluster);
    if (!store.ok()) {
      err << "ytf: " << store.status().message() << "\n";
      return kExitInternal;
    }
    jobs = ReadUsage(**store, args.usage);
    if (args.local && absl::IsNotFound(jobs.status())) jobs.emplace();  // no local job yet
    if (!jobs.ok()) {
      jobs = absl::Status(
          jobs.status().code(),
          absl::StrCat("history directory ", (*store)->Describe(), ": ", jobs.status().message()));
    }
  }
  if (!jobs.ok()) {
    err << "ytf: " << jobs.status().message() << "\n";
    return kExitInternal;
  }
  const history::UsageReport report = history::SummarizeUsage(*jobs, args.usage);
  out << (args.json  ? history::UsageJson(report, args.usage.by)
          : args.csv ? history::UsageCsv(report, args.usage.by)
                     : history::UsageTable(report, args.usage.by));
  return kExitOk;
}

namespace {

bool IsLoopback(const std::string& host) {
  return absl::StartsWith(host, "127.") || host == "::1" || host == "localhost";
}

// Who sees every job once users sign in: --admin_acl, else as YARN decides it (everyone unless
// yarn.acl.enable, then yarn.admin.acl, whose default is everyone too).
absl::Status SetUpAdmins(const HistoryArgs& args, const submit::YarnCluster* cluster,
                         history::HistoryServerOptions* options) {
  std::string acl = "*";
  if (!args.admin_acl.empty()) {
    acl = args.admin_acl;
  } else if (cluster != nullptr) {
    absl::StatusOr<bool> enabled = cluster->conf.GetBool("yarn.acl.enable", false);
    if (!enabled.ok()) return enabled.status();
    if (*enabled) acl = cluster->conf.GetRaw("yarn.admin.acl").value_or("*");
  }
  if (auto parsed = spec::ParseAccessControlList(acl, "--admin_acl"); !parsed.ok()) {
    return parsed.status();
  }
  if (absl::StripAsciiWhitespace(acl) == "*") {
    TONY_LOG(WARNING) << "every signed-in user sees every job (the admins are everyone: "
                      << (args.admin_acl.empty() ? "yarn.acl.enable is off or yarn.admin.acl is *"
                                                 : "--admin_acl *")
                      << "); name the admins with --admin_acl to keep jobs to their viewers";
  }
  options->admin_acl = acl;
  return absl::OkStatus();
}

// SPNEGO for the server's pages, when asked for; refused without it on a Kerberos cluster if
// the pages would be reachable beyond this machine (they show every user's jobs).
absl::Status SetUpAuthentication(const HistoryArgs& args, const submit::YarnCluster* cluster,
                                 history::HistoryServerOptions* options) {
  if (args.spnego_keytab.empty()) {
    if (!args.spnego_principal.empty()) {
      return absl::InvalidArgumentError("--spnego_principal needs --spnego_keytab");
    }
    if (!args.admin_acl.empty()) {
      return absl::InvalidArgumentError(
          "--admin_acl needs --spnego_keytab (without sign-in everyone sees every job)");
    }
    const bool loopback = absl::StartsWith(args.listen_host, "127.") || args.listen_host == "::1" ||
                          args.listen_host == "localhost";
    if (cluster != nullptr && cluster->kerberos && !loopback) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--listen_host ", args.listen_host,
          ": on a Kerberos cluster the pages need --spnego_keytab (the HTTP/host@REALM keys) "
          "when they are reachable beyond this machine"));
    }
    return absl::OkStatus();
  }
  const std::string host =
      args.listen_host == "0.0.0.0" ? LocalHostName("localhost") : args.listen_host;
  const std::string principal = ipc::ResolveServerPrincipal(args.spnego_principal, host);
  absl::StatusOr<std::unique_ptr<ipc::SpnegoAcceptor>> acceptor =
      ipc::SpnegoAcceptor::Create(args.spnego_keytab, principal);
  if (!acceptor.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--spnego_keytab: ", acceptor.status().message()));
  }
  std::shared_ptr<ipc::SpnegoAcceptor> shared = *std::move(acceptor);
  // Users of this realm only: a short name ("alice") means this realm's alice, and a trusted
  // realm's alice@OTHER must not pass for her (Hadoop's default auth_to_local rule).
  const size_t at = principal.rfind('@');
  const std::string realm = at == std::string::npos ? "" : principal.substr(at + 1);
  options->authenticate =
      [shared, realm](absl::string_view authorization) -> absl::StatusOr<history::HttpLogin> {
    absl::StatusOr<ipc::SpnegoAcceptor::Accepted> who = shared->Accept(authorization);
    if (!who.ok()) return who.status();
    if (!realm.empty() && !absl::EndsWith(who->principal, absl::StrCat("@", realm))) {
      return absl::PermissionDeniedError(
          absl::StrCat(who->principal, " is not of this server's realm ", realm));
    }
    return history::HttpLogin{who->principal, who->reply};
  };
  return SetUpAdmins(args, cluster, options);
}

// TensorBoard on demand, when asked for. It has no sign-in of its own: with SPNEGO on, only
// where nothing beyond this machine reaches it.
absl::Status SetUpTensorBoard(const HistoryArgs& args, const submit::YarnCluster* cluster,
                              history::HistoryServerOptions* options) {
  if (args.tensorboard_command.empty()) return absl::OkStatus();
  if (options->authenticate && !IsLoopback(args.listen_host)) {
    return absl::InvalidArgumentError(
        "--tensorboard_command: TensorBoard has no sign-in of its own, so with --spnego_keytab "
        "it is started only for a server on loopback (--listen_host 127.0.0.1)");
  }
  history::TensorBoardLauncherOptions tb;
  tb.command = args.tensorboard_command;
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  tb.cache_dir = absl::StrCat(xdg != nullptr && *xdg != '\0' ? xdg : HomeDirectory() + "/.cache",
                              "/libtony/history-tensorboard");
  tb.host = args.listen_host;  // 0.0.0.0: redirects name the host the browser used
  options->tensorboard =
      history::MakeTensorBoardLauncher(tb, cluster != nullptr ? cluster->hdfs.get() : nullptr);
  options->tensorboard_pool.idle = args.tensorboard_idle;
  options->tensorboard_pool.max_running = args.tensorboard_max;
  return absl::OkStatus();
}

// The job page's log links: each task's NodeManager, then the job's user's aggregated logs.
history::TaskLogReader TaskLogsOf(const submit::YarnCluster* cluster) {
  return [cluster](const history::TaskLogRequest& r,
                   absl::Time deadline) -> absl::StatusOr<history::TaskLogText> {
    TONY_ASSIGN_OR_RETURN(yarn::ApplicationId app, yarn::ParseApplicationId(r.app_id));
    const submit::TaskContainer container{r.task, r.container, r.node_http};
    TONY_ASSIGN_OR_RETURN(TaskLog log,
                          submit::ReadOwnersContainerLog(*cluster, app, r.owner, container, r.file,
                                                         r.tail_bytes, deadline));
    return history::TaskLogText{std::move(log.contents), std::move(log.source)};
  };
}

}  // namespace

namespace {

// --init_dir: an admin's one-time step, then exit.
int InitDir(const HistoryArgs& args, submit::YarnCluster* cluster, std::ostream& out,
            std::ostream& err) {
  if (args.local || cluster == nullptr) {
    err << "ytf: history-server: --init_dir makes the directory in HDFS; drop --local\n";
    return kExitUsage;
  }
  absl::StatusOr<std::string> dir = HistoryDir(args, *cluster);
  if (!dir.ok()) {
    err << "ytf: history-server: " << dir.status().message() << "\n";
    return kExitUsage;
  }
  absl::StatusOr<hdfs::FileStatus> made = history::InitHistoryDir(*cluster->hdfs, *dir, args.group);
  if (!made.ok()) {
    err << "ytf: history-server: --init_dir " << *dir << ": " << made.status().message()
        << " (run it as an HDFS admin)\n";
    return kExitInternal;
  }
  out << absl::StrFormat("history directory %s: mode %04o, owner %s, group %s\n", *dir,
                         made->permission, made->owner, made->group);
  return kExitOk;
}

}  // namespace

int RunHistoryServer(const HistoryArgs& args, submit::YarnCluster* cluster, std::ostream& out,
                     std::ostream& err) {
  if (!args.group.empty() && !args.init_dir) {
    err << "ytf: history-server: --group goes with --init_dir (the directory's group)\n";
    return kExitUsage;
  }
  if (args.init_dir) return InitDir(args, cluster, out, err);
  history::HistoryServerOptions options;
  absl::Status set_up = SetUpAuthentication(args, cluster, &options);
  if (set_up.ok()) set_up = SetUpTensorBoard(args, cluster, &options);
  if (absl::Status s = set_up; !s.ok()) {
    err << "ytf: history-server: " << s.message() << "\n";
    return kExitUsage;
  }
  SignalWatcher signals;  // before the server's threads, which inherit its mask
  absl::StatusOr<std::unique_ptr<history::HistoryStore>> store = OpenStore(args, cluster);
  if (!store.ok()) {
    err << "ytf: " << store.status().message() << "\n";
    return kExitUsage;
  }
  const std::string where = (*store)->Describe();
  options.listen_host = args.listen_host;
  options.port = args.port;
  options.scan_interval = args.scan_interval;
  options.retention.max_age = args.max_age;
  options.retention.max_jobs = args.max_jobs;
  options.index_file = args.index_file;
  if (cluster != nullptr && !args.local) options.task_logs = TaskLogsOf(cluster);
  history::HistoryServer server(*std::move(store), options);
  if (absl::Status s = server.Start(); !s.ok()) {
    err << "ytf: history-server: " << s.message() << "\n";
    return kExitInternal;
  }
  absl::Notification stop;
  signals.Start([&stop](int) {
    if (!stop.HasBeenNotified()) stop.Notify();
  });
  out << "history server: http://" << args.listen_host << ":" << server.port() << "/ over " << where
      << (options.authenticate ? " (Kerberos sign-in)" : "") << " (scanned every "
      << absl::FormatDuration(args.scan_interval) << "); Ctrl-C stops it\n"
      << std::flush;
  stop.WaitForNotification();
  out << "history server: stopping\n" << std::flush;
  signals.Stop();
  server.Stop();
  return kExitOk;
}

}  // namespace tony::cli
