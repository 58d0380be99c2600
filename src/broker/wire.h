// Copyright libtony authors.
//
// Conversions between libtony's public types and the broker's protobuf messages
// (src/proto/tony/broker.proto).
//
// Thread-safe: free functions without shared state.

#ifndef TONY_BROKER_WIRE_H_
#define TONY_BROKER_WIRE_H_

#include <string>

#include "absl/status/statusor.h"
#include "tony/broker.pb.h"
#include "tony/cluster_spec.h"
#include "tony/submitter.h"

namespace tony::broker {

// InvalidArgument for an address that is not "host:port" with a port in 1..65535, or for more
// than 65536 distinct hosts.
absl::StatusOr<ClusterSpecWire> ClusterSpecToWire(const ClusterSpec& cluster);
// InvalidArgument for a malformed message (odd byte counts, host index out of range, an empty host
// or port 0): whatever it accepts, ClusterSpecToWire accepts back.
absl::StatusOr<ClusterSpec> ClusterSpecFromWire(const ClusterSpecWire& wire);

// The "host:port" a registration gives, or InvalidArgument naming the task when the host is empty
// or the port not in 1..65535. ClusterSpecToWire accepts every address this returns.
absl::StatusOr<std::string> RegisteredAddress(const RegisterRequest& request);

StatusResponse ApplicationStatusToWire(const ApplicationStatus& status);
ApplicationStatus ApplicationStatusFromWire(const StatusResponse& wire);

}  // namespace tony::broker

#endif  // TONY_BROKER_WIRE_H_
