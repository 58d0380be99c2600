// Copyright libtony authors.
//
// ClusterSpecBroker's life cycle (Start, Serve, Stop) and public API over the Impl of
// broker/broker_impl.h.

#include "tony/cluster_spec_broker.h"

#include <grpcpp/grpcpp.h>
#include <grpcpp/resource_quota.h>
#include <sys/resource.h>

#include <algorithm>
#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "broker/broker_impl.h"
#include "broker/secret.h"
#include "common/logging.h"
#include "common/status_macros.h"

namespace tony {

namespace {

int TotalTasks(const ClusterSpecBrokerOptions& options) {
  int total = 0;
  for (const auto& [name, count] : options.expected_tasks) total += std::max(count, 0);
  return total;
}

}  // namespace

absl::Status ClusterSpecBroker::Impl::Start() {
  if (options_.tls_key_pem.empty() != options_.tls_cert_pem.empty()) {
    return absl::InvalidArgumentError(
        "ClusterSpecBroker: tls_key_pem and tls_cert_pem go together");
  }
  if (options_.secret.size() < 16) {
    return absl::InvalidArgumentError("ClusterSpecBroker: the secret must have >= 16 characters");
  }
  if (TotalTasks(options_) == 0) {
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
    model_.Start(clock_->Now());
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
      options_.max_connections > 0 ? options_.max_connections : 2 * TotalTasks(options_) + 64;
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
  quota.Resize(
      static_cast<size_t>(options_.max_memory_bytes > 0
                              ? options_.max_memory_bytes
                              : (int64_t{64} << 20) + (int64_t{256} << 10) * TotalTasks(options_)));
  builder.SetResourceQuota(quota);
  server_ = builder.BuildAndStart();
  if (server_ == nullptr) {
    return absl::UnavailableError(
        absl::StrCat("ClusterSpecBroker: cannot serve on ", options_.listen_address));
  }
  TONY_RETURN_IF_ERROR(listener_->Start());
  TONY_LOG(INFO) << "cluster spec broker listening on port " << port_ << " for "
                 << TotalTasks(options_) << " tasks";
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
      model_.Stop();
      return;
    }
    phase_ = Phase::kStopped;
    stopping_ = true;
    model_.Stop();
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
  std::optional<absl::Status> status;
  {
    absl::MutexLock lock(&mu_);
    status = model_.Abort(reason);
    if (!status) return;
    waiters.assign(waiters_.begin(), waiters_.end());
    waiters_.clear();
    ++timer_kicks_;
  }
  FinishWaiters(std::move(waiters), *status, nullptr);
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

std::optional<ClusterSpec> ClusterSpecBroker::Impl::cluster_spec() const {
  absl::MutexLock lock(&mu_);
  return model_.published() ? std::optional<ClusterSpec>(model_.spec()) : std::nullopt;
}

bool ClusterSpecBroker::Impl::IsRegistered(absl::string_view job, int index) const {
  absl::MutexLock lock(&mu_);
  return model_.IsRegistered(job, index);
}

std::vector<std::string> ClusterSpecBroker::Impl::UnregisteredTasks() const {
  absl::MutexLock lock(&mu_);
  return model_.Unregistered();
}

void ClusterSpecBroker::Impl::Admit(const std::vector<std::string>& job_names) {
  absl::MutexLock lock(&mu_);
  model_.Admit(job_names);
}

void ClusterSpecBroker::Impl::ReopenTask(absl::string_view job, int index) {
  absl::MutexLock lock(&mu_);
  model_.Reopen(job, index);
}

void ClusterSpecBroker::Impl::NoticePreemption(absl::string_view job, int index,
                                               absl::string_view container) {
  absl::MutexLock lock(&mu_);
  model_.NoticePreemption(job, index, container);
}

void ClusterSpecBroker::Impl::Rejoin(absl::string_view job, int index) {
  absl::MutexLock lock(&mu_);
  model_.Rejoin(job, index);
}

void ClusterSpecBroker::Impl::Excuse(absl::string_view job, int index) {
  broker::Decision d;
  Outcome out;
  {
    absl::MutexLock lock(&mu_);
    d = model_.Excuse(job, index, clock_->Now());
    out = ApplyLocked(d, nullptr);
  }
  Finish(d, std::move(out));
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

void ClusterSpecBroker::NoticePreemption(absl::string_view job_name, int index,
                                         absl::string_view container) {
  impl_->NoticePreemption(job_name, index, container);
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
