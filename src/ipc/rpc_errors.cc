// Copyright libtony authors.

#include "ipc/rpc_errors.h"

#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/cord.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "hadoop/RpcHeader.pb.h"

namespace tony::ipc {
namespace {

using ErrorCode = tony::hadoop::common::RpcResponseHeaderProto;

absl::string_view SimpleName(absl::string_view java_class) {
  size_t dot = java_class.rfind('.');
  return dot == absl::string_view::npos ? java_class : java_class.substr(dot + 1);
}

// Keyed by simple class name; YARN, Hadoop common and JDK exceptions do not collide here.
const absl::flat_hash_map<absl::string_view, absl::StatusCode>& ClassCodes() {
  static const auto* codes = new absl::flat_hash_map<absl::string_view, absl::StatusCode>{
      {"ApplicationNotFoundException", absl::StatusCode::kNotFound},
      {"ApplicationAttemptNotFoundException", absl::StatusCode::kNotFound},
      {"ContainerNotFoundException", absl::StatusCode::kNotFound},
      {"FileNotFoundException", absl::StatusCode::kNotFound},
      {"SecretManager$InvalidToken", absl::StatusCode::kUnauthenticated},
      {"InvalidToken", absl::StatusCode::kUnauthenticated},
      {"SaslException", absl::StatusCode::kUnauthenticated},
      {"AuthenticationException", absl::StatusCode::kUnauthenticated},
      {"InvalidAuthTokenException", absl::StatusCode::kUnauthenticated},
      {"AccessControlException", absl::StatusCode::kPermissionDenied},
      {"AuthorizationException", absl::StatusCode::kPermissionDenied},
      {"InvalidApplicationMasterRequestException", absl::StatusCode::kFailedPrecondition},
      {"ApplicationMasterNotRegisteredException", absl::StatusCode::kFailedPrecondition},
      {"ApplicationIdNotProvidedException", absl::StatusCode::kFailedPrecondition},
      {"InvalidResourceRequestException", absl::StatusCode::kInvalidArgument},
      {"InvalidLabelResourceRequestException", absl::StatusCode::kInvalidArgument},
      {"InvalidResourceBlacklistRequestException", absl::StatusCode::kInvalidArgument},
      {"InvalidContainerReleaseException", absl::StatusCode::kInvalidArgument},
      {"InvalidContainerRequestException", absl::StatusCode::kInvalidArgument},
      {"IllegalArgumentException", absl::StatusCode::kInvalidArgument},
      {"StandbyException", absl::StatusCode::kUnavailable},
      {"RetriableException", absl::StatusCode::kUnavailable},
      {"ServerTooBusyException", absl::StatusCode::kUnavailable},
      {"RpcNoSuchMethodException", absl::StatusCode::kUnimplemented},
      {"RpcNoSuchProtocolException", absl::StatusCode::kUnimplemented},
      {"UnsupportedOperationException", absl::StatusCode::kUnimplemented},
  };
  return *codes;
}

absl::StatusCode CodeFor(absl::string_view simple, bool fatal, int detail) {
  const auto& codes = ClassCodes();
  if (auto it = codes.find(simple); it != codes.end()) return it->second;
  // "Outer$Inner": also try the inner name.
  if (size_t dollar = simple.rfind('$'); dollar != absl::string_view::npos) {
    if (auto it = codes.find(simple.substr(dollar + 1)); it != codes.end()) return it->second;
  }
  switch (detail) {
    case ErrorCode::ERROR_NO_SUCH_METHOD:
    case ErrorCode::ERROR_NO_SUCH_PROTOCOL:
      return absl::StatusCode::kUnimplemented;
    case ErrorCode::ERROR_RPC_VERSION_MISMATCH:
    case ErrorCode::FATAL_VERSION_MISMATCH:
      return absl::StatusCode::kFailedPrecondition;
    case ErrorCode::FATAL_UNAUTHORIZED:
      return absl::StatusCode::kUnauthenticated;
    default:
      break;
  }
  return fatal ? absl::StatusCode::kInternal : absl::StatusCode::kUnknown;
}

// Hadoop sends the stringified exception: the message, then "\n\tat ..." frames and causes.
absl::string_view MessageWithoutTrace(absl::string_view class_name, absl::string_view msg) {
  if (size_t at = msg.find("\n\tat "); at != absl::string_view::npos) msg = msg.substr(0, at);
  if (size_t at = msg.find("\tat "); at == 0) msg = absl::string_view();
  // Some paths (SASL failures: ioe.toString()) repeat the class in front of the message.
  absl::ConsumePrefix(&msg, absl::StrCat(class_name, ": "));
  return absl::StripTrailingAsciiWhitespace(msg);
}

}  // namespace

absl::Status RemoteExceptionToStatus(absl::string_view exception_class, absl::string_view error_msg,
                                     bool fatal, int error_detail) {
  absl::string_view simple = SimpleName(exception_class);
  absl::StatusCode code = CodeFor(simple, fatal, error_detail);
  absl::string_view msg = MessageWithoutTrace(exception_class, error_msg);
  std::string text = exception_class.empty() ? std::string(msg)
                     : msg.empty()           ? std::string(simple)
                                             : absl::StrCat(simple, ": ", msg);
  if (text.empty()) text = fatal ? "fatal RPC error" : "RPC error";
  absl::Status status(code, text);
  if (!exception_class.empty()) {
    status.SetPayload(kRemoteExceptionPayload, absl::Cord(exception_class));
  }
  return status;
}

std::optional<std::string> RemoteExceptionClass(const absl::Status& status) {
  auto payload = status.GetPayload(kRemoteExceptionPayload);
  if (!payload.has_value()) return std::nullopt;
  return std::string(*payload);
}

bool IsRemoteException(const absl::Status& status, absl::string_view name) {
  std::optional<std::string> cls = RemoteExceptionClass(status);
  if (!cls.has_value()) return false;
  return *cls == name || SimpleName(*cls) == name;
}

absl::Status ConnectionFailureStatus(ConnectionFailure kind, absl::string_view message) {
  absl::Status status = absl::UnavailableError(message);
  status.SetPayload(kConnectionFailurePayload,
                    absl::Cord(kind == ConnectionFailure::kConnect ? "connect" : "lost"));
  return status;
}

std::optional<ConnectionFailure> GetConnectionFailure(const absl::Status& status) {
  auto payload = status.GetPayload(kConnectionFailurePayload);
  if (!payload.has_value()) return std::nullopt;
  return *payload == "connect" ? ConnectionFailure::kConnect : ConnectionFailure::kLost;
}

bool ShouldFailOver(const absl::Status& status) {
  return GetConnectionFailure(status).has_value() || IsRemoteException(status, "StandbyException");
}

}  // namespace tony::ipc
