// Copyright libtony authors.

#include "cli/ytf_command.h"

#include <map>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "cli/submit_command.h"
#include "common/file_util.h"
#include "http/client.h"
#include "submit/contract.h"
#include "submit/yarn_submitter.h"

namespace tony::cli {
namespace {

struct YtfArgs {
  std::string command;
  std::string app;
  std::string task;                                       // logs --task
  std::vector<std::string> files = {"stdout", "stderr"};  // logs --file
  bool follow = false;
  bool all = false;  // list --all
  YarnSubmitterOptions cluster;
};

absl::Status Usage(absl::string_view msg) {
  return absl::InvalidArgumentError(absl::StrCat(msg, " (see ytf --help)"));
}

absl::StatusOr<YtfArgs> Parse(const std::vector<std::string>& args) {
  YtfArgs out;
  bool files_given = false;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    auto value = [&](absl::string_view flag) -> absl::StatusOr<std::string> {
      if (i + 1 >= args.size()) return Usage(absl::StrCat(flag, " needs a value"));
      return args[++i];
    };
    if (a == "--task") {
      auto v = value("--task");
      if (!v.ok()) return v.status();
      out.task = *v;
    } else if (a == "--file") {
      auto v = value("--file");
      if (!v.ok()) return v.status();
      if (!files_given) out.files.clear();
      files_given = true;
      out.files.push_back(*v);
    } else if (a == "--follow" || a == "-f") {
      out.follow = true;
    } else if (a == "--all") {
      out.all = true;
    } else if (a == "--conf_dir") {
      auto v = value("--conf_dir");
      if (!v.ok()) return v.status();
      out.cluster.conf_dir = *v;
    } else if (a == "-D") {
      auto v = value("-D");
      if (!v.ok()) return v.status();
      size_t eq = v->find('=');
      if (eq == std::string::npos || eq == 0) return Usage("-D: expected key=value");
      out.cluster.conf_overrides[v->substr(0, eq)] = v->substr(eq + 1);
    } else if (absl::StartsWith(a, "-")) {
      return Usage(absl::StrCat("unknown option '", a, "'"));
    } else if (out.command.empty()) {
      out.command = a;
    } else if (out.app.empty()) {
      out.app = a;
    } else {
      return Usage(absl::StrCat("unexpected argument '", a, "'"));
    }
  }
  if (out.command.empty()) return Usage("no command; use status, kill, list or logs");
  if (out.command != "status" && out.command != "kill" && out.command != "list" &&
      out.command != "logs") {
    return Usage(absl::StrCat("unknown command '", out.command, "'"));
  }
  if (out.command != "list" && out.app.empty()) {
    return Usage(
        absl::StrCat(out.command, " needs an application id, e.g. application_1700000000000_0001"));
  }
  return out;
}

std::unique_ptr<Application> Open(std::shared_ptr<submit::YarnCluster> cluster,
                                  const yarn::ApplicationId& id) {
  std::string dir = submit::LocalAppDir(id.ToString());
  // Only the submitting user has the secret: others see YARN's report without AM progress.
  return submit::OpenYarnApplication(std::move(cluster), id,
                                     ReadFileToString(dir + "/secret").value_or(""),
                                     ReadFileToString(dir + "/staging").value_or(""));
}

void PrintStatus(const ApplicationStatus& s, std::ostream& out) {
  out << s.id << "  " << AppStateName(s.state) << "\n";
  if (!s.tracking_url.empty()) out << "  tracking URL: " << s.tracking_url << "\n";
  if (!s.tensorboard_url.empty()) out << "  TensorBoard: " << s.tensorboard_url << "\n";
  for (const auto& [job, p] : s.progress) {
    out << absl::StrFormat(
        "  %-12s %d tasks: %d allocated, %d registered, %d running, %d succeeded, %d failed\n", job,
        p.total, p.allocated, p.registered, p.running, p.succeeded, p.failed);
  }
  if (!s.diagnostics.empty()) out << "  diagnostics: " << s.diagnostics << "\n";
}

int Status(std::unique_ptr<Application> app, std::ostream& out, std::ostream& err) {
  auto s = app->Status();
  if (!s.ok()) {
    err << "ytf: " << s.status().message() << "\n";
    return kExitInternal;
  }
  PrintStatus(*s, out);
  return s->state == AppState::kFailed || s->state == AppState::kKilled ? kExitJobFailed : kExitOk;
}

int Logs(const YtfArgs& args, submit::YarnCluster& cluster, Application& app, std::ostream& out,
         std::ostream& err) {
  http::Client http;
  std::map<std::string, size_t> printed;  // "container/file" -> bytes already shown
  while (true) {
    auto history = cluster.hdfs->ReadToString(submit::HistoryPath(cluster.user, args.app));
    auto status = app.Status();
    bool final = status.ok() && IsFinal(status->state);
    if (!history.ok()) {
      if (history.status().code() != absl::StatusCode::kNotFound || final || !args.follow) {
        err << "ytf: no task containers recorded for " << args.app << " ("
            << history.status().message() << ")\n";
        return kExitInternal;
      }
    } else {
      auto containers = submit::DecodeTaskContainers(*history);
      if (!containers.ok()) {
        err << "ytf: " << containers.status().message() << "\n";
        return kExitInternal;
      }
      bool found = false;
      for (const submit::TaskContainer& c : *containers) {
        if (!args.task.empty() && c.task != args.task) continue;
        found = true;
        for (const std::string& file : args.files) {
          std::string url = absl::StrCat("http://", c.node_http_address,
                                         "/ws/v1/node/containerlogs/", c.container_id, "/", file);
          auto r = http.Get(url, {{"Accept", "text/plain"}});
          std::string key = c.container_id + "/" + file;
          if (!r.ok() || !r->ok()) {
            if (!args.follow && !printed.count(key)) {
              err << "ytf: " << c.task << " " << file << ": not available ("
                  << (r.ok() ? absl::StrCat("HTTP ", r->status) : std::string(r.status().message()))
                  << ")\n";
              printed[key] = 0;
            }
            continue;
          }
          // For finished containers the NodeManager wraps the file in a header and a footer.
          if (size_t begin = r->body.find("LogContents:\n"); begin != std::string::npos) {
            size_t end = r->body.rfind("End of LogType:");
            begin += std::string("LogContents:\n").size();
            r->body = r->body.substr(
                begin, end == std::string::npos || end < begin ? std::string::npos : end - begin);
          }
          size_t& done = printed[key];
          if (r->body.size() > done) {
            if (done == 0) {
              out << "==> " << c.task << " " << file << " (" << c.container_id << " on "
                  << c.node_http_address << ") <==\n";
            }
            out << r->body.substr(done);
            if (!r->body.empty() && r->body.back() != '\n') out << "\n";
            done = r->body.size();
          }
        }
      }
      if (!found) {
        err << "ytf: " << args.app << " has no task '" << args.task
            << "'; tasks look like worker:0, ps:0 or am\n";
        return kExitUsage;
      }
    }
    out.flush();
    if (!args.follow || final) return kExitOk;
    absl::SleepFor(absl::Seconds(1));
  }
}

}  // namespace

std::string YtfUsage() {
  return R"(ytf - follow and control libtony jobs on YARN

Usage: ytf status APP              state, tracking URL, per-job progress and diagnostics
       ytf kill APP                stop the job (it ends KILLED)
       ytf list [--all]            libtony jobs (running ones; --all: finished too)
       ytf logs APP [--task worker:1] [--file stderr] [--follow]
                                   task logs from the NodeManagers (--task am: the AM's)

Options: --conf_dir DIR, -D key=value (Hadoop configuration, default $HADOOP_CONF_DIR)
Exit codes: 0 ok, 1 the job failed or was killed (status), 2 bad usage, 3 cluster or job not found.
)";
}

int RunYtf(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  for (const std::string& a : args) {
    if (a == "-h" || a == "--help") {
      out << YtfUsage();
      return kExitOk;
    }
  }
  auto parsed = Parse(args);
  if (!parsed.ok()) {
    err << "ytf: " << parsed.status().message() << "\n";
    return kExitUsage;
  }
  yarn::ApplicationId id;
  if (!parsed->app.empty()) {
    auto p = yarn::ParseApplicationId(parsed->app);
    if (!p.ok()) {
      err << "ytf: '" << parsed->app << "' is not an application id; use e.g. "
          << "application_1700000000000_0001\n";
      return kExitUsage;
    }
    id = *p;
  }
  auto connected = submit::ConnectYarnCluster(parsed->cluster);
  if (!connected.ok()) {
    err << "ytf: " << connected.status().message() << "\n";
    return kExitInternal;
  }
  auto cluster = std::make_shared<submit::YarnCluster>(std::move(*connected));

  if (parsed->command == "list") {
    yarn::ApplicationFilter filter;
    filter.application_types = {"TENSORFLOW", "PYTORCH", "HOROVOD", "TONY"};
    if (!parsed->all) {
      filter.states = {yarn::YarnApplicationState::kNew, yarn::YarnApplicationState::kNewSaving,
                       yarn::YarnApplicationState::kSubmitted,
                       yarn::YarnApplicationState::kAccepted, yarn::YarnApplicationState::kRunning};
    }
    auto apps = cluster->yarn->ListApplications(filter);
    if (!apps.ok()) {
      err << "ytf: " << apps.status().message() << "\n";
      return kExitInternal;
    }
    out << absl::StrFormat("%-32s %-10s %-10s %-12s %s\n", "APPLICATION", "STATE", "USER", "QUEUE",
                           "NAME");
    for (const auto& r : *apps) {
      out << absl::StrFormat("%-32s %-10s %-10s %-12s %s\n", r.id.ToString(),
                             AppStateName(submit::ToAppState(r)), r.user, r.queue, r.name);
    }
    return kExitOk;
  }

  std::unique_ptr<Application> app = Open(cluster, id);
  if (parsed->command == "status") return Status(std::move(app), out, err);
  if (parsed->command == "kill") {
    if (absl::Status s = app->Kill(); !s.ok()) {
      err << "ytf: kill " << parsed->app << ": " << s.message() << "\n";
      return kExitInternal;
    }
    auto s = app->Status();
    out << parsed->app << " " << (s.ok() ? AppStateName(s->state) : "KILLED") << "\n";
    return kExitOk;
  }
  return Logs(*parsed, *cluster, *app, out, err);
}

}  // namespace tony::cli
