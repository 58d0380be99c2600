// Copyright libtony authors.

#include "yarnam/run_yarn_am.h"

#include <functional>
#include <map>
#include <memory>
#include <string>
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
#include "conf/task_keys.h"
#include "history/hdfs_event_sink.h"
#include "history/live_job_view.h"
#include "spec/access_control.h"
#include "submit/contract.h"
#include "yarnam/change_follower.h"
#include "yarnam/site_check.h"
#include "yarnam/yarn_am.h"
#include "yarnam/yarn_resource_manager.h"

namespace tony::yarnam {
namespace {

using Env = std::map<std::string, std::string>;

// The AM's exit code when it leaves a failed job to YARN's next attempt.
constexpr int kNextAttemptExitCode = 4;

void Phase(const char* name) {
  TONY_LOG(INFO) << "TONY_PHASE " << name << " " << absl::ToUnixMillis(absl::Now());
}

std::string Get(const Env& env, const std::string& key) {
  auto it = env.find(key);
  return it == env.end() ? std::string() : it->second;
}

// Who may see the status page: everyone YARN's proxy lets in, unless the cluster enforces
// application ACLs (the client then passes its admins), when only the job's viewers.
std::function<bool(absl::string_view)> StatusPageViewers(const std::string& owner,
                                                         const JobSpec& spec, const Env& env) {
  auto admins = env.find(submit::kEnvViewAdmins);
  if (admins == env.end()) return nullptr;
  auto check = spec::ViewerCheck(owner, spec.view_acls, admins->second);
  if (check.ok()) return *std::move(check);
  TONY_LOG(WARNING) << "the status page shows itself to its owner only: " << check.status();
  return [owner](absl::string_view viewer) { return spec::ShortUserName(viewer) == owner; };
}

// Job types are asked for in the order given (ps usually first, as TensorFlow wants them up).
std::function<int(const std::string&)> PriorityByOrder(const JobSpec& spec) {
  std::map<std::string, int> priorities;
  for (size_t i = 0; i < spec.job_types.size(); ++i) {
    priorities[spec.job_types[i].name] = static_cast<int>(i) + 1;
  }
  return [priorities](const std::string& job) {
    auto it = priorities.find(job);
    return it == priorities.end() ? static_cast<int>(priorities.size()) + 1 : it->second;
  };
}

// The job's event log, started (before the core, which writes to it); null when off.
std::unique_ptr<history::EventLog> StartedEventLog(const YarnAm& yam) {
  std::unique_ptr<history::EventLog> events = yam.OpenEventLog();
  if (events != nullptr) events->Start();
  return events;
}

// The task history once every task has a container (so `ytf logs` works while the job runs),
// again whenever a task gets another container (a relaunch, a gang asked for again): a later
// attempt adopts the running containers by it. On a thread of its own: an HDFS write can take
// 0.4 s, which made the launch phases late.
class HistoryWriter {
 public:
  HistoryWriter(YarnAm* yam, const YarnResourceManager* rm, int total)
      : yam_(yam), rm_(rm), total_(total) {}
  bool operator()() {
    const int allocated = rm_->allocated();
    if (allocated >= total_ && allocated != in_history_) {
      in_history_ = allocated;
      if (absl::Status s = yam_->WriteHistory(); !s.ok()) TONY_LOG(WARNING) << "history: " << s;
    }
    return true;
  }

 private:
  YarnAm* yam_;
  const YarnResourceManager* rm_;
  const int total_;
  int in_history_ = 0;  // allocations the history has seen
};

// Launch phases for bench/launch_latency.py; done once every task started.
class LaunchPhases {
 public:
  LaunchPhases(const am::ApplicationMaster* am, const YarnResourceManager* rm, int total)
      : am_(am), rm_(rm), total_(total) {}
  bool operator()() {
    if (!allocated_ && rm_->allocated() >= total_) {
      allocated_ = true;
      Phase("all_allocated");
    }
    int registered = 0, running = 0;
    for (const auto& [job, p] : am_->Status().progress) {
      if (job == kClientJobName) continue;  // not in the cluster
      registered += p.registered;
      running += p.running + p.succeeded + p.failed;
    }
    if (!registered_ && registered >= total_) {
      registered_ = true;
      Phase("all_registered");
    }
    if (!started_ && running >= total_) {
      started_ = true;
      Phase("all_started");
      // Allocation, container launches and registrations are over: their code need not stay.
      ReleaseReadOnlyFilePages();
    }
    return !(allocated_ && registered_ && started_);
  }

 private:
  const am::ApplicationMaster* am_;
  const YarnResourceManager* rm_;
  const int total_;
  bool allocated_ = false, registered_ = false, started_ = false;
};

// One attempt of the job on YARN: the AM core over YarnResourceManager, wired to YARN's
// registration (and the adoption of an earlier attempt's containers), tracking URL and
// unregistration, the event log and the two followers of the core's changes.
// Thread-compatible: Run() once. The core's callbacks come on its Run() thread.
class YarnJob {
 public:
  YarnJob(YarnAm* yam, JobSpec spec, const std::string& secret, const Env& env);
  // Runs the job to its end; the process's exit code.
  int Run(SignalWatcher* signals);

 private:
  am::ApplicationMasterOptions Options(const std::string& secret, const Env& env);
  void OnEventLines(std::vector<std::string> lines);
  // Tells this attempt's executors where its broker listens.
  absl::Status PublishAddress(int port);
  // Takes over an earlier attempt's containers, or releases them; whether executors may be
  // told this attempt's address.
  bool AdoptOrRelease(const std::vector<yarn::Container>& previous);
  void OnOutcome(AppState state, const std::string& diagnostics);
  int End(const absl::StatusOr<ApplicationStatus>& status);

  YarnAm& yam_;
  const JobSpec spec_;
  // Work-preserving AM restart: executors whose AM went away find the next attempt's broker in
  // the staging directory; the next attempt adopts their containers (YARN kept them).
  const bool work_preserving_;
  YarnResourceManager rm_;
  // The job's event log (docs/events.md), continued by every attempt; null when off.
  std::unique_ptr<history::EventLog> events_;
  // The same lines feed the live view at the tracking URL.
  std::shared_ptr<history::LiveJobView> live_;
  // The followers wake on the core's status changes (its rounds see every allocation,
  // registration and start), not at an interval.
  ChangeSignal changes_;
  absl::Status registered_ = absl::UnknownError("not registered");
  // Built last: its callbacks use the members above.
  std::unique_ptr<am::ApplicationMaster> am_;
  ChangeFollower history_;
  ChangeFollower launch_phases_;
};

YarnJob::YarnJob(YarnAm* yam, JobSpec spec, const std::string& secret, const Env& env)
    : yam_(*yam),
      spec_(std::move(spec)),
      work_preserving_(spec_.work_preserving_restart && yam->max_attempts() > 1 &&
                       !yam->am_address_dir().empty()),
      rm_(yam, PriorityByOrder(spec_)),
      events_(StartedEventLog(*yam)),
      live_(std::make_shared<history::LiveJobView>(yam->application_id(), Get(env, "USER"))),
      am_(std::make_unique<am::ApplicationMaster>(Options(secret, env), &rm_)),
      history_(&changes_, HistoryWriter(yam, &rm_, spec_.TotalTasks())),
      launch_phases_(&changes_, LaunchPhases(am_.get(), &rm_, spec_.TotalTasks())) {}

am::ApplicationMasterOptions YarnJob::Options(const std::string& secret, const Env& env) {
  am::ApplicationMasterOptions options;
  options.spec = spec_;
  options.app_id = yam_.application_id();
  // YARN's NodeManager runs the AM as the job's user.
  options.user = Get(env, "USER");
  options.secret = secret;
  // The job's TLS identity rides in the same credentials as the secret (when the job has one).
  absl::StatusOr<broker::TlsIdentity> tls =
      broker::TlsIdentityFromTokenFile(Get(env, broker::kTokenFileEnv));
  if (tls.ok() && !tls->key_pem.empty() && !tls->cert_pem.empty()) {
    options.tls_key_pem = tls->key_pem;
    options.tls_cert_pem = tls->cert_pem;
  }
  options.advertised_host = yam_.container().nm_host;
  // The page answers YARN's web proxy only, so that YARN's view ACLs guard it.
  YarnAm::StatusPageGuard guard = yam_.WebProxyGuard();
  options.status_page_allowed_peers = std::move(guard.allowed_peers);
  options.status_page_redirect_url = std::move(guard.redirect_url);
  options.status_page_may_view = StatusPageViewers(options.user, spec_, env);
  options.log_dir = absl::StrCat("ytf logs ", options.app_id);
  options.attempt = yam_.attempt();
  options.scale_targets = yam_.ScaleTargetsFromEventLog(spec_);
  options.excluded_nodes = yam_.ExcludedNodesFromEventLog();
  options.max_attempts = yam_.max_attempts();
  if (work_preserving_) {
    for (auto& [k, v] : yam_.AmAddressEnvironment()) options.executor_env[k] = v;
  }
  options.usage_record_every = history::UsageIntervalFromEnv(
      env.count(history::kEnvUsageInterval) != 0 ? env.at(history::kEnvUsageInterval).c_str()
                                                 : nullptr);
  options.heartbeat_timeout = conf::HeartbeatTimeoutFromEnv(
      env.count(conf::kEnvHeartbeatTimeout) != 0 ? env.at(conf::kEnvHeartbeatTimeout).c_str()
                                                 : nullptr);
  options.status_routes = live_->Routes();
  options.on_event_lines = [this](std::vector<std::string> lines) {
    OnEventLines(std::move(lines));
  };
  options.on_broker_started = [this](int port, const std::string& tracking_url) {
    auto r = yam_.Register(port, tracking_url);
    registered_ = r.ok() ? absl::OkStatus() : r.status();
    if (!r.ok()) {
      // Ends the AM at once, naming why: YARN puts the tail of its stderr into the attempt's
      // diagnostics (there is no registration to unregister with).
      TONY_LOG(ERROR) << "registering with the ResourceManager: " << r.status();
      return absl::FailedPreconditionError(
          absl::StrCat("registering with the ResourceManager: ", r.status().message()));
    }
    Phase("am_registered");
    ReleaseReadOnlyFilePages();  // start-up's code: see resident.h
    const bool publish = AdoptOrRelease(r->containers_from_previous_attempts);
    return publish ? PublishAddress(port) : absl::OkStatus();
  };
  options.on_tensorboard_ready = [this](const std::string& url) { yam_.UpdateTrackingUrl(url); };
  options.on_status_changed = [this] { changes_.Notify(); };
  options.on_outcome = [this](AppState state, const std::string& diagnostics) {
    OnOutcome(state, diagnostics);
  };
  return options;
}

void YarnJob::OnEventLines(std::vector<std::string> lines) {
  live_->Add(lines);
  if (events_ == nullptr) return;
  for (std::string& line : lines) {
    // A scale target is what the next attempt reads back (ScaleTargetsFromEventLog): it goes
    // out at once instead of within the flush interval.
    if (line.find("\"role_scaled\"") != std::string::npos) {
      events_->AddUrgent(std::move(line));
    } else {
      events_->Add(std::move(line));
    }
  }
}

absl::Status YarnJob::PublishAddress(int port) {
  const std::string address = absl::StrCat(yam_.container().nm_host, ":", port);
  if (absl::Status s = yam_.PublishAmAddress(address); !s.ok()) {
    TONY_LOG(WARNING) << "publishing the broker's address for the executors: " << s;
  }
  return absl::OkStatus();
}

bool YarnJob::AdoptOrRelease(const std::vector<yarn::Container>& previous) {
  if (previous.empty()) return work_preserving_;
  std::map<std::string, yarn::Container> plan;
  if (work_preserving_) plan = yam_.PlanAdoption(spec_, previous);
  const std::string earlier = absl::StrCat("the ApplicationMaster's attempt ", yam_.attempt() - 1,
                                           " ended while the job ran; attempt ", yam_.attempt());
  if (!plan.empty()) {
    am_->AddWarning(absl::StrCat(earlier, " took over its ", plan.size(),
                                 " running task containers (work-preserving restart)"));
    rm_.SetAdoptions(std::move(plan));
    return work_preserving_;
  }
  if (work_preserving_) {
    am_->AddWarning(absl::StrCat(earlier,
                                 " could not take over all its tasks (some had ended) and "
                                 "starts every task afresh"));
  }
  yam_.ReleaseContainers(previous);
  // The released executors must not find this attempt and register before YARN stops
  // them (they would hold their tasks' places); its own executors are told its address.
  return false;
}

// YARN learns the outcome the moment it is decided, not after the remaining tasks have
// stopped (a grace period), unless YARN is to start the next attempt.
void YarnJob::OnOutcome(AppState state, const std::string& diagnostics) {
  if (!registered_.ok()) return;
  // The AM ends once YARN has reported every container completed: ask for that without the
  // idle interval (it was up to a second between the last task's exit and the client's return).
  if (yam_.launcher() != nullptr) yam_.launcher()->WindDown();
  if (am_->NextAttemptFollows() || yam_.attempt_gone()) return;
  if (yam_.Unregister(state, diagnostics).ok()) Phase("unregistered");
}

int YarnJob::Run(SignalWatcher* signals) {
  signals->Start([this](int sig) {
    TONY_LOG(WARNING) << "tony-am: signal " << sig << "; killing the job";
    // First, while there is time: SIGKILL may follow within 250 ms.
    yam_.RemoveStagingIfLastAttempt();
    am_->Kill(absl::StrCat("the ApplicationMaster got signal ", sig));
  });
  history_.Start();
  launch_phases_.Start();
  absl::StatusOr<ApplicationStatus> status = am_->Run();
  if (events_ != nullptr) {
    if (absl::Status s = events_->Stop(); !s.ok()) TONY_LOG(WARNING) << "event log: " << s;
  }
  changes_.Close();
  signals->Stop();
  launch_phases_.Stop();
  history_.Stop();
  return End(status);
}

int YarnJob::End(const absl::StatusOr<ApplicationStatus>& status) {
  if (!registered_.ok()) return 3;
  AppState state = status.ok() ? status->state : AppState::kFailed;
  std::string diagnostics = status.ok()
                                ? status->diagnostics
                                : absl::StrCat("the ApplicationMaster could not run the job: ",
                                               status.status().message());
  TONY_LOG(INFO) << "job " << yam_.application_id() << " " << AppStateName(state)
                 << (diagnostics.empty() ? "" : ": ") << diagnostics;
  TONY_LOG(INFO) << "TONY_RSS am " << PeakRssKb();
  if (yam_.attempt_gone()) {
    // YARN decides what follows (a lost AM node does not count as a failed attempt): no
    // unregistration, and the staging directory stays for the next attempt.
    TONY_LOG(WARNING) << "attempt " << yam_.attempt() << " ended by the ResourceManager. "
                      << diagnostics;
    yam_.EndAttempt();
    return kNextAttemptExitCode;
  }
  // (Not NextAttemptFollows(): a job the AM could not start has no outcome, and may run again.)
  if (state == AppState::kFailed && yam_.attempt() < yam_.max_attempts() &&
      am_->job_restart_allowed()) {
    // Whole-job restart: every task has been stopped; the next attempt starts them all again
    // (from their checkpoints, if they keep any in the output path).
    TONY_LOG(WARNING) << "attempt " << yam_.attempt() << " of " << yam_.max_attempts()
                      << " failed; YARN starts the next one. " << diagnostics;
    yam_.EndAttempt();
    return kNextAttemptExitCode;
  }
  if (status.ok()) {
    if (absl::Status s = yam_.WriteFinalProgress(status->progress); !s.ok()) {
      TONY_LOG(WARNING) << "final progress: " << s;
    }
  }
  absl::Status finished = yam_.Finish(state, diagnostics);
  return finished.ok() ? 0 : 3;
}

}  // namespace

int RunYarnApplicationMaster(const std::map<std::string, std::string>& env) {
  Phase("am_started");
  // Before any thread starts, so that only the watcher takes these signals.
  SignalWatcher signal_watcher;
  auto yarn_am = YarnAm::Create(env);
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
  yam.UseSpec(*spec);  // parsed once, here
  YarnJob job(&yam, *std::move(spec), *secret, env);
  return job.Run(&signal_watcher);
}

}  // namespace tony::yarnam
