// Copyright libtony authors.

#include "yarnam/yarn_am.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <set>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "am/node_exclusion.h"
#include "broker/am_address.h"
#include "broker/secret.h"
#include "broker/tls.h"
#include "common/egress.h"
#include "common/file_util.h"
#include "common/logging.h"
#include "common/status_macros.h"
#include "conf/hadoop_addresses.h"
#include "history/hdfs_event_sink.h"
#include "http/json.h"
#include "ipc/credentials.h"
#include "ipc/digest_md5.h"
#include "ipc/sasl.h"
#include "submit/contract.h"

namespace tony::yarnam {
namespace {

// Where the AM keeps the cluster's CA certificates (from its credentials) for curl, in its
// container's working directory.
constexpr char kCaFile[] = "tony-ca.pem";

}  // namespace

std::string YarnAm::Env(const char* name) const {
  auto it = env_.find(name);
  return it == env_.end() ? "" : it->second;
}

absl::StatusOr<std::string> YarnAm::RequiredEnv(const char* name) const {
  std::string v = Env(name);
  if (v.empty()) {
    return absl::FailedPreconditionError(
        absl::StrCat(name, " is not set: tony-am on YARN is started by ytf-submit's submitter"));
  }
  return v;
}

namespace {

yarn::FinalApplicationStatus ToFinal(AppState state) {
  switch (state) {
    case AppState::kSucceeded:
      return yarn::FinalApplicationStatus::kSucceeded;
    case AppState::kKilled:
      return yarn::FinalApplicationStatus::kKilled;
    default:
      return yarn::FinalApplicationStatus::kFailed;
  }
}

// Every address `host` resolves to, as text.
std::vector<std::string> ResolveAll(const std::string& host) {
  std::vector<std::string> out;
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  if (::getaddrinfo(host.c_str(), nullptr, &hints, &res) != 0) return out;
  for (addrinfo* ai = res; ai != nullptr; ai = ai->ai_next) {
    out.push_back(SockaddrToString(ai->ai_addr));
  }
  ::freeaddrinfo(res);
  return out;
}

}  // namespace

std::vector<std::string> YarnAm::RmWebUrls() const {
  return absl::StrSplit(Env(submit::kEnvRmWeb), ',', absl::SkipEmpty());
}

YarnAm::StatusPageGuard YarnAm::WebProxyGuard() const {
  StatusPageGuard guard;
  const std::string proxies = Env(submit::kEnvWebProxy);
  if (proxies.empty()) return guard;
  for (absl::string_view url : absl::StrSplit(proxies, ',', absl::SkipEmpty())) {
    absl::string_view authority = url;
    if (size_t scheme = authority.find("://"); scheme != absl::string_view::npos) {
      authority.remove_prefix(scheme + 3);
    }
    auto hp = conf::ParseHostPort(authority, 0, submit::kEnvWebProxy);
    if (!hp.ok()) continue;
    for (std::string& ip : ResolveAll(hp->host)) guard.allowed_peers.push_back(std::move(ip));
    if (guard.redirect_url.empty()) {
      guard.redirect_url = absl::StrCat(url, "/proxy/", application_id(), "/");
    }
  }
  if (guard.allowed_peers.empty()) {
    TONY_LOG(WARNING) << "the web proxy (" << proxies
                      << ") resolves to no address: the status page answers no one";
    guard.allowed_peers.push_back("-");  // no peer's address
  }
  return guard;
}

absl::StatusOr<std::unique_ptr<YarnAm>> YarnAm::Create(std::map<std::string, std::string> env) {
  std::unique_ptr<YarnAm> am(new YarnAm());
  am->env_ = std::move(env);
  TONY_ASSIGN_OR_RETURN(am->container_, yarn::ReadContainerEnvironment());
  if (!am->container_.am_rm_token) {
    return absl::FailedPreconditionError(
        "no AMRMToken in the container's token file (HADOOP_TOKEN_FILE_LOCATION): "
        "not an ApplicationMaster container");
  }
  TONY_RETURN_IF_ERROR(am->FindSpecFile());
  TONY_ASSIGN_OR_RETURN(std::string resources, am->RequiredEnv(submit::kEnvLocalResources));
  TONY_ASSIGN_OR_RETURN(am->resources_, submit::DecodeLocalResources(resources));
  am->staging_dir_ = am->Env(submit::kEnvStagingDir);
  am->user_ = am->Env(submit::kEnvUser);
  if (am->user_.empty()) am->user_ = am->container_.user;
  if (!absl::SimpleAtoi(am->Env(submit::kEnvMaxAttempts), &am->max_attempts_) ||
      am->max_attempts_ < 1) {
    am->max_attempts_ = 1;
  }
  TONY_RETURN_IF_ERROR(am->ConnectYarn());
  TONY_RETURN_IF_ERROR(am->ConnectHdfs());
  return am;
}

// The job spec rides in the credentials (submit::kSpecCredentialAlias); a file for whoever
// reads one (the AM core, and tasks that look at it), private like the token file.
absl::Status YarnAm::FindSpecFile() {
  spec_file_ = Env(submit::kEnvSpecFile);
  if (!spec_file_.empty()) return absl::OkStatus();
  std::optional<std::string> yaml = container_.credentials.FindSecret(submit::kSpecCredentialAlias);
  if (!yaml) {
    return absl::FailedPreconditionError(absl::StrCat(
        "no job spec: neither ", submit::kEnvSpecFile, " nor the '", submit::kSpecCredentialAlias,
        "' secret key of the container's credentials (was it submitted by this libtony?)"));
  }
  TONY_RETURN_IF_ERROR(broker::WriteSecretFile(submit::kSpecLink, *yaml));
  spec_file_ = submit::kSpecLink;
  return absl::OkStatus();
}

absl::Status YarnAm::ConnectYarn() {
  TONY_ASSIGN_OR_RETURN(std::string schedulers, RequiredEnv(submit::kEnvSchedulerAddresses));
  // What the client's hadoop.rpc.protection accepts at least, for the RM's and every NodeManager's
  // connection (StartContainers carries the tasks' credentials).
  TONY_ASSIGN_OR_RETURN(const ipc::Protection min_protection,
                        ipc::MinProtection(Env(submit::kEnvRpcProtection)));
  TONY_ASSIGN_OR_RETURN(const std::vector<std::string> ciphers,
                        ipc::ParseDigestCiphers(Env(submit::kEnvDigestCiphers)));
  nm_tokens_ = std::make_shared<yarn::NmTokenCache>();
  yarn::AmRmClientOptions rm_options;
  rm_options.min_protection = min_protection;
  rm_options.digest_ciphers = ciphers;
  for (absl::string_view a : absl::StrSplit(schedulers, ',', absl::SkipEmpty())) {
    rm_options.scheduler_addresses.emplace_back(a);
  }
  rm_options.am_rm_token = *container_.am_rm_token;
  rm_options.nm_tokens = nm_tokens_;
  TONY_ASSIGN_OR_RETURN(rm_, yarn::NewAmRmClient(rm_options));
  yarn::NmClientOptions nm_options;
  nm_options.nm_tokens = nm_tokens_;
  nm_options.min_protection = min_protection;
  nm_options.digest_ciphers = ciphers;
  TONY_ASSIGN_OR_RETURN(nm_, yarn::NewNmClient(nm_options));
  return absl::OkStatus();
}

// HDFS is for the history and the staging clean-up: a job runs without it.
absl::Status YarnAm::ConnectHdfs() {
  std::string namenodes = Env(submit::kEnvNameNodes);
  if (namenodes.empty()) return absl::OkStatus();
  hdfs::WebHdfsClient::Options fs;
  for (absl::string_view a : absl::StrSplit(namenodes, ',', absl::SkipEmpty())) {
    fs.namenodes.emplace_back(a);
  }
  fs.default_fs = Env(submit::kEnvDefaultFs);
  fs.user = user_;
  // HTTPS_ONLY clusters: the scheme the client used, and the CA it trusted (a file here:
  // curl reads one).
  if (std::string scheme = Env(submit::kEnvNameNodeScheme); !scheme.empty()) fs.scheme = scheme;
  if (std::optional<std::string> ca =
          container_.credentials.FindSecret(submit::kCaCredentialAlias)) {
    TONY_RETURN_IF_ERROR(WriteFileAtomically(kCaFile, *ca, 0644));
    fs.ca_file = kCaFile;
  }
  // Kerberos cluster: the job's delegation token (the client put it into the credentials);
  // the AM never holds a keytab.
  if (auto token = container_.credentials.FindTokenByKind(ipc::kHdfsDelegationTokenKind)) {
    fs.delegation = ipc::EncodeTokenUrlString(*token);
  }
  auto client = hdfs::WebHdfsClient::Create(std::move(fs));
  if (client.ok()) {
    hdfs_ = std::move(*client);
  } else {
    TONY_LOG(WARNING) << "no HDFS client: " << client.status();
  }
  return absl::OkStatus();
}

absl::StatusOr<yarn::RegisterResult> YarnAm::Register(int rpc_port,
                                                      const std::string& tracking_url) {
  absl::StatusOr<yarn::RegisterResult> r =
      rm_->Register(container_.nm_host, rpc_port, tracking_url);
  if (r.ok()) queue_ = r->queue;
  return r;
}

absl::Status YarnAm::StartLauncher(const std::map<std::string, std::string>& executor_env,
                                   std::function<void(const TaskContainerEvent&)> on_event,
                                   std::function<float()> progress) {
  TaskLauncherOptions options;
  options.rm = rm_.get();
  options.nm = nm_.get();
  options.local_resources = resources_;
  options.environment = executor_env;
  // What the executors need of the AM's own credentials: everything but the AMRMToken and the
  // broker's TLS private key, which only the AM may hold (an executor pins the certificate, it
  // never serves). The job secret is among the secret keys.
  options.tokens = container_.credentials;
  for (const auto& [alias, token] : container_.credentials.tokens()) {
    if (token.kind == ipc::kAmRmTokenKind) options.tokens.RemoveToken(alias);
  }
  options.tokens.RemoveSecret(broker::kTlsKeyCredentialAlias);
  options.environment["HADOOP_USER_NAME"] = user_;
  // A task this attempt starts after an earlier one ended (a whole-job restart, restart scope
  // job): its script resumes from its checkpoint (docs/task-environment.md). Adopted tasks keep
  // their environment.
  if (attempt() > 1) options.environment["TONY_RESUMED"] = std::to_string(attempt() - 1);
  if (std::string debug = Env("TONY_LOG_DEBUG"); !debug.empty()) {
    options.environment["TONY_LOG_DEBUG"] = debug;
  }
  options.on_event = std::move(on_event);
  options.progress = std::move(progress);
  options.docker_mounts = docker_mounts_;
  launcher_ = std::make_unique<YarnTaskLauncher>(std::move(options));
  return launcher_->Start();
}

void YarnAm::UseSpec(const JobSpec& spec) {
  docker_mounts_ = LocalPaths({spec.input_path, spec.output_path});
}

absl::Status YarnAm::WriteHistory() {
  if (hdfs_ == nullptr) return absl::OkStatus();
  const std::string path = submit::HistoryPath(user_, application_id());
  if (attempt() > 1 && !earlier_attempts_loaded_) {
    // Earlier attempts' containers stay listed, as "worker:1@1" etc., so that `ytf logs` still
    // shows why they failed.
    earlier_attempts_loaded_ = true;
    if (absl::StatusOr<std::string> text = hdfs_->ReadToString(path); text.ok()) {
      if (auto earlier = submit::DecodeTaskContainers(*text); earlier.ok()) {
        for (submit::TaskContainer& c : *earlier) {
          if (adopted_.count(c.container_id)) continue;  // listed by the launcher, as its task
          if (c.task.find('@') == std::string::npos) {
            auto id = yarn::ParseContainerId(c.container_id);
            if (!id.ok() || id->attempt.attempt >= attempt()) continue;
            c.task = absl::StrCat(c.task, "@", id->attempt.attempt);
          }
          earlier_attempts_.push_back(std::move(c));
        }
      }
    }
  }
  std::vector<submit::TaskContainer> containers;
  containers.push_back({"am", container_.container_id.ToString(),
                        absl::StrCat(container_.nm_host, ":", container_.nm_http_port)});
  if (launcher_ != nullptr) {
    for (submit::TaskContainer& c : launcher_->Containers()) containers.push_back(std::move(c));
  }
  containers.insert(containers.end(), earlier_attempts_.begin(), earlier_attempts_.end());
  size_t slash = path.rfind('/');
  // Private to the user (0700/0600): it maps containers to NodeManager addresses.
  if (!history_dir_ready_) {
    // Made private here, or closed if an older version made it open.
    TONY_RETURN_IF_ERROR(hdfs_->Mkdirs(path.substr(0, slash), 0700));
    TONY_RETURN_IF_ERROR(hdfs_->SetPermission(path.substr(0, slash), 0700));
    history_dir_ready_ = true;
  }
  hdfs::UploadOptions private_file;
  private_file.permission = 0600;
  // The first write (a new file) goes in place: readers see it once its bytes reach the
  // DataNode, not after the close (0.4 s here), so `ytf logs` right after a short job finds it.
  // Later ones replace it whole: `ytf logs` and a later attempt read it while it is rewritten
  // (an overwriting CREATE showed them an empty file; an AM killed mid-write left one).
  std::string encoded = submit::EncodeTaskContainers(containers);
  auto written = history_written_ || attempt() > 1
                     ? hdfs_->ReplaceWithString(std::move(encoded), path, private_file)
                     : hdfs_->UploadString(std::move(encoded), path, private_file);
  if (written.ok()) history_written_ = true;
  return written.ok() ? absl::OkStatus() : written.status();
}

namespace {

// The shared event log, with each role_scaled and node_excluded line also in the user's private
// directory: what a later attempt reads back must come from a file no other user can write.
class ScaleTargetTee : public history::EventSink {
 public:
  ScaleTargetTee(std::unique_ptr<history::EventSink> shared,
                 std::unique_ptr<history::EventSink> scale)
      : shared_(std::move(shared)), scale_(std::move(scale)) {}

  absl::Status Append(const std::string& bytes) override {
    for (absl::string_view line : absl::StrSplit(bytes, '\n', absl::SkipEmpty())) {
      if (absl::StrContains(line, "\"role_scaled\"") ||
          absl::StrContains(line, "\"node_excluded\"") ||
          absl::StrContains(line, "\"node_included\"")) {
        absl::StrAppend(&pending_, line, "\n");
      }
    }
    // The private copy keeps its own backlog: one that cannot be written (a full quota) must
    // not hold the shared log back. A target written twice (the EventLog retrying a batch the
    // shared log refused) is harmless: the last one counts.
    if (!pending_.empty()) {
      if (absl::Status s = scale_->Append(pending_); s.ok()) {
        pending_.clear();
      } else if (pending_.size() > kMaxPending) {
        // The newest targets count; whole lines only.
        pending_.erase(0, pending_.find('\n', pending_.size() - kMaxPending) + 1);
      }
    }
    return shared_->Append(bytes);
  }

 private:
  static constexpr size_t kMaxPending = size_t{1} << 20;
  const std::unique_ptr<history::EventSink> shared_;
  const std::unique_ptr<history::EventSink> scale_;
  std::string pending_;  // lines not yet in the private copy
};

}  // namespace

std::unique_ptr<history::EventLog> YarnAm::OpenEventLog() const {
  const std::string dir = Env(history::kEnvHistoryDir);
  if (dir.empty() || hdfs_ == nullptr) return nullptr;
  history::HdfsEventSinkOptions shared;
  shared.history_dir = dir;
  shared.app_id = application_id();
  shared.user = user_;
  shared.fallback_path = submit::PrivateEventLogPath(user_, application_id());
  return std::make_unique<history::EventLog>(std::make_unique<ScaleTargetTee>(
      std::make_unique<history::HdfsEventSink>(hdfs_.get(), std::move(shared)),
      std::make_unique<history::PrivateHdfsEventSink>(
          hdfs_.get(), submit::ScaleTargetsPath(user_, application_id()))));
}

absl::Status YarnAm::WriteFinalProgress(const std::map<std::string, JobTypeProgress>& progress) {
  if (hdfs_ == nullptr) return absl::OkStatus();
  const std::string path = submit::FinalProgressPath(user_, application_id());
  TONY_RETURN_IF_ERROR(hdfs_->Mkdirs(path.substr(0, path.rfind('/')), 0700));
  hdfs::UploadOptions private_file;
  private_file.permission = 0600;
  auto written = hdfs_->ReplaceWithString(submit::EncodeProgress(progress), path, private_file);
  return written.ok() ? absl::OkStatus() : written.status();
}

std::string YarnAm::am_address_dir() const {
  if (hdfs_ == nullptr || staging_dir_.empty()) return "";
  return absl::StrCat(staging_dir_, "/am-address");
}

namespace {

// "ip:port" for "host:port" (the first address the host resolves to), or "" when it does not
// resolve to an IPv4 address.
std::string NumericAddress(absl::string_view host_port) {
  size_t colon = host_port.rfind(':');
  if (colon == absl::string_view::npos) return "";
  const std::string host(host_port.substr(0, colon));
  addrinfo hints = {};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  if (::getaddrinfo(host.c_str(), nullptr, &hints, &res) != 0 || res == nullptr) return "";
  char ip[INET_ADDRSTRLEN] = {0};
  const auto* in = reinterpret_cast<const sockaddr_in*>(res->ai_addr);
  const bool ok = ::inet_ntop(AF_INET, &in->sin_addr, ip, sizeof(ip)) != nullptr;
  ::freeaddrinfo(res);
  return ok ? absl::StrCat(ip, host_port.substr(colon)) : "";
}

}  // namespace

std::map<std::string, std::string> YarnAm::AmAddressEnvironment() const {
  std::map<std::string, std::string> env;
  if (am_address_dir().empty()) return env;
  env[broker::kAmAddressDirEnv] = am_address_dir();
  // The static executor's glibc may not be able to load the node's NSS modules to resolve host
  // names: each NameNode by its IP address first, by name after.
  std::vector<std::string> namenodes;
  for (absl::string_view nn : absl::StrSplit(Env(submit::kEnvNameNodes), ',', absl::SkipEmpty())) {
    if (std::string ip = NumericAddress(nn); !ip.empty()) namenodes.push_back(ip);
  }
  for (absl::string_view nn : absl::StrSplit(Env(submit::kEnvNameNodes), ',', absl::SkipEmpty())) {
    namenodes.emplace_back(nn);
  }
  env[submit::kEnvNameNodes] = absl::StrJoin(namenodes, ",");
  // Over HTTPS the executor checks the NameNode's certificate against its names, whatever
  // address it connected to (the CA comes with the credentials).
  env[submit::kEnvNameNodeScheme] = Env(submit::kEnvNameNodeScheme);
  std::vector<std::string> hosts;
  for (absl::string_view nn : absl::StrSplit(Env(submit::kEnvNameNodes), ',', absl::SkipEmpty())) {
    hosts.emplace_back(nn.substr(0, nn.rfind(':')));
  }
  env[submit::kEnvNameNodeHosts] = absl::StrJoin(hosts, ",");
  return env;
}

absl::Status YarnAm::PublishAmAddress(const std::string& address) {
  const std::string dir = am_address_dir();
  if (dir.empty()) return absl::FailedPreconditionError("no HDFS or staging directory");
  return hdfs_->Mkdirs(absl::StrCat(dir, "/", broker::AmAddressName({attempt(), address})), 0700);
}

std::map<std::string, int> YarnAm::ScaleTargetsFromEventLog(const JobSpec& spec) const {
  std::map<std::string, int> targets;
  const std::string dir = Env(history::kEnvHistoryDir);
  const bool elastic = std::any_of(spec.job_types.begin(), spec.job_types.end(),
                                   [](const JobTypeSpec& jt) { return jt.elastic.has_value(); });
  if (!elastic || attempt() <= 1 || dir.empty() || hdfs_ == nullptr) return targets;
  // The user's private copy of the role_scaled lines: the shared log's name may be another user's.
  absl::StatusOr<std::string> log =
      hdfs_->ReadToString(submit::ScaleTargetsPath(user_, application_id()));
  if (!log.ok()) {
    // Not found: the first attempt died before its first flush, and had scaled nothing then.
    if (!absl::IsNotFound(log.status())) {
      TONY_LOG(WARNING) << "the event log, for the sizes elastic roles were scaled to: "
                        << log.status();
    }
    return targets;
  }
  for (absl::string_view line : absl::StrSplit(*log, '\n')) {
    if (line.find("\"role_scaled\"") == absl::string_view::npos) continue;
    http::Json j = http::Json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (!j.is_object() || j.value("event", "") != "role_scaled") continue;
    const http::Json& role = j["role"];
    const http::Json& tasks = j["tasks"];
    if (role.is_string() && tasks.is_number_integer()) {
      targets[role.get<std::string>()] = tasks.get<int>();
    }
  }
  for (const auto& [role, tasks] : targets) {
    TONY_LOG(INFO) << "attempt " << attempt() << ": " << role << " was scaled to " << tasks
                   << " tasks";
  }
  return targets;
}

std::vector<std::string> YarnAm::ExcludedNodesFromEventLog() const {
  std::vector<std::string> hosts;
  if (attempt() <= 1 || Env(history::kEnvHistoryDir).empty() || hdfs_ == nullptr) return hosts;
  // The same private copy as the scale targets': no other user can add a node to it.
  absl::StatusOr<std::string> log =
      hdfs_->ReadToString(submit::ScaleTargetsPath(user_, application_id()));
  if (!log.ok()) {
    if (!absl::IsNotFound(log.status())) {
      TONY_LOG(WARNING) << "the event log, for the nodes earlier attempts excluded: "
                        << log.status();
    }
    return hosts;
  }
  hosts = am::NodeExclusion::ExcludedInEventLog(*log);
  if (!hosts.empty()) {
    TONY_LOG(INFO) << "attempt " << attempt() << ": earlier attempts excluded "
                   << absl::StrJoin(hosts, ", ");
  }
  return hosts;
}

std::map<std::string, yarn::Container> YarnAm::PlanAdoption(
    const JobSpec& spec, const std::vector<yarn::Container>& previous) {
  std::map<std::string, yarn::Container> plan;
  if (previous.empty() || hdfs_ == nullptr) return plan;
  absl::StatusOr<std::string> text =
      hdfs_->ReadToString(submit::HistoryPath(user_, application_id()));
  if (!text.ok()) {
    TONY_LOG(WARNING) << "no task history to adopt the earlier attempt's containers by: "
                      << text.status();
    return plan;
  }
  absl::StatusOr<std::vector<submit::TaskContainer>> history = submit::DecodeTaskContainers(*text);
  if (!history.ok()) {
    TONY_LOG(WARNING) << "task history: " << history.status();
    return plan;
  }
  std::map<std::string, const yarn::Container*> live;
  for (const yarn::Container& c : previous) live[c.id.ToString()] = &c;
  std::map<std::string, std::string> container_of;  // task -> its latest container
  for (const submit::TaskContainer& c : *history) {
    if (c.task.find('@') == std::string::npos) container_of[c.task] = c.container_id;
  }
  std::vector<std::string> missing;
  for (const TaskSpec& t : ResolveTasks(spec)) {
    auto c = container_of.find(t.id());
    auto l = c == container_of.end() ? live.end() : live.find(c->second);
    if (l == live.end()) {
      const JobTypeSpec* jt = spec.FindJobType(t.job_name);
      if (jt != nullptr && jt->elastic) continue;
      missing.push_back(t.id());
    } else {
      plan[t.id()] = *l->second;
    }
  }
  if (!missing.empty()) {
    TONY_LOG(WARNING) << "attempt " << attempt() << ": " << missing.size()
                      << " tasks have no running container of the earlier attempt (e.g. "
                      << missing[0] << "); every task starts afresh";
    plan.clear();
    return plan;
  }
  for (const auto& [task, c] : plan) adopted_.insert(c.id.ToString());
  return plan;
}

void YarnAm::ReleaseContainers(const std::vector<yarn::Container>& containers) {
  for (const yarn::Container& c : containers) {
    TONY_LOG(INFO) << "releasing " << c.id.ToString() << " of an earlier attempt";
    rm_->ReleaseContainer(c.id);
  }
}

void YarnAm::EndAttempt() {
  if (launcher_ != nullptr) launcher_->Stop();
  if (absl::Status s = WriteHistory(); !s.ok()) TONY_LOG(WARNING) << "task history: " << s;
}

absl::Status YarnAm::Unregister(AppState state, const std::string& diagnostics) {
  absl::MutexLock lock(&unregister_mu_);
  if (!unregistered_ && attempt_gone_) {
    // The RM would only answer that it does not know the attempt.
    return absl::FailedPreconditionError("the ResourceManager ended this attempt");
  }
  if (!unregistered_) {
    unregistered_ = rm_->Unregister(ToFinal(state), diagnostics);
    if (!unregistered_->ok()) TONY_LOG(ERROR) << "unregistering: " << *unregistered_;
  }
  return *unregistered_;
}

absl::Status YarnAm::Finish(AppState state, const std::string& diagnostics) {
  if (launcher_ != nullptr) launcher_->Stop();
  if (absl::Status s = WriteHistory(); !s.ok()) TONY_LOG(WARNING) << "task history: " << s;
  absl::Status unregistered = Unregister(state, diagnostics);
  RemoveStaging();  // the application is over, whatever attempt this is
  return unregistered;
}

void YarnAm::RemoveStagingIfLastAttempt() {
  if (attempt() >= max_attempts_) RemoveStaging();
}

void YarnAm::RemoveStaging() {
  if (hdfs_ == nullptr || staging_dir_.empty()) return;
  if (staging_removed_.exchange(true)) return;
  auto deleted = hdfs_->Delete(staging_dir_, /*recursive=*/true);
  if (!deleted.ok()) TONY_LOG(WARNING) << "removing " << staging_dir_ << ": " << deleted.status();
}

}  // namespace tony::yarnam
