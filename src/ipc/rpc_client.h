// Copyright libtony authors.
//
// Hadoop RPC client for one server address and one protocol. Connects lazily, reconnects after
// the connection breaks (EOF, reset, server FATAL), and multiplexes concurrent calls on one
// connection. One client id per RpcClient, so a resent call (retryCount > 0) is recognized by
// the server's retry cache.

#ifndef TONY_IPC_RPC_CLIENT_H_
#define TONY_IPC_RPC_CLIENT_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "ipc/rpc_channel.h"
#include "ipc/sasl.h"
#include "ipc/socket.h"

namespace tony::ipc {

class Connection;

struct RpcClientOptions {
  // "host:port" of the server.
  std::string address;
  // Java protocol name, e.g. "org.apache.hadoop.yarn.api.ApplicationClientProtocolPB".
  std::string protocol;
  // Default: 1 (every YARN protocol).
  uint64_t protocol_version = 1;
  // Default: SIMPLE with an empty user (set one: the server trusts it on insecure clusters).
  ClientAuth auth;
  // Default: 20 s. Upper bound for connecting and authenticating one connection.
  absl::Duration connect_timeout = absl::Seconds(20);
  // Default: 60 s. Used when CallOptions.timeout is zero.
  absl::Duration call_timeout = absl::Seconds(60);
  // Default: 30 s of silence before a ping.
  absl::Duration ping_interval = absl::Seconds(30);
  // Default: zero, keep the connection. Otherwise shut it down after this long without calls:
  // its reader thread ends (the descriptor is released at the next call, which reconnects).
  absl::Duration max_idle = absl::ZeroDuration();
  // Default: 3. Connection attempts per call before a connect failure is returned (the call's
  // deadline may end them sooner). HA failover wants 1 so it moves on quickly.
  int max_connect_attempts = 3;
  // Default: 500 ms between connection attempts.
  absl::Duration connect_retry_interval = absl::Milliseconds(500);
};

// Thread-safe. Owns at most one live connection (and its reader thread); Close() or the
// destructor shuts it down and joins the thread.
class RpcClient : public RpcChannel {
 public:
  // Validates options (the address must parse); does not connect.
  static absl::StatusOr<std::unique_ptr<RpcClient>> Create(RpcClientOptions options);
  ~RpcClient() override;

  absl::Status Call(absl::string_view method, const google::protobuf::MessageLite& request,
                    google::protobuf::MessageLite* response, const CallOptions& options) override;

  // Authenticates future connections with this token (e.g. a rolled-over AMRMToken); the
  // current connection, already authenticated, stays.
  void UpdateToken(const Token& token);
  // Drops the current connection; the next call connects again.
  void Disconnect();
  // Fails later calls with Cancelled and closes the connection.
  void Close();

  const std::string& address() const { return options_.address; }

 private:
  RpcClient(RpcClientOptions options, HostPort address);
  absl::StatusOr<std::shared_ptr<Connection>> GetConnection(absl::Time deadline);

  const RpcClientOptions options_;
  const HostPort host_port_;
  const std::string client_id_;
  std::atomic<int32_t> next_call_id_{0};

  absl::Mutex mu_;
  ClientAuth auth_ ABSL_GUARDED_BY(mu_);
  std::shared_ptr<Connection> connection_ ABSL_GUARDED_BY(mu_);
  bool connecting_ ABSL_GUARDED_BY(mu_) = false;
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace tony::ipc

#endif  // TONY_IPC_RPC_CLIENT_H_
