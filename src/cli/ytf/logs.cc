// Copyright libtony authors.
//
// ytf logs: task logs from the NodeManagers, once or followed.

#include <map>
#include <set>

#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "cli/submit_command.h"
#include "cli/ytf/subcommand.h"
#include "http/client.h"

namespace tony::cli::ytf {
namespace {

// The ApplicationMaster's own files are tony-am.stdout/tony-am.stderr (its launch command
// names them), in the container of "am" and, after a restart, "am@1", ...
int Logs(const Args& args, submit::YarnCluster& cluster, Application& app, std::ostream& out,
         std::ostream& err) {
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

int Run(const Args& args, std::ostream& out, std::ostream& err) {
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
constexpr const Flag* kFlags[] = {&kTask, &kFile, &kFollow};

}  // namespace

const Command& LogsCommand() {
  static const Command kCommand = {
      "logs",
      "ytf logs APP [--task worker:1] [--file stderr] [--follow]\n"
      "                            task logs from the NodeManagers (--task am: the AM's)\n",
      R"(ytf logs - task logs from the NodeManagers

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
      kFlags,
      AppOperand,
      Run};
  return kCommand;
}

}  // namespace tony::cli::ytf
