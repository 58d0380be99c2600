// Copyright libtony authors.

#include "broker/register_buffer.h"

#include <string>
#include <utility>
#include <vector>

#include "broker/wire.h"
#include "common/status_macros.h"

namespace tony::broker {

absl::StatusOr<RegisterRequest> ParseRegisterRequest(const grpc::ByteBuffer& buffer) {
  std::vector<grpc::Slice> slices;
  std::string bytes;
  if (buffer.Dump(&slices).ok()) {
    for (const grpc::Slice& slice : slices) {
      bytes.append(reinterpret_cast<const char*>(slice.begin()), slice.size());
    }
  }
  RegisterRequest parsed;
  if (!parsed.ParseFromString(bytes)) {
    return absl::InvalidArgumentError("malformed registration");
  }
  return parsed;
}

absl::StatusOr<grpc::ByteBuffer> EncodeRegisterResponse(const ClusterSpec& spec) {
  TONY_ASSIGN_OR_RETURN(ClusterSpecWire wire, ClusterSpecToWire(spec));
  RegisterResponse message;
  *message.mutable_cluster() = std::move(wire);
  grpc::Slice slice(message.SerializeAsString());
  return grpc::ByteBuffer(&slice, 1);
}

}  // namespace tony::broker
