// Copyright libtony authors.
//
// One authenticated Hadoop IPC connection: preamble, SASL (unless SIMPLE), connection context,
// then any number of concurrent calls. When SASL negotiated integrity or privacy (GSSAPI with
// hadoop.rpc.protection integrity/privacy) every frame after the exchange, both ways, travels
// wrapped in RpcSaslProto WRAP messages. A reader thread matches responses to callers by call id
// and pings the server when the connection has been idle. Once broken (EOF, I/O error, FATAL
// response) a connection stays broken; RpcClient replaces it.

#ifndef TONY_IPC_CONNECTION_H_
#define TONY_IPC_CONNECTION_H_

#include <cstdint>
#include <memory>
#include <string>
#include <thread>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "ipc/sasl.h"
#include "ipc/socket.h"

namespace tony::ipc {

struct ConnectionParams {
  HostPort address;
  // Protocol named in the connection context, e.g. "org.apache.hadoop.yarn.api.
  // ApplicationClientProtocolPB".
  std::string protocol;
  ClientAuth auth;
  std::string client_id;  // 16 bytes
  // Default: 30 s. A ping (callId -4) goes out after this long without traffic.
  absl::Duration ping_interval = absl::Seconds(30);
  // Default: zero, never. Close the connection after this long without calls (pings do not
  // count); the next call reconnects.
  absl::Duration max_idle = absl::ZeroDuration();
};

// Thread-safe. Owns its reader thread, joined by Close() or the destructor.
class Connection {
 public:
  // Connects and authenticates before `deadline`. Connect/handshake I/O failures are
  // ConnectionFailure(kConnect); server refusals (bad token, ...) their mapped remote status.
  static absl::StatusOr<std::unique_ptr<Connection>> Open(const ConnectionParams& params,
                                                          absl::Time deadline);
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  // Sends a complete request frame carrying `call_id` and waits for its response. Returns the
  // response payload (the delimited response message) on SUCCESS; the mapped remote exception on
  // ERROR/FATAL; ConnectionFailure(kConnect) if the connection was already broken (nothing sent),
  // ConnectionFailure(kLost) if it broke afterwards; DeadlineExceeded at the deadline.
  absl::StatusOr<std::string> Call(int32_t call_id, const std::string& frame, absl::Time deadline);

  bool broken() const;
  // Shuts the socket down, fails waiting calls and joins the reader thread. Idempotent.
  void Close();

  const ConnectionParams& params() const { return params_; }

 private:
  struct Pending {
    bool done = false;
    absl::StatusOr<std::string> result;
  };

  Connection(ConnectionParams params, Socket socket);

  absl::Status Handshake(absl::Time deadline);
  absl::Status WriteFrame(const std::string& frame, absl::Time deadline);
  // The frame as WRAP messages (several when it exceeds the layer's limit).
  absl::StatusOr<std::string> WrapFrame(absl::string_view frame) const;
  void ReaderLoop();
  void Dispatch(absl::string_view frame_body);
  // With a security layer: unwraps a WRAP message into plain_ and dispatches the complete
  // frames it holds. Reader thread only.
  void DispatchWrapped(absl::string_view frame_body);
  // Marks the connection broken and completes every pending call with `status`.
  void Break(const absl::Status& status);

  const ConnectionParams params_;
  Socket socket_;
  std::thread reader_;
  // Set by Handshake before the reader starts; read-only afterwards.
  std::unique_ptr<SaslSecurityLayer> layer_;
  std::string plain_;  // unwrapped bytes not yet dispatched (reader thread only)

  mutable absl::Mutex mu_;
  bool broken_ ABSL_GUARDED_BY(mu_) = false;
  // A write failed because the peer closed: no more writes; the reader drains what it sent.
  bool write_failed_ ABSL_GUARDED_BY(mu_) = false;
  absl::Status write_failed_status_ ABSL_GUARDED_BY(mu_);
  bool closing_ ABSL_GUARDED_BY(mu_) = false;
  bool writing_ ABSL_GUARDED_BY(mu_) = false;  // one writer at a time, waited for with deadline
  absl::Status broken_status_ ABSL_GUARDED_BY(mu_);
  absl::Time last_io_ ABSL_GUARDED_BY(mu_);    // any traffic, pings included
  absl::Time last_call_ ABSL_GUARDED_BY(mu_);  // last call sent or answered
  absl::flat_hash_map<int32_t, Pending*> pending_ ABSL_GUARDED_BY(mu_);
};

}  // namespace tony::ipc

#endif  // TONY_IPC_CONNECTION_H_
