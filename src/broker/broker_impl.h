// Copyright libtony authors.
//
// ClusterSpecBroker::Impl: the gRPC shell over RegistrationModel (broker/registration_model.h).
// It owns the server, the lock, the clock, the parked calls and the encoded spec; the model
// decides. The broker serves with gRPC's callback API: a registration waiting for the spec is a
// parked reactor, not a blocked thread, so 10,000 waiting tasks cost memory only, and
// publication finishes them all from the thread that handled the last registration.
//
// Files: cluster_spec_broker.cc (life cycle, public API), broker_calls.cc (the service's calls),
// broker_timer.cc (the timer and the status long poll).
//
// Thread-safe: every member the calls share is guarded by mu_.

#ifndef TONY_BROKER_BROKER_IMPL_H_
#define TONY_BROKER_BROKER_IMPL_H_

#include <grpcpp/grpcpp.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/synchronization/mutex.h"
#include "broker/bounded_listener.h"
#include "broker/clock_seam.h"
#include "broker/grpc_status.h"
#include "broker/mpi_board.h"
#include "broker/registration_model.h"
#include "common/clock.h"
#include "tony/broker.grpc.pb.h"
#include "tony/cluster_spec_broker.h"

namespace tony {

// Register is a raw method: the published spec is serialized once into one buffer that every
// waiting response shares (slices are reference-counted), instead of one copy per task, which
// for 10,000 tasks would be 10,000 copies of a 20 KB message.
class TONY_NO_EXPORT ClusterSpecBroker::Impl final
    : public ::tony::broker::ClusterSpecBroker::WithRawCallbackMethod_Register<
          ::tony::broker::ClusterSpecBroker::CallbackService> {
 public:
  explicit Impl(ClusterSpecBrokerOptions options)
      : options_(std::move(options)), model_(options_), mpi_(options_.mpi_daemon_tasks) {}
  ~Impl() override { Stop(); }

  absl::Status Start();
  void Stop();
  void Abort(const absl::Status& reason);
  void NotifyStatusChanged() { RefreshStatus(); }
  void Excuse(absl::string_view job, int index);
  void Admit(const std::vector<std::string>& job_names);
  void ReopenTask(absl::string_view job, int index);
  void NoticePreemption(absl::string_view job, int index, absl::string_view container);
  void Rejoin(absl::string_view job, int index);
  int port() const { return port_.load(); }
  std::optional<ClusterSpec> cluster_spec() const;
  bool IsRegistered(absl::string_view job, int index) const;
  std::vector<std::string> UnregisteredTasks() const;

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
    StatusReactor(Impl* impl, ::tony::broker::StatusResponse* response)
        : impl_(impl), response_(response) {}
    void OnCancel() override { impl_->CancelStatusWaiter(this); }
    void OnDone() override { delete this; }
    ::tony::broker::StatusResponse* response() { return response_; }

   private:
    Impl* impl_;
    ::tony::broker::StatusResponse* response_;
  };

  // Service (broker_calls.cc, GetStatus in broker_timer.cc).
  grpc::ServerUnaryReactor* Register(grpc::CallbackServerContext* ctx,
                                     const grpc::ByteBuffer* request_buffer,
                                     grpc::ByteBuffer* response) override;
  grpc::ServerUnaryReactor* Heartbeat(grpc::CallbackServerContext* ctx,
                                      const ::tony::broker::HeartbeatRequest* request,
                                      ::tony::broker::HeartbeatResponse* response) override;
  grpc::ServerUnaryReactor* TaskStarted(grpc::CallbackServerContext* ctx,
                                        const ::tony::broker::TaskStartedRequest* request,
                                        ::tony::broker::TaskStartedResponse* response) override;
  grpc::ServerUnaryReactor* ReportExit(grpc::CallbackServerContext* ctx,
                                       const ::tony::broker::ExitReport* request,
                                       ::tony::broker::ExitReportResponse* response) override;
  grpc::ServerUnaryReactor* GetStatus(grpc::CallbackServerContext* ctx,
                                      const ::tony::broker::StatusRequest* request,
                                      ::tony::broker::StatusResponse* response) override;
  grpc::ServerUnaryReactor* Kill(grpc::CallbackServerContext* ctx,
                                 const ::tony::broker::KillRequest* request,
                                 ::tony::broker::KillResponse* response) override;
  grpc::ServerUnaryReactor* Scale(grpc::CallbackServerContext* ctx,
                                  const ::tony::broker::ScaleRequest* request,
                                  ::tony::broker::ScaleResponse* response) override;
  grpc::ServerUnaryReactor* Suspend(grpc::CallbackServerContext* ctx,
                                    const ::tony::broker::SuspendRequest* request,
                                    ::tony::broker::SuspendResponse* response) override;
  grpc::ServerUnaryReactor* MpiLaunch(grpc::CallbackServerContext* ctx,
                                      const ::tony::broker::MpiLaunchRequest* request,
                                      ::tony::broker::MpiLaunchResponse* response) override;
  grpc::ServerUnaryReactor* MpiCommand(grpc::CallbackServerContext* ctx,
                                       const ::tony::broker::MpiCommandRequest* request,
                                       ::tony::broker::MpiCommandResponse* response) override;

 private:
  friend class broker::BrokerClockSeam;

  static grpc::ServerUnaryReactor* Reply(grpc::CallbackServerContext* ctx,
                                         const absl::Status& status) {
    grpc::ServerUnaryReactor* reactor = ctx->DefaultReactor();
    reactor->Finish(broker::ToGrpcStatus(status));
    return reactor;
  }
  bool Authenticated(grpc::CallbackServerContext* ctx) const;
  // Start()'s work while it alone owns the serving members (Phase::kStarting).
  absl::Status Serve();
  // A registration with `observe` set.
  grpc::ServerUnaryReactor* Observe(grpc::ByteBuffer* response);
  // What a decision leaves to do once mu_ is released.
  struct Outcome {
    std::vector<RegisterReactor*> to_finish;  // parked calls to finish with `status`/the spec
    absl::Status status;
    grpc::ByteBuffer response;  // the current spec, encoded
    std::optional<ClusterSpec> published;
  };
  // Carries out the part of `d` that needs the lock: encodes a new version, parks `reactor`,
  // takes the parked calls to release (or to fail when the spec cannot be encoded).
  Outcome ApplyLocked(const broker::Decision& d, RegisterReactor* reactor)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Logs and tells the observer, then finishes the calls of `out`.
  void Finish(const broker::Decision& d, Outcome out);
  void CancelWaiter(RegisterReactor* reactor);
  void CancelStatusWaiter(StatusReactor* reactor);
  // Finishes every parked registration with `status`, or with the spec when it is OK.
  static void FinishWaiters(std::vector<RegisterReactor*> waiters, const absl::Status& status,
                            const grpc::ByteBuffer* response);
  // The status as the provider (or the broker itself) sees it. Takes mu_ in the latter case.
  ApplicationStatus CurrentStatus();
  // Recomputes the status; when it differs from the last one, the version grows and every
  // parked status poll is answered.
  ::tony::broker::StatusResponse RefreshStatus();
  void TimerLoop();
  // One pass of the timer at `now`: expired status waits, then the model's deadlines. Releases
  // mu_ around callbacks and answers.
  void TimerPassLocked(absl::Time now) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void AnswerExpiredPollsLocked(absl::Time now) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const ClusterSpecBrokerOptions options_;
  std::unique_ptr<broker::BoundedListener> listener_;
  std::unique_ptr<grpc::experimental::ExternalConnectionAcceptor> acceptor_;
  std::unique_ptr<grpc::Server> server_;
  std::atomic<int> port_{0};  // read by port() from any thread
  std::thread timer_;
  // Where deadlines read the time (broker/clock_seam.h). Set before Start(), then constant.
  Clock* clock_ = RealClock();

  mutable absl::Mutex mu_;
  broker::RegistrationModel model_ ABSL_GUARDED_BY(mu_);
  broker::MpiBoard mpi_ ABSL_GUARDED_BY(mu_);      // an MPI job's daemons
  uint64_t timer_kicks_ ABSL_GUARDED_BY(mu_) = 0;  // wakes the timer to recompute its deadline
  // The clock's time of the timer's last full pass (heartbeats included), set once the pass is
  // over.
  absl::Time timer_seen_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
  // kStarting: one Start() is under way (it alone touches listener_, server_ and acceptor_).
  enum class Phase { kNew, kStarting, kServing, kStopped };
  Phase phase_ ABSL_GUARDED_BY(mu_) = Phase::kNew;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  grpc::ByteBuffer published_response_ ABSL_GUARDED_BY(mu_);  // serialized RegisterResponse
  absl::flat_hash_set<RegisterReactor*> waiters_ ABSL_GUARDED_BY(mu_);
  // Serializes RefreshStatus so that versions follow the order the statuses were computed in.
  absl::Mutex refresh_mu_ ABSL_ACQUIRED_BEFORE(mu_);
  uint64_t status_version_ ABSL_GUARDED_BY(mu_) = 0;
  std::string status_bytes_ ABSL_GUARDED_BY(mu_);  // the last status, serialized without version
  // Parked status polls and when each must be answered even without a change.
  absl::flat_hash_map<StatusReactor*, absl::Time> status_waiters_ ABSL_GUARDED_BY(mu_);
};

}  // namespace tony

#endif  // TONY_BROKER_BROKER_IMPL_H_
