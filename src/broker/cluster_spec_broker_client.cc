// Copyright libtony authors.
//
// tony/cluster_spec_broker_client.h over the internal broker::BrokerClient, which the executor
// uses: the public class keeps gRPC and the generated messages out of the public headers.

#include "tony/cluster_spec_broker_client.h"

#include <utility>

#include "broker/broker_client.h"
#include "broker/secret.h"
#include "common/call_deadline.h"

namespace tony {

absl::StatusOr<std::string> GenerateBrokerSecret() { return broker::GenerateSecret(); }

class TONY_NO_EXPORT ClusterSpecBrokerClient::Impl {
 public:
  Impl(absl::string_view address, std::string secret, ClusterSpecBrokerClientOptions options)
      : client(std::string(address), std::move(secret), ToInternal(std::move(options))) {}

  broker::BrokerClient client;

 private:
  static broker::BrokerClientOptions ToInternal(ClusterSpecBrokerClientOptions options) {
    broker::BrokerClientOptions o;
    o.call_timeout = options.call_timeout;
    o.tls_cert_pem = std::move(options.tls_cert_pem);
    return o;
  }
};

ClusterSpecBrokerClient::ClusterSpecBrokerClient(absl::string_view address, std::string secret,
                                                 ClusterSpecBrokerClientOptions options)
    : impl_(std::make_unique<Impl>(address, std::move(secret), std::move(options))) {}

ClusterSpecBrokerClient::~ClusterSpecBrokerClient() = default;

absl::StatusOr<ClusterSpec> ClusterSpecBrokerClient::Register(absl::string_view job_name, int index,
                                                              absl::string_view host, int port,
                                                              absl::Duration timeout) {
  return impl_->client.Register(job_name, index, host, port, timeout);
}

absl::StatusOr<ClusterSpec> ClusterSpecBrokerClient::WaitForClusterSpec(absl::Duration timeout) {
  return impl_->client.WaitForClusterSpec(timeout);
}

absl::Status ClusterSpecBrokerClient::Heartbeat(absl::string_view job_name, int index) {
  return impl_->client.Heartbeat(job_name, index);
}

absl::Status ClusterSpecBrokerClient::ReportStarted(absl::string_view job_name, int index) {
  return impl_->client.TaskStarted(job_name, index);
}

absl::Status ClusterSpecBrokerClient::ReportExit(absl::string_view job_name, int index,
                                                 int exit_code, absl::string_view stderr_tail) {
  return impl_->client.ReportExit(job_name, index, exit_code, stderr_tail);
}

absl::StatusOr<ApplicationStatus> ClusterSpecBrokerClient::GetStatus(const CallOptions& options) {
  return impl_->client.GetStatus(CallDeadline(options));
}

absl::Status ClusterSpecBrokerClient::Kill(absl::string_view reason, const CallOptions& options) {
  return impl_->client.Kill(reason, CallDeadline(options));
}

}  // namespace tony
