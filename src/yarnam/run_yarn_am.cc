// Copyright libtony authors.

#include "yarnam/run_yarn_am.h"

#include <cstdlib>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "am/application_master.h"
#include "broker/secret.h"
#include "broker/tls.h"
#include "common/change_signal.h"
#include "common/logging.h"
#include "common/proc.h"
#include "common/resident.h"
#include "common/signal_watcher.h"
#include "history/hdfs_event_sink.h"
#include "history/live_job_view.h"
#include "spec/access_control.h"
#include "submit/contract.h"
#include "yarnam/site_check.h"
#include "yarnam/yarn_am.h"
#include "yarnam/yarn_resource_manager.h"

namespace tony::yarnam {
namespace {

void Phase(const char* name) {
  TONY_LOG(INFO) << "TONY_PHASE " << name << " " << absl::ToUnixMillis(absl::Now());
}

// Who may see the status page: everyone YARN's proxy lets in, unless the cluster enforces
// application ACLs (the client then passes its admins), when only the job's viewers.
std::function<bool(absl::string_view)> StatusPageViewers(
    const std::string& owner, const JobSpec& spec, const std::map<std::string, std::string>& env) {
  auto admins = env.find(submit::kEnvViewAdmins);
  if (admins == env.end()) return nullptr;
  auto check = spec::ViewerCheck(owner, spec.view_acls, admins->second);
  if (check.ok()) return *std::move(check);
  TONY_LOG(WARNING) << "the status page shows itself to its owner only: " << check.status();
  return [owner](absl::string_view viewer) { return spec::ShortUserName(viewer) == owner; };
}

}  // namespace

// The AM's exit code when it leaves a failed job to YARN's next attempt.
constexpr int kNextAttemptExitCode = 4;

int RunYarnApplicationMaster(const std::map<std::string, std::string>& env) {
  Phase("am_started");
  // Before any thread starts, so that only the watcher takes these signals.
  SignalWatcher signal_watcher;

  auto yarn_am = YarnAm::Create();
  if (!yarn_am.ok()) {
    TONY_LOG(ERROR) << "tony-am: " << yarn_am.status();
    return 3;
  }
  YarnAm& yam = **yarn_am;
  absl::StatusOr<std::string> secret = broker::SecretFromEnvironment();
  absl::StatusOr<JobSpec> spec = CheckedAgainstSite(LoadJobSpecFile(yam.spec_file()));
  if (!secret.ok() || !spec.ok()) {
    absl::Status why = !secret.ok() ? secret.status() : spec.status();
    TONY_LOG(ERROR) << "tony-am: " << why;
    // Register so that the diagnostics reach the user through YARN, then end FAILED.
    if (yam.Register(0, "").ok()) {
      (void)yam.Finish(AppState::kFailed,
                       absl::StrCat("the ApplicationMaster could not start: ", why.message()));
    }
    return 3;
  }

  // Job types are asked for in the order given (ps usually first, as TensorFlow wants them up).
  std::map<std::string, int> priorities;
  for (size_t i = 0; i < spec->job_types.size(); ++i) {
    priorities[spec->job_types[i].name] = static_cast<int>(i) + 1;
  }
  YarnResourceManager rm(&yam, [priorities](const std::string& job) {
    auto it = priorities.find(job);
    return it == priorities.end() ? static_cast<int>(priorities.size()) + 1 : it->second;
  });

  const std::string app_id = yam.application_id();
  am::ApplicationMasterOptions options;
  options.spec = *spec;
  options.app_id = app_id;
  // YARN's NodeManager (and the local backend's ytf-submit) run the AM as the job's user.
  options.user = std::getenv("USER") != nullptr ? std::getenv("USER") : "";
  options.secret = *secret;
  // The job's TLS identity rides in the same credentials as the secret (when the job has one).
  absl::StatusOr<broker::TlsIdentity> tls = broker::TlsIdentityFromTokenFile(
      std::getenv(broker::kTokenFileEnv) != nullptr ? std::getenv(broker::kTokenFileEnv) : "");
  if (tls.ok() && !tls->key_pem.empty() && !tls->cert_pem.empty()) {
    options.tls_key_pem = tls->key_pem;
    options.tls_cert_pem = tls->cert_pem;
  }
  options.advertised_host = yam.container().nm_host;
  // The page answers YARN's web proxy only, so that YARN's view ACLs guard it.
  YarnAm::StatusPageGuard guard = yam.WebProxyGuard();
  options.status_page_allowed_peers = std::move(guard.allowed_peers);
  options.status_page_redirect_url = std::move(guard.redirect_url);
  options.status_page_may_view = StatusPageViewers(options.user, *spec, env);
  options.log_dir = absl::StrCat("ytf logs ", app_id);
  options.attempt = yam.attempt();
  options.scale_targets = yam.ScaleTargetsFromEventLog(*spec);
  options.excluded_nodes = yam.ExcludedNodesFromEventLog();
  options.max_attempts = yam.max_attempts();
  // Work-preserving AM restart: executors whose AM went away find the next attempt's broker in
  // the staging directory; the next attempt adopts their containers (YARN kept them).
  const bool work_preserving =
      spec->work_preserving_restart && yam.max_attempts() > 1 && !yam.am_address_dir().empty();
  if (work_preserving) {
    for (auto& [k, v] : yam.AmAddressEnvironment()) options.executor_env[k] = v;
  }
  // The job's event log (docs/events.md), continued by every attempt.
  // The same lines feed the live view at the tracking URL.
  std::unique_ptr<history::EventLog> events = yam.OpenEventLog();
  options.usage_record_every =
      history::UsageIntervalFromEnv(std::getenv(history::kEnvUsageInterval));
  auto live = std::make_shared<history::LiveJobView>(app_id, options.user);
  options.status_routes = live->Routes();
  if (events != nullptr) events->Start();
  options.on_event_lines = [log = events.get(), live](std::vector<std::string> lines) {
    live->Add(lines);
    if (log == nullptr) return;
    for (std::string& line : lines) {
      // A scale target is what the next attempt reads back (ScaleTargetsFromEventLog): it goes
      // out at once instead of within the flush interval.
      if (line.find("\"role_scaled\"") != std::string::npos) {
        log->AddUrgent(std::move(line));
      } else {
        log->Add(std::move(line));
      }
    }
  };
  absl::Status registered = absl::UnknownError("not registered");
  am::ApplicationMaster* core = nullptr;  // set before Run() calls on_broker_started
  options.on_broker_started = [&](int port, const std::string& tracking_url) {
    auto r = yam.Register(port, tracking_url);
    registered = r.ok() ? absl::OkStatus() : r.status();
    if (!r.ok()) {
      // Ends the AM at once, naming why: YARN puts the tail of its stderr into the attempt's
      // diagnostics (there is no registration to unregister with).
      TONY_LOG(ERROR) << "registering with the ResourceManager: " << r.status();
      return absl::FailedPreconditionError(
          absl::StrCat("registering with the ResourceManager: ", r.status().message()));
    }
    Phase("am_registered");
    ReleaseReadOnlyFilePages();  // start-up's code: see resident.h
    const std::vector<yarn::Container>& previous = r->containers_from_previous_attempts;
    bool publish = work_preserving;
    if (!previous.empty()) {
      std::map<std::string, yarn::Container> plan;
      if (work_preserving) plan = yam.PlanAdoption(*spec, previous);
      if (plan.empty()) {
        if (work_preserving) {
          core->AddWarning(absl::StrCat("the ApplicationMaster's attempt ", yam.attempt() - 1,
                                        " ended while the job ran; attempt ", yam.attempt(),
                                        " could not take over all its tasks (some had ended) and "
                                        "starts every task afresh"));
        }
        yam.ReleaseContainers(previous);
        // The released executors must not find this attempt and register before YARN stops
        // them (they would hold their tasks' places); its own executors are told its address.
        publish = false;
      } else {
        core->AddWarning(absl::StrCat("the ApplicationMaster's attempt ", yam.attempt() - 1,
                                      " ended while the job ran; attempt ", yam.attempt(),
                                      " took over its ", plan.size(),
                                      " running task containers (work-preserving restart)"));
        rm.SetAdoptions(std::move(plan));
      }
    }
    if (publish) {
      const std::string address = absl::StrCat(yam.container().nm_host, ":", port);
      if (absl::Status s = yam.PublishAmAddress(address); !s.ok()) {
        TONY_LOG(WARNING) << "publishing the broker's address for the executors: " << s;
      }
    }
    return absl::OkStatus();
  };
  options.on_tensorboard_ready = [&](const std::string& url) { yam.UpdateTrackingUrl(url); };
  // The history and launch-phase threads below wake on the core's status changes (its rounds
  // see every allocation, registration and start), not at an interval.
  ChangeSignal changes;
  options.on_status_changed = [&changes] { changes.Notify(); };
  // YARN learns the outcome the moment it is decided, not after the remaining tasks have
  // stopped (a grace period), unless YARN is to start the next attempt.
  options.on_outcome = [&](AppState state, const std::string& diagnostics) {
    if (!registered.ok()) return;
    // The AM ends once YARN has reported every container completed: ask for that without the
    // idle interval (it was up to a second between the last task's exit and the client's return).
    if (yam.launcher() != nullptr) yam.launcher()->WindDown();
    if (core->NextAttemptFollows() || yam.attempt_gone()) return;
    if (yam.Unregister(state, diagnostics).ok()) Phase("unregistered");
  };
  am::ApplicationMaster am(options, &rm);
  core = &am;

  signal_watcher.Start([&](int sig) {
    TONY_LOG(WARNING) << "tony-am: signal " << sig << "; killing the job";
    // First, while there is time: SIGKILL may follow within 250 ms.
    yam.RemoveStagingIfLastAttempt();
    am.Kill(absl::StrCat("the ApplicationMaster got signal ", sig));
  });
  // The task history once every task has a container (so `ytf logs` works while the job runs),
  // again whenever a task gets another container (a relaunch, a gang asked for again): a later
  // attempt adopts the running containers by it. On a thread of its own: an HDFS write can take
  // 0.4 s, which made the launch phases late.
  std::thread history([&] {
    const int total = spec->TotalTasks();
    int in_history = 0;  // allocations the history has seen
    for (uint64_t seen = 0; changes.WaitPast(&seen);) {
      const int allocated = rm.allocated();
      if (allocated >= total && allocated != in_history) {
        in_history = allocated;
        if (absl::Status s = yam.WriteHistory(); !s.ok()) TONY_LOG(WARNING) << "history: " << s;
      }
    }
  });
  // Launch phases for bench/launch_latency.py.
  std::thread monitor([&] {
    const int total = spec->TotalTasks();
    bool allocated = false, registered_all = false, started = false;
    for (uint64_t seen = 0; !(allocated && registered_all && started) && changes.WaitPast(&seen);) {
      if (!allocated && rm.allocated() >= total) {
        allocated = true;
        Phase("all_allocated");
      }
      ApplicationStatus st = am.Status();
      int reg = 0, running = 0;
      for (const auto& [job, p] : st.progress) {
        if (job == kClientJobName) continue;  // not in the cluster
        reg += p.registered;
        running += p.running + p.succeeded + p.failed;
      }
      if (!registered_all && reg >= total) {
        registered_all = true;
        Phase("all_registered");
      }
      if (!started && running >= total) {
        started = true;
        Phase("all_started");
        // Allocation, container launches and registrations are over: their code need not stay.
        ReleaseReadOnlyFilePages();
      }
    }
  });

  absl::StatusOr<ApplicationStatus> status = am.Run();
  if (events != nullptr) {
    if (absl::Status s = events->Stop(); !s.ok()) TONY_LOG(WARNING) << "event log: " << s;
  }
  changes.Close();
  signal_watcher.Stop();
  monitor.join();
  history.join();
  if (!registered.ok()) return 3;
  AppState state = status.ok() ? status->state : AppState::kFailed;
  std::string diagnostics = status.ok()
                                ? status->diagnostics
                                : absl::StrCat("the ApplicationMaster could not run the job: ",
                                               status.status().message());
  TONY_LOG(INFO) << "job " << app_id << " " << AppStateName(state)
                 << (diagnostics.empty() ? "" : ": ") << diagnostics;
  TONY_LOG(INFO) << "TONY_RSS am " << PeakRssKb();
  if (yam.attempt_gone()) {
    // YARN decides what follows (a lost AM node does not count as a failed attempt): no
    // unregistration, and the staging directory stays for the next attempt.
    TONY_LOG(WARNING) << "attempt " << yam.attempt() << " ended by the ResourceManager. "
                      << diagnostics;
    yam.EndAttempt();
    return kNextAttemptExitCode;
  }
  // (Not NextAttemptFollows(): a job the AM could not start has no outcome, and may run again.)
  if (state == AppState::kFailed && yam.attempt() < yam.max_attempts() &&
      am.job_restart_allowed()) {
    // Whole-job restart: every task has been stopped; the next attempt starts them all again
    // (from their checkpoints, if they keep any in the output path).
    TONY_LOG(WARNING) << "attempt " << yam.attempt() << " of " << yam.max_attempts()
                      << " failed; YARN starts the next one. " << diagnostics;
    yam.EndAttempt();
    return kNextAttemptExitCode;
  }
  if (status.ok()) {
    if (absl::Status s = yam.WriteFinalProgress(status->progress); !s.ok()) {
      TONY_LOG(WARNING) << "final progress: " << s;
    }
  }
  absl::Status finished = yam.Finish(state, diagnostics);
  return finished.ok() ? 0 : 3;
}

}  // namespace tony::yarnam
