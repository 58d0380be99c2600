// Copyright libtony authors.
//
// The one place where gRPC statuses and absl::Status convert into each other. Both use the
// canonical codes, so the code carries over unchanged; the message too.

#ifndef TONY_BROKER_GRPC_STATUS_H_
#define TONY_BROKER_GRPC_STATUS_H_

#include <grpcpp/support/status.h>

#include "absl/status/status.h"

namespace tony::broker {

absl::Status FromGrpcStatus(const grpc::Status& status);
grpc::Status ToGrpcStatus(const absl::Status& status);

}  // namespace tony::broker

#endif  // TONY_BROKER_GRPC_STATUS_H_
