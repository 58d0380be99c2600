// Copyright libtony authors.
//
// The broker's gRPC calls: each authenticates, asks RegistrationModel under mu_ and carries the
// decision out with no lock held (observers, logs and gRPC's Finish may call back in).

#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "broker/broker_impl.h"
#include "broker/register_buffer.h"
#include "broker/wire.h"
#include "common/logging.h"

namespace tony {

namespace pb = ::tony::broker;

grpc::ServerUnaryReactor* ClusterSpecBroker::Impl::Register(grpc::CallbackServerContext* ctx,
                                                            const grpc::ByteBuffer* request_buffer,
                                                            grpc::ByteBuffer* response) {
  if (!Authenticated(ctx)) return Reply(ctx, absl::UnauthenticatedError("wrong or no secret"));
  absl::StatusOr<pb::RegisterRequest> request = broker::ParseRegisterRequest(*request_buffer);
  if (!request.ok()) return Reply(ctx, request.status());
  if (request->observe()) return Observe(response);
  const std::string& job = request->task().job_name();
  const int index = request->task().index();
  absl::StatusOr<std::string> address = broker::RegisteredAddress(*request);
  if (!address.ok()) return Reply(ctx, address.status());

  auto* reactor = new RegisterReactor(this, response);
  broker::Decision d;
  Outcome out;
  {
    absl::MutexLock lock(&mu_);
    d = model_.Register(job, index, *address, clock_->Now());
    out = ApplyLocked(d, reactor);
    if (d.reply == broker::Decision::Reply::kNow && out.status.ok()) {
      *response = published_response_;  // shares the slices
    }
  }
  ClusterSpecBrokerObserver* observer = options_.observer;
  if (d.news && observer != nullptr) observer->OnRegistered(job, index, *address);
  if (d.news && !options_.status_provider) RefreshStatus();
  const absl::Status answer = d.reply == broker::Decision::Reply::kRefuse ? d.status : out.status;
  Finish(d, std::move(out));
  // A parked call is finished with the others at publication, abort or cancellation.
  if (d.reply == broker::Decision::Reply::kNow || d.reply == broker::Decision::Reply::kRefuse) {
    reactor->Finish(broker::ToGrpcStatus(answer));
  }
  return reactor;
}

ClusterSpecBroker::Impl::Outcome ClusterSpecBroker::Impl::ApplyLocked(const broker::Decision& d,
                                                                      RegisterReactor* reactor) {
  Outcome out;
  if (d.reply == broker::Decision::Reply::kPark) waiters_.insert(reactor);
  if (d.new_version) {
    absl::StatusOr<grpc::ByteBuffer> encoded = broker::EncodeRegisterResponse(model_.spec());
    if (!encoded.ok()) {
      // Unreachable with validated addresses; fail loudly rather than hang.
      out.status = encoded.status();
      model_.Abort(out.status);
      out.to_finish.assign(waiters_.begin(), waiters_.end());
      waiters_.clear();
      return out;
    }
    published_response_ = *std::move(encoded);
  }
  if (d.release) {
    out.published = model_.spec();
    out.response = published_response_;
    out.to_finish.assign(waiters_.begin(), waiters_.end());
    waiters_.clear();
    ++timer_kicks_;  // the registration deadline no longer applies
  }
  return out;
}

void ClusterSpecBroker::Impl::Finish(const broker::Decision& d, Outcome out) {
  if (!d.log.empty() && out.status.ok()) TONY_LOG(INFO) << d.log;
  if (out.published && options_.observer != nullptr) {
    options_.observer->OnClusterSpecPublished(*out.published);
  }
  if (!out.to_finish.empty()) {
    FinishWaiters(std::move(out.to_finish), out.status, &out.response);
  }
}

grpc::ServerUnaryReactor* ClusterSpecBroker::Impl::Observe(grpc::ByteBuffer* response) {
  auto* reactor = new RegisterReactor(this, response);
  broker::Decision d;
  {
    absl::MutexLock lock(&mu_);
    d = model_.Observe();
    if (d.reply == broker::Decision::Reply::kPark) {
      waiters_.insert(reactor);  // finished with the others at publication
      return reactor;
    }
    if (d.reply == broker::Decision::Reply::kNow) *response = published_response_;
  }
  reactor->Finish(broker::ToGrpcStatus(d.status));
  return reactor;
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

grpc::ServerUnaryReactor* ClusterSpecBroker::Impl::Heartbeat(grpc::CallbackServerContext* ctx,
                                                             const pb::HeartbeatRequest* request,
                                                             pb::HeartbeatResponse* response) {
  if (!Authenticated(ctx)) return Reply(ctx, absl::UnauthenticatedError("wrong or no secret"));
  const std::string& job = request->task().job_name();
  const int index = request->task().index();
  bool told_over = false;
  absl::Status status;
  {
    absl::MutexLock lock(&mu_);
    status = model_.Heartbeat(job, index, request->address(), clock_->Now(), &told_over,
                              response->mutable_preempt_container());
  }
  ClusterSpecBrokerObserver* observer = options_.observer;
  if (told_over && observer != nullptr) observer->OnTaskToldJobOver(job, index);
  // The observer hears of a live task's usage with no lock held (tony/log.h, the AM's queue).
  if (status.ok() && request->sampled() && observer != nullptr) {
    if (request->gpus_size() > 0) {
      std::vector<GpuUsage> gpus;
      for (const pb::GpuSample& g : request->gpus()) {
        gpus.push_back({g.index(), g.utilization(), g.memory_used_bytes(), g.memory_total_bytes()});
      }
      observer->OnTaskGpuUsage(job, index, gpus);
    }
    observer->OnTaskUsage(job, index, request->rss_bytes(), request->cpu_seconds(),
                          request->processes());
  }
  return Reply(ctx, status);
}

grpc::ServerUnaryReactor* ClusterSpecBroker::Impl::TaskStarted(
    grpc::CallbackServerContext* ctx, const pb::TaskStartedRequest* request,
    pb::TaskStartedResponse* response) {
  if (!Authenticated(ctx)) return Reply(ctx, absl::UnauthenticatedError("wrong or no secret"));
  const std::string& job = request->task().job_name();
  const int index = request->task().index();
  {
    absl::MutexLock lock(&mu_);
    if (absl::Status s = model_.Started(job, index, clock_->Now()); !s.ok()) return Reply(ctx, s);
  }
  if (options_.observer != nullptr && request->restart() > 0) {
    options_.observer->OnTaskRestarted(job, index, request->restart(),
                                       request->previous_exit_code(),
                                       request->previous_stderr_tail());
  } else if (options_.observer != nullptr) {
    options_.observer->OnTaskStarted(job, index);
  }
  return Reply(ctx, absl::OkStatus());
}

grpc::ServerUnaryReactor* ClusterSpecBroker::Impl::ReportExit(grpc::CallbackServerContext* ctx,
                                                              const pb::ExitReport* request,
                                                              pb::ExitReportResponse* response) {
  if (!Authenticated(ctx)) return Reply(ctx, absl::UnauthenticatedError("wrong or no secret"));
  const std::string& job = request->task().job_name();
  const int index = request->task().index();
  {
    absl::MutexLock lock(&mu_);
    if (absl::Status s = model_.Exit(job, index, request->address()); !s.ok()) {
      return Reply(ctx, s);
    }
    mpi_.Exit(job, index, request->exit_code());
  }
  if (options_.observer != nullptr) {
    options_.observer->OnTaskExited(job, index, request->exit_code(), request->stderr_tail());
  }
  if (!options_.status_provider) RefreshStatus();
  return Reply(ctx, absl::OkStatus());
}

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

grpc::ServerUnaryReactor* ClusterSpecBroker::Impl::MpiLaunch(grpc::CallbackServerContext* ctx,
                                                             const pb::MpiLaunchRequest* request,
                                                             pb::MpiLaunchResponse* response) {
  if (!Authenticated(ctx)) return Reply(ctx, absl::UnauthenticatedError("wrong or no secret"));
  const std::string& job = request->task().job_name();
  const int index = request->task().index();
  absl::StatusOr<broker::MpiBoard::View> view;
  {
    absl::MutexLock lock(&mu_);
    view = mpi_.Launch(job, index, request->command());
  }
  if (!view.ok()) return Reply(ctx, view.status());
  switch (view->state) {
    case broker::MpiBoard::State::kIdle:
    case broker::MpiBoard::State::kAssigned:
      response->set_state(pb::MPI_DAEMON_ASSIGNED);
      break;
    case broker::MpiBoard::State::kRunning:
      response->set_state(pb::MPI_DAEMON_RUNNING);
      break;
    case broker::MpiBoard::State::kExited:
      response->set_state(pb::MPI_DAEMON_EXITED);
      response->set_exit_code(view->exit_code);
      break;
  }
  return Reply(ctx, absl::OkStatus());
}

grpc::ServerUnaryReactor* ClusterSpecBroker::Impl::MpiCommand(grpc::CallbackServerContext* ctx,
                                                              const pb::MpiCommandRequest* request,
                                                              pb::MpiCommandResponse* response) {
  if (!Authenticated(ctx)) return Reply(ctx, absl::UnauthenticatedError("wrong or no secret"));
  absl::StatusOr<std::string> command;
  {
    absl::MutexLock lock(&mu_);
    command = mpi_.Fetch(request->task().job_name(), request->task().index());
  }
  if (!command.ok()) return Reply(ctx, command.status());
  if (!command->empty()) {
    TONY_LOG(INFO) << request->task().job_name() << ":" << request->task().index()
                   << " starts its MPI daemon";
  }
  response->set_command(*std::move(command));
  return Reply(ctx, absl::OkStatus());
}

}  // namespace tony
