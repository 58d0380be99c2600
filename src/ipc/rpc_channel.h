// Copyright libtony authors.
//
// A protobuf-engine Hadoop RPC endpoint for one protocol: typed YARN clients call through this
// interface, so they work the same over one RpcClient, an HA failover channel, or a test fake.

#ifndef TONY_IPC_RPC_CHANNEL_H_
#define TONY_IPC_RPC_CHANNEL_H_

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "google/protobuf/message_lite.h"

namespace tony::ipc {

struct CallOptions {
  // Default: zero, meaning the channel's own default timeout. Covers connecting, authenticating,
  // retries and the reply.
  absl::Duration timeout = absl::ZeroDuration();
  // Default: true. If the connection is lost after the request went out, resend it (same call
  // id, retryCount + 1) on a new connection. Set false for calls that must not run twice.
  bool idempotent = true;
};

// Implementations are thread-safe.
class RpcChannel {
 public:
  virtual ~RpcChannel() = default;

  // Calls `method` (e.g. "getNewApplication") and parses the reply into *response. Errors are
  // mapped as described in ipc/rpc_errors.h.
  virtual absl::Status Call(absl::string_view method, const google::protobuf::MessageLite& request,
                            google::protobuf::MessageLite* response,
                            const CallOptions& options) = 0;
};

}  // namespace tony::ipc

#endif  // TONY_IPC_RPC_CHANNEL_H_
