// Copyright libtony authors.
//
// tony::NewYarnSubmitter: stages a job in HDFS and submits tony-am to YARN; the Application it
// returns follows the job through the ResourceManager's report and, while the AM runs, the
// AM's own status service (the ClusterSpecBroker's GetStatus).

#include "submit/yarn_submitter.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <thread>
#include <variant>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "broker/broker_client.h"
#include "broker/secret.h"
#include "broker/tls.h"
#include "common/application_handle.h"
#include "common/async_calls.h"
#include "common/call_deadline.h"
#include "common/cancellation.h"
#include "common/content_key.h"
#include "common/file_util.h"
#include "common/logging.h"
#include "common/package_location.h"
#include "common/proc.h"
#include "common/status_macros.h"
#include "conf/hadoop_addresses.h"
#include "conf/history_keys.h"
#include "conf/task_keys.h"
#include "ipc/digest_md5.h"
#include "ipc/kerberos.h"
#include "spec/access_control.h"
#include "spec/python_env.h"
#include "spec/site_config.h"
#include "submit/artifact_cache.h"
#include "submit/bounded_yarn_client.h"
#include "submit/cluster_checks.h"
#include "submit/contract.h"
#include "submit/source_archive.h"
#include "submit/wait_facts.h"
#include "submit/wait_reason.h"

namespace tony::submit {
namespace {

absl::Status KerberosLogin(const YarnSubmitterOptions& options, YarnCluster* cluster) {
  if (options.principal.empty() != options.keytab.empty()) {
    return absl::InvalidArgumentError(
        "--principal and --keytab go together: give both, or neither to use the ticket cache");
  }
  TONY_ASSIGN_OR_RETURN(std::string auth,
                        cluster->conf.Get("hadoop.security.authentication", "simple"));
  if (!absl::EqualsIgnoreCase(auth, "kerberos")) return absl::OkStatus();
  cluster->kerberos = true;
  TONY_ASSIGN_OR_RETURN(cluster->rm_principal,
                        cluster->conf.Get("yarn.resourcemanager.principal", ""));
  if (cluster->rm_principal.empty()) {
    return absl::FailedPreconditionError(
        "yarn.resourcemanager.principal is not set: a Kerberos cluster's configuration names "
        "the ResourceManager's principal (e.g. rm/_HOST@REALM)");
  }
  ipc::KerberosIdentity id;
  if (!options.keytab.empty()) {
    TONY_ASSIGN_OR_RETURN(cluster->kerberos_login,
                          ipc::KerberosLogin::FromKeytab(options.principal, options.keytab));
    TONY_ASSIGN_OR_RETURN(id, cluster->kerberos_login->Refresh());
  } else {
    TONY_ASSIGN_OR_RETURN(id, ipc::CurrentKerberosIdentity());
  }
  cluster->principal = id.principal;
  // Hadoop's default auth_to_local rule: the principal's first component.
  if (options.user.empty()) cluster->user = ipc::PrincipalShortName(id.principal);
  TONY_LOG(DEBUG) << "Kerberos: " << id.principal << ", ticket valid until " << id.expires;
  return absl::OkStatus();
}

// The name the cluster knows a principal by comes from its auth_to_local rules, which may map
// "alice@CORP" to anything: HDFS says which (the home directory it gives this client), and the
// staging paths, the AM's ownership checks and the own-applications filter use that name. A
// NameNode that does not answer leaves the principal's first component: what fails there (no
// ticket, a skewed clock, HDFS down) the call that needs it reports, in one line.
absl::Status UseMappedUserName(YarnCluster* cluster, hdfs::WebHdfsClient::Options* hdfs_options) {
  absl::StatusOr<std::string> home = cluster->hdfs->HomeDirectory();
  if (!home.ok()) {
    TONY_LOG(DEBUG) << "taking the user name " << cluster->user << " from the principal "
                    << cluster->principal << " (GETHOMEDIRECTORY: " << home.status().code() << ")";
    return absl::OkStatus();
  }
  const std::string mapped = home->substr(home->rfind('/') + 1);
  if (mapped.empty() || mapped == cluster->user) return absl::OkStatus();
  TONY_LOG(DEBUG) << "Kerberos: " << cluster->principal << " is " << mapped << " on this cluster";
  cluster->user = mapped;
  hdfs_options->user = mapped;
  TONY_ASSIGN_OR_RETURN(cluster->hdfs, hdfs::WebHdfsClient::Create(*hdfs_options));
  return absl::OkStatus();
}

// "ip:port" of fs.defaultFS's NameNode, as Hadoop names a delegation token's service
// (hadoop.security.token.service.use_ip, true by default).
absl::StatusOr<std::string> NameNodeTokenService(const conf::Configuration& conf) {
  TONY_ASSIGN_OR_RETURN(std::string fs, conf::DefaultFs(conf));
  TONY_ASSIGN_OR_RETURN(conf::FsUri uri, conf::ParseFsUri(fs));
  if (uri.scheme != "hdfs") {
    return absl::FailedPreconditionError(
        absl::StrCat("fs.defaultFS is ", fs, ": a Kerberos job needs HDFS (hdfs://)"));
  }
  TONY_ASSIGN_OR_RETURN(conf::HostPort hp,
                        conf::ParseHostPort(uri.authority, 8020, "fs.defaultFS"));
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  if (getaddrinfo(hp.host.c_str(), nullptr, &hints, &res) == 0 && res != nullptr) {
    char ip[INET_ADDRSTRLEN];
    const auto* sin = reinterpret_cast<const sockaddr_in*>(res->ai_addr);
    if (inet_ntop(AF_INET, &sin->sin_addr, ip, sizeof(ip)) != nullptr) hp.host = ip;
    freeaddrinfo(res);
  }
  return hp.ToString();
}

constexpr absl::Duration kGracefulKillWait = absl::Seconds(20);
// The limit of cleaning up after a submission its caller's deadline or cancellation ended.
constexpr absl::Duration kCleanupLimit = absl::Seconds(10);

// `bin_dir` is YarnSubmitterOptions::bin_dir: empty for the defaults, the installed package
// (when the program was linked through find_package(tony)) or next to the running program.
absl::StatusOr<std::string> FindRuntimeBundle(const std::string& bin_dir) {
  const char* override_path = std::getenv("TONY_RUNTIME_BUNDLE");
  std::vector<std::string> candidates;
  if (override_path != nullptr && *override_path != '\0') candidates.push_back(override_path);
  if (bin_dir.empty() && !PackageDataDir().empty()) {
    candidates.push_back(PackageDataDir() + "/tony-runtime.tar.gz");
  }
  candidates.push_back((bin_dir.empty() ? SelfDirectory() : bin_dir) +
                       "/../share/tony/tony-runtime.tar.gz");
  for (const std::string& c : candidates) {
    if (access(c.c_str(), R_OK) == 0) return c;
  }
  return absl::FailedPreconditionError(absl::StrCat(
      "the runtime bundle (tony-am and tony-executor with their libraries) is missing at ",
      candidates.back(),
      "; build it with: cmake --build <build dir> --target tony_runtime_bundle"));
}

std::string ResourceText(int64_t memory_mb, int vcores, int gpus) {
  std::string s = absl::StrCat("<memory:", memory_mb, ", vCores:", vcores);
  if (gpus > 0) absl::StrAppend(&s, ", yarn.io/gpu:", gpus);
  return s + ">";
}

// Asking for more than any container can ever be is a mistake to catch before submitting,
// instead of a job that waits forever for an allocation.
absl::Status CheckFits(const JobSpec& spec, const yarn::Resource& max, yarn::YarnClient& yarn) {
  bool wants_gpus = false;
  for (const TaskSpec& t : ResolveTasks(spec)) {
    wants_gpus = wants_gpus || t.gpus > 0;
    if (t.memory_mb > max.memory_mb || t.vcores > max.vcores) {
      return absl::InvalidArgumentError(
          absl::StrCat("task ", t.id(), " asks for ", ResourceText(t.memory_mb, t.vcores, t.gpus),
                       " but the largest container this cluster grants is ", max.ToString(),
                       "; lower -m/--task_memory or -c/--task_vcores"));
    }
  }
  if (spec.am_memory_mb > max.memory_mb || spec.am_vcores > max.vcores) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the ApplicationMaster asks for ", ResourceText(spec.am_memory_mb, spec.am_vcores, 0),
        " but the largest container this cluster grants is ", max.ToString(),
        "; lower --am_memory"));
  }
  if (wants_gpus) {
    TONY_ASSIGN_OR_RETURN(auto types, yarn.GetResourceTypes());
    bool known = false;
    for (const auto& t : types) known = known || t.name == yarn::kResourceGpu;
    if (!known) {
      return absl::InvalidArgumentError(
          "tasks ask for GPUs (-g/--task_gpus) but this cluster has no resource type "
          "yarn.io/gpu (see yarn.resource-types in its resource-types.xml)");
    }
    // How many GPUs a container may have is checked per node, by CheckNodes.
  }
  return absl::OkStatus();
}

class YarnApplication : public broker::BrokerBackedApplication {
 public:
  YarnApplication(std::shared_ptr<YarnCluster> cluster, const yarn::ApplicationId& id,
                  std::string secret, std::string staging_dir, int max_attempts,
                  std::string tls_cert_pem)
      : cluster_(std::move(cluster)),
        id_(id),
        id_text_(id.ToString()),
        secret_(std::move(secret)),
        staging_dir_(std::move(staging_dir)),
        max_attempts_(max_attempts),
        tls_cert_pem_(std::move(tls_cert_pem)) {}

  ~YarnApplication() override { StopAsyncCalls(); }

  const std::string& id() const override { return id_text_; }

 protected:
  absl::StatusOr<ApplicationStatus> DoStatus(const CallOptions& options) override {
    return StatusAndAm(nullptr, CallDeadline(options));
  }

  // Follows the AM's status with long polls while it runs (an answer the moment anything
  // changes, the outcome included); YARN is asked only while no AM answers, with a backoff. A
  // cancellation ends a long poll at once, a ResourceManager request once it is answered.
  absl::StatusOr<ApplicationStatus> DoWait(absl::Duration timeout,
                                           const ProgressCallback& on_progress,
                                           const Cancellation& cancel) override {
    const absl::Time deadline = absl::Now() + timeout;
    std::optional<ApplicationStatus> last;  // per call: concurrent waiters each see every change
    auto report = [&](const ApplicationStatus& s) {
      if (on_progress && (!last || *last != s)) on_progress(s);
      last = s;
    };
    auto cancelled = [&] { return CancelledError(absl::StrCat("waiting for ", id_text_)); };
    int failures = 0;
    absl::Duration backoff = absl::Milliseconds(100);
    while (true) {
      if (cancel.cancelled()) return cancelled();
      std::shared_ptr<broker::BrokerClient> am;
      auto s = StatusAndAm(&am, deadline);
      if (!s.ok()) {
        // The RM may fail over or be busy for a moment; give up only on a persistent error.
        if (++failures >= 5 || absl::Now() >= deadline) return s.status();
      } else {
        failures = 0;
        report(*s);
        if (IsFinal(s->state)) return s;
      }
      if (am != nullptr) {
        auto followed = FollowAm(*am, *s, deadline, cancel, report);
        if (auto* final = std::get_if<ApplicationStatus>(&followed)) return *final;
        if (std::get<AmFollow>(followed) == AmFollow::kBackOff) am = nullptr;
        backoff = absl::Milliseconds(100);
      }
      if (cancel.cancelled()) return cancelled();
      absl::Duration left = deadline - absl::Now();
      if (left <= absl::ZeroDuration()) {
        return absl::DeadlineExceededError(
            absl::StrCat(id_text_, " is not finished after ", absl::FormatDuration(timeout)));
      }
      if (am == nullptr) {
        if (!SleepUnlessCancelled(cancel, std::min(left, backoff))) return cancelled();
        backoff = std::min(backoff * 2, kMaxPollInterval);
      }
    }
  }

  // YARN's report first (kept as the base the AM's answers complete), asked on a thread of the
  // async calls; then long polls of the AM while it is up.
  void DoWatchAsync(uint64_t known_version, absl::Duration max_wait, WatchCallback done) override {
    std::shared_ptr<broker::BrokerClient> am;
    ApplicationStatus base;
    if (known_version != 0) {
      absl::MutexLock lock(&mu_);
      am = watch_am_;
      base = watch_base_;
    }
    if (am != nullptr) {
      WatchAm(std::move(am), std::move(base), known_version, max_wait, std::move(done));
      return;
    }
    auto shared = std::make_shared<WatchCallback>(std::move(done));
    const bool started = RunAsync([this, max_wait, shared] {
      std::shared_ptr<broker::BrokerClient> am;
      auto s = StatusAndAm(&am, absl::InfiniteFuture());
      {
        absl::MutexLock lock(&mu_);
        watch_am_ = am;
        if (s.ok()) watch_base_ = *s;
      }
      if (!s.ok() || am == nullptr || IsFinal(s->state)) {
        (*shared)(std::move(s), 0);
        return;
      }
      // The AM's current version comes back at once.
      WatchAm(std::move(am), *std::move(s), 0, max_wait, std::move(*shared));
    });
    if (!started) (*shared)(CancelledError(id_text_), 0);
  }

  absl::Status DoKill(const CallOptions& options) override {
    const absl::Time deadline = CallDeadline(options);
    TONY_ASSIGN_OR_RETURN(yarn::ApplicationReport report,
                          cluster_->yarn->GetApplicationReport(id_, deadline));
    if (yarn::IsTerminal(report.state)) return absl::OkStatus();
    // The AM stops its tasks in order and ends KILLED; YARN's kill is the fallback when the AM
    // is not up yet or does not answer.
    if (!secret_.empty() && report.rpc_port > 0 && report.host != "N/A" && !report.host.empty()) {
      absl::Status s = AmClient(absl::StrCat(report.host, ":", report.rpc_port))
                           ->Kill("killed by user", deadline);
      if (s.ok()) {
        auto done = DoWait(std::min(kGracefulKillWait, deadline - absl::Now()), nullptr, {});
        if (done.ok()) return absl::OkStatus();
        s = done.status();
      }
      // The caller's deadline is over: YARN is not asked any more, and the error says who
      // did not answer.
      if (absl::IsDeadlineExceeded(s) && absl::Now() >= deadline) {
        return absl::DeadlineExceededError(
            absl::StrCat(id_text_, " not killed in time: ", s.message()));
      }
    }
    TONY_RETURN_IF_ERROR(cluster_->yarn->KillApplication(id_, "killed by user", deadline));
    auto done = DoWait(std::min(absl::Minutes(1), deadline - absl::Now()), nullptr, {});
    if (!done.ok()) return done.status();
    CleanUpStaging(deadline);
    return absl::OkStatus();
  }

 private:
  // How following the AM's long polls ended without an outcome.
  enum class AmFollow { kAskYarn, kBackOff };

  // Long polls of the running AM, each answer merged into `base` and reported, until the AM
  // ends the job (its final status), the AM is gone or moving (kAskYarn: YARN tells what
  // happened), it has no long polls (kBackOff), `deadline` passes or `cancel` is cancelled.
  std::variant<ApplicationStatus, AmFollow> FollowAm(
      broker::BrokerClient& am, const ApplicationStatus& base, absl::Time deadline,
      const Cancellation& cancel, const std::function<void(const ApplicationStatus&)>& report) {
    using Answer = absl::StatusOr<broker::BrokerClient::VersionedStatus>;
    uint64_t version = 0;
    while (absl::Now() < deadline && !cancel.cancelled()) {
      const absl::Duration wait = std::min(kLongPoll, deadline - absl::Now());
      std::optional<Answer> w = AwaitAnswer<Answer>(
          cancel, deadline, [&](std::function<void(Answer)> answer, const Cancellation& give_up) {
            am.WatchStatusAsync(version, wait, std::move(answer), give_up);
          });
      if (!w || !w->ok()) break;
      if ((*w)->version == 0) return AmFollow::kBackOff;  // an AM without long polls
      version = (*w)->version;
      ApplicationStatus merged = base;
      MergeAmStatus((*w)->status, &merged);
      if (IsFinal((*w)->status.state)) {
        if (!OutcomeIsFinal((*w)->status.state, merged.attempt, max_attempts_)) break;
        merged.state = (*w)->status.state;
        CleanUpStaging(deadline);
        report(merged);
        return merged;
      }
      report(merged);
    }
    return AmFollow::kAskYarn;
  }

  // One long poll of the AM for DoWatchAsync; `done` runs on a gRPC thread.
  void WatchAm(std::shared_ptr<broker::BrokerClient> am, ApplicationStatus base,
               uint64_t known_version, absl::Duration max_wait, WatchCallback done) {
    am->WatchStatusAsync(
        known_version, max_wait,
        [done = std::move(done), base = std::move(base),
         max_attempts = max_attempts_](absl::StatusOr<broker::BrokerClient::VersionedStatus> w) {
          if (!w.ok()) {
            done(w.status(), 0);
            return;
          }
          ApplicationStatus merged = base;
          MergeAmStatus(w->status, &merged);
          if (IsFinal(w->status.state)) {
            if (!OutcomeIsFinal(w->status.state, merged.attempt, max_attempts)) {
              done(merged, 0);  // another attempt follows: YARN tells
              return;
            }
            merged.state = w->status.state;
          }
          done(merged, w->version);
        });
  }

  // Long polls of the AM end after this (and are renewed), so a lost AM shows within it.
  static constexpr absl::Duration kLongPoll = absl::Seconds(20);
  // Longest pause between two YARN polls while no AM answers.
  static constexpr absl::Duration kMaxPollInterval = absl::Seconds(1);
  // The AM of a job YARN reports finished either answers at once or has gone: a longer wait
  // (e.g. for a connection to a vanished node) would only delay the final status.
  static constexpr absl::Duration kFinishedAmWait = absl::Seconds(2);
  // Why a job waits changes slowly; asking the RM at every poll would only load it.
  static constexpr absl::Duration kWaitReasonAge = absl::Seconds(3);
  // The most a status call spends on finding out why the job waits.
  static constexpr absl::Duration kWaitReasonBudget = absl::Seconds(5);

  // The status: YARN's report, completed with the AM's own view while it runs. `am` (if set)
  // gets the AM's client when the AM is up and answered. Ends by `deadline`: DeadlineExceeded
  // when the RM, or the AM of a running job, has not answered by then.
  absl::StatusOr<ApplicationStatus> StatusAndAm(std::shared_ptr<broker::BrokerClient>* am_out,
                                                absl::Time deadline) {
    TONY_ASSIGN_OR_RETURN(yarn::ApplicationReport report,
                          cluster_->yarn->GetApplicationReport(id_, deadline));
    ApplicationStatus s;
    s.id = id_text_;
    s.state = ToAppState(report);
    s.tracking_url = report.tracking_url;
    if (report.current_attempt) s.attempt = report.current_attempt->attempt;
    s.max_attempts = max_attempts_;
    if (report.diagnostics != "N/A") s.diagnostics = report.diagnostics;
    s.log_dir = absl::StrCat("ytf logs ", id_text_);
    const bool am_known =
        !secret_.empty() && report.rpc_port > 0 && !report.host.empty() && report.host != "N/A";
    if (s.state == AppState::kRunning && am_known) {
      std::shared_ptr<broker::BrokerClient> am =
          AmClient(absl::StrCat(report.host, ":", report.rpc_port));
      auto am_status = am->GetStatus(deadline);
      if (!am_status.ok() && absl::IsDeadlineExceeded(am_status.status()) &&
          absl::Now() >= deadline) {
        return absl::DeadlineExceededError(absl::StrCat(
            id_text_,
            ": the ApplicationMaster did not answer in time: ", am_status.status().message()));
      }
      if (am_status.ok()) {
        MergeAmStatus(*am_status, &s);
        // The AM knows the outcome before YARN has recorded it (it is unregistering).
        if (IsFinal(am_status->state) &&
            OutcomeIsFinal(am_status->state, s.attempt, max_attempts_)) {
          s.state = am_status->state;
        }
        if (am_out != nullptr) *am_out = std::move(am);
      } else {
        TONY_LOG(DEBUG) << "AM status of " << id_text_ << ": " << am_status.status();
      }
    }
    if (s.state == AppState::kSubmitted || s.state == AppState::kAccepted ||
        (s.state == AppState::kRunning && !s.pending.empty())) {
      WaitReason why = WhyWaiting(report, deadline);
      s.wait_reason = std::move(why.text);
      s.wait_kind = std::string(WaitKindName(why.kind));
    }
    if (IsFinal(s.state)) {
      // The outcome is known: the final counts below are a best effort within the deadline.
      if (s.progress.empty()) s.progress = FinalProgress(report.user, deadline);
      // YARN reports FINISHED from the moment the AM unregistered; the AM then stops the
      // remaining tasks and records the final counts, answering for itself until it exits.
      const int64_t ended_ms_ago = absl::ToUnixMillis(absl::Now()) - report.finish_time_ms;
      if (s.progress.empty() && am_known &&
          (report.finish_time_ms == 0 || ended_ms_ago < 60 * 1000)) {
        auto am_status = AmClient(absl::StrCat(report.host, ":", report.rpc_port))
                             ->GetStatus(std::min(deadline, absl::Now() + kFinishedAmWait));
        if (am_status.ok()) {
          MergeAmStatus(*am_status, &s);
        } else {
          TONY_LOG(DEBUG) << "AM status of " << id_text_ << ": " << am_status.status();
        }
      }
      CleanUpStaging(deadline);
    }
    return s;
  }

  // Why the application waits, from the RM (wait_facts.h), recomputed at most every
  // kWaitReasonAge and within kWaitReasonBudget of `deadline`'s time: a status stays quick.
  WaitReason WhyWaiting(const yarn::ApplicationReport& report, absl::Time deadline) {
    {
      absl::MutexLock lock(&mu_);
      if (absl::Now() - wait_reason_at_ < kWaitReasonAge) return wait_reason_;
    }
    WaitSources sources;
    sources.yarn = cluster_->yarn.get();
    sources.http = &http_;
    if (auto urls = conf::RmWebUrls(cluster_->conf); urls.ok()) sources.rm_web_urls = *urls;
    sources.negotiate = cluster_->kerberos;
    if (sources.negotiate) {
      auto ccache = SpnegoCcache(*cluster_);
      if (!ccache.ok()) sources.http = nullptr;  // the queue's numbers stay unknown
      if (ccache.ok()) sources.gss_ccache = *ccache;
    }
    WaitReason why = ClassifyWait(
        GatherWaitFacts(sources, report, {}, std::min(deadline, absl::Now() + kWaitReasonBudget)));
    absl::MutexLock lock(&mu_);
    wait_reason_ = why;
    wait_reason_at_ = absl::Now();
    return why;
  }

  // The AM's view of what YARN cannot know: task counts, diagnostics, TensorBoard.
  static void MergeAmStatus(const ApplicationStatus& am, ApplicationStatus* s) {
    if (am.pending.empty()) {  // nothing waits any longer
      s->wait_reason.clear();
      s->wait_kind.clear();
    }
    s->progress = am.progress;
    if (!am.diagnostics.empty()) s->diagnostics = am.diagnostics;
    if (s->tracking_url.empty()) s->tracking_url = am.tracking_url;
    s->tensorboard_url = am.tensorboard_url;
    s->pending = am.pending;
    if (am.state == AppState::kSuspended) {
      s->state = am.state;  // YARN knows it only as RUNNING
      s->suspended_since = am.suspended_since;
    }
  }

  // An AM's outcome ends the application unless YARN starts another attempt after a failure.
  static bool OutcomeIsFinal(AppState state, int attempt, int max_attempts) {
    if (state != AppState::kFailed) return true;
    return max_attempts > 0 && attempt >= max_attempts;
  }

  // The running AM's broker client; Unavailable before the AM is up, FailedPrecondition once the
  // application is over.
  absl::StatusOr<std::shared_ptr<broker::BrokerClient>> Broker() override {
    TONY_ASSIGN_OR_RETURN(yarn::ApplicationReport report,
                          cluster_->yarn->GetApplicationReport(id_));
    if (yarn::IsTerminal(report.state)) {
      return absl::FailedPreconditionError(
          absl::StrCat(id_text_, " is over: ", AppStateName(ToAppState(report)),
                       report.diagnostics.empty() || report.diagnostics == "N/A"
                           ? std::string()
                           : absl::StrCat(": ", report.diagnostics)));
    }
    if (secret_.empty()) {
      return absl::FailedPreconditionError(absl::StrCat("no secret for ", id_text_));
    }
    if (report.rpc_port <= 0 || report.host.empty() || report.host == "N/A") {
      return absl::UnavailableError(
          absl::StrCat(id_text_, ": the ApplicationMaster is not up yet"));
    }
    return AmClient(absl::StrCat(report.host, ":", report.rpc_port));
  }

  // Shared: a client in use on another thread survives the AM moving (a new attempt).
  std::shared_ptr<broker::BrokerClient> AmClient(const std::string& address) {
    absl::MutexLock lock(&mu_);
    if (am_ == nullptr || am_address_ != address) {
      broker::BrokerClientOptions options;
      options.call_timeout = absl::Seconds(5);
      options.tls_cert_pem = tls_cert_pem_;
      am_ = std::make_shared<broker::BrokerClient>(address, secret_, options);
      am_address_ = address;
    }
    return am_;
  }

  // The task counts the AM recorded as the job ended (empty if it recorded none), read once.
  // (Not cached while missing: the AM writes it after YARN already reports FINISHED.) Not read
  // under mu_: a slow HDFS must not hold up other calls.
  std::map<std::string, JobTypeProgress> FinalProgress(const std::string& user,
                                                       absl::Time deadline) {
    {
      absl::MutexLock lock(&mu_);
      if (final_progress_) return *final_progress_;
    }
    auto text = cluster_->hdfs->ReadToString(
        FinalProgressPath(user.empty() ? cluster_->user : user, id_text_), int64_t{64} << 20,
        deadline);
    if (!text.ok()) return {};
    auto p = DecodeProgress(*text);
    if (!p.ok()) return {};
    absl::MutexLock lock(&mu_);
    final_progress_ = *std::move(p);
    return *final_progress_;
  }

  // The AM removes the staging directory itself; after a YARN kill nobody else will. One caller
  // deletes it, not under mu_; another tries again if the deadline cut it short.
  void CleanUpStaging(absl::Time deadline) {
    {
      absl::MutexLock lock(&mu_);
      if (staging_dir_.empty() || staging_cleaned_) return;
      staging_cleaned_ = true;
    }
    auto deleted = cluster_->hdfs->Delete(staging_dir_, /*recursive=*/true, deadline);
    if (deleted.ok()) return;
    if (absl::IsDeadlineExceeded(deleted.status()) && absl::Now() >= deadline) {
      absl::MutexLock lock(&mu_);
      staging_cleaned_ = false;
      return;
    }
    TONY_LOG(WARNING) << "removing " << staging_dir_ << ": " << deleted.status();
  }

  const std::shared_ptr<YarnCluster> cluster_;
  const yarn::ApplicationId id_;
  const std::string id_text_;
  const std::string secret_;
  const std::string staging_dir_;
  const int max_attempts_;
  const std::string tls_cert_pem_;  // pinned broker certificate; empty: plaintext
  absl::Mutex mu_;
  std::shared_ptr<broker::BrokerClient> am_ ABSL_GUARDED_BY(mu_);
  std::string am_address_ ABSL_GUARDED_BY(mu_);
  // DoWatchAsync's AM (null: ask YARN) and the report its answers complete.
  std::shared_ptr<broker::BrokerClient> watch_am_ ABSL_GUARDED_BY(mu_);
  ApplicationStatus watch_base_ ABSL_GUARDED_BY(mu_);
  bool staging_cleaned_ ABSL_GUARDED_BY(mu_) = false;
  std::optional<std::map<std::string, JobTypeProgress>> final_progress_ ABSL_GUARDED_BY(mu_);
  // The RM's web services (WhyWaiting); thread-safe.
  http::Client http_;
  WaitReason wait_reason_ ABSL_GUARDED_BY(mu_);
  absl::Time wait_reason_at_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
};

class YarnSubmitter : public Submitter {
 public:
  YarnSubmitter(std::shared_ptr<YarnCluster> cluster, std::string bin_dir, bool broker_tls)
      : cluster_(std::move(cluster)),
        bin_dir_(std::move(bin_dir)),
        broker_tls_(broker_tls || cluster_->kerberos) {}

  using Submitter::List;
  using Submitter::Open;
  using Submitter::ReadLog;

  // In yarn_queries.cc.
  absl::StatusOr<std::unique_ptr<Application>> Open(absl::string_view id,
                                                    const CallOptions& call) override {
    return OpenYarnApplicationById(cluster_, id, CallDeadline(call));
  }
  absl::StatusOr<std::vector<ApplicationSummary>> List(const ListOptions& options,
                                                       const CallOptions& call) override {
    return ListYarnApplications(*cluster_, options, CallDeadline(call));
  }
  absl::StatusOr<std::string> ReadLog(absl::string_view id, absl::string_view task,
                                      absl::string_view file, const CallOptions& call) override {
    TONY_ASSIGN_OR_RETURN(TaskLog log,
                          ReadYarnTaskLog(*cluster_, id, task, file, CallDeadline(call)));
    return std::move(log.contents);
  }
  absl::StatusOr<TaskLog> ReadTaskLog(absl::string_view id, absl::string_view task,
                                      absl::string_view file, const CallOptions& call) override {
    return ReadYarnTaskLog(*cluster_, id, task, file, CallDeadline(call));
  }
  std::string user() const override { return cluster_->user; }

  using Submitter::Submit;

  absl::StatusOr<std::unique_ptr<Application>> Submit(const JobSpec& input, const CallOptions& call,
                                                      const Cancellation& cancel) override {
    const absl::Time deadline = CallDeadline(call);
    TONY_ASSIGN_OR_RETURN(Prepared job, Prepare(input));
    const JobSpec& spec = job.spec;
    const std::string what =
        absl::StrCat("submission of ", spec.name.empty() ? "a job" : spec.name);
    // Every request of staging and submission ends by the caller's deadline and is not made
    // once the caller cancelled.
    const std::unique_ptr<yarn::YarnClient> yarn =
        BoundYarnClient(*cluster_->yarn, deadline, cancel, what);
    const std::unique_ptr<hdfs::WebHdfsClient> fs = cluster_->hdfs->BoundedBy(deadline);
    TONY_RETURN_IF_ERROR(Interrupted(deadline, cancel, what, "before it reached the cluster"));
    // Queue, labels and node sizes first: a bad one creates no application at all.
    TONY_ASSIGN_OR_RETURN(yarn::QueueInfo queue, CheckQueue(spec, *yarn));
    TONY_RETURN_IF_ERROR(CheckNodes(spec, queue, *yarn));
    TONY_ASSIGN_OR_RETURN(yarn::NewApplication app, yarn->CreateApplication());
    TONY_RETURN_IF_ERROR(CheckFits(spec, app.max_capability, *yarn));
    TONY_ASSIGN_OR_RETURN(std::string secret, broker::GenerateSecret());
    broker::TlsIdentity tls;
    if (broker_tls_) {
      TONY_ASSIGN_OR_RETURN(tls, broker::GenerateTlsIdentity());
    }
    const std::string id = app.id.ToString();
    const std::string staging =
        absl::StrCat(StagingRoot(cluster_->user, cluster_->cluster_key), "/", id);
    MarkStagingBy(id);

    // From here on a failure removes the staging directory: nothing of it is left behind.
    auto ctx = StageAndDescribe(job, app.id, secret, tls, staging, *fs, cancel);
    absl::Status ready =
        ctx.ok() ? Interrupted(deadline, cancel, what, "before YARN had it") : ctx.status();
    if (!ready.ok()) {
      RemoveStaging(staging);
      return ready;
    }
    if (absl::Status s = yarn->SubmitApplication(*ctx); !s.ok()) {
      return AfterFailedSubmission(app.id, staging, s);
    }
    // YARN has the application: it is the caller's now, however late (Submitter::Submit).
    SaveLocally(id, secret, tls, staging);
    TONY_LOG(INFO) << "submitted " << id << " to queue " << spec.queue;
    if (spec.priority) WarnIfPriorityCapped(*spec.priority, app.id, deadline);
    StartSweep(id);
    return OpenYarnApplication(cluster_, app.id, secret, staging, ctx->max_app_attempts,
                               tls.cert_pem);
  }

  void SubmitAsync(const JobSpec& spec, const CallOptions& call, const Cancellation& cancel,
                   SubmitCallback done) override {
    RunSubmitAsync(async_, spec, call, cancel, std::move(done),
                   [this](const JobSpec& s, const CallOptions& c, const Cancellation& k) {
                     return Submit(s, c, k);
                   });
  }

  ~YarnSubmitter() override {
    async_.Stop();  // before what the submissions in flight use goes
    std::thread sweeper;
    {
      absl::MutexLock lock(&sweep_mu_);
      sweeper = std::move(sweeper_);
    }
    if (sweeper.joinable()) sweeper.join();
  }

 private:
  // What is known of a job before anything reaches the cluster.
  struct Prepared {
    JobSpec spec;
    std::string bundle;  // the runtime bundle's local path
    std::optional<PythonEnvArchive> python_env;
    std::unique_ptr<PackedSource> source;
  };

  // Validation and the local work: nothing reaches the cluster.
  absl::StatusOr<Prepared> Prepare(const JobSpec& given) {
    // The cluster's site file (tony-site.yaml) first: its template, defaults and limits; the
    // spec is validated once they are applied.
    TONY_ASSIGN_OR_RETURN(spec::SiteConfig site, spec::LoadSiteConfig(cluster_->conf.conf_dirs()));
    TONY_ASSIGN_OR_RETURN(const JobSpec input,
                          spec::ApplyAndCheckSite(
                              given, site, {cluster_->user, spec::LocalGroupsOf(cluster_->user)}));
    // Configuration the AM gets is checked before anything reaches the cluster.
    TONY_RETURN_IF_ERROR(history::UsageIntervalFromConf(cluster_->conf).status());
    Prepared job;
    job.spec = ExpandElastic(input);
    TONY_ASSIGN_OR_RETURN(job.bundle, FindRuntimeBundle(bin_dir_));
    if (!job.spec.python_env.empty()) {
      TONY_ASSIGN_OR_RETURN(job.python_env, InspectPythonEnv(job.spec.python_env));
    }
    // Packed before anything reaches the cluster: a tree that cannot be packed (a loop, a
    // path too long for the tar) is refused with nothing uploaded.
    if (!job.spec.source_dir.empty()) {
      TONY_ASSIGN_OR_RETURN(job.source, PackedSource::Pack(job.spec.source_dir));
    }
    return job;
  }

  // Cancelled when `cancel` is, DeadlineExceeded once `deadline` passed; `when` says where the
  // submission was.
  static absl::Status Interrupted(absl::Time deadline, const Cancellation& cancel,
                                  const std::string& what, absl::string_view when) {
    if (cancel.cancelled()) return CancelledError(absl::StrCat(what, " ", when));
    if (absl::Now() >= deadline) {
      return absl::DeadlineExceededError(
          absl::StrCat(what, ": the deadline passed ", when, "; nothing was submitted"));
    }
    return absl::OkStatus();
  }

  // Removes what was staged for a job that was not submitted, within a limit of its own (the
  // caller's deadline may be over); a directory left behind goes in a later sweep.
  void RemoveStaging(const std::string& staging) {
    auto deleted = cluster_->hdfs->Delete(staging, /*recursive=*/true, absl::Now() + kCleanupLimit);
    if (!deleted.ok()) {
      TONY_LOG(WARNING) << "could not remove the staging directory " << staging << ": "
                        << deleted.status() << " (a later submission's sweep removes it)";
    }
  }

  // SubmitApplication failed with `error`. A DeadlineExceeded may have left the application
  // with the ResourceManager: it is killed, so that nothing runs the caller does not know of.
  absl::Status AfterFailedSubmission(const yarn::ApplicationId& app, const std::string& staging,
                                     const absl::Status& error) {
    if (!absl::IsDeadlineExceeded(error)) {
      RemoveStaging(staging);
      return error;
    }
    const std::string id = app.ToString();
    absl::Status kill = cluster_->yarn->KillApplication(app, "the submission's deadline passed",
                                                        absl::Now() + kCleanupLimit);
    RemoveStaging(staging);
    if (kill.ok()) {
      return absl::DeadlineExceededError(absl::StrCat(error.message(), "; the application ", id,
                                                      " was killed and its staging removed"));
    }
    if (absl::IsNotFound(kill)) {
      return absl::DeadlineExceededError(
          absl::StrCat(error.message(), "; the application ", id, " was not submitted"));
    }
    return absl::DeadlineExceededError(
        absl::StrCat(error.message(), "; the application ", id,
                     " may have been submitted and could not be killed (", kill.message(),
                     "): kill it with `ytf kill ", id, "`"));
  }

  // Only this machine's user may read the secret later (ytf status/kill).
  void SaveLocally(const std::string& id, const std::string& secret, const broker::TlsIdentity& tls,
                   const std::string& staging) {
    std::string local_dir = LocalAppDir(id);
    if (!MakeDirectories(local_dir, 0700).ok()) return;
    (void)WriteFileAtomically(local_dir + "/secret", secret, 0600);
    if (broker_tls_) (void)WriteFileAtomically(local_dir + "/tls.cert", tls.cert_pem, 0600);
    // Which transport the broker speaks: a missing tls.cert must never mean plaintext for a
    // TLS job (the secret would go out in clear before the TLS server refused it).
    (void)WriteFileAtomically(local_dir + "/transport", broker_tls_ ? "tls" : "plaintext", 0600);
    (void)WriteFileAtomically(local_dir + "/staging", staging, 0600);
  }

  // Stages the job's files and describes the application to YARN.
  absl::StatusOr<yarn::ApplicationSubmissionContext> StageAndDescribe(
      const Prepared& job, const yarn::ApplicationId& app, const std::string& secret,
      const broker::TlsIdentity& tls, const std::string& staging, hdfs::WebHdfsClient& fs,
      const Cancellation& cancel) {
    const JobSpec& spec = job.spec;
    const std::string home = absl::StrCat("/user/", cluster_->user, "/.tony");
    std::string spec_yaml;  // as shipped: in the containers' credentials
    TONY_ASSIGN_OR_RETURN(auto staged, Stage(fs, cancel, spec, job.bundle, job.python_env,
                                             job.source.get(), home, staging, &spec_yaml));
    yarn::ApplicationSubmissionContext ctx;
    ctx.id = app;
    ctx.name = spec.name;
    ctx.queue = spec.queue;
    ctx.application_type = spec.application_type;
    ctx.priority = spec.priority;
    // Java clients lower-case tags before they reach the ResourceManager (YARN's
    // ApplicationSubmissionContext does), whose tag filter then compares exactly: so do we.
    for (const std::string& tag : spec.tags) ctx.tags.push_back(absl::AsciiStrToLower(tag));
    if (std::find(ctx.tags.begin(), ctx.tags.end(), kApplicationTag) == ctx.tags.end()) {
      ctx.tags.push_back(kApplicationTag);
    }
    // YARN silently caps attempts at the cluster's maximum; say so, and tell the AM the truth.
    const int64_t cap =
        cluster_->conf.GetInt("yarn.resourcemanager.am.max-attempts", 2).value_or(2);
    ctx.max_app_attempts = static_cast<int32_t>(std::min<int64_t>(spec.max_attempts, cap));
    if (ctx.max_app_attempts < spec.max_attempts) {
      TONY_LOG(WARNING) << "max_attempts " << spec.max_attempts
                        << " is more than this cluster allows (yarn.resourcemanager.am."
                           "max-attempts = "
                        << cap << "): the job gets " << ctx.max_app_attempts << " attempts";
    }
    // Work-preserving AM restart: YARN keeps the task containers when an AM attempt dies, and
    // the next attempt adopts them.
    ctx.keep_containers_across_attempts = ctx.max_app_attempts > 1 && spec.work_preserving_restart;
    ctx.am_node_label_expression = spec.am_node_label;
    ctx.am_resource.memory_mb = spec.am_memory_mb;
    ctx.am_resource.vcores = spec.am_vcores;
    // The AM ends a job past its timeout as FAILED, naming the deadline; YARN's lifetime, a
    // margin later, is only the fallback for an AM that cannot.
    if (spec.timeouts.job != absl::InfiniteDuration()) {
      ctx.lifetime = spec.timeouts.job + spec.timeouts.stop_grace + absl::Minutes(1);
    }
    // The AM runs no Python: the env is for the task containers only.
    std::map<std::string, yarn::LocalResource> am_resources = staged;
    am_resources.erase(kPythonEnvLink);
    TONY_ASSIGN_OR_RETURN(ctx.am_container,
                          AmLaunchContext(fs, am_resources, staged, secret, staging));
    ctx.am_container.tokens.AddSecret(kSpecCredentialAlias, spec_yaml);
    if (broker_tls_) {
      // Like the secret: in the credentials (the AM hands them, minus its AMRMToken and this
      // key, to every executor), never in the environment.
      ctx.am_container.tokens.AddSecret(broker::kTlsKeyCredentialAlias, tls.key_pem);
      ctx.am_container.tokens.AddSecret(broker::kTlsCertCredentialAlias, tls.cert_pem);
    }
    ctx.am_container.environment[kEnvMaxAttempts] = std::to_string(ctx.max_app_attempts);
    // YARN's web proxy (the AM page) and the RM's pages enforce it; the history server reads
    // the same list from the event log.
    ctx.am_container.view_acl = spec.view_acls;
    return ctx;
  }

  // The ResourceManager caps a priority above yarn.cluster.max-application-priority without a
  // word (the client's configuration need not know the cluster's maximum): say so. Asked
  // within the submission's deadline only.
  void WarnIfPriorityCapped(int asked, const yarn::ApplicationId& id, absl::Time deadline) {
    auto report = cluster_->yarn->GetApplicationReport(
        id, std::min(deadline, absl::Now() + absl::Seconds(10)));
    if (!report.ok() || !report->priority || *report->priority >= asked) return;
    TONY_LOG(WARNING) << "priority " << asked
                      << " is more than this cluster allows (yarn.cluster.max-application-"
                         "priority): the job runs at priority "
                      << *report->priority;
  }

  absl::StatusOr<yarn::LocalResource> Resource(const std::string& path,
                                               yarn::LocalResourceType type,
                                               const hdfs::FileStatus& st) {
    yarn::LocalResource r;
    std::string fs = cluster_->hdfs->options().default_fs;
    while (absl::EndsWith(fs, "/")) fs.pop_back();
    r.url = fs + path;
    r.size = st.length;
    r.timestamp_ms = st.modification_time_ms;
    r.type = type;
    r.visibility = yarn::LocalResourceVisibility::kApplication;
    return r;
  }

  // Through `fs`, the client bounded by the submission's deadline; `cancel` is looked at before
  // each upload.
  absl::StatusOr<std::map<std::string, yarn::LocalResource>> Stage(
      hdfs::WebHdfsClient& fs, const Cancellation& cancel, const JobSpec& spec,
      const std::string& bundle, const std::optional<PythonEnvArchive>& python_env,
      const PackedSource* source, const std::string& home, const std::string& staging,
      std::string* spec_yaml) {
    auto not_cancelled = [&cancel, &staging]() -> absl::Status {
      if (!cancel.cancelled()) return absl::OkStatus();
      return CancelledError(absl::StrCat("staging to ", staging));
    };
    // A missing HDFS home is made as Hadoop makes homes (0755), not by the 0700 mkdir below,
    // which would make it, too, closed to others, and the cache under it unusable as PUBLIC.
    const std::string user_home = absl::StrCat("/user/", cluster_->user);
    if (absl::IsNotFound(fs.Stat(user_home).status())) (void)fs.Mkdirs(user_home, 0755);
    // Private to the user: the staging area holds the job's files, the history where its
    // containers run. Directories made here are 0700; a home made by an older version is closed.
    TONY_RETURN_IF_ERROR(fs.Mkdirs(staging, 0700));
    TONY_RETURN_IF_ERROR(fs.SetPermission(home, 0700));
    hdfs::UploadOptions private_file;
    private_file.permission = 0600;
    std::map<std::string, yarn::LocalResource> resources;

    // The runtime bundle is the same for every job of a build, the Python env for many: each is
    // uploaded once, and each node localizes it once (PUBLIC) where the cluster allows.
    TONY_ASSIGN_OR_RETURN(std::string cache_dir,
                          cluster_->conf.Get(kCacheDirKey, DefaultCacheDir(cluster_->user)));
    std::vector<std::string> trusted = absl::StrSplit(
        cluster_->conf.Get(kTrustedOwnersKey).value_or(""), ',', absl::SkipWhitespace());
    for (std::string& owner : trusted) owner = std::string(absl::StripAsciiWhitespace(owner));
    // A cache directory others could swap files in is not used: the files go to staging.
    ArtifactCache cache(&fs, cache_dir, std::move(trusted), staging);
    auto cache_put = [&](const std::string& local, absl::string_view name, absl::string_view ext,
                         const std::string& key,
                         absl::string_view what) -> absl::StatusOr<yarn::LocalResource> {
      TONY_RETURN_IF_ERROR(not_cancelled());
      const absl::Time start = absl::Now();
      TONY_ASSIGN_OR_RETURN(CachedArtifact a,
                            cache.Put(local, name, ext, yarn::LocalResourceType::kArchive, key));
      if (a.uploaded) {
        TONY_LOG(INFO) << "uploaded " << what << " (" << a.resource.size / (1 << 20)
                       << " MB) to the HDFS cache in " << absl::FormatDuration(absl::Now() - start)
                       << ": " << a.path;
      } else {
        TONY_LOG(DEBUG) << what << " is in the HDFS cache: " << a.path;
      }
      return a.resource;
    };
    TONY_ASSIGN_OR_RETURN(resources[kRuntimeLink],
                          cache_put(bundle, "tony-runtime", ".tar.gz", "", "the runtime bundle"));

    // Inside containers every shipped file sits in the working directory under its base name.
    JobSpec shipped = spec;
    if (python_env) {
      // The archive's own extension: YARN unpacks by it.
      const bool zip = python_env->format == PythonEnvArchive::Format::kZip;
      TONY_ASSIGN_OR_RETURN(resources[kPythonEnvLink],
                            cache_put(spec.python_env, "python-env", zip ? ".zip" : ".tar.gz",
                                      python_env->content_key, "the Python env"));
      shipped.python_env = kPythonEnvLink;
    }
    std::set<std::string> names = {kRuntimeLink, kSpecLink, kPythonEnvLink, kSourceLink};
    auto ship = [&](const std::string& local, yarn::LocalResourceType type) -> absl::Status {
      std::string name = BaseName(local);
      if (!names.insert(name).second) {
        return absl::InvalidArgumentError(
            absl::StrCat("two shipped files are both named '", name, "' (", local,
                         "); every script, file and archive needs its own base name"));
      }
      TONY_RETURN_IF_ERROR(not_cancelled());
      TONY_ASSIGN_OR_RETURN(auto status,
                            fs.Upload(local, absl::StrCat(staging, "/", name), private_file));
      TONY_ASSIGN_OR_RETURN(resources[name],
                            Resource(absl::StrCat(staging, "/", name), type, status));
      return absl::OkStatus();
    };
    if (!spec.script_file.empty()) {
      TONY_RETURN_IF_ERROR(ship(spec.script_file, yarn::LocalResourceType::kFile));
      shipped.script_file = BaseName(spec.script_file);
    }
    shipped.files.clear();
    for (const std::string& f : spec.files) {
      TONY_RETURN_IF_ERROR(ship(f, yarn::LocalResourceType::kFile));
      shipped.files.push_back(BaseName(f));
    }
    shipped.archives.clear();
    for (const std::string& a : spec.archives) {
      TONY_RETURN_IF_ERROR(ship(a, yarn::LocalResourceType::kArchive));
      shipped.archives.push_back(BaseName(a));
    }
    if (source != nullptr) {
      const std::string remote = absl::StrCat(staging, "/", kSourceLink, ".tar");
      TONY_RETURN_IF_ERROR(not_cancelled());
      TONY_ASSIGN_OR_RETURN(hdfs::FileStatus st, fs.Upload(source->tar(), remote, private_file));
      TONY_LOG(INFO) << "source directory " << spec.source_dir << ": " << st.length
                     << " bytes packed";
      TONY_ASSIGN_OR_RETURN(resources[kSourceLink],
                            Resource(remote, yarn::LocalResourceType::kArchive, st));
      shipped.source_dir = kSourceLink;
    }
    *spec_yaml = JobSpecToYaml(shipped);
    return resources;
  }

  // `am_resources` for the AM's own container; `resources` for every task's.
  absl::StatusOr<yarn::ContainerLaunchContext> AmLaunchContext(
      const hdfs::WebHdfsClient& fs, const std::map<std::string, yarn::LocalResource>& am_resources,
      const std::map<std::string, yarn::LocalResource>& resources, const std::string& secret,
      const std::string& staging) {
    yarn::ContainerLaunchContext am;
    am.local_resources = am_resources;
    TONY_ASSIGN_OR_RETURN(auto schedulers, conf::RmSchedulerAddresses(cluster_->conf));
    std::vector<std::string> scheduler_list;
    for (const auto& hp : schedulers) scheduler_list.push_back(hp.ToString());
    am.environment["TONY_AM_BACKEND"] = "yarn";
    // In the container's credentials, not its environment: YARN writes the environment into
    // launch_container.sh, which it serves with the container's logs.
    am.tokens.AddSecret(broker::kSecretCredentialAlias, secret);
    if (cluster_->kerberos) {
      // The job's HDFS access: the AM and every task use this token, never a keytab. The RM
      // renews it (renewer: its principal) while the job runs and cancels it at the end.
      TONY_ASSIGN_OR_RETURN(std::string service, NameNodeTokenService(cluster_->conf));
      TONY_ASSIGN_OR_RETURN(auto rms, conf::RmAddresses(cluster_->conf));
      const std::string renewer = ipc::ResolveServerPrincipal(
          cluster_->rm_principal, rms.empty() ? std::string() : rms.front().host);
      TONY_ASSIGN_OR_RETURN(ipc::Token token, fs.GetDelegationToken(renewer, service));
      const std::string alias = token.service;  // not a reference into the moved token
      am.tokens.AddToken(alias, std::move(token));
    }
    am.environment[kEnvSchedulerAddresses] = absl::StrJoin(scheduler_list, ",");
    am.environment[kEnvStagingDir] = staging;
    am.environment[kEnvNameNodes] = absl::StrJoin(cluster_->hdfs->options().namenodes, ",");
    am.environment[kEnvNameNodeScheme] = cluster_->hdfs->options().scheme;
    if (const std::string& ca = cluster_->hdfs->options().ca_file; !ca.empty()) {
      TONY_ASSIGN_OR_RETURN(std::string pem, ReadRegularFile(ca, 1 << 20));
      am.tokens.AddSecret(kCaCredentialAlias, std::move(pem));
    }
    TONY_ASSIGN_OR_RETURN(std::vector<std::string> proxies, conf::WebProxyUrls(cluster_->conf));
    am.environment[kEnvWebProxy] = absl::StrJoin(proxies, ",");
    if (auto rm_web = conf::RmWebUrls(cluster_->conf); rm_web.ok()) {
      am.environment[kEnvRmWeb] = absl::StrJoin(*rm_web, ",");
    }
    am.environment[kEnvDefaultFs] = cluster_->hdfs->options().default_fs;
    am.environment[kEnvUser] = cluster_->user;
    TONY_ASSIGN_OR_RETURN(bool app_acls, cluster_->conf.GetBool("yarn.acl.enable", false));
    if (app_acls) {
      am.environment[kEnvViewAdmins] = cluster_->conf.GetRaw("yarn.admin.acl").value_or("*");
    }
    // The job's event log (docs/events.md); an empty tony.history.dir turns it off.
    TONY_ASSIGN_OR_RETURN(am.environment[history::kEnvHistoryDir],
                          cluster_->conf.Get(history::kHistoryDirKey, history::kDefaultHistoryDir));
    TONY_ASSIGN_OR_RETURN(absl::Duration usage_every,
                          history::UsageIntervalFromConf(cluster_->conf));
    am.environment[history::kEnvUsageInterval] = absl::StrCat(absl::ToInt64Seconds(usage_every));
    TONY_ASSIGN_OR_RETURN(absl::Duration heartbeat_timeout,
                          conf::HeartbeatTimeoutFromConf(cluster_->conf));
    am.environment[conf::kEnvHeartbeatTimeout] =
        absl::StrCat(absl::ToInt64Seconds(heartbeat_timeout));
    am.environment[kEnvRpcProtection] = std::string(ipc::ProtectionName(cluster_->min_protection));
    am.environment[kEnvDigestCiphers] = absl::StrJoin(cluster_->digest_ciphers, ",");
    am.environment["HADOOP_USER_NAME"] = cluster_->user;
    am.environment[kEnvLocalResources] = EncodeLocalResources(resources);
    if (const char* debug = std::getenv("TONY_LOG_DEBUG"); debug != nullptr && *debug != '\0') {
      am.environment["TONY_LOG_DEBUG"] = debug;
    }
    am.commands = {kAmBinary, "1><LOG_DIR>/tony-am.stdout", "2><LOG_DIR>/tony-am.stderr"};
    return am;
  }

  // Sweeps the staging area behind the job just submitted, on the submitter's own thread (the
  // destructor joins it), at most once per submitter: a client's submission is not delayed.
  // Under sweep_mu_: two submissions (SubmitAsync makes that common) may end here at once.
  void StartSweep(const std::string& app_id) {
    absl::MutexLock lock(&sweep_mu_);
    if (sweeper_.joinable()) return;
    sweeper_ = std::thread([cluster = cluster_, app_id] {
      StagingSweepOptions o;
      o.except_app = app_id;
      auto swept = SweepStaging(*cluster, o);
      if (!swept.ok()) {
        TONY_LOG(DEBUG) << "staging sweep: " << swept.status();
      } else if (!swept->removed.empty()) {
        TONY_LOG(INFO) << "removed the staging directories of " << swept->removed.size()
                       << " finished or abandoned jobs: " << absl::StrJoin(swept->removed, ", ");
      }
    });
  }

  const std::shared_ptr<YarnCluster> cluster_;
  const std::string bin_dir_;
  const bool broker_tls_;
  absl::Mutex sweep_mu_;
  std::thread sweeper_ ABSL_GUARDED_BY(sweep_mu_);
  AsyncCalls async_;  // SubmitAsync's calls; stopped first by the destructor
};

}  // namespace

AppState ToAppState(const yarn::ApplicationReport& report) {
  using S = yarn::YarnApplicationState;
  switch (report.state) {
    case S::kNew:
    case S::kNewSaving:
    case S::kSubmitted:
      return AppState::kSubmitted;
    case S::kAccepted:
      return AppState::kAccepted;
    case S::kRunning:
      return AppState::kRunning;
    case S::kFinished:
      switch (report.final_status) {
        case yarn::FinalApplicationStatus::kSucceeded:
          return AppState::kSucceeded;
        case yarn::FinalApplicationStatus::kKilled:
          return AppState::kKilled;
        default:
          return AppState::kFailed;
      }
    case S::kFailed:
      return AppState::kFailed;
    case S::kKilled:
      return AppState::kKilled;
  }
  return AppState::kFailed;
}

std::string StagingRoot(const std::string& user, const std::string& cluster_key) {
  return absl::StrCat(LegacyStagingRoot(user), "/", cluster_key);
}

std::string LegacyStagingRoot(const std::string& user) {
  return absl::StrCat("/user/", user, "/.tony/staging");
}

std::string ClusterKey(const conf::Configuration& conf) {
  // HA clusters name themselves; otherwise the RM addresses do (a shared HDFS serves clusters
  // whose RMs differ).
  std::string key = conf.Get("yarn.resourcemanager.cluster-id").value_or("");
  if (key.empty()) {
    std::vector<std::string> rms;
    if (absl::StatusOr<std::vector<conf::HostPort>> a = conf::RmAddresses(conf); a.ok()) {
      for (const conf::HostPort& hp : *a) rms.push_back(hp.ToString());
    }
    std::sort(rms.begin(), rms.end());
    ContentHasher h;
    const std::string joined = absl::StrJoin(rms, ",");
    h.Update(joined.data(), joined.size());
    return absl::StrCat("rm-", h.Finish());
  }
  for (char& c : key) {
    if (!absl::ascii_isalnum(c) && c != '-' && c != '_' && c != '.') c = '_';
  }
  return key;
}

namespace {

// This machine, as a staging marker names it: boot id (a reboot makes every pid new) and host.
std::string MachineIdentity() {
  std::string boot = ReadFileToString("/proc/sys/kernel/random/boot_id").value_or("unknown");
  char host[256] = {};
  ::gethostname(host, sizeof(host) - 1);
  return absl::StrCat(absl::StripAsciiWhitespace(boot), " ", host);
}

}  // namespace

void MarkStagingBy(const std::string& app_id) {
  const std::string dir = LocalAppDir(app_id);
  std::optional<ProcStat> self = ReadProcStat(::getpid());
  if (!self || !MakeDirectories(dir, 0700).ok()) return;
  (void)WriteFileAtomically(dir + "/submitter",
                            absl::StrCat(self->pid, " ", self->start_ticks, " ", MachineIdentity()),
                            0600);
}

namespace {

// Whether the process that staged `app_id` on this very machine (boot id and host name match:
// a home directory shared by NFS shows other hosts' markers) is known to be gone. False when
// there is no marker, it names another machine, or the process still runs.
bool StagingClientGone(const std::string& app_id) {
  absl::StatusOr<std::string> marker = ReadFileToString(LocalAppDir(app_id) + "/submitter");
  if (!marker.ok()) return false;
  std::vector<std::string> parts =
      absl::StrSplit(absl::StripAsciiWhitespace(*marker), ' ', absl::SkipEmpty());
  pid_t pid = 0;
  uint64_t start = 0;
  if (parts.size() != 4 || !absl::SimpleAtoi(parts[0], &pid) ||
      !absl::SimpleAtoi(parts[1], &start) ||
      absl::StrCat(parts[2], " ", parts[3]) != MachineIdentity()) {
    return false;
  }
  std::optional<ProcStat> now = ReadProcStat(pid);
  return !now || now->start_ticks != start || now->state == 'Z';
}

}  // namespace

absl::StatusOr<StagingSweepResult> SweepStaging(const YarnCluster& cluster,
                                                const StagingSweepOptions& options) {
  StagingSweepResult result;
  absl::Duration orphan_age = options.orphan_age;
  if (cluster.conf.GetRaw("tony.staging.orphan-age")) {
    TONY_ASSIGN_OR_RETURN(orphan_age,
                          cluster.conf.GetDuration("tony.staging.orphan-age", orphan_age));
  }
  // Only this cluster's staging: another YARN cluster on the same HDFS has its own directory,
  // whose applications this RM would call unknown.
  const std::string root = StagingRoot(cluster.user, cluster.cluster_key);
  absl::StatusOr<std::vector<hdfs::FileStatus>> entries = cluster.hdfs->List(root);
  if (!entries.ok()) {
    if (absl::IsNotFound(entries.status())) return result;
    return entries.status();
  }
  const int64_t now_ms = absl::ToUnixMillis(absl::Now());
  int looked = 0;
  for (const hdfs::FileStatus& e : *entries) {
    if (!e.is_directory() || e.name == options.except_app) continue;
    absl::StatusOr<yarn::ApplicationId> id = yarn::ParseApplicationId(e.name);
    if (!id.ok()) continue;
    if (++looked > options.max_entries) break;
    absl::StatusOr<yarn::ApplicationReport> report = cluster.yarn->GetApplicationReport(*id);
    bool remove = false;
    if (report.ok()) {
      using S = yarn::YarnApplicationState;
      remove = report->state == S::kFinished || report->state == S::kFailed ||
               report->state == S::kKilled;
    } else if (absl::IsNotFound(report.status())) {
      remove = StagingClientGone(e.name) ||
               absl::Milliseconds(now_ms - e.modification_time_ms) >= orphan_age;
    }
    if (!remove) {
      ++result.kept;
      continue;
    }
    absl::StatusOr<bool> deleted = cluster.hdfs->Delete(e.path, /*recursive=*/true);
    if (deleted.ok()) {
      result.removed.push_back(e.name);
      // The local marker goes with it; the secret stays for `ytf status` of a finished job.
      ::unlink((LocalAppDir(e.name) + "/submitter").c_str());
    } else {
      ++result.kept;
    }
  }
  return result;
}

std::string LocalAppDir(const std::string& app_id) {
  // Without a home directory: a path that cannot exist, so nothing lands in a shared /tmp.
  const std::string home = HomeDirectory();
  return absl::StrCat(home.empty() ? "/nonexistent-home" : home, "/.tony/apps/", app_id);
}

absl::StatusOr<YarnCluster> ConnectYarnCluster(const YarnSubmitterOptions& options) {
  conf::LoadOptions load;
  load.conf_dir = options.conf_dir;
  load.require_conf_dir = true;
  for (const auto& [k, v] : options.conf_overrides) load.overrides.emplace_back(k, v);
  YarnCluster cluster;
  TONY_ASSIGN_OR_RETURN(cluster.conf, conf::Configuration::Load(load));
  cluster.user = options.user.empty() ? conf::HadoopUserName() : options.user;
  TONY_ASSIGN_OR_RETURN(auto rms, conf::RmAddresses(cluster.conf));
  yarn::YarnClientOptions yarn_options;
  for (const auto& hp : rms) yarn_options.rm_addresses.push_back(hp.ToString());
  TONY_RETURN_IF_ERROR(KerberosLogin(options, &cluster));
  yarn_options.user = cluster.user;
  if (cluster.kerberos) {
    yarn_options.kerberos_server_principal = cluster.rm_principal;
    yarn_options.kerberos_login = cluster.kerberos_login;
  }
  cluster.cluster_key = ClusterKey(cluster.conf);
  TONY_ASSIGN_OR_RETURN(cluster.min_protection,
                        ipc::MinProtection(cluster.conf.Get("hadoop.rpc.protection").value_or("")));
  yarn_options.min_protection = cluster.min_protection;
  TONY_ASSIGN_OR_RETURN(
      cluster.digest_ciphers,
      ipc::ParseDigestCiphers(cluster.conf.Get(ipc::kDigestCiphersKey).value_or("")));
  yarn_options.connect_timeout = absl::Seconds(10);
  yarn_options.call_timeout = absl::Seconds(30);
  TONY_ASSIGN_OR_RETURN(cluster.yarn, yarn::NewYarnClient(yarn_options));
  TONY_ASSIGN_OR_RETURN(auto hdfs_options,
                        hdfs::WebHdfsClient::OptionsFromConfiguration(cluster.conf));
  hdfs_options.user = cluster.user;
  if (std::shared_ptr<const ipc::KerberosLogin> login = cluster.kerberos_login) {
    hdfs_options.spnego_ccache = [login] { return login->FreshCcache(); };
  }
  TONY_ASSIGN_OR_RETURN(cluster.hdfs, hdfs::WebHdfsClient::Create(hdfs_options));
  if (cluster.kerberos && options.user.empty()) {
    TONY_RETURN_IF_ERROR(UseMappedUserName(&cluster, &hdfs_options));
  }
  return cluster;
}

absl::StatusOr<std::string> SpnegoCcache(const YarnCluster& cluster) {
  if (cluster.kerberos_login == nullptr) return std::string();
  return cluster.kerberos_login->FreshCcache();
}

std::unique_ptr<Application> OpenYarnApplication(std::shared_ptr<YarnCluster> cluster,
                                                 const yarn::ApplicationId& id, std::string secret,
                                                 std::string staging_dir, int max_attempts,
                                                 std::string tls_cert_pem) {
  return MakeApplicationHandle(std::make_shared<YarnApplication>(
      std::move(cluster), id, std::move(secret), std::move(staging_dir), max_attempts,
      std::move(tls_cert_pem)));
}

std::unique_ptr<Submitter> NewYarnSubmitterFor(std::shared_ptr<YarnCluster> cluster,
                                               std::string bin_dir, bool broker_tls) {
  return std::make_unique<YarnSubmitter>(std::move(cluster), std::move(bin_dir), broker_tls);
}

}  // namespace tony::submit

namespace tony {

absl::StatusOr<std::unique_ptr<Submitter>> NewYarnSubmitter(const YarnSubmitterOptions& options) {
  TONY_ASSIGN_OR_RETURN(submit::YarnCluster cluster, submit::ConnectYarnCluster(options));
  return submit::NewYarnSubmitterFor(std::make_shared<submit::YarnCluster>(std::move(cluster)),
                                     options.bin_dir, options.broker_tls);
}

}  // namespace tony
