// Copyright libtony authors.

#include "cli/submit_command.h"

#include <csignal>
#include <cstdlib>

#include <atomic>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "cli/client_task.h"
#include "common/logging.h"
#include "common/resident.h"
#include "common/status_macros.h"
#include "conf/configuration.h"
#include "spec/access_control.h"
#include "spec/python_env.h"
#include "spec/site_config.h"
#include "tony/submitter.h"
#include "yarn/yarn_client.h"

namespace tony::cli {
namespace {

std::atomic<int> interrupted{0};

void OnSignal(int sig) { interrupted.store(sig); }

std::string ProgressLine(const ApplicationStatus& s, absl::Time start) {
  std::string line = absl::StrFormat("[%5.0fs] %-9s", absl::ToDoubleSeconds(absl::Now() - start),
                                     AppStateName(s.state));
  for (const auto& [job, p] : s.progress) {
    absl::StrAppend(&line, " | ", job, ": ", p.allocated, "/", p.total, " allocated, ",
                    p.registered, " registered, ", p.running, " running, ", p.succeeded + p.failed,
                    " finished");
    if (p.failed > 0) absl::StrAppend(&line, " (", p.failed, " failed)");
    if (p.restarts > 0) absl::StrAppend(&line, " (restarted ", p.restarts, "x)");
  }
  if (!s.pending.empty()) absl::StrAppend(&line, " | waiting: ", s.pending);
  if (!s.wait_reason.empty()) absl::StrAppend(&line, " | why: ", s.wait_reason);
  return line;
}

std::vector<std::string> SiteConfDirs(const SubmitArgs& args) {
  auto dirs = conf::FindConfDirs(args.conf_dir);
  return dirs.ok() ? *dirs : std::vector<std::string>();
}

// The site file's template, defaults and limits, before anything is shown or sent (the YARN
// submitter applies them again, for its C++ and Python callers: the result is unchanged).
absl::StatusOr<JobSpec> WithSite(const SubmitArgs& args) {
  TONY_ASSIGN_OR_RETURN(spec::SiteConfig site, spec::LoadSiteConfig(SiteConfDirs(args)));
  const std::string user = yarn::CurrentUserName();
  TONY_ASSIGN_OR_RETURN(
      JobSpec spec, spec::ApplyAndCheckSite(args.spec, site, {user, spec::LocalGroupsOf(user)}));
  // ParseSubmitArgs left a job on a template to this point.
  if (!args.spec.site_template.empty()) {
    for (const std::string& w : JobSpecWarnings(spec)) TONY_LOG(WARNING) << w;
  }
  return spec;
}

}  // namespace

int RunShowSite(const SubmitArgs& args, std::ostream& out, std::ostream& err) {
  if (auto dirs = conf::FindConfDirs(args.conf_dir); !dirs.ok()) {
    err << "ytf-submit: --conf_dir: " << dirs.status().message() << "\n";
    return kExitUsage;
  }
  std::string looked;
  for (const std::string& dir : SiteConfDirs(args)) {
    absl::StrAppend(&looked, dir, "/", spec::kSiteFileName, ", ");
  }
  const char* fallback = std::getenv(spec::kSiteFileEnv);
  absl::StrAppend(&looked, fallback != nullptr
                               ? absl::StrCat("$", spec::kSiteFileEnv, "=", fallback)
                               : spec::kDefaultSiteFile);
  out << "looked for: " << looked << "\n";
  absl::StatusOr<spec::SiteConfig> site = spec::LoadSiteConfig(SiteConfDirs(args));
  if (!site.ok()) {
    err << "ytf-submit: " << site.status().message() << "\n";
    return kExitUsage;
  }
  out << spec::DescribeSite(*site);
  return kExitOk;
}

Backend ChooseBackend(const SubmitArgs& args) {
  if (args.backend != Backend::kAuto) return args.backend;
  // The loader's own search: a directory that does not exist goes to YARN, whose loader says so.
  auto dirs = conf::FindConfDirs(args.conf_dir);
  return !dirs.ok() || !dirs->empty() ? Backend::kYarn : Backend::kLocal;
}

int ExitCodeFor(const absl::Status& status) {
  if (status.ok()) return kExitOk;
  if (status.code() == absl::StatusCode::kInvalidArgument) return kExitUsage;
  return kExitInternal;
}

int RunSubmit(const SubmitArgs& given, std::ostream& out, std::ostream& err) {
  SubmitArgs args = given;
  if (absl::StatusOr<JobSpec> spec = WithSite(given); spec.ok()) {
    args.spec = *std::move(spec);
  } else {
    err << "ytf-submit: " << spec.status().message() << "\n";
    return ExitCodeFor(spec.status());
  }
  if (args.dry_run) {
    if (!args.spec.python_env.empty()) {
      // Bad archives are refused before anything is shown, as a submission would.
      if (auto env = InspectPythonEnv(args.spec.python_env); !env.ok()) {
        err << "ytf-submit: " << env.status().message() << "\n";
        return ExitCodeFor(env.status());
      }
    }
    // As it would run: with an elastic role's rendezvous.
    out << JobSpecToYaml(ExpandElastic(args.spec),
                         args.dry_run_tasks ? YamlDetail::kEveryTask : YamlDetail::kRoleSummary);
    return kExitOk;
  }

  const Backend backend = ChooseBackend(args);
  if (args.backend == Backend::kAuto && backend == Backend::kLocal && !args.quiet) {
    err << "ytf-submit: no Hadoop configuration (--conf_dir, HADOOP_CONF_DIR, YARN_CONF_DIR or "
           "$HADOOP_HOME/etc/hadoop); running locally\n";
  }

  std::unique_ptr<Submitter> submitter;
  if (backend == Backend::kLocal) {
    submitter = NewLocalSubmitter({});
  } else {
    YarnSubmitterOptions options;
    options.conf_dir = args.conf_dir;
    options.conf_overrides = args.conf_overrides;
    options.principal = args.principal;
    options.keytab = args.keytab;
    options.broker_tls = args.broker_tls;
    auto yarn = NewYarnSubmitter(options);
    if (!yarn.ok()) {
      err << "ytf-submit: " << yarn.status().message() << "\n";
      return ExitCodeFor(yarn.status());
    }
    submitter = std::move(*yarn);
  }
  // Connecting initialised curl, OpenSSL and Kerberos: code that staging barely runs again.
  ReleaseReadOnlyFilePages();

  auto app = submitter->Submit(args.spec);
  if (!app.ok()) {
    err << "ytf-submit: submission failed: " << app.status().message() << "\n";
    return ExitCodeFor(app.status());
  }
  out << (*app)->id() << "\n";
  out.flush();
  // Staging and submission's code (Hadoop IPC, WebHDFS, protobuf) barely runs again while the job
  // is followed: see resident.h.
  ReleaseReadOnlyFilePages();
  std::string shown_tracking_url, shown_tensorboard_url;
  // URLs are printed as soon as they are known (a local AM publishes its page once it runs).
  auto show_urls = [&](const ApplicationStatus& s) {
    if (!s.tracking_url.empty() && s.tracking_url != shown_tracking_url) {
      err << "ytf-submit: tracking URL: " << s.tracking_url << "\n";
      shown_tracking_url = s.tracking_url;
    }
    if (!s.tensorboard_url.empty() && s.tensorboard_url != shown_tensorboard_url) {
      err << "ytf-submit: TensorBoard: " << s.tensorboard_url << "\n";
      shown_tensorboard_url = s.tensorboard_url;
    }
  };
  if (auto s = (*app)->Status(); s.ok()) {
    show_urls(*s);
    if (!s->log_dir.empty()) err << "ytf-submit: task logs: " << s->log_dir << "\n";
  }
  if (args.detach) return kExitOk;

  interrupted.store(0);
  auto old_int = std::signal(SIGINT, OnSignal);
  auto old_term = std::signal(SIGTERM, OnSignal);
  const absl::Time start = absl::Now();
  std::string last_line;
  bool had_progress = false;
  int shown_attempt = 1;
  auto on_progress = [&](const ApplicationStatus& s) {
    if (args.quiet) return;
    if (!IsFinal(s.state)) show_urls(s);
    if (s.attempt > shown_attempt) {
      err << "ytf-submit: attempt " << s.attempt << " of "
          << (s.max_attempts > 0 ? s.max_attempts : args.spec.max_attempts)
          << ": the previous attempt failed (its AM's log: ytf logs " << (*app)->id()
          << " --task am@" << s.attempt - 1 << "); every task starts again\n";
      shown_attempt = s.attempt;
    }
    // Once the AM is gone YARN's report has no task counts: that is no news.
    had_progress = had_progress || !s.progress.empty();
    if (had_progress && s.progress.empty() && !IsFinal(s.state)) return;
    std::string line = ProgressLine(s, start);
    // Redraw only when something other than the clock changed.
    std::string key = line.substr(line.find(']'));
    if (key != last_line) {
      err << line << "\n";
      last_line = key;
    }
  };

  std::unique_ptr<ClientTask> client;
  if (args.spec.client_mode) client = std::make_unique<ClientTask>(args.spec, app->get(), err);
  absl::StatusOr<ApplicationStatus> final_status;
  bool killed_by_user = false;
  while (true) {
    final_status = (*app)->Wait(absl::Seconds(1), on_progress);
    const bool over = final_status.ok() && IsFinal(final_status->state);
    // Before the client's turn: Ctrl-C reaches an interactive client too, and its exit must
    // not turn the user's kill into a failure.
    if (!over && interrupted.load() != 0 && !killed_by_user) {
      err << "ytf-submit: interrupted: killing " << (*app)->id() << "\n";
      if (client != nullptr) client->Step(/*job_over=*/true, absl::ZeroDuration());
      if (auto s = (*app)->Kill(); !s.ok())
        err << "ytf-submit: kill failed: " << s.message() << "\n";
      killed_by_user = true;
    }
    if (client != nullptr) client->Step(over || killed_by_user, absl::Seconds(1));
    if (over) break;
    if (!final_status.ok() && final_status.status().code() != absl::StatusCode::kDeadlineExceeded) {
      break;
    }
  }
  std::signal(SIGINT, old_int);
  std::signal(SIGTERM, old_term);

  if (!final_status.ok()) {
    err << "ytf-submit: lost track of " << (*app)->id() << ": " << final_status.status().message()
        << "\n";
    return kExitInternal;
  }
  err << "ytf-submit: " << (*app)->id() << " " << AppStateName(final_status->state) << "\n";
  if (!final_status->diagnostics.empty()) err << final_status->diagnostics << "\n";
  if (!final_status->log_dir.empty())
    err << "ytf-submit: task logs: " << final_status->log_dir << "\n";
  return final_status->state == AppState::kSucceeded ? kExitOk : kExitJobFailed;
}

}  // namespace tony::cli
