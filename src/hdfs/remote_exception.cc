// Copyright libtony authors.

#include "hdfs/remote_exception.h"

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "http/client.h"
#include "http/json.h"

namespace tony::hdfs {
namespace {

// The simple class name: the part after the last '.' or '$'.
absl::string_view SimpleName(absl::string_view name) {
  size_t cut = name.find_last_of(".$");
  return cut == absl::string_view::npos ? name : name.substr(cut + 1);
}

bool IsSafeMode(const RemoteException& e) {
  return SimpleName(e.exception) == "SafeModeException" ||
         SimpleName(e.java_class_name) == "SafeModeException" ||
         absl::StrContains(absl::AsciiStrToLower(e.message), "safe mode");
}

}  // namespace

std::optional<RemoteException> ParseRemoteException(absl::string_view body) {
  auto json = http::ParseJson(body, "RemoteException");
  if (!json.ok()) return std::nullopt;
  const http::Json* re = http::JsonField(*json, "RemoteException");
  if (re == nullptr || !re->is_object()) return std::nullopt;
  RemoteException e;
  e.exception = http::JsonString(*re, "exception", "").value_or("");
  e.java_class_name = http::JsonString(*re, "javaClassName", "").value_or("");
  e.message = http::JsonString(*re, "message", "").value_or("");
  // A DataNode's message carries the Java stack ("...\n\tat org.apache..."): the first part is
  // the message.
  if (size_t at = e.message.find("\n\tat "); at != std::string::npos) e.message.resize(at);
  if (e.exception.empty()) e.exception = std::string(SimpleName(e.java_class_name));
  return e;
}

absl::StatusCode RemoteExceptionCode(const RemoteException& e) {
  absl::string_view name = SimpleName(e.exception);
  if (IsSafeMode(e)) return absl::StatusCode::kUnavailable;
  if (name == "FileNotFoundException") return absl::StatusCode::kNotFound;
  if (name == "AccessControlException" || name == "SecurityException" ||
      name == "AuthorizationException") {
    return absl::StatusCode::kPermissionDenied;
  }
  if (name == "InvalidToken") return absl::StatusCode::kUnauthenticated;
  if (name == "FileAlreadyExistsException") return absl::StatusCode::kAlreadyExists;
  if (name == "StandbyException" || name == "RetriableException" ||
      name == "ObserverRetryOnActiveException") {
    return absl::StatusCode::kUnavailable;
  }
  if (name == "AlreadyBeingCreatedException" || name == "LeaseExpiredException" ||
      name == "RecoveryInProgressException") {
    return absl::StatusCode::kAborted;
  }
  if (name == "ParentNotDirectoryException" || name == "PathIsNotEmptyDirectoryException" ||
      name == "PathIsNotDirectoryException" || name == "UnresolvedPathException") {
    return absl::StatusCode::kFailedPrecondition;
  }
  if (absl::EndsWith(name, "QuotaExceededException")) {
    return absl::StatusCode::kResourceExhausted;
  }
  if (name == "UnsupportedOperationException") return absl::StatusCode::kUnimplemented;
  if (name == "IllegalArgumentException" || name == "HadoopIllegalArgumentException" ||
      name == "InvalidPathException" || name == "NumberFormatException") {
    return absl::StatusCode::kInvalidArgument;
  }
  return absl::StatusCode::kUnknown;
}

bool IsStandbyException(const RemoteException& e) {
  absl::string_view name = SimpleName(e.exception);
  return name == "StandbyException" || name == "ObserverRetryOnActiveException";
}

absl::Status WebHdfsErrorStatus(int http_status, absl::string_view body, absl::string_view what) {
  std::optional<RemoteException> e = ParseRemoteException(body);
  if (!e) {
    http::Response r;
    r.status = http_status;
    r.body = std::string(body);
    return http::HttpError(r, what);
  }
  absl::StatusCode code = RemoteExceptionCode(*e);
  if (code == absl::StatusCode::kUnknown) {
    code = http::HttpStatusToCode(http_status);
    if (code == absl::StatusCode::kOk) code = absl::StatusCode::kUnknown;
  }
  if (IsSafeMode(*e)) {
    return absl::UnavailableError(
        absl::StrCat(what, ": NameNode is in safe mode (", e->exception, ": ", e->message, ")"));
  }
  return absl::Status(code, absl::StrCat(what, ": ", e->exception, ": ", e->message));
}

}  // namespace tony::hdfs
