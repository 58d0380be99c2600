// Copyright libtony authors.

#include "broker/grpc_status.h"

#include <string>

namespace tony::broker {

absl::Status FromGrpcStatus(const grpc::Status& status) {
  if (status.ok()) return absl::OkStatus();
  int code = static_cast<int>(status.error_code());
  if (code < 0 || code > static_cast<int>(absl::StatusCode::kUnauthenticated)) {
    code = static_cast<int>(absl::StatusCode::kUnknown);
  }
  return absl::Status(static_cast<absl::StatusCode>(code), status.error_message());
}

grpc::Status ToGrpcStatus(const absl::Status& status) {
  if (status.ok()) return grpc::Status::OK;
  int code = static_cast<int>(status.code());
  if (code < 0 || code > static_cast<int>(grpc::StatusCode::UNAUTHENTICATED)) {
    code = static_cast<int>(grpc::StatusCode::UNKNOWN);
  }
  return grpc::Status(static_cast<grpc::StatusCode>(code), std::string(status.message()));
}

}  // namespace tony::broker
