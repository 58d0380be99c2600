// Copyright libtony authors.
//
// BrokerClient: the executor's and the submitting client's side of the ClusterSpecBroker. Every
// call carries the application secret and a deadline; errors are absl::Status with gRPC's codes.
//
// Thread-safe: one channel, shared by all calls.

#ifndef TONY_BROKER_BROKER_CLIENT_H_
#define TONY_BROKER_BROKER_CLIENT_H_

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "tony/cluster_spec.h"
#include "tony/submitter.h"

namespace grpc {
class Channel;
}  // namespace grpc

namespace tony::broker {

struct BrokerClientOptions {
  // Deadline of each short call (heartbeat, reports, status, kill). Default: 10 seconds.
  absl::Duration call_timeout = absl::Seconds(10);
  // Longest single registration long poll; Register() polls again until its own deadline.
  // Default: 30 seconds.
  absl::Duration long_poll = absl::Seconds(30);
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
  absl::Status Heartbeat(absl::string_view job_name, int index);
  absl::Status TaskStarted(absl::string_view job_name, int index);
  absl::Status ReportExit(absl::string_view job_name, int index, int exit_code,
                          absl::string_view stderr_tail);
  absl::StatusOr<ApplicationStatus> GetStatus();
  absl::Status Kill(absl::string_view reason);

 private:
  class Stub;
  const std::string address_;
  const std::string secret_;
  const BrokerClientOptions options_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<Stub> stub_;
};

}  // namespace tony::broker

#endif  // TONY_BROKER_BROKER_CLIENT_H_
