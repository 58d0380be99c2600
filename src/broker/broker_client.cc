// Copyright libtony authors.

#include "broker/broker_client.h"

#include <grpcpp/grpcpp.h>

#include <algorithm>
#include <map>
#include <memory>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "broker/grpc_status.h"
#include "broker/secret.h"
#include "broker/tls.h"
#include "broker/wire.h"
#include "common/call_deadline.h"
#include "common/cancellation.h"
#include "common/egress.h"
#include "common/logging.h"
#include "common/status_macros.h"
#include "common/utf8.h"
#include "tony/broker.grpc.pb.h"

namespace tony::broker {

class BrokerClient::Stub {
 public:
  explicit Stub(std::shared_ptr<grpc::Channel> channel)
      : stub(ClusterSpecBroker::NewStub(std::move(channel))) {}
  std::unique_ptr<ClusterSpecBroker::Stub> stub;
};

// The async calls in flight. A call's context holds a reference to the channel, and gRPC (1.51)
// must not release a channel on one of its callback threads (the callback queue's threads would
// join themselves and the queue be freed under them: a crash seen at exit). So the contexts are
// released only here, on the caller's thread while the client holds its channel (finished calls,
// as new ones start) or on the destroying thread, after the callbacks have ended.
struct BrokerClient::InFlight {
  struct Call {
    grpc::ClientContext ctx;
    StatusRequest request;
    StatusResponse response;
    std::function<void(absl::StatusOr<VersionedStatus>)> done;
    std::unique_ptr<CancelListener> listener;
  };
  struct Entry {
    std::shared_ptr<Call> call;
    enum class Phase { kRunning, kAnswering, kEnded } phase = Phase::kRunning;
    std::thread::id answering_thread;
  };

  absl::Mutex mu;
  uint64_t next_id ABSL_GUARDED_BY(mu) = 0;
  std::map<uint64_t, Entry> calls ABSL_GUARDED_BY(mu);
  // A client destroyed from its own callback leaves its channel here (see ~BrokerClient).
  std::shared_ptr<grpc::Channel> orphaned_channel ABSL_GUARDED_BY(mu);

  // Registers `call`, releasing the contexts of the calls that ended.
  uint64_t Add(std::shared_ptr<Call> call) {
    std::vector<std::shared_ptr<Call>> ended;  // released after the lock
    absl::MutexLock lock(&mu);
    for (auto it = calls.begin(); it != calls.end();) {
      if (it->second.phase != Entry::Phase::kEnded) {
        ++it;
        continue;
      }
      ended.push_back(std::move(it->second.call));
      it = calls.erase(it);
    }
    calls[next_id].call = std::move(call);
    return next_id++;
  }

  // TryCancel outside the lock: gRPC may run callbacks on the cancelling thread.
  void Cancel(uint64_t id) {
    std::shared_ptr<Call> call;
    {
      absl::MutexLock lock(&mu);
      auto it = calls.find(id);
      if (it == calls.end() || it->second.phase != Entry::Phase::kRunning) return;
      call = it->second.call;
    }
    call->ctx.TryCancel();
  }
  void CancelAll() {
    std::vector<uint64_t> ids;
    {
      absl::MutexLock lock(&mu);
      for (const auto& [id, entry] : calls) ids.push_back(id);
    }
    for (uint64_t id : ids) Cancel(id);
  }

  std::shared_ptr<Call> Begin(uint64_t id) {
    absl::MutexLock lock(&mu);
    Entry& entry = calls[id];
    entry.phase = Entry::Phase::kAnswering;
    entry.answering_thread = std::this_thread::get_id();
    return entry.call;
  }
  void End(uint64_t id) {
    absl::MutexLock lock(&mu);
    calls[id].phase = Entry::Phase::kEnded;
  }

  // Waits until every callback but the calling thread's own has returned, or `deadline`;
  // whether every call has ended (none answering, on this thread or another).
  bool AwaitCallbacks(absl::Time deadline) {
    absl::MutexLock lock(&mu);
    auto others_quiet = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
      for (const auto& [id, entry] : calls) {
        if (entry.phase == Entry::Phase::kRunning) return false;
        if (entry.phase == Entry::Phase::kAnswering &&
            entry.answering_thread != std::this_thread::get_id()) {
          return false;
        }
      }
      return true;
    };
    mu.AwaitWithDeadline(absl::Condition(&others_quiet), deadline);
    for (const auto& [id, entry] : calls) {
      if (entry.phase != Entry::Phase::kEnded) return false;
    }
    return true;
  }
};

namespace {

void Prepare(grpc::ClientContext* ctx, const std::string& secret, absl::Duration timeout,
             absl::Time deadline = absl::InfiniteFuture()) {
  ctx->AddMetadata(kSecretMetadataKey, secret);
  ctx->set_deadline(absl::ToChronoTime(std::min(deadline, absl::Now() + timeout)));
}

// The host of a gRPC target "host:port", "[v6]:port" or "dns:///host:port".
std::string TargetHost(absl::string_view target) {
  if (size_t scheme = target.find(":///"); scheme != absl::string_view::npos) {
    target.remove_prefix(scheme + 4);
  }
  if (size_t colon = target.rfind(':'); colon != absl::string_view::npos) {
    target = target.substr(0, colon);
  }
  if (target.size() >= 2 && target.front() == '[' && target.back() == ']') {
    target = target.substr(1, target.size() - 2);
  }
  return std::string(target);
}

void SetTask(TaskRef* task, absl::string_view job_name, int index) {
  task->set_job_name(std::string(job_name));
  task->set_index(index);
}

}  // namespace

BrokerClient::BrokerClient(const std::string& address, std::string secret,
                           BrokerClientOptions options)
    : address_(address), secret_(std::move(secret)), options_(options) {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(64 << 20);
  // Reconnect quickly when the broker is not up yet.
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 100);
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 2000);
  std::shared_ptr<grpc::ChannelCredentials> creds = grpc::InsecureChannelCredentials();
  if (!options_.tls_cert_pem.empty()) {
    // The job's self-signed certificate is the only root: no other server passes.
    grpc::SslCredentialsOptions ssl;
    ssl.pem_root_certs = options_.tls_cert_pem;
    creds = grpc::SslCredentials(ssl);
    args.SetSslTargetNameOverride(kTlsServerName);
  }
  egress_ = CheckEgressToHost(TargetHost(address), absl::StrCat("the broker at ", address));
  // A refused broker gets a channel that can only fail, locally (calls return egress_ anyway).
  channel_ =
      grpc::CreateCustomChannel(egress_.ok() ? address : "unix:/nonexistent/refused", creds, args);
  stub_ = std::make_unique<Stub>(channel_);
  in_flight_ = std::make_shared<InFlight>();
}

BrokerClient::~BrokerClient() {
  in_flight_->CancelAll();
  // Cancelled calls answer at once; the bound only keeps a wedged gRPC from hanging the caller.
  if (in_flight_->AwaitCallbacks(absl::Now() + absl::Seconds(10))) {
    absl::MutexLock lock(&in_flight_->mu);
    in_flight_->calls.clear();  // the contexts go here, before the channel
    return;
  }
  // Destroyed from one of its own callbacks (or gRPC did not answer): the channel must not be
  // released on this thread, so it is kept, with the calls, for the rest of the process.
  TONY_LOG(WARNING) << "broker client for " << address_
                    << " destroyed while its calls are answering; its channel is kept";
  {
    absl::MutexLock lock(&in_flight_->mu);
    in_flight_->orphaned_channel = channel_;
  }
  ABSL_CONST_INIT static absl::Mutex kept_mu(absl::kConstInit);
  static auto* kept = new std::vector<std::shared_ptr<InFlight>>();  // never freed
  absl::MutexLock lock(&kept_mu);
  kept->push_back(in_flight_);
}

absl::StatusOr<ClusterSpec> BrokerClient::Register(absl::string_view job_name, int index,
                                                   absl::string_view host, int port,
                                                   absl::Duration timeout) {
  RegisterRequest request;
  SetTask(request.mutable_task(), job_name, index);
  request.set_host(std::string(host));
  request.set_port(static_cast<uint32_t>(port));
  return LongPoll(request, timeout);
}

absl::StatusOr<ClusterSpec> BrokerClient::WaitForClusterSpec(absl::Duration timeout) {
  RegisterRequest request;
  request.set_observe(true);
  return LongPoll(request, timeout);
}

absl::StatusOr<ClusterSpec> BrokerClient::LongPoll(const RegisterRequest& request,
                                                   absl::Duration timeout) {
  TONY_RETURN_IF_ERROR(egress_);
  const absl::Time deadline = absl::Now() + timeout;
  absl::Status last = absl::DeadlineExceededError("no answer from the broker");
  while (absl::Now() < deadline) {
    grpc::ClientContext ctx;
    Prepare(&ctx, secret_, std::min(options_.long_poll, deadline - absl::Now()));
    // Wait for the broker to come up rather than failing at once.
    ctx.set_wait_for_ready(true);
    RegisterResponse response;
    absl::Status status = FromGrpcStatus(stub_->stub->Register(&ctx, request, &response));
    if (status.ok()) return ClusterSpecFromWire(response.cluster());
    if (!absl::IsDeadlineExceeded(status) && !absl::IsUnavailable(status) &&
        !absl::IsCancelled(status)) {
      return status;
    }
    last = status;
    if (absl::IsUnavailable(status)) {
      absl::SleepFor(std::min(absl::Milliseconds(200), deadline - absl::Now()));
    }
  }
  return absl::DeadlineExceededError(absl::StrCat("no cluster spec from the broker at ", address_,
                                                  " within ", absl::FormatDuration(timeout),
                                                  " (last: ", last.message(), ")"));
}

absl::Status BrokerClient::Heartbeat(absl::string_view job_name, int index,
                                     absl::string_view address, const TaskUsage* usage,
                                     const std::vector<GpuUsage>& gpus,
                                     std::string* preempt_container) {
  TONY_RETURN_IF_ERROR(egress_);
  grpc::ClientContext ctx;
  Prepare(&ctx, secret_, options_.call_timeout);
  HeartbeatRequest request;
  SetTask(request.mutable_task(), job_name, index);
  request.set_address(std::string(address));
  if (usage != nullptr) {
    request.set_sampled(true);
    request.set_rss_bytes(usage->rss_bytes);
    request.set_cpu_seconds(usage->cpu_seconds);
    request.set_processes(usage->processes);
    for (const GpuUsage& g : gpus) {
      GpuSample* out = request.add_gpus();
      out->set_index(g.index);
      out->set_utilization(g.utilization);
      out->set_memory_used_bytes(g.memory_used_bytes);
      out->set_memory_total_bytes(g.memory_total_bytes);
    }
  }
  HeartbeatResponse response;
  TONY_RETURN_IF_ERROR(FromGrpcStatus(stub_->stub->Heartbeat(&ctx, request, &response)));
  if (preempt_container != nullptr) *preempt_container = response.preempt_container();
  return absl::OkStatus();
}

absl::Status BrokerClient::TaskStarted(absl::string_view job_name, int index, int restart,
                                       int previous_exit_code,
                                       absl::string_view previous_stderr_tail) {
  TONY_RETURN_IF_ERROR(egress_);
  grpc::ClientContext ctx;
  Prepare(&ctx, secret_, options_.call_timeout);
  TaskStartedRequest request;
  SetTask(request.mutable_task(), job_name, index);
  if (restart > 0) {
    request.set_restart(restart);
    request.set_previous_exit_code(previous_exit_code);
    request.set_previous_stderr_tail(ToValidUtf8(previous_stderr_tail));
  }
  TaskStartedResponse response;
  return FromGrpcStatus(stub_->stub->TaskStarted(&ctx, request, &response));
}

absl::Status BrokerClient::ReportExit(absl::string_view job_name, int index, int exit_code,
                                      absl::string_view stderr_tail, absl::string_view address) {
  TONY_RETURN_IF_ERROR(egress_);
  grpc::ClientContext ctx;
  Prepare(&ctx, secret_, options_.call_timeout);
  ExitReport request;
  SetTask(request.mutable_task(), job_name, index);
  request.set_exit_code(exit_code);
  // Any text the caller has (a tail, a spawn error naming a path) may hold bytes a proto3
  // string refuses: the whole report would be lost.
  request.set_stderr_tail(ToValidUtf8(stderr_tail));
  request.set_address(std::string(address));
  ExitReportResponse response;
  return FromGrpcStatus(stub_->stub->ReportExit(&ctx, request, &response));
}

absl::Status BrokerClient::Named(absl::Status status, absl::string_view method) const {
  if (!absl::IsDeadlineExceeded(status)) return status;
  return absl::DeadlineExceededError(absl::StrCat("the broker at ", address_, " did not answer ",
                                                  method, " in time (", status.message(), ")"));
}

absl::StatusOr<ApplicationStatus> BrokerClient::GetStatus(absl::Time deadline) {
  TONY_RETURN_IF_ERROR(egress_);
  grpc::ClientContext ctx;
  Prepare(&ctx, secret_, options_.call_timeout, deadline);
  StatusRequest request;
  StatusResponse response;
  absl::Status status = FromGrpcStatus(stub_->stub->GetStatus(&ctx, request, &response));
  if (!status.ok()) return Named(status, "GetStatus");
  return ApplicationStatusFromWire(response);
}

absl::StatusOr<BrokerClient::VersionedStatus> BrokerClient::WatchStatus(uint64_t known_version,
                                                                        absl::Duration wait,
                                                                        absl::Time deadline) {
  TONY_RETURN_IF_ERROR(egress_);
  grpc::ClientContext ctx;
  Prepare(&ctx, secret_, wait + options_.call_timeout, deadline);
  StatusRequest request;
  request.set_known_version(known_version);
  request.set_wait_ms(static_cast<uint32_t>(absl::ToInt64Milliseconds(wait)));
  StatusResponse response;
  TONY_RETURN_IF_ERROR(
      Named(FromGrpcStatus(stub_->stub->GetStatus(&ctx, request, &response)), "GetStatus"));
  return VersionedStatus{ApplicationStatusFromWire(response), response.version()};
}

void BrokerClient::WatchStatusAsync(uint64_t known_version, absl::Duration wait,
                                    std::function<void(absl::StatusOr<VersionedStatus>)> done,
                                    const Cancellation& cancel) {
  auto call = std::make_shared<InFlight::Call>();
  call->done = std::move(done);
  Prepare(&call->ctx, secret_, wait + options_.call_timeout);
  call->request.set_known_version(known_version);
  call->request.set_wait_ms(static_cast<uint32_t>(absl::ToInt64Milliseconds(wait)));
  const uint64_t id = in_flight_->Add(call);
  // Set before the call starts, so the callback sees it. gRPC honours a TryCancel made before
  // the call starts.
  call->listener =
      std::make_unique<CancelListener>(cancel, [weak = std::weak_ptr<InFlight>(in_flight_), id] {
        if (std::shared_ptr<InFlight> in_flight = weak.lock()) in_flight->Cancel(id);
      });
  stub_->stub->async()->GetStatus(
      &call->ctx, &call->request, &call->response,
      [in_flight = in_flight_, id, egress = egress_](grpc::Status status) {
        std::shared_ptr<InFlight::Call> call = in_flight->Begin(id);
        call->listener.reset();  // unregistered with no lock held (a Cancel() may be taking it)
        absl::Status s = egress.ok() ? FromGrpcStatus(status) : egress;
        auto done = std::move(call->done);
        absl::StatusOr<VersionedStatus> answer =
            s.ok() ? absl::StatusOr<VersionedStatus>(VersionedStatus{
                         ApplicationStatusFromWire(call->response), call->response.version()})
                   : absl::StatusOr<VersionedStatus>(s);
        call.reset();  // the context stays with in_flight: see InFlight
        done(std::move(answer));
        in_flight->End(id);
      });
}

absl::Status BrokerClient::Kill(absl::string_view reason, absl::Time deadline) {
  TONY_RETURN_IF_ERROR(egress_);
  grpc::ClientContext ctx;
  Prepare(&ctx, secret_, options_.call_timeout, deadline);
  KillRequest request;
  request.set_reason(std::string(reason));
  KillResponse response;
  return Named(FromGrpcStatus(stub_->stub->Kill(&ctx, request, &response)), "Kill");
}

absl::Status BrokerClient::Scale(absl::string_view job_name, int tasks, absl::Time deadline) {
  TONY_RETURN_IF_ERROR(egress_);
  grpc::ClientContext ctx;
  Prepare(&ctx, secret_, options_.call_timeout, deadline);
  ScaleRequest request;
  request.set_job_name(std::string(job_name));
  request.set_tasks(tasks);
  ScaleResponse response;
  return Named(FromGrpcStatus(stub_->stub->Scale(&ctx, request, &response)), "Scale");
}

absl::Status BrokerClient::Suspend(bool suspend, absl::Time deadline) {
  TONY_RETURN_IF_ERROR(egress_);
  grpc::ClientContext ctx;
  Prepare(&ctx, secret_, options_.call_timeout, deadline);
  SuspendRequest request;
  request.set_resume(!suspend);
  SuspendResponse response;
  return Named(FromGrpcStatus(stub_->stub->Suspend(&ctx, request, &response)), "Suspend");
}

absl::StatusOr<BrokerClient::MpiDaemon> BrokerClient::MpiLaunch(absl::string_view job_name,
                                                                int index,
                                                                absl::string_view command) {
  TONY_RETURN_IF_ERROR(egress_);
  grpc::ClientContext ctx;
  Prepare(&ctx, secret_, options_.call_timeout);
  MpiLaunchRequest request;
  request.mutable_task()->set_job_name(std::string(job_name));
  request.mutable_task()->set_index(index);
  request.set_command(std::string(command));
  MpiLaunchResponse response;
  TONY_RETURN_IF_ERROR(
      Named(FromGrpcStatus(stub_->stub->MpiLaunch(&ctx, request, &response)), "MpiLaunch"));
  return MpiDaemon{response.state() == MPI_DAEMON_RUNNING || response.state() == MPI_DAEMON_EXITED,
                   response.state() == MPI_DAEMON_EXITED, response.exit_code()};
}

absl::StatusOr<std::string> BrokerClient::MpiCommand(absl::string_view job_name, int index) {
  TONY_RETURN_IF_ERROR(egress_);
  grpc::ClientContext ctx;
  Prepare(&ctx, secret_, options_.call_timeout);
  MpiCommandRequest request;
  request.mutable_task()->set_job_name(std::string(job_name));
  request.mutable_task()->set_index(index);
  MpiCommandResponse response;
  TONY_RETURN_IF_ERROR(
      Named(FromGrpcStatus(stub_->stub->MpiCommand(&ctx, request, &response)), "MpiCommand"));
  return std::move(*response.mutable_command());
}

absl::StatusOr<ClusterSpec> WaitForClusterSpecVia(
    const std::function<absl::StatusOr<std::shared_ptr<BrokerClient>>()>& broker_of,
    absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  absl::Status last = absl::UnavailableError("the ApplicationMaster is not up yet");
  while (absl::Now() < deadline) {
    absl::StatusOr<std::shared_ptr<BrokerClient>> broker = broker_of();
    if (broker.ok()) {
      // Short polls: the job may end meanwhile, which broker_of() notices.
      absl::StatusOr<ClusterSpec> spec =
          (*broker)->WaitForClusterSpec(std::min(absl::Seconds(5), deadline - absl::Now()));
      if (spec.ok() ||
          !(absl::IsDeadlineExceeded(spec.status()) || absl::IsUnavailable(spec.status()))) {
        return spec;
      }
      last = spec.status();
    } else if (absl::IsUnavailable(broker.status())) {
      last = broker.status();
      absl::SleepFor(std::min(absl::Milliseconds(500), deadline - absl::Now()));
    } else {
      return broker.status();
    }
  }
  return absl::DeadlineExceededError(absl::StrCat(
      "no cluster spec within ", absl::FormatDuration(timeout), " (last: ", last.message(), ")"));
}

absl::StatusOr<ClusterSpec> BrokerBackedApplication::WaitForClusterSpec(absl::Duration timeout) {
  return WaitForClusterSpecVia([this] { return Broker(); }, timeout);
}

absl::Status BrokerBackedApplication::ReportClientStarted() {
  TONY_ASSIGN_OR_RETURN(std::shared_ptr<BrokerClient> am, Broker());
  return am->TaskStarted(kClientJobName, 0);
}

absl::Status BrokerBackedApplication::ReportClientAlive() {
  TONY_ASSIGN_OR_RETURN(std::shared_ptr<BrokerClient> am, Broker());
  return am->Heartbeat(kClientJobName, 0);
}

absl::Status BrokerBackedApplication::ReportClientExit(int exit_code) {
  TONY_ASSIGN_OR_RETURN(std::shared_ptr<BrokerClient> am, Broker());
  return am->ReportExit(kClientJobName, 0, exit_code, "");
}

void BrokerBackedApplication::DoStatusAsync(const CallOptions& options, StatusCallback done) {
  auto shared = std::make_shared<StatusCallback>(std::move(done));
  if (!RunAsync([this, options, shared] { (*shared)(DoStatus(options)); })) {
    (*shared)(CancelledError(id()));
  }
}

void BrokerBackedApplication::DoWaitAsync(absl::Duration timeout, ProgressCallback on_progress,
                                          StatusCallback done, const Cancellation& cancel) {
  auto shared = std::make_shared<StatusCallback>(std::move(done));
  const bool started =
      RunAsync([this, timeout, on_progress = std::move(on_progress), shared, cancel] {
        // Ended by the caller's token, or by this Application going away.
        EitherCancellation either(cancel, calls_.cancellation());
        (*shared)(DoWait(timeout, on_progress, either.token()));
      });
  if (!started) (*shared)(CancelledError(id()));
}

absl::Status BrokerBackedApplication::DoScale(absl::string_view job_name, int tasks,
                                              const CallOptions& options) {
  TONY_ASSIGN_OR_RETURN(std::shared_ptr<BrokerClient> am, Broker());
  return am->Scale(job_name, tasks, CallDeadline(options));
}

void BrokerBackedApplication::DoScaleAsync(absl::string_view job_name, int tasks,
                                           const CallOptions& options, DoneCallback done) {
  auto shared = std::make_shared<DoneCallback>(std::move(done));
  if (!RunAsync([this, job = std::string(job_name), tasks, options, shared] {
        (*shared)(DoScale(job, tasks, options));
      })) {
    (*shared)(CancelledError(id()));
  }
}

absl::Status BrokerBackedApplication::DoSuspend(bool suspend, const CallOptions& options) {
  TONY_ASSIGN_OR_RETURN(std::shared_ptr<BrokerClient> am, Broker());
  return am->Suspend(suspend, CallDeadline(options));
}

void BrokerBackedApplication::DoSuspendAsync(bool suspend, const CallOptions& options,
                                             DoneCallback done) {
  auto shared = std::make_shared<DoneCallback>(std::move(done));
  if (!RunAsync([this, suspend, options, shared] { (*shared)(DoSuspend(suspend, options)); })) {
    (*shared)(CancelledError(id()));
  }
}

void BrokerBackedApplication::DoKillAsync(const CallOptions& options, DoneCallback done) {
  auto shared = std::make_shared<DoneCallback>(std::move(done));
  if (!RunAsync([this, options, shared] { (*shared)(DoKill(options)); })) {
    (*shared)(CancelledError(id()));
  }
}

}  // namespace tony::broker
