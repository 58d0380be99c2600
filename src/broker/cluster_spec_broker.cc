// Copyright libtony authors.
//
// The broker serves with gRPC's callback API: a registration waiting for the spec is a parked
// reactor, not a blocked thread, so 10,000 waiting tasks cost memory only, and publication
// finishes them all from the thread that handled the last registration.

#include "tony/cluster_spec_broker.h"

#include <grpcpp/grpcpp.h>
#include <grpcpp/resource_quota.h>
#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <thread>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/mutex.h"
#include "broker/bounded_listener.h"
#include "broker/clock_seam.h"
#include "broker/grpc_status.h"
#include "broker/secret.h"
#include "broker/wire.h"
#include "common/clock.h"
#include "common/logging.h"
#include "common/status_macros.h"
#include "tony/broker.grpc.pb.h"

namespace tony {

namespace pb = ::tony::broker;

namespace {

std::string TaskName(absl::string_view job, int index) { return absl::StrCat(job, ":", index); }

}  // namespace

// Register is a raw method: the published spec is serialized once into one buffer that every
// waiting response shares (slices are reference-counted), instead of one copy per task, which
// for 10,000 tasks would be 10,000 copies of a 20 KB message.
class TONY_NO_EXPORT ClusterSpecBroker::Impl final
    : public pb::ClusterSpecBroker::WithRawCallbackMethod_Register<
          pb::ClusterSpecBroker::CallbackService> {
 public:
  explicit Impl(ClusterSpecBrokerOptions options) : options_(std::move(options)) {
    for (const std::string& name : options_.outside_tasks) outside_[name];
    for (const auto& [name, count] : options_.expected_tasks) {
      tasks_[name].resize(count > 0 ? count : 0);
      total_tasks_ += count > 0 ? count : 0;
    }
    for (const std::string& name : options_.elastic_job_types) {
      auto it = tasks_.find(name);
      if (it == tasks_.end()) continue;
      for (TaskState& t : it->second) t.elastic = true;
    }
    for (const std::string& name : options_.deferred_job_types) {
      auto it = tasks_.find(name);
      if (it == tasks_.end()) continue;
      for (TaskState& t : it->second) {
        // Not expected until admitted: counted as if excused.
        t.deferred = t.registered = t.excused = t.exited = true;
        ++registered_count_;
      }
    }
  }

  ~Impl() override { Stop(); }

  absl::Status Start();
  void Stop();
  // Start()'s work while it alone owns the serving members (Phase::kStarting).
  absl::Status Serve();
  void Abort(const absl::Status& reason);
  void NotifyStatusChanged();
  void Excuse(absl::string_view job, int index);
  void Admit(const std::vector<std::string>& job_names);

  int port() const { return port_.load(); }
  std::optional<ClusterSpec> cluster_spec() const {
    absl::MutexLock lock(&mu_);
    return published_ ? std::optional<ClusterSpec>(spec_) : std::nullopt;
  }
  void ReopenTask(absl::string_view job, int index) {
    absl::MutexLock lock(&mu_);
    TaskState* task = FindLocked(job, index);
    if (task == nullptr) return;
    task->reopened = true;
    if (task->joining && task->registered) {
      task->registered = false;  // its round waits for the new executor
      ++joining_unregistered_;
    }
    if (!published_ && task->registered) {
      // Its earlier executor is gone: the spec must wait for the new one.
      task->registered = false;
      --registered_count_;
    }
  }
  void Rejoin(absl::string_view job, int index) {
    {
      absl::MutexLock lock(&mu_);
      TaskState* task = FindLocked(job, index);
      if (task != nullptr && published_ && !task->elastic && !task->deferred) {
        if (!task->joining || task->registered) ++joining_unregistered_;
        task->joining = true;
        task->registered = task->reopened = task->exited = task->excused = false;
        return;
      }
    }
    ReopenTask(job, index);
  }
  bool IsRegistered(absl::string_view job, int index) const {
    absl::MutexLock lock(&mu_);
    const TaskState* t = FindLocked(job, index);
    return t != nullptr && t->registered;
  }
  std::vector<std::string> UnregisteredTasks() const {
    absl::MutexLock lock(&mu_);
    return UnregisteredLocked();
  }

  // A Register call parked until the spec is published, the job is aborted or the call is
  // cancelled (its deadline passed). Whoever removes it from `waiters_` finishes it.
  class RegisterReactor final : public grpc::ServerUnaryReactor {
   public:
    RegisterReactor(Impl* impl, grpc::ByteBuffer* response) : impl_(impl), response_(response) {}
    void OnCancel() override { impl_->CancelWaiter(this); }
    void OnDone() override { delete this; }
    grpc::ByteBuffer* response() { return response_; }

   private:
    Impl* impl_;
    grpc::ByteBuffer* response_;
  };

  // A GetStatus long poll parked until the status changes, its wait ends, the call is cancelled
  // or the broker stops. Whoever removes it from `status_waiters_` finishes it.
  class StatusReactor final : public grpc::ServerUnaryReactor {
   public:
    StatusReactor(Impl* impl, pb::StatusResponse* response) : impl_(impl), response_(response) {}
    void OnCancel() override { impl_->CancelStatusWaiter(this); }
    void OnDone() override { delete this; }
    pb::StatusResponse* response() { return response_; }

   private:
    Impl* impl_;
    pb::StatusResponse* response_;
  };

  // Recomputes the status; when it differs from the last one, the version grows and every
  // parked status poll is answered.
  pb::StatusResponse RefreshStatus();

  // Service.
  grpc::ServerUnaryReactor* Register(grpc::CallbackServerContext* ctx,
                                     const grpc::ByteBuffer* request_buffer,
                                     grpc::ByteBuffer* response) override;
  // A registration with `observe` set.
  grpc::ServerUnaryReactor* Observe(grpc::CallbackServerContext* ctx, grpc::ByteBuffer* response);
  grpc::ServerUnaryReactor* Heartbeat(grpc::CallbackServerContext* ctx,
                                      const pb::HeartbeatRequest* request,
                                      pb::HeartbeatResponse* response) override;
  // A heartbeat's answer; it records the task as seen.
  // `told_over`: the answer tells the executor that the job is over.
  absl::Status HeartbeatStatus(const pb::HeartbeatRequest& request, bool* told_over);
  grpc::ServerUnaryReactor* TaskStarted(grpc::CallbackServerContext* ctx,
                                        const pb::TaskStartedRequest* request,
                                        pb::TaskStartedResponse* response) override;
  grpc::ServerUnaryReactor* ReportExit(grpc::CallbackServerContext* ctx,
                                       const pb::ExitReport* request,
                                       pb::ExitReportResponse* response) override;
  grpc::ServerUnaryReactor* GetStatus(grpc::CallbackServerContext* ctx,
                                      const pb::StatusRequest* request,
                                      pb::StatusResponse* response) override;
  grpc::ServerUnaryReactor* Kill(grpc::CallbackServerContext* ctx, const pb::KillRequest* request,
                                 pb::KillResponse* response) override;
  grpc::ServerUnaryReactor* Scale(grpc::CallbackServerContext* ctx, const pb::ScaleRequest* request,
                                  pb::ScaleResponse* response) override;
  grpc::ServerUnaryReactor* Suspend(grpc::CallbackServerContext* ctx,
                                    const pb::SuspendRequest* request,
                                    pb::SuspendResponse* response) override;

 private:
  friend class broker::BrokerClockSeam;

  struct TaskState {
    bool registered = false;
    bool exited = false;
    bool reopened = false;  // relaunched by the AM, not registered again yet
    bool excused = false;   // will never register (Excuse): no part of the published spec
    bool deferred = false;  // of a job type not expected until Admit()
    bool joining = false;   // admitted after publication: waits for its round's spec
    bool elastic = false;   // never waited for, no part of the spec: gets it as it registers
    std::string address;
    absl::Time last_seen;
  };

  grpc::ServerUnaryReactor* Reply(grpc::CallbackServerContext* ctx, const absl::Status& status) {
    grpc::ServerUnaryReactor* reactor = ctx->DefaultReactor();
    reactor->Finish(broker::ToGrpcStatus(status));
    return reactor;
  }
  bool Authenticated(grpc::CallbackServerContext* ctx) const;
  // FAILED_PRECONDITION when a call from the executor that registered `address` comes after the
  // AM relaunched its task (reopened, or registered again elsewhere).
  static absl::Status SupersededLocked(const TaskState& task, const std::string& address) {
    if (address.empty() || (!task.reopened && task.address == address)) return absl::OkStatus();
    return absl::FailedPreconditionError(
        task.reopened ? std::string("superseded: the ApplicationMaster relaunched this task")
                      : absl::StrCat("superseded: the ApplicationMaster relaunched this task, now "
                                     "at ",
                                     task.address));
  }
  // A task of the cluster or outside it.
  TaskState* FindAnyLocked(const pb::TaskRef& task) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (TaskState* t = FindLocked(task.job_name(), task.index())) return t;
    auto it = outside_.find(TaskName(task.job_name(), task.index()));
    return it == outside_.end() ? nullptr : &it->second;
  }
  // NotFound naming the task when the job has no such task.
  absl::Status CheckTask(const pb::TaskRef& task) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  TaskState* FindLocked(absl::string_view job, int index) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  const TaskState* FindLocked(absl::string_view job, int index) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  std::vector<std::string> UnregisteredLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Publishes the spec once every task has registered or been excused.
  void PublishIfCompleteLocked(std::vector<RegisterReactor*>* to_finish,
                               std::optional<ClusterSpec>* published,
                               grpc::ByteBuffer* published_response, absl::Status* status)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // A task admitted after publication registers: parked until every admitted task has, then
  // the spec's next version goes to all of them (`to_finish` set once that is due).
  void JoinLocked(TaskState* task, const std::string& address, RegisterReactor* reactor,
                  std::vector<RegisterReactor*>* to_finish, grpc::ByteBuffer* response,
                  absl::Status* status, DeferredLog* log) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The spec's next version from the tasks' addresses: job types not admitted or excused are
  // left out, and with `without_exited` those whose every task exited.
  ClusterSpec NextSpecLocked(bool without_exited) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void CancelWaiter(RegisterReactor* reactor);
  void CancelStatusWaiter(StatusReactor* reactor);
  // The status as the provider (or the broker itself) sees it. Takes mu_ in the latter case.
  ApplicationStatus CurrentStatus();
  void TimerLoop();
  // One pass of the timer at `now`: expired status waits, the registration deadline, silent
  // tasks. Releases mu_ around callbacks and answers.
  void TimerPassLocked(absl::Time now) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void CheckHeartbeatsLocked(absl::Time now) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Finishes every parked registration with `status`, or with the spec when it is OK.
  void FinishWaiters(std::vector<RegisterReactor*> waiters, const absl::Status& status,
                     const grpc::ByteBuffer* response);

  const ClusterSpecBrokerOptions options_;
  std::unique_ptr<broker::BoundedListener> listener_;
  std::unique_ptr<grpc::experimental::ExternalConnectionAcceptor> acceptor_;
  std::unique_ptr<grpc::Server> server_;
  std::atomic<int> port_{0};  // read by port() from any thread
  std::thread timer_;
  absl::Time start_time_;
  // Where deadlines read the time (broker/clock_seam.h). Set before Start(), then constant.
  Clock* clock_ = RealClock();

  mutable absl::Mutex mu_;
  uint64_t timer_kicks_ ABSL_GUARDED_BY(mu_) = 0;  // wakes the timer to recompute its deadline
  // The clock's time of the timer's last full pass (heartbeats included), set once the pass is
  // over.
  absl::Time timer_seen_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
  // kStarting: one Start() is under way (it alone touches listener_, server_ and acceptor_).
  enum class Phase { kNew, kStarting, kServing, kStopped };
  Phase phase_ ABSL_GUARDED_BY(mu_) = Phase::kNew;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::map<std::string, std::vector<TaskState>, std::less<>> tasks_ ABSL_GUARDED_BY(mu_);
  int total_tasks_ = 0;
  int registered_count_ ABSL_GUARDED_BY(mu_) = 0;
  int joining_unregistered_ ABSL_GUARDED_BY(mu_) = 0;  // admitted tasks not registered yet
  bool published_ ABSL_GUARDED_BY(mu_) = false;
  ClusterSpec spec_ ABSL_GUARDED_BY(mu_);
  grpc::ByteBuffer published_response_ ABSL_GUARDED_BY(mu_);  // serialized RegisterResponse
  absl::Status aborted_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_set<RegisterReactor*> waiters_ ABSL_GUARDED_BY(mu_);
  // Serializes RefreshStatus so that versions follow the order the statuses were computed in.
  absl::Mutex refresh_mu_ ABSL_ACQUIRED_BEFORE(mu_);
  uint64_t status_version_ ABSL_GUARDED_BY(mu_) = 0;
  std::string status_bytes_ ABSL_GUARDED_BY(mu_);  // the last status, serialized without version
  // Parked status polls and when each must be answered even without a change.
  absl::flat_hash_map<StatusReactor*, absl::Time> status_waiters_ ABSL_GUARDED_BY(mu_);
  // Tasks outside the cluster by "job:index"; "registered" once they reported their start, from
  // when on their heartbeats are watched.
  std::map<std::string, TaskState> outside_ ABSL_GUARDED_BY(mu_);
};

absl::Status ClusterSpecBroker::Impl::Start() {
  if (options_.tls_key_pem.empty() != options_.tls_cert_pem.empty()) {
    return absl::InvalidArgumentError(
        "ClusterSpecBroker: tls_key_pem and tls_cert_pem go together");
  }
  if (options_.secret.size() < 16) {
    return absl::InvalidArgumentError("ClusterSpecBroker: the secret must have >= 16 characters");
  }
  if (total_tasks_ == 0) {
    return absl::InvalidArgumentError("ClusterSpecBroker: no expected tasks");
  }
  for (const std::string& name : options_.outside_tasks) {
    size_t colon = name.rfind(':');
    int index = 0;
    if (colon == std::string::npos || colon == 0 ||
        !absl::SimpleAtoi(name.substr(colon + 1), &index) || index < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("ClusterSpecBroker: outside task '", name, "' is not job:index"));
    }
  }
  {
    absl::MutexLock lock(&mu_);
    if (phase_ != Phase::kNew) {
      return absl::FailedPreconditionError(phase_ == Phase::kStopped
                                               ? "ClusterSpecBroker: stopped"
                                               : "ClusterSpecBroker: already started");
    }
    phase_ = Phase::kStarting;
  }
  absl::Status served = Serve();
  bool stopped_meanwhile;
  {
    absl::MutexLock lock(&mu_);
    if (!served.ok()) {
      // Nothing of the attempt is left: a later Start() begins afresh.
      if (server_ != nullptr) server_->Shutdown();
      server_.reset();
      acceptor_.reset();
      listener_.reset();
      port_ = 0;
      phase_ = stopping_ ? Phase::kStopped : Phase::kNew;
      return served;
    }
    phase_ = Phase::kServing;
    start_time_ = clock_->Now();
    timer_ = std::thread([this] { TimerLoop(); });
    stopped_meanwhile = stopping_;
  }
  if (stopped_meanwhile) {
    Stop();  // the Stop() that came during Start() had nothing to stop yet
    return absl::FailedPreconditionError("ClusterSpecBroker: stopped while starting");
  }
  return absl::OkStatus();
}

absl::Status ClusterSpecBroker::Impl::Serve() {
  if (options_.max_connections < 0 || options_.max_memory_bytes < 0 ||
      options_.max_request_bytes <= 0) {
    return absl::InvalidArgumentError(
        "ClusterSpecBroker: max_connections and max_memory_bytes must not be negative, "
        "max_request_bytes must be positive");
  }
  // Our own listener in front of gRPC bounds the connections (see broker/bounded_listener.h).
  broker::BoundedListenerOptions lo;
  lo.listen_address = options_.listen_address;
  lo.max_connections =
      options_.max_connections > 0 ? options_.max_connections : 2 * total_tasks_ + 64;
  rlimit files{};
  if (getrlimit(RLIMIT_NOFILE, &files) == 0 && files.rlim_cur != RLIM_INFINITY &&
      files.rlim_cur > 128) {
    // Two descriptors a connection (gRPC's and the listener's duplicate), and room for
    // everything else the process opens.
    lo.max_connections = static_cast<int>(
        std::min<rlim_t>(static_cast<rlim_t>(lo.max_connections), (files.rlim_cur - 128) / 2));
  }
  lo.handler = [this](int listener_fd, int fd) {
    grpc::experimental::ExternalConnectionAcceptor::NewConnectionParameters p;
    p.listener_fd = listener_fd;
    p.fd = fd;
    acceptor_->HandleNewConnection(&p);
  };
  listener_ = std::make_unique<broker::BoundedListener>(std::move(lo));
  if (absl::Status s = listener_->Bind(); !s.ok()) {
    return absl::UnavailableError(absl::StrCat("ClusterSpecBroker: ", s.message()));
  }
  port_ = listener_->port();
  grpc::ServerBuilder builder;
  std::shared_ptr<grpc::ServerCredentials> creds = grpc::InsecureServerCredentials();
  if (!options_.tls_cert_pem.empty()) {
    grpc::SslServerCredentialsOptions ssl;
    ssl.pem_key_cert_pairs.push_back({options_.tls_key_pem, options_.tls_cert_pem});
    creds = grpc::SslServerCredentials(ssl);
  }
  acceptor_ = builder.experimental().AddExternalConnectionAcceptor(
      grpc::ServerBuilder::experimental_type::ExternalConnectionType::FROM_FD, creds);
  builder.RegisterService(this);
  // The spec of a very large job is a few hundred KB; leave room.
  builder.SetMaxSendMessageSize(64 << 20);
  builder.SetMaxReceiveMessageSize(options_.max_request_bytes);
  // Bounded connections: idle and half-open ones are dropped, dead peers detected, memory capped.
  auto ms = [](absl::Duration d) {
    return static_cast<int>(std::min<int64_t>(absl::ToInt64Milliseconds(d), INT32_MAX));
  };
  builder.AddChannelArgument(GRPC_ARG_SERVER_HANDSHAKE_TIMEOUT_MS, ms(options_.handshake_timeout));
  builder.AddChannelArgument(GRPC_ARG_MAX_CONNECTION_IDLE_MS, ms(options_.idle_timeout));
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_TIME_MS, ms(options_.keepalive_time));
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, ms(options_.keepalive_timeout));
  // Clients may ping at most every 10 s; more pings than that are abuse (GOAWAY after 2).
  builder.AddChannelArgument(GRPC_ARG_HTTP2_MIN_RECV_PING_INTERVAL_WITHOUT_DATA_MS, 10000);
  builder.AddChannelArgument(GRPC_ARG_HTTP2_MAX_PING_STRIKES, 2);
  // A task has at most a long poll and a report in flight.
  builder.AddChannelArgument(GRPC_ARG_MAX_CONCURRENT_STREAMS, 16);
  grpc::ResourceQuota quota("tony-broker");
  quota.Resize(static_cast<size_t>(
      options_.max_memory_bytes > 0 ? options_.max_memory_bytes
                                    : (int64_t{64} << 20) + (int64_t{256} << 10) * total_tasks_));
  builder.SetResourceQuota(quota);
  server_ = builder.BuildAndStart();
  if (server_ == nullptr) {
    return absl::UnavailableError(
        absl::StrCat("ClusterSpecBroker: cannot serve on ", options_.listen_address));
  }
  TONY_RETURN_IF_ERROR(listener_->Start());
  TONY_LOG(INFO) << "cluster spec broker listening on port " << port_ << " for " << total_tasks_
                 << " tasks";
  return absl::OkStatus();
}

void ClusterSpecBroker::Impl::Stop() {
  std::vector<RegisterReactor*> waiters;
  std::vector<StatusReactor*> status_waiters;
  {
    absl::MutexLock lock(&mu_);
    if (phase_ != Phase::kServing) {
      // Nothing serves yet; a Start() under way sees stopping_ and stops what it started.
      if (phase_ == Phase::kNew) phase_ = Phase::kStopped;
      stopping_ = true;
      return;
    }
    phase_ = Phase::kStopped;
    stopping_ = true;
    waiters.assign(waiters_.begin(), waiters_.end());
    waiters_.clear();
    for (auto& [reactor, deadline] : status_waiters_) status_waiters.push_back(reactor);
    status_waiters_.clear();
    ++timer_kicks_;
  }
  // Finished outside the lock: gRPC may run a reactor's OnCancel inline, which takes it.
  for (StatusReactor* r : status_waiters) {
    r->Finish(grpc::Status(grpc::StatusCode::UNAVAILABLE, "the broker is stopping"));
  }
  FinishWaiters(std::move(waiters), absl::UnavailableError("the broker is stopping"), nullptr);
  if (timer_.joinable()) timer_.join();
  if (listener_ != nullptr) listener_->Stop();  // before the server: it hands connections to it
  if (server_ != nullptr) {
    server_->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(1));
    server_.reset();
  }
}

void ClusterSpecBroker::Impl::Abort(const absl::Status& reason) {
  std::vector<RegisterReactor*> waiters;
  absl::Status status;
  {
    absl::MutexLock lock(&mu_);
    if (!aborted_.ok()) return;
    aborted_ = reason.ok() ? absl::AbortedError("the job is over") : reason;
    status = absl::AbortedError(aborted_.message());
    waiters.assign(waiters_.begin(), waiters_.end());
    waiters_.clear();
    ++timer_kicks_;
  }
  FinishWaiters(std::move(waiters), status, nullptr);
  if (!options_.status_provider) RefreshStatus();
}

bool ClusterSpecBroker::Impl::Authenticated(grpc::CallbackServerContext* ctx) const {
  const auto& md = ctx->client_metadata();
  auto it = md.find(broker::kSecretMetadataKey);
  if (it == md.end()) return false;
  if (!broker::SecretsEqual(absl::string_view(it->second.data(), it->second.size()),
                            options_.secret)) {
    return false;
  }
  // The connection proved it belongs to the job: a flood of others never displaces it.
  if (listener_ != nullptr) listener_->MarkTrusted(ctx->peer());
  return true;
}

ClusterSpecBroker::Impl::TaskState* ClusterSpecBroker::Impl::FindLocked(absl::string_view job,
                                                                        int index) {
  auto it = tasks_.find(job);
  if (it == tasks_.end() || index < 0 || index >= static_cast<int>(it->second.size())) {
    return nullptr;
  }
  return &it->second[index];
}

const ClusterSpecBroker::Impl::TaskState* ClusterSpecBroker::Impl::FindLocked(absl::string_view job,
                                                                              int index) const {
  auto it = tasks_.find(job);
  if (it == tasks_.end() || index < 0 || index >= static_cast<int>(it->second.size())) {
    return nullptr;
  }
  return &it->second[index];
}

absl::Status ClusterSpecBroker::Impl::CheckTask(const pb::TaskRef& task) const {
  if (FindLocked(task.job_name(), task.index()) == nullptr) {
    return absl::NotFoundError(
        absl::StrCat("the job has no task ", TaskName(task.job_name(), task.index())));
  }
  return absl::OkStatus();
}

void ClusterSpecBroker::Impl::PublishIfCompleteLocked(std::vector<RegisterReactor*>* to_finish,
                                                      std::optional<ClusterSpec>* published,
                                                      grpc::ByteBuffer* published_response,
                                                      absl::Status* status) {
  if (published_ || registered_count_ != total_tasks_) return;
  for (const auto& [name, tasks] : tasks_) {
    std::vector<std::string> addresses;
    for (const TaskState& t : tasks) {
      if (!t.excused) addresses.push_back(t.address);
    }
    if (!addresses.empty()) spec_.jobs[name] = std::move(addresses);
  }
  absl::StatusOr<pb::ClusterSpecWire> w = broker::ClusterSpecToWire(spec_);
  if (w.ok()) {
    pb::RegisterResponse message;
    *message.mutable_cluster() = *std::move(w);
    grpc::Slice slice(message.SerializeAsString());
    published_response_ = grpc::ByteBuffer(&slice, 1);
    published_ = true;
    // Every registered task waited on its Register call until now: it was alive. Its heartbeats
    // start with the spec, so the first registrant of a slow gang is not lost at publication.
    const absl::Time now = clock_->Now();
    for (auto& [name, tasks] : tasks_) {
      for (TaskState& t : tasks) t.last_seen = now;
    }
    *published = spec_;
    *published_response = published_response_;
    to_finish->assign(waiters_.begin(), waiters_.end());
    waiters_.clear();
    ++timer_kicks_;
  } else {
    // Unreachable with validated addresses; fail loudly rather than hang.
    aborted_ = w.status();
    to_finish->assign(waiters_.begin(), waiters_.end());
    waiters_.clear();
    *status = w.status();
  }
}

void ClusterSpecBroker::Impl::Excuse(absl::string_view job, int index) {
  std::vector<RegisterReactor*> to_finish;
  std::optional<ClusterSpec> published;
  grpc::ByteBuffer published_response;
  absl::Status status;
  {
    absl::MutexLock lock(&mu_);
    TaskState* task = FindLocked(job, index);
    if (task == nullptr || task->registered || published_ || !aborted_.ok()) return;
    task->registered = true;
    task->excused = true;
    task->exited = true;  // no heartbeats to watch
    ++registered_count_;
    PublishIfCompleteLocked(&to_finish, &published, &published_response, &status);
  }
  if (published) {
    TONY_LOG(INFO) << "all tasks registered (" << TaskName(job, index)
                   << " excused): cluster spec published";
    if (options_.observer != nullptr) options_.observer->OnClusterSpecPublished(*published);
    FinishWaiters(std::move(to_finish), absl::OkStatus(), &published_response);
  } else if (!to_finish.empty()) {
    FinishWaiters(std::move(to_finish), status, nullptr);
  }
}

ClusterSpec ClusterSpecBroker::Impl::NextSpecLocked(bool without_exited) const {
  ClusterSpec next;
  next.version = spec_.version + 1;
  for (const auto& [name, tasks] : tasks_) {
    bool live = false;
    std::vector<std::string> addresses;
    for (const TaskState& t : tasks) {
      live = live || (!t.deferred && !t.excused && !t.elastic && !(without_exited && t.exited));
      addresses.push_back(t.address);
    }
    if (live) next.jobs[name] = std::move(addresses);
  }
  return next;
}

void ClusterSpecBroker::Impl::Admit(const std::vector<std::string>& job_names) {
  absl::MutexLock lock(&mu_);
  for (const std::string& name : job_names) {
    auto it = tasks_.find(name);
    if (it == tasks_.end()) continue;
    for (TaskState& t : it->second) {
      if (!t.deferred) continue;
      t.deferred = t.excused = t.exited = t.registered = false;
      if (t.elastic) {
        if (!published_) t.registered = t.excused = true;  // the first spec will not wait
        continue;
      }
      if (published_) {
        t.joining = true;
        ++joining_unregistered_;
      } else {
        --registered_count_;  // one more for the first publication to wait for
      }
    }
  }
}

void ClusterSpecBroker::Impl::JoinLocked(TaskState* task, const std::string& address,
                                         RegisterReactor* reactor,
                                         std::vector<RegisterReactor*>* to_finish,
                                         grpc::ByteBuffer* response, absl::Status* status,
                                         DeferredLog* log) {
  if (!task->registered) --joining_unregistered_;
  task->registered = true;
  task->reopened = false;
  task->address = address;
  waiters_.insert(reactor);
  if (joining_unregistered_ > 0) return;
  // The next version: every job type with a task not yet exited (a finished preparation stage
  // is gone; indices within a job type stay as they were).
  ClusterSpec next = NextSpecLocked(/*without_exited=*/true);
  absl::StatusOr<pb::ClusterSpecWire> w = broker::ClusterSpecToWire(next);
  to_finish->assign(waiters_.begin(), waiters_.end());
  waiters_.clear();
  if (!w.ok()) {
    *status = w.status();
    return;
  }
  spec_ = std::move(next);
  pb::RegisterResponse message;
  *message.mutable_cluster() = *std::move(w);
  grpc::Slice slice(message.SerializeAsString());
  published_response_ = grpc::ByteBuffer(&slice, 1);
  *response = published_response_;
  const absl::Time now = clock_->Now();
  for (auto& [name, tasks] : tasks_) {
    for (TaskState& t : tasks) {
      if (!t.joining) continue;
      t.joining = false;
      t.last_seen = now;
    }
  }
  TONY_DEFER_LOG(*log, INFO) << "the admitted tasks registered: cluster spec version "
                             << spec_.version << " published";
}

std::vector<std::string> ClusterSpecBroker::Impl::UnregisteredLocked() const {
  std::vector<std::string> out;
  for (const auto& [name, tasks] : tasks_) {
    for (size_t i = 0; i < tasks.size(); ++i) {
      if (!tasks[i].registered) out.push_back(TaskName(name, static_cast<int>(i)));
    }
  }
  return out;
}

void ClusterSpecBroker::Impl::CancelWaiter(RegisterReactor* reactor) {
  {
    absl::MutexLock lock(&mu_);
    if (waiters_.erase(reactor) == 0) return;  // being finished by someone else
  }
  reactor->Finish(grpc::Status(grpc::StatusCode::CANCELLED, "registration call cancelled"));
}

void ClusterSpecBroker::Impl::FinishWaiters(std::vector<RegisterReactor*> waiters,
                                            const absl::Status& status,
                                            const grpc::ByteBuffer* response) {
  grpc::Status grpc_status = broker::ToGrpcStatus(status);
  for (RegisterReactor* r : waiters) {
    if (status.ok()) *r->response() = *response;  // shares the slices
    r->Finish(grpc_status);
  }
}

grpc::ServerUnaryReactor* ClusterSpecBroker::Impl::Register(grpc::CallbackServerContext* ctx,
                                                            const grpc::ByteBuffer* request_buffer,
                                                            grpc::ByteBuffer* response) {
  if (!Authenticated(ctx)) return Reply(ctx, absl::UnauthenticatedError("wrong or no secret"));
  pb::RegisterRequest parsed;
  {
    std::vector<grpc::Slice> slices;
    std::string bytes;
    if (request_buffer->Dump(&slices).ok()) {
      for (const grpc::Slice& slice : slices) {
        bytes.append(reinterpret_cast<const char*>(slice.begin()), slice.size());
      }
    }
    if (!parsed.ParseFromString(bytes)) {
      return Reply(ctx, absl::InvalidArgumentError("malformed registration"));
    }
  }
  const pb::RegisterRequest* request = &parsed;
  if (request->observe()) return Observe(ctx, response);
  const std::string& job = request->task().job_name();
  const int index = request->task().index();
  absl::StatusOr<std::string> registered = broker::RegisteredAddress(*request);
  if (!registered.ok()) return Reply(ctx, registered.status());
  const std::string address = *std::move(registered);

  auto* reactor = new RegisterReactor(this, response);
  std::vector<RegisterReactor*> to_finish;
  std::optional<ClusterSpec> published;
  grpc::ByteBuffer published_response;
  bool reply_now = false;
  absl::Status status;
  bool newly_registered = false;
  DeferredLog log;  // emitted once mu_ is released (tony/log.h)
  {
    absl::MutexLock lock(&mu_);
    TaskState* task = FindLocked(job, index);
    if (task == nullptr) {
      status = CheckTask(request->task());
    } else if (!aborted_.ok()) {
      status = absl::AbortedError(aborted_.message());
    } else if (stopping_) {
      status = absl::UnavailableError("the broker is stopping");
    } else if (published_ && task->elastic && !task->deferred) {
      // A relaunched task is news even back at its old address.
      newly_registered = !task->registered || task->address != address || task->reopened;
      task->registered = true;
      task->reopened = task->exited = false;
      task->address = address;
      task->last_seen = clock_->Now();
      *response = published_response_;
      reply_now = true;
    } else if (published_ && task->joining) {
      newly_registered = !task->registered || task->address != address;
      JoinLocked(task, address, reactor, &to_finish, &published_response, &status, &log);
      if (!to_finish.empty() && status.ok()) published = spec_;
    } else if (published_ && task->reopened) {
      // A relaunched task: welcome back, wherever it is.
      task->reopened = false;
      task->exited = false;
      task->last_seen = clock_->Now();
      newly_registered = true;
      if (task->address != address) {
        task->address = address;
        ClusterSpec next = NextSpecLocked(/*without_exited=*/false);
        absl::StatusOr<pb::ClusterSpecWire> w = broker::ClusterSpecToWire(next);
        if (w.ok()) {
          spec_ = std::move(next);
          pb::RegisterResponse message;
          *message.mutable_cluster() = *std::move(w);
          grpc::Slice slice(message.SerializeAsString());
          published_response_ = grpc::ByteBuffer(&slice, 1);
          TONY_DEFER_LOG(log, INFO) << TaskName(job, index) << " came back at " << address
                                    << ": cluster spec version " << spec_.version << " published";
        } else {
          status = w.status();
        }
      }
      if (status.ok()) *response = published_response_;
      reply_now = true;
    } else if (published_) {
      if (task->address == address) {
        *response = published_response_;
        reply_now = true;
      } else {
        status = absl::AlreadyExistsError(
            absl::StrCat(TaskName(job, index), " is registered as ", task->address,
                         " and the cluster spec is published; cannot re-register as ", address));
      }
    } else {
      newly_registered = !task->registered || task->address != address || task->reopened;
      task->reopened = false;
      task->exited = false;
      if (!task->registered) ++registered_count_;
      task->registered = true;
      task->address = address;
      task->last_seen = clock_->Now();
      waiters_.insert(reactor);
      PublishIfCompleteLocked(&to_finish, &published, &published_response, &status);
    }
  }
  log.Emit();
  ClusterSpecBrokerObserver* observer = options_.observer;
  if (newly_registered && observer != nullptr) observer->OnRegistered(job, index, address);
  if (newly_registered && !options_.status_provider) RefreshStatus();
  if (published) {
    TONY_LOG(INFO) << "all " << total_tasks_ << " tasks registered: cluster spec published";
    if (observer != nullptr) observer->OnClusterSpecPublished(*published);
    FinishWaiters(std::move(to_finish), absl::OkStatus(), &published_response);
  } else if (!to_finish.empty()) {
    FinishWaiters(std::move(to_finish), status, nullptr);
  } else if (!status.ok() || reply_now) {
    reactor->Finish(broker::ToGrpcStatus(status));
  }
  // Otherwise parked in waiters_ until publication, abort or cancellation.
  return reactor;
}

grpc::ServerUnaryReactor* ClusterSpecBroker::Impl::Observe(grpc::CallbackServerContext* ctx,
                                                           grpc::ByteBuffer* response) {
  auto* reactor = new RegisterReactor(this, response);
  absl::Status status;
  {
    absl::MutexLock lock(&mu_);
    if (!aborted_.ok()) {
      status = absl::AbortedError(aborted_.message());
    } else if (stopping_) {
      status = absl::UnavailableError("the broker is stopping");
    } else if (published_) {
      *response = published_response_;
    } else {
      waiters_.insert(reactor);  // finished with the others at publication
      return reactor;
    }
  }
  reactor->Finish(broker::ToGrpcStatus(status));
  return reactor;
}

grpc::ServerUnaryReactor* ClusterSpecBroker::Impl::Heartbeat(grpc::CallbackServerContext* ctx,
                                                             const pb::HeartbeatRequest* request,
                                                             pb::HeartbeatResponse* response) {
  if (!Authenticated(ctx)) return Reply(ctx, absl::UnauthenticatedError("wrong or no secret"));
  bool told_over = false;
  absl::Status status = HeartbeatStatus(*request, &told_over);
  if (told_over && options_.observer != nullptr) {
    options_.observer->OnTaskToldJobOver(request->task().job_name(), request->task().index());
  }
  // The observer hears of a live task's usage with no lock held (tony/log.h, the AM's queue).
  if (status.ok() && request->sampled() && options_.observer != nullptr) {
    if (request->gpus_size() > 0) {
      std::vector<GpuUsage> gpus;
      for (const pb::GpuSample& g : request->gpus()) {
        gpus.push_back({g.index(), g.utilization(), g.memory_used_bytes(), g.memory_total_bytes()});
      }
      options_.observer->OnTaskGpuUsage(request->task().job_name(), request->task().index(), gpus);
    }
    options_.observer->OnTaskUsage(request->task().job_name(), request->task().index(),
                                   request->rss_bytes(), request->cpu_seconds(),
                                   request->processes());
  }
  return Reply(ctx, status);
}

absl::Status ClusterSpecBroker::Impl::HeartbeatStatus(const pb::HeartbeatRequest& request,
                                                      bool* told_over) {
  absl::MutexLock lock(&mu_);
  TaskState* task = FindAnyLocked(request.task());
  if (task == nullptr) return CheckTask(request.task());
  TONY_RETURN_IF_ERROR(SupersededLocked(*task, request.address()));
  task->last_seen = clock_->Now();
  const bool outside =
      outside_.count(TaskName(request.task().job_name(), request.task().index())) > 0;
  if (outside) task->registered = true;  // alive, even if its start report was lost
  if (!aborted_.ok() && !outside) {
    // The AM tells whoever still reaches it: an executor whose NodeManager is gone would
    // otherwise run its task until its own AM-unreachable timeout after the AM exits.
    *told_over = true;
    return absl::FailedPreconditionError(
        absl::StrCat("the job is over (", aborted_.message(), ")"));
  }
  return absl::OkStatus();
}

grpc::ServerUnaryReactor* ClusterSpecBroker::Impl::TaskStarted(
    grpc::CallbackServerContext* ctx, const pb::TaskStartedRequest* request,
    pb::TaskStartedResponse* response) {
  if (!Authenticated(ctx)) return Reply(ctx, absl::UnauthenticatedError("wrong or no secret"));
  {
    absl::MutexLock lock(&mu_);
    TaskState* task = FindAnyLocked(request->task());
    if (task == nullptr) return Reply(ctx, CheckTask(request->task()));
    task->last_seen = clock_->Now();
    if (outside_.count(TaskName(request->task().job_name(), request->task().index())) > 0) {
      task->registered = true;  // its heartbeats are watched from now on
    }
  }
  if (options_.observer != nullptr && request->restart() > 0) {
    options_.observer->OnTaskRestarted(request->task().job_name(), request->task().index(),
                                       request->restart(), request->previous_exit_code(),
                                       request->previous_stderr_tail());
  } else if (options_.observer != nullptr) {
    options_.observer->OnTaskStarted(request->task().job_name(), request->task().index());
  }
  return Reply(ctx, absl::OkStatus());
}

grpc::ServerUnaryReactor* ClusterSpecBroker::Impl::ReportExit(grpc::CallbackServerContext* ctx,
                                                              const pb::ExitReport* request,
                                                              pb::ExitReportResponse* response) {
  if (!Authenticated(ctx)) return Reply(ctx, absl::UnauthenticatedError("wrong or no secret"));
  {
    absl::MutexLock lock(&mu_);
    TaskState* task = FindAnyLocked(request->task());
    if (task == nullptr) return Reply(ctx, CheckTask(request->task()));
    if (absl::Status s = SupersededLocked(*task, request->address()); !s.ok()) {
      return Reply(ctx, s);  // the AM gave up on it already: its exit is no news
    }
    task->exited = true;
  }
  if (options_.observer != nullptr) {
    options_.observer->OnTaskExited(request->task().job_name(), request->task().index(),
                                    request->exit_code(), request->stderr_tail());
  }
  if (!options_.status_provider) RefreshStatus();
  return Reply(ctx, absl::OkStatus());
}

ApplicationStatus ClusterSpecBroker::Impl::CurrentStatus() {
  if (options_.status_provider) return options_.status_provider();
  ApplicationStatus status;
  absl::MutexLock lock(&mu_);
  status.state = aborted_.ok() ? AppState::kRunning : AppState::kFailed;
  status.diagnostics = std::string(aborted_.message());
  for (const auto& [name, tasks] : tasks_) {
    JobTypeProgress& p = status.progress[name];
    p.total = static_cast<int>(tasks.size());
    for (const TaskState& t : tasks) {
      p.registered += t.registered;
      p.succeeded += t.exited;
    }
  }
  return status;
}

pb::StatusResponse ClusterSpecBroker::Impl::RefreshStatus() {
  absl::MutexLock refresh(&refresh_mu_);
  pb::StatusResponse wire = broker::ApplicationStatusToWire(CurrentStatus());
  std::string bytes = wire.SerializeAsString();
  std::vector<StatusReactor*> changed;
  {
    absl::MutexLock lock(&mu_);
    if (bytes != status_bytes_ || status_version_ == 0) {
      status_bytes_ = std::move(bytes);
      ++status_version_;
      for (auto& [reactor, deadline] : status_waiters_) changed.push_back(reactor);
      status_waiters_.clear();
    }
    wire.set_version(status_version_);
  }
  for (StatusReactor* r : changed) {
    *r->response() = wire;
    r->Finish(grpc::Status::OK);
  }
  return wire;
}

void ClusterSpecBroker::Impl::CancelStatusWaiter(StatusReactor* reactor) {
  absl::MutexLock lock(&mu_);
  if (status_waiters_.erase(reactor) > 0) {
    reactor->Finish(grpc::Status(grpc::StatusCode::CANCELLED, "status poll cancelled"));
  }
}

grpc::ServerUnaryReactor* ClusterSpecBroker::Impl::GetStatus(grpc::CallbackServerContext* ctx,
                                                             const pb::StatusRequest* request,
                                                             pb::StatusResponse* response) {
  if (!Authenticated(ctx)) return Reply(ctx, absl::UnauthenticatedError("wrong or no secret"));
  pb::StatusResponse current = RefreshStatus();
  if (request->wait_ms() == 0 || request->known_version() != current.version()) {
    *response = std::move(current);
    return Reply(ctx, absl::OkStatus());
  }
  // A long poll: parked until the status changes or the wait (at most a minute) ends.
  auto* reactor = new StatusReactor(this, response);
  grpc::Status answer_now;
  {
    absl::MutexLock lock(&mu_);
    if (!stopping_ && status_version_ == request->known_version()) {
      const absl::Duration wait =
          std::min(absl::Milliseconds(request->wait_ms()), absl::Minutes(1));
      status_waiters_[reactor] = clock_->Now() + wait;
      ++timer_kicks_;
      return reactor;
    }
    if (stopping_) {
      answer_now = grpc::Status(grpc::StatusCode::UNAVAILABLE, "the broker is stopping");
    }
  }
  *response = std::move(current);  // changed meanwhile
  reactor->Finish(answer_now);
  return reactor;
}

void ClusterSpecBroker::Impl::NotifyStatusChanged() { RefreshStatus(); }

grpc::ServerUnaryReactor* ClusterSpecBroker::Impl::Kill(grpc::CallbackServerContext* ctx,
                                                        const pb::KillRequest* request,
                                                        pb::KillResponse* response) {
  if (!Authenticated(ctx)) return Reply(ctx, absl::UnauthenticatedError("wrong or no secret"));
  TONY_LOG(INFO) << "kill requested by the client"
                 << (request->reason().empty() ? "" : ": " + request->reason());
  if (options_.observer != nullptr) options_.observer->OnKillRequested(request->reason());
  return Reply(ctx, absl::OkStatus());
}

grpc::ServerUnaryReactor* ClusterSpecBroker::Impl::Scale(grpc::CallbackServerContext* ctx,
                                                         const pb::ScaleRequest* request,
                                                         pb::ScaleResponse* response) {
  if (!Authenticated(ctx)) return Reply(ctx, absl::UnauthenticatedError("wrong or no secret"));
  if (!options_.scale_handler) {
    return Reply(ctx, absl::UnimplementedError("this ApplicationMaster cannot scale a role"));
  }
  absl::Status s = options_.scale_handler(request->job_name(), request->tasks());
  TONY_LOG(INFO) << "scale " << request->job_name() << " to " << request->tasks()
                 << " requested by the client: " << (s.ok() ? "accepted" : s.ToString());
  return Reply(ctx, s);
}

grpc::ServerUnaryReactor* ClusterSpecBroker::Impl::Suspend(grpc::CallbackServerContext* ctx,
                                                           const pb::SuspendRequest* request,
                                                           pb::SuspendResponse* response) {
  if (!Authenticated(ctx)) return Reply(ctx, absl::UnauthenticatedError("wrong or no secret"));
  const char* what = request->resume() ? "resume" : "suspend";
  if (!options_.suspend_handler) {
    return Reply(ctx, absl::UnimplementedError(
                          absl::StrCat("this ApplicationMaster cannot ", what, " the job")));
  }
  absl::Status s = options_.suspend_handler(!request->resume());
  TONY_LOG(INFO) << what << " requested by the client: " << (s.ok() ? "accepted" : s.ToString());
  return Reply(ctx, s);
}

void ClusterSpecBroker::Impl::TimerLoop() {
  const bool watch_heartbeats = options_.heartbeat_timeout != absl::InfiniteDuration();
  const absl::Duration tick = watch_heartbeats
                                  ? std::min(absl::Seconds(1), options_.heartbeat_timeout / 4)
                                  : absl::InfiniteDuration();
  absl::MutexLock lock(&mu_);
  while (!stopping_) {
    // One reading of the clock for the pass and the next wake: a clock moved on meanwhile (a
    // simulated one jumps) finds the wake already due rather than one tick past the jump.
    const absl::Time now = clock_->Now();
    TimerPassLocked(now);
    if (stopping_) break;
    timer_seen_ = now;
    absl::Time wake = absl::InfiniteFuture();
    if (!published_ && aborted_.ok()) wake = start_time_ + options_.registration_timeout;
    if (watch_heartbeats) wake = std::min(wake, now + tick);
    for (const auto& [reactor, deadline] : status_waiters_) wake = std::min(wake, deadline);
    const uint64_t kicks = timer_kicks_;
    auto woken = [this, kicks]()
                     ABSL_SHARED_LOCKS_REQUIRED(mu_) { return stopping_ || timer_kicks_ != kicks; };
    clock_->AwaitWithDeadline(&mu_, absl::Condition(&woken), wake);
  }
}

void ClusterSpecBroker::Impl::TimerPassLocked(absl::Time now) {
  std::vector<StatusReactor*> expired;
  for (const auto& [reactor, deadline] : status_waiters_) {
    if (deadline <= now) expired.push_back(reactor);
  }
  if (!expired.empty()) {
    for (StatusReactor* r : expired) status_waiters_.erase(r);
    mu_.Unlock();
    pb::StatusResponse current = RefreshStatus();  // answers the others if it changed
    for (StatusReactor* r : expired) {
      *r->response() = current;
      r->Finish(grpc::Status::OK);
    }
    mu_.Lock();
    if (stopping_) return;
  }
  if (!published_ && aborted_.ok() && now >= start_time_ + options_.registration_timeout) {
    std::vector<std::string> missing = UnregisteredLocked();
    std::string message = absl::StrCat("registration deadline of ",
                                       absl::FormatDuration(options_.registration_timeout),
                                       " passed; never registered: ", absl::StrJoin(missing, ", "));
    aborted_ = absl::DeadlineExceededError(message);
    std::vector<RegisterReactor*> waiters(waiters_.begin(), waiters_.end());
    waiters_.clear();
    mu_.Unlock();
    TONY_LOG(WARNING) << message;
    FinishWaiters(std::move(waiters), absl::AbortedError(message), nullptr);
    if (options_.observer != nullptr) options_.observer->OnRegistrationTimeout(missing);
    mu_.Lock();
    if (stopping_) return;
  }
  if (options_.heartbeat_timeout != absl::InfiniteDuration() && aborted_.ok()) {
    CheckHeartbeatsLocked(now);
  }
}

void ClusterSpecBroker::Impl::CheckHeartbeatsLocked(absl::Time now) {
  std::vector<std::pair<std::string, int>> lost;
  for (auto& [name, tasks] : tasks_) {
    for (size_t i = 0; i < tasks.size(); ++i) {
      TaskState& t = tasks[i];
      // Before publication a registered task is waiting on its Register call, not
      // heartbeating; a dead one is YARN's news (its container completes).
      if (published_ && t.registered && !t.exited && !t.reopened && !t.joining &&
          now - t.last_seen > options_.heartbeat_timeout) {
        lost.emplace_back(name, static_cast<int>(i));
        t.last_seen = now;  // report once per timeout period
      }
    }
  }
  for (auto& [name, t] : outside_) {
    if (t.registered && !t.exited && now - t.last_seen > options_.heartbeat_timeout) {
      size_t colon = name.rfind(':');
      int index = 0;
      (void)absl::SimpleAtoi(name.substr(colon + 1), &index);  // checked by Start()
      lost.emplace_back(name.substr(0, colon), index);
      t.last_seen = now;
    }
  }
  if (lost.empty() || options_.observer == nullptr) return;
  mu_.Unlock();
  for (const auto& [name, index] : lost) {
    TONY_LOG(WARNING) << "no heartbeat from " << TaskName(name, index) << " for "
                      << absl::FormatDuration(options_.heartbeat_timeout);
    options_.observer->OnHeartbeatTimeout(name, index);
  }
  mu_.Lock();
}

ClusterSpecBroker::ClusterSpecBroker(ClusterSpecBrokerOptions options)
    : impl_(std::make_unique<Impl>(std::move(options))) {}
ClusterSpecBroker::~ClusterSpecBroker() { Stop(); }
absl::Status ClusterSpecBroker::Start() { return impl_->Start(); }
void ClusterSpecBroker::Stop() { impl_->Stop(); }
int ClusterSpecBroker::port() const { return impl_->port(); }
void ClusterSpecBroker::Abort(const absl::Status& reason) { impl_->Abort(reason); }
void ClusterSpecBroker::NotifyStatusChanged() { impl_->NotifyStatusChanged(); }
void ClusterSpecBroker::Excuse(absl::string_view job_name, int index) {
  impl_->Excuse(job_name, index);
}
std::optional<ClusterSpec> ClusterSpecBroker::cluster_spec() const { return impl_->cluster_spec(); }
void ClusterSpecBroker::Admit(const std::vector<std::string>& job_names) {
  impl_->Admit(job_names);
}

void ClusterSpecBroker::ReopenTask(absl::string_view job_name, int index) {
  impl_->ReopenTask(job_name, index);
}

void ClusterSpecBroker::Rejoin(absl::string_view job_name, int index) {
  impl_->Rejoin(job_name, index);
}
bool ClusterSpecBroker::IsRegistered(absl::string_view job_name, int index) const {
  return impl_->IsRegistered(job_name, index);
}
std::vector<std::string> ClusterSpecBroker::UnregisteredTasks() const {
  return impl_->UnregisteredTasks();
}

}  // namespace tony

namespace tony::broker {

void BrokerClockSeam::UseClock(tony::ClusterSpecBroker* broker, Clock* clock) {
  broker->impl_->clock_ = clock;
}

bool BrokerClockSeam::AwaitTimerPass(tony::ClusterSpecBroker* broker, absl::Time t,
                                     absl::Duration timeout) {
  tony::ClusterSpecBroker::Impl& impl = *broker->impl_;
  absl::MutexLock lock(&impl.mu_);
  auto passed = [&impl, t]()
                    ABSL_EXCLUSIVE_LOCKS_REQUIRED(impl.mu_) { return impl.timer_seen_ >= t; };
  return impl.mu_.AwaitWithTimeout(absl::Condition(&passed), timeout);
}

}  // namespace tony::broker
