// Copyright libtony authors.
//
// Hadoop's RemoteException, as WebHDFS reports it:
//   {"RemoteException":{"exception":"FileNotFoundException",
//                       "javaClassName":"java.io.FileNotFoundException",
//                       "message":"File does not exist: /x"}}
// converted to absl::Status.
//
// Thread-safety: stateless functions; safe to call concurrently.

#ifndef TONY_HDFS_REMOTE_EXCEPTION_H_
#define TONY_HDFS_REMOTE_EXCEPTION_H_

#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace tony::hdfs {

struct RemoteException {
  std::string exception;  // simple class name, e.g. "FileNotFoundException"
  std::string java_class_name;
  std::string message;
};

// The RemoteException in an error body, if the body is one.
std::optional<RemoteException> ParseRemoteException(absl::string_view body);

// The absl code for a Hadoop exception class (simple or fully qualified name).
absl::StatusCode RemoteExceptionCode(const RemoteException& e);

// True for the exceptions a standby NameNode answers with: try the next NameNode.
bool IsStandbyException(const RemoteException& e);

// The status for a failed WebHDFS response: from its RemoteException when it has one, else from
// the HTTP status. `what` says what was attempted ("WebHDFS GETFILESTATUS /x").
absl::Status WebHdfsErrorStatus(int http_status, absl::string_view body, absl::string_view what);

}  // namespace tony::hdfs

#endif  // TONY_HDFS_REMOTE_EXCEPTION_H_
