// Copyright libtony authors.
//
// ytf logs: task logs from the NodeManagers (or YARN's aggregated logs in HDFS), once or
// followed.

#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "cli/submit_command.h"
#include "cli/ytf/subcommand.h"
#include "http/client.h"
#include "submit/aggregated_logs.h"
#include "yarn/records.h"

namespace tony::cli::ytf {
namespace {

// The ApplicationMaster's own files are tony-am.stdout/tony-am.stderr (its launch command
// names them), in the container of "am" and, after a restart, "am@1", ...
// One log's contents and where they came from ("on <node>", "from the aggregated logs in
// hdfs://...").
struct Fetched {
  std::string contents;
  std::string where;
};

// From the NodeManager; once the job ended and the NodeManager's copy is gone (or with
// --aggregated), from YARN's aggregated logs in HDFS.
absl::StatusOr<Fetched> Fetch(const Args& args, submit::YarnCluster& cluster, http::Client& http,
                              submit::AggregatedLogReader& aggregated,
                              const submit::TaskContainer& c, const std::string& file, bool final) {
  absl::Status nm_error;
  if (!args.aggregated) {
    auto r = submit::FetchContainerLog(cluster, http, c, file);
    if (r.ok()) return Fetched{*std::move(r), absl::StrCat("on ", c.node_http_address)};
    if (!final || absl::IsDeadlineExceeded(r.status())) return r.status();
    nm_error = r.status();
  }
  auto a = aggregated.Read(c, file, absl::Now() + absl::Minutes(2));
  if (a.ok()) return Fetched{std::move(a->contents), "from the aggregated logs in " + a->source};
  if (nm_error.ok()) return a.status();
  return absl::Status(nm_error.code(),
                      absl::StrCat(nm_error.message(), "; ", a.status().message()));
}

int Logs(const Args& args, submit::YarnCluster& cluster, Application& app, std::ostream& out,
         std::ostream& err) {
  http::Client http;
  auto id = yarn::ParseApplicationId(args.app);
  if (!id.ok()) {
    err << "ytf: " << id.status().message() << "\n";
    return kExitUsage;
  }
  submit::AggregatedLogReader aggregated(cluster, *id, "", {});
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
          auto r = Fetch(args, cluster, http, aggregated, c, file, final);
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
            const std::string& text = r->contents;
            size_t upto = text.size();
            if (!final) upto = text.rfind('\n') == std::string::npos ? 0 : text.rfind('\n') + 1;
            if (upto > done) {
              for (absl::string_view line :
                   absl::StrSplit(absl::string_view(text).substr(done, upto - done), '\n')) {
                if (!line.empty()) out << c.task << " " << file << "| " << line << "\n";
              }
              done = upto;
            }
          } else if (r->contents.size() > done) {
            const std::string& text = r->contents;
            if (done == 0) {
              out << "==> " << c.task << " " << file << " (" << c.container_id << " " << r->where
                  << ") <==\n";
            }
            out << text.substr(done);
            if (!text.empty() && text.back() != '\n') out << "\n";
            done = text.size();
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

int RunLogs(const Args& args, std::ostream& out, std::ostream& err) {
  if (args.aggregated && args.follow) {
    err << "ytf: --aggregated and --follow exclude each other: YARN aggregates a job's logs "
           "once it has ended\n";
    return kExitUsage;
  }
  int code = kExitOk;
  std::shared_ptr<submit::YarnCluster> cluster;
  std::unique_ptr<Application> app = OpenApplication(args, err, &code, &cluster);
  if (app == nullptr) return code;
  return Logs(args, *cluster, *app, out, err);
}

constexpr Flag kTask = {0, "task", true, Set<&Args::task>};
// The first --file replaces the default (stdout and stderr).
absl::Status File(absl::string_view, const std::string& value, Args& args) {
  if (!args.files_given) args.files.clear();
  args.files_given = true;
  args.files.push_back(value);
  return absl::OkStatus();
}

constexpr Flag kFile = {0, "file", true, File};
constexpr Flag kFollow = {'f', "follow", false, Set<&Args::follow>};
constexpr Flag kAggregated = {0, "aggregated", false, Set<&Args::aggregated>};
constexpr const Flag* kLogsFlags[] = {&kTask, &kFile, &kFollow, &kAggregated};

}  // namespace

const Command& LogsCommand() {
  static const Command kCommand = {
      "logs",
      "ytf logs APP [--task worker:1] [--file stderr] [--follow] [--aggregated]\n"
      "                            task logs from the NodeManagers, or YARN's aggregated logs\n"
      "                            in HDFS (--task am: the AM's)\n",
      R"(ytf logs - task logs from the NodeManagers or YARN's aggregated logs

Usage: ytf logs APP [--task <task>] [--file <name>]... [--follow] [--aggregated]

      --task <task>         one task: worker:1, ps:0, am (the ApplicationMaster); after a
                            whole-job restart the earlier attempts' as worker:1@1, am@1
                            (default: every task)
      --file <name>         stdout, stderr (default both) or another file of the container's
                            log directory; repeatable
  -f, --follow              keep printing as the logs grow, until the job ends; with several
                            logs each line starts with "<task> <file>| "
      --aggregated          read YARN's aggregated logs in HDFS only (yarn.log-aggregation-
                            enable: the NodeManagers upload a job's logs when it ends and drop
                            their copies); by default a log the NodeManager no longer has is
                            read from there once the job ended. Each log's header says which
                            it read: "on <node>" or "from the aggregated logs in hdfs://..."
Exit codes: 0 ok, 2 bad usage or no such task, 3 a log asked for is not available (the others
are printed), or the cluster or job not found.
)",
      kLogsFlags,
      AppOperand,
      RunLogs};
  return kCommand;
}

}  // namespace tony::cli::ytf
