// Copyright libtony authors.
//
// tony::NewYarnSubmitter: stages a job in HDFS and submits tony-am to YARN; the Application it
// returns follows the job through the ResourceManager's report and, while the AM runs, the
// AM's own status service (the ClusterSpecBroker's GetStatus).

#include "submit/yarn_submitter.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <thread>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "broker/broker_client.h"
#include "broker/secret.h"
#include "common/file_util.h"
#include "common/logging.h"
#include "common/package_location.h"
#include "common/proc.h"
#include "common/status_macros.h"
#include "conf/hadoop_addresses.h"
#include "spec/python_env.h"
#include "submit/artifact_cache.h"
#include "submit/cluster_checks.h"
#include "submit/contract.h"

namespace tony::submit {
namespace {

constexpr absl::Duration kPollInterval = absl::Milliseconds(200);
constexpr absl::Duration kGracefulKillWait = absl::Seconds(20);

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
                  std::string secret, std::string staging_dir, int max_attempts)
      : cluster_(std::move(cluster)),
        id_(id),
        id_text_(id.ToString()),
        secret_(std::move(secret)),
        staging_dir_(std::move(staging_dir)),
        max_attempts_(max_attempts) {}

  const std::string& id() const override { return id_text_; }

  absl::StatusOr<ApplicationStatus> Status() override {
    TONY_ASSIGN_OR_RETURN(yarn::ApplicationReport report,
                          cluster_->yarn->GetApplicationReport(id_));
    ApplicationStatus s;
    s.id = id_text_;
    s.state = ToAppState(report);
    s.tracking_url = report.tracking_url;
    if (report.current_attempt) s.attempt = report.current_attempt->attempt;
    s.max_attempts = max_attempts_;
    if (report.diagnostics != "N/A") s.diagnostics = report.diagnostics;
    s.log_dir = absl::StrCat("ytf logs ", id_text_);
    if (s.state == AppState::kRunning && !secret_.empty() && report.rpc_port > 0 &&
        !report.host.empty() && report.host != "N/A") {
      std::shared_ptr<broker::BrokerClient> am =
          AmClient(absl::StrCat(report.host, ":", report.rpc_port));
      auto am_status = am->GetStatus();
      if (am_status.ok()) {
        s.progress = am_status->progress;
        if (!am_status->diagnostics.empty()) s.diagnostics = am_status->diagnostics;
        if (s.tracking_url.empty()) s.tracking_url = am_status->tracking_url;
        s.tensorboard_url = am_status->tensorboard_url;
      } else {
        TONY_LOG(DEBUG) << "AM status of " << id_text_ << ": " << am_status.status();
      }
    }
    if (IsFinal(s.state)) {
      CleanUpStaging();
      if (s.progress.empty()) s.progress = FinalProgress(report.user);
    }
    return s;
  }

  absl::StatusOr<ApplicationStatus> Wait(
      absl::Duration timeout,
      const std::function<void(const ApplicationStatus&)>& on_progress) override {
    const absl::Time deadline = absl::Now() + timeout;
    int failures = 0;
    while (true) {
      auto s = Status();
      if (!s.ok()) {
        // The RM may fail over or be busy for a moment; give up only on a persistent error.
        if (++failures >= 5 || absl::Now() >= deadline) return s.status();
      } else {
        failures = 0;
        std::string key = Rendering(*s);
        if (on_progress && key != last_rendering_) on_progress(*s);
        last_rendering_ = key;
        if (IsFinal(s->state)) return s;
      }
      absl::Duration left = deadline - absl::Now();
      if (left <= absl::ZeroDuration()) {
        return absl::DeadlineExceededError(
            absl::StrCat(id_text_, " is not finished after ", absl::FormatDuration(timeout)));
      }
      absl::SleepFor(std::min(left, kPollInterval));
    }
  }

  absl::Status Kill() override {
    TONY_ASSIGN_OR_RETURN(yarn::ApplicationReport report,
                          cluster_->yarn->GetApplicationReport(id_));
    if (yarn::IsTerminal(report.state)) return absl::OkStatus();
    // The AM stops its tasks in order and ends KILLED; YARN's kill is the fallback when the AM
    // is not up yet or does not answer.
    if (!secret_.empty() && report.rpc_port > 0 && report.host != "N/A" && !report.host.empty()) {
      absl::Status s =
          AmClient(absl::StrCat(report.host, ":", report.rpc_port))->Kill("killed by user");
      if (s.ok()) {
        auto done = Wait(kGracefulKillWait, nullptr);
        if (done.ok()) return absl::OkStatus();
      }
    }
    TONY_RETURN_IF_ERROR(cluster_->yarn->KillApplication(id_, "killed by user"));
    auto done = Wait(absl::Minutes(1), nullptr);
    if (!done.ok()) return done.status();
    CleanUpStaging();
    return absl::OkStatus();
  }

 private:
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

  static std::string Rendering(const ApplicationStatus& s) {
    std::string out = absl::StrCat(AppStateName(s.state), "|", s.attempt, "|", s.diagnostics);
    for (const auto& [job, p] : s.progress) {
      absl::StrAppend(&out, "|", job, ":", p.total, ",", p.allocated, ",", p.registered, ",",
                      p.running, ",", p.succeeded, ",", p.failed, ",", p.restarts);
    }
    return out;
  }

  // Shared: a client in use on another thread survives the AM moving (a new attempt).
  std::shared_ptr<broker::BrokerClient> AmClient(const std::string& address) {
    absl::MutexLock lock(&mu_);
    if (am_ == nullptr || am_address_ != address) {
      broker::BrokerClientOptions options;
      options.call_timeout = absl::Seconds(5);
      am_ = std::make_shared<broker::BrokerClient>(address, secret_, options);
      am_address_ = address;
    }
    return am_;
  }

  // The task counts the AM recorded as the job ended (empty if it recorded none), read once.
  std::map<std::string, JobTypeProgress> FinalProgress(const std::string& user) {
    absl::MutexLock lock(&mu_);
    if (!final_progress_) {
      final_progress_.emplace();
      auto text = cluster_->hdfs->ReadToString(
          FinalProgressPath(user.empty() ? cluster_->user : user, id_text_));
      if (text.ok()) {
        if (auto p = DecodeProgress(*text); p.ok()) *final_progress_ = std::move(*p);
      }
    }
    return *final_progress_;
  }

  // The AM removes the staging directory itself; after a YARN kill nobody else will.
  void CleanUpStaging() {
    absl::MutexLock lock(&mu_);
    if (staging_dir_.empty() || staging_cleaned_) return;
    staging_cleaned_ = true;
    auto deleted = cluster_->hdfs->Delete(staging_dir_, /*recursive=*/true);
    if (!deleted.ok()) TONY_LOG(WARNING) << "removing " << staging_dir_ << ": " << deleted.status();
  }

  const std::shared_ptr<YarnCluster> cluster_;
  const yarn::ApplicationId id_;
  const std::string id_text_;
  const std::string secret_;
  const std::string staging_dir_;
  const int max_attempts_;
  std::string last_rendering_;
  absl::Mutex mu_;
  std::shared_ptr<broker::BrokerClient> am_ ABSL_GUARDED_BY(mu_);
  std::string am_address_ ABSL_GUARDED_BY(mu_);
  bool staging_cleaned_ ABSL_GUARDED_BY(mu_) = false;
  std::optional<std::map<std::string, JobTypeProgress>> final_progress_ ABSL_GUARDED_BY(mu_);
};

class YarnSubmitter : public Submitter {
 public:
  YarnSubmitter(std::shared_ptr<YarnCluster> cluster, std::string bin_dir)
      : cluster_(std::move(cluster)), bin_dir_(std::move(bin_dir)) {}

  absl::StatusOr<std::unique_ptr<Application>> Submit(const JobSpec& spec) override {
    TONY_RETURN_IF_ERROR(ValidateJobSpec(spec));
    TONY_ASSIGN_OR_RETURN(std::string bundle, FindRuntimeBundle(bin_dir_));
    std::optional<PythonEnvArchive> python_env;
    if (!spec.python_env.empty()) {
      TONY_ASSIGN_OR_RETURN(python_env, InspectPythonEnv(spec.python_env));
    }
    // Queue, labels and node sizes first: a bad one creates no application at all.
    TONY_ASSIGN_OR_RETURN(yarn::QueueInfo queue, CheckQueue(spec, *cluster_->yarn));
    TONY_RETURN_IF_ERROR(CheckNodes(spec, queue, *cluster_->yarn));
    TONY_ASSIGN_OR_RETURN(yarn::NewApplication app, cluster_->yarn->CreateApplication());
    TONY_RETURN_IF_ERROR(CheckFits(spec, app.max_capability, *cluster_->yarn));
    TONY_ASSIGN_OR_RETURN(std::string secret, broker::GenerateSecret());
    const std::string id = app.id.ToString();
    const std::string home = absl::StrCat("/user/", cluster_->user, "/.tony");
    const std::string staging = absl::StrCat(StagingRoot(cluster_->user), "/", id);
    MarkStagingBy(id);

    auto staged = Stage(spec, bundle, python_env, home, staging);
    if (!staged.ok()) {
      (void)cluster_->hdfs->Delete(staging, true);
      return staged.status();
    }
    yarn::ApplicationSubmissionContext ctx;
    ctx.id = app.id;
    ctx.name = spec.name;
    ctx.queue = spec.queue;
    ctx.application_type = spec.application_type;
    ctx.tags = spec.tags;
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
    ctx.am_node_label_expression = spec.am_node_label;
    ctx.am_resource.memory_mb = spec.am_memory_mb;
    ctx.am_resource.vcores = spec.am_vcores;
    // The AM ends a job past its timeout as FAILED, naming the deadline; YARN's lifetime, a
    // margin later, is only the fallback for an AM that cannot.
    if (spec.timeouts.job != absl::InfiniteDuration()) {
      ctx.lifetime = spec.timeouts.job + spec.timeouts.stop_grace + absl::Minutes(1);
    }
    // The AM runs no Python: the env is for the task containers only.
    std::map<std::string, yarn::LocalResource> am_resources = *staged;
    am_resources.erase(kPythonEnvLink);
    TONY_ASSIGN_OR_RETURN(ctx.am_container,
                          AmLaunchContext(am_resources, *staged, secret, staging));
    ctx.am_container.environment[kEnvMaxAttempts] = std::to_string(ctx.max_app_attempts);

    if (absl::Status s = cluster_->yarn->SubmitApplication(ctx); !s.ok()) {
      (void)cluster_->hdfs->Delete(staging, true);
      return s;
    }
    // Only this machine's user may read the secret later (ytf status/kill).
    std::string local_dir = LocalAppDir(id);
    if (MakeDirectories(local_dir, 0700).ok()) {
      (void)WriteFileAtomically(local_dir + "/secret", secret, 0600);
      (void)WriteFileAtomically(local_dir + "/staging", staging, 0600);
    }
    TONY_LOG(INFO) << "submitted " << id << " to queue " << spec.queue;
    StartSweep(id);
    return OpenYarnApplication(cluster_, app.id, secret, staging, ctx.max_app_attempts);
  }

  ~YarnSubmitter() override {
    if (sweeper_.joinable()) sweeper_.join();
  }

 private:
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

  absl::StatusOr<std::map<std::string, yarn::LocalResource>> Stage(
      const JobSpec& spec, const std::string& bundle,
      const std::optional<PythonEnvArchive>& python_env, const std::string& home,
      const std::string& staging) {
    hdfs::WebHdfsClient& fs = *cluster_->hdfs;
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
    ArtifactCache cache(&fs, cache_dir);
    auto cache_put = [&](const std::string& local, absl::string_view name, absl::string_view ext,
                         const std::string& key,
                         absl::string_view what) -> absl::StatusOr<yarn::LocalResource> {
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
    std::set<std::string> names = {kRuntimeLink, kSpecLink, kPythonEnvLink};
    auto ship = [&](const std::string& local, yarn::LocalResourceType type) -> absl::Status {
      std::string name = BaseName(local);
      if (!names.insert(name).second) {
        return absl::InvalidArgumentError(
            absl::StrCat("two shipped files are both named '", name, "' (", local,
                         "); every script, file and archive needs its own base name"));
      }
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
    std::string spec_path = absl::StrCat(staging, "/", kSpecLink);
    TONY_ASSIGN_OR_RETURN(auto spec_status,
                          fs.UploadString(JobSpecToYaml(shipped), spec_path, private_file));
    TONY_ASSIGN_OR_RETURN(resources[kSpecLink],
                          Resource(spec_path, yarn::LocalResourceType::kFile, spec_status));
    return resources;
  }

  // `am_resources` for the AM's own container; `resources` for every task's.
  absl::StatusOr<yarn::ContainerLaunchContext> AmLaunchContext(
      const std::map<std::string, yarn::LocalResource>& am_resources,
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
    am.environment[kEnvSpecFile] = kSpecLink;
    am.environment[kEnvSchedulerAddresses] = absl::StrJoin(scheduler_list, ",");
    am.environment[kEnvStagingDir] = staging;
    am.environment[kEnvNameNodes] = absl::StrJoin(cluster_->hdfs->options().namenodes, ",");
    am.environment[kEnvDefaultFs] = cluster_->hdfs->options().default_fs;
    am.environment[kEnvUser] = cluster_->user;
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
  void StartSweep(const std::string& app_id) {
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
  std::thread sweeper_;
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

std::string StagingRoot(const std::string& user) {
  return absl::StrCat("/user/", user, "/.tony/staging");
}

void MarkStagingBy(const std::string& app_id) {
  const std::string dir = LocalAppDir(app_id);
  std::optional<ProcStat> self = ReadProcStat(::getpid());
  if (!self || !MakeDirectories(dir, 0700).ok()) return;
  (void)WriteFileAtomically(dir + "/submitter", absl::StrCat(self->pid, " ", self->start_ticks),
                            0600);
}

namespace {

// Whether this machine's process that staged `app_id` is known to be gone. False when there is
// no marker (staged elsewhere) or the process still runs.
bool StagingClientGone(const std::string& app_id) {
  absl::StatusOr<std::string> marker = ReadFileToString(LocalAppDir(app_id) + "/submitter");
  if (!marker.ok()) return false;
  std::vector<std::string> parts = absl::StrSplit(*marker, ' ', absl::SkipEmpty());
  pid_t pid = 0;
  uint64_t start = 0;
  if (parts.size() != 2 || !absl::SimpleAtoi(parts[0], &pid) ||
      !absl::SimpleAtoi(absl::StripAsciiWhitespace(parts[1]), &start)) {
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
  const std::string root = StagingRoot(cluster.user);
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
  const char* home = std::getenv("HOME");
  return absl::StrCat(home != nullptr && *home != '\0' ? home : "/tmp", "/.tony/apps/", app_id);
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
  yarn_options.user = cluster.user;
  yarn_options.connect_timeout = absl::Seconds(10);
  yarn_options.call_timeout = absl::Seconds(30);
  TONY_ASSIGN_OR_RETURN(cluster.yarn, yarn::NewYarnClient(yarn_options));
  TONY_ASSIGN_OR_RETURN(auto hdfs_options,
                        hdfs::WebHdfsClient::OptionsFromConfiguration(cluster.conf));
  hdfs_options.user = cluster.user;
  TONY_ASSIGN_OR_RETURN(cluster.hdfs, hdfs::WebHdfsClient::Create(std::move(hdfs_options)));
  return cluster;
}

std::unique_ptr<Application> OpenYarnApplication(std::shared_ptr<YarnCluster> cluster,
                                                 const yarn::ApplicationId& id, std::string secret,
                                                 std::string staging_dir, int max_attempts) {
  return std::make_unique<YarnApplication>(std::move(cluster), id, std::move(secret),
                                           std::move(staging_dir), max_attempts);
}

}  // namespace tony::submit

namespace tony {

absl::StatusOr<std::unique_ptr<Submitter>> NewYarnSubmitter(const YarnSubmitterOptions& options) {
  TONY_ASSIGN_OR_RETURN(submit::YarnCluster cluster, submit::ConnectYarnCluster(options));
  return std::unique_ptr<Submitter>(new submit::YarnSubmitter(
      std::make_shared<submit::YarnCluster>(std::move(cluster)), options.bin_dir));
}

}  // namespace tony
