// Copyright libtony authors.
//
// BrokerClient: the executor's and the submitting client's side of the ClusterSpecBroker. Every
// call carries the application secret and a deadline; errors are absl::Status with gRPC's codes.
//
// Thread-safe: one channel, shared by all calls.

#ifndef TONY_BROKER_BROKER_CLIENT_H_
#define TONY_BROKER_BROKER_CLIENT_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "common/async_calls.h"
#include "common/proc.h"
#include "tony/cluster_spec.h"
#include "tony/cluster_spec_broker.h"
#include "tony/submitter.h"

namespace grpc {
class Channel;
}  // namespace grpc

namespace tony::broker {

class RegisterRequest;  // generated from broker.proto

struct BrokerClientOptions {
  // Deadline of each short call (heartbeat, reports, status, kill). Default: 10 seconds.
  absl::Duration call_timeout = absl::Seconds(10);
  // Longest single registration long poll; Register() polls again until its own deadline.
  // Default: 30 seconds.
  absl::Duration long_poll = absl::Seconds(30);
  // TLS: the broker's certificate (PEM), the only one trusted (pinned), whatever the address;
  // the server must present exactly it. Default: empty (plaintext).
  std::string tls_cert_pem;
};

class BrokerClient {
 public:
  // `address` is "host:port". Connects lazily: a broker that is down shows as UNAVAILABLE on
  // the first call.
  BrokerClient(const std::string& address, std::string secret, BrokerClientOptions options = {});
  ~BrokerClient();
  BrokerClient(const BrokerClient&) = delete;
  BrokerClient& operator=(const BrokerClient&) = delete;

  // Registers the task and blocks until the cluster spec is published (returned), the broker
  // refuses (its error: ABORTED when the job failed, UNAUTHENTICATED, NOT_FOUND,
  // ALREADY_EXISTS) or `timeout` passes (DEADLINE_EXCEEDED). UNAVAILABLE brokers are retried
  // until the timeout.
  absl::StatusOr<ClusterSpec> Register(absl::string_view job_name, int index,
                                       absl::string_view host, int port, absl::Duration timeout);
  // Blocks until the cluster spec is published without registering (the client of client
  // mode); errors as Register's.
  absl::StatusOr<ClusterSpec> WaitForClusterSpec(absl::Duration timeout);
  // `address` is the task's registered "host:port" (empty: unknown). FAILED_PRECONDITION when
  // the ApplicationMaster relaunched the task elsewhere: this executor is superseded.
  // `usage`: what the task's processes use, for the AM's metrics (null: not measured); `gpus`:
  // its GPUs, sent with `usage`. `preempt_container` (optional): the container the scheduler is
  // about to preempt, as the answer names it (empty: no notice).
  absl::Status Heartbeat(absl::string_view job_name, int index, absl::string_view address = "",
                         const TaskUsage* usage = nullptr, const std::vector<GpuUsage>& gpus = {},
                         std::string* preempt_container = nullptr);
  // `restart` > 0: the command started again in place after exiting with `previous_exit_code`.
  absl::Status TaskStarted(absl::string_view job_name, int index, int restart = 0,
                           int previous_exit_code = 0, absl::string_view previous_stderr_tail = "");
  absl::Status ReportExit(absl::string_view job_name, int index, int exit_code,
                          absl::string_view stderr_tail, absl::string_view address = "");
  // GetStatus and Kill end by `deadline` too (DEADLINE_EXCEEDED naming the broker's address).
  absl::StatusOr<ApplicationStatus> GetStatus(absl::Time deadline = absl::InfiniteFuture());
  absl::Status Kill(absl::string_view reason, absl::Time deadline = absl::InfiniteFuture());
  absl::Status Scale(absl::string_view job_name, int tasks,
                     absl::Time deadline = absl::InfiniteFuture());
  // `suspend`: suspends the job, or else resumes it.
  absl::Status Suspend(bool suspend, absl::Time deadline = absl::InfiniteFuture());

  // MPI jobs (docs/mpi.md). The rsh agent hands `command` (an Open MPI daemon's) to task
  // job_name:index, or, called again with the same command, hears how it is.
  struct MpiDaemon {
    bool started = false;  // the task's executor took the command
    bool exited = false;   // and reported its exit, with exit_code
    int exit_code = 0;
  };
  absl::StatusOr<MpiDaemon> MpiLaunch(absl::string_view job_name, int index,
                                      absl::string_view command);
  // The task's daemon command once the agent handed it over; "" before.
  absl::StatusOr<std::string> MpiCommand(absl::string_view job_name, int index);

  // The AM's status and its version (which grows with every change).
  struct VersionedStatus {
    ApplicationStatus status;
    uint64_t version = 0;
  };
  // A long poll: answers once the status's version differs from `known_version` (at once for 0)
  // or after `wait` with the unchanged status. Deadline: `wait` + call_timeout, or `deadline`
  // when sooner.
  absl::StatusOr<VersionedStatus> WatchStatus(uint64_t known_version, absl::Duration wait,
                                              absl::Time deadline = absl::InfiniteFuture());
  // The same without blocking: `done` runs once, on a gRPC thread, when the answer is in (it
  // must not block for long, and must not destroy this client). Cancelling `cancel` ends the
  // call at once (done gets CANCELLED): a waiter that gives up leaves no long poll in flight.
  // Destroying the client cancels its calls in flight and waits for their `done` to return.
  void WatchStatusAsync(uint64_t known_version, absl::Duration wait,
                        std::function<void(absl::StatusOr<VersionedStatus>)> done,
                        const Cancellation& cancel = Cancellation());

 private:
  class Stub;
  struct InFlight;
  absl::StatusOr<ClusterSpec> LongPoll(const RegisterRequest& request, absl::Duration timeout);
  // Names the broker in a DEADLINE_EXCEEDED of `method`.
  absl::Status Named(absl::Status status, absl::string_view method) const;
  const std::string address_;
  const std::string secret_;
  const BrokerClientOptions options_;
  // Not OK if the egress guard (common/egress.h) refuses the broker's address: every call then
  // fails with it and nothing is sent.
  absl::Status egress_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<Stub> stub_;
  // The async calls in flight (shared with their callbacks).
  std::shared_ptr<InFlight> in_flight_;
};

// An Application that reaches its ApplicationMaster through a BrokerClient gets client mode's
// calls (tony/submitter.h) from here, and async twins that run the blocking hooks on threads it
// owns. An implementation calls StopAsyncCalls() first thing in its destructor, so that no call
// in flight outlives what it uses. Thread-safety as the implementation's Broker().
class BrokerBackedApplication : public Application {
 public:
  absl::StatusOr<ClusterSpec> WaitForClusterSpec(absl::Duration timeout) override;
  absl::Status ReportClientStarted() override;
  absl::Status ReportClientAlive() override;
  absl::Status ReportClientExit(int exit_code) override;

 protected:
  void DoStatusAsync(const CallOptions& options, StatusCallback done) override;
  void DoWaitAsync(absl::Duration timeout, ProgressCallback on_progress, StatusCallback done,
                   const Cancellation& cancel) override;
  void DoKillAsync(const CallOptions& options, DoneCallback done) override;
  absl::Status DoScale(absl::string_view job_name, int tasks, const CallOptions& options) override;
  void DoScaleAsync(absl::string_view job_name, int tasks, const CallOptions& options,
                    DoneCallback done) override;
  absl::Status DoSuspend(bool suspend, const CallOptions& options) override;
  void DoSuspendAsync(bool suspend, const CallOptions& options, DoneCallback done) override;

  // Cancels the waits in flight and joins the calls' threads (see above). Idempotent.
  void StopAsyncCalls() { calls_.Stop(); }
  // Runs `call` on a thread of the async calls; false after StopAsyncCalls().
  bool RunAsync(std::function<void()> call) { return calls_.Run(std::move(call)); }

  // The running AM's broker client: Unavailable before the AM is up, another error (e.g.
  // FailedPrecondition) once the application is over.
  virtual absl::StatusOr<std::shared_ptr<BrokerClient>> Broker() = 0;

 private:
  AsyncCalls calls_;
};

// Client mode: waits until the job's cluster spec is published. `broker_of` returns the AM's
// broker client, Unavailable while the AM is not up yet (asked again shortly), or another error
// (e.g. FailedPrecondition once the job is over), which is returned.
absl::StatusOr<ClusterSpec> WaitForClusterSpecVia(
    const std::function<absl::StatusOr<std::shared_ptr<BrokerClient>>()>& broker_of,
    absl::Duration timeout);

}  // namespace tony::broker

#endif  // TONY_BROKER_BROKER_CLIENT_H_
