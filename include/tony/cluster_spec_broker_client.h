// Copyright libtony authors.
//
// ClusterSpecBrokerClient: the task's side of a ClusterSpecBroker (tony/cluster_spec_broker.h),
// for orchestrators that launch their own executors instead of tony-executor: register a task
// and receive the cluster spec, report its start, heartbeats and exit; and the submitter's side:
// the job's status, a kill request. GenerateBrokerSecret() makes the secret both sides share.
//
//   absl::StatusOr<std::string> secret = tony::GenerateBrokerSecret();
//   if (!secret.ok()) return secret.status();
//   // Start a ClusterSpecBroker with options.secret = *secret; hand the secret to the tasks
//   // privately (a 0600 file, never a command line or an environment variable).
//   tony::ClusterSpecBrokerClient client(broker_address, *secret);
//   absl::StatusOr<tony::ClusterSpec> spec =
//       client.Register("worker", 0, "node1", port, absl::Minutes(5));
//   if (!spec.ok()) return spec.status();
//   (void)client.ReportStarted("worker", 0);
//   // Run the task, with a heartbeat at least every heartbeat_timeout.
//   return client.ReportExit("worker", 0, exit_code, stderr_tail);
//
// (tests/consumer compiles this example, as the body of a function of `broker_address`,
// `port`, `exit_code` and `stderr_tail`, against the installed package.)
//
// Errors are absl::Status with the broker's codes: UNAUTHENTICATED for a wrong secret, ABORTED
// when the job failed or was killed, NOT_FOUND for a task the job does not have, UNAVAILABLE
// when the broker cannot be reached, DEADLINE_EXCEEDED when a call's deadline passed.
//
// Stability: stable API (tony/version.h).
//
// Thread-safe: one connection (made lazily, on the first call) shared by concurrent calls.

#ifndef TONY_CLUSTER_SPEC_BROKER_CLIENT_H_
#define TONY_CLUSTER_SPEC_BROKER_CLIENT_H_

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "tony/cluster_spec.h"
#include "tony/export.h"
#include "tony/submitter.h"

namespace tony {

// A broker secret: 256 random bits from the kernel (getrandom) as 64 lower-case hex digits.
// Internal error when the kernel has no randomness to give. Thread-safe.
TONY_EXPORT absl::StatusOr<std::string> GenerateBrokerSecret();

struct ClusterSpecBrokerClientOptions {
  // Deadline of each call but the blocking ones (Register, WaitForClusterSpec), which take
  // their own. Default: 10 seconds.
  absl::Duration call_timeout = absl::Seconds(10);
  // The broker's TLS certificate (PEM), the only one trusted, whatever the address (the
  // broker's ClusterSpecBrokerOptions::tls_cert_pem). Default: empty (plaintext).
  std::string tls_cert_pem;
};

class TONY_EXPORT ClusterSpecBrokerClient {
 public:
  // `address` is the broker's "host:port"; `secret` its ClusterSpecBrokerOptions::secret.
  ClusterSpecBrokerClient(absl::string_view address, std::string secret,
                          ClusterSpecBrokerClientOptions options = {});
  ~ClusterSpecBrokerClient();
  ClusterSpecBrokerClient(const ClusterSpecBrokerClient&) = delete;
  ClusterSpecBrokerClient& operator=(const ClusterSpecBrokerClient&) = delete;

  // Registers task `job_name`:`index` at "host:port" and blocks until the broker publishes the
  // cluster spec (every expected task registered), the broker refuses, or `timeout` passes. An
  // unreachable broker is asked again until then. Registering again at the same address is
  // harmless.
  absl::StatusOr<ClusterSpec> Register(absl::string_view job_name, int index,
                                       absl::string_view host, int port, absl::Duration timeout);
  // Blocks until the spec is published, without registering (for one of the broker's
  // outside_tasks, or an observer).
  absl::StatusOr<ClusterSpec> WaitForClusterSpec(absl::Duration timeout);
  // The task is alive. FAILED_PRECONDITION when the task was relaunched elsewhere (this
  // executor is superseded and should stop its task).
  absl::Status Heartbeat(absl::string_view job_name, int index);
  // The task's command started.
  absl::Status ReportStarted(absl::string_view job_name, int index);
  // The task's command exited with `exit_code` (128 + signal when killed); `stderr_tail` is the
  // end of its stderr, for the job's diagnostics.
  absl::Status ReportExit(absl::string_view job_name, int index, int exit_code,
                          absl::string_view stderr_tail);
  // The job's status as the broker's status provider tells it, within `options`' limits and
  // call_timeout, whichever ends first.
  absl::StatusOr<ApplicationStatus> GetStatus(const CallOptions& options);
  absl::StatusOr<ApplicationStatus> GetStatus() { return GetStatus(CallOptions()); }
  // Asks for the job to be killed (the broker's observer hears OnKillRequested), within
  // `options`' limits and call_timeout.
  absl::Status Kill(absl::string_view reason, const CallOptions& options);
  absl::Status Kill(absl::string_view reason) { return Kill(reason, CallOptions()); }

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tony

#endif  // TONY_CLUSTER_SPEC_BROKER_CLIENT_H_
