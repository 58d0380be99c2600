// Copyright libtony authors.
//
// The one place where Hadoop RPC errors become absl::Status. A server-side Java exception keeps
// its class and message: the status message reads "SimpleClass: message" (stack trace dropped)
// and the fully qualified class name rides along as a status payload (RemoteExceptionClass()).
// Connection-level failures are Unavailable with a payload saying whether the request can have
// reached the server, so retry and failover logic can decide without parsing messages.
//
// Thread-safety: stateless functions, safe to call concurrently.

#ifndef TONY_IPC_RPC_ERRORS_H_
#define TONY_IPC_RPC_ERRORS_H_

#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace tony::ipc {

// Status payload type URLs.
inline constexpr char kRemoteExceptionPayload[] = "type.libtony/tony.ipc.RemoteException";
inline constexpr char kConnectionFailurePayload[] = "type.libtony/tony.ipc.ConnectionFailure";

// Maps a Java exception from the server (RpcResponseHeaderProto's exceptionClassName/errorMsg,
// a SerializedExceptionProto, or a SASL failure) to a status. `fatal` marks an RPC FATAL status
// (the server closed the connection); `error_detail` is RpcErrorCodeProto's number, 0 if absent.
absl::Status RemoteExceptionToStatus(absl::string_view exception_class, absl::string_view error_msg,
                                     bool fatal = false, int error_detail = 0);

// The fully qualified Java class of a status made by RemoteExceptionToStatus, if any.
std::optional<std::string> RemoteExceptionClass(const absl::Status& status);

// True if the status carries a remote exception whose class is `name`, either fully qualified
// or as the simple name (the part after the last '.'; inner classes keep "Outer$Inner").
bool IsRemoteException(const absl::Status& status, absl::string_view name);

// How a connection failed.
enum class ConnectionFailure {
  kConnect,  // no connection was established: the request never left this process
  kLost,     // the connection broke after the request may have been sent
};
absl::Status ConnectionFailureStatus(ConnectionFailure kind, absl::string_view message);
std::optional<ConnectionFailure> GetConnectionFailure(const absl::Status& status);

// True for the errors after which another ResourceManager (HA) should be tried: connection
// failures and StandbyException.
bool ShouldFailOver(const absl::Status& status);

}  // namespace tony::ipc

#endif  // TONY_IPC_RPC_ERRORS_H_
