// Copyright libtony authors.
//
// The Register call's raw buffers: the request parsed from gRPC's slices, and the published spec
// serialized once into a buffer every waiting response shares (slices are reference-counted).
//
// Thread-safe: free functions without shared state.

#ifndef TONY_BROKER_REGISTER_BUFFER_H_
#define TONY_BROKER_REGISTER_BUFFER_H_

#include <grpcpp/support/byte_buffer.h>

#include "absl/status/statusor.h"
#include "tony/broker.pb.h"
#include "tony/cluster_spec.h"

namespace tony::broker {

// InvalidArgument ("malformed registration") for bytes that are no RegisterRequest.
absl::StatusOr<RegisterRequest> ParseRegisterRequest(const grpc::ByteBuffer& buffer);
// A RegisterResponse carrying `spec`; ClusterSpecToWire's error for a spec it refuses.
absl::StatusOr<grpc::ByteBuffer> EncodeRegisterResponse(const ClusterSpec& spec);

}  // namespace tony::broker

#endif  // TONY_BROKER_REGISTER_BUFFER_H_
