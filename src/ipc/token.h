// Copyright libtony authors.
//
// A Hadoop delegation/security token (Java's Token<T>), as plain bytes and strings.

#ifndef TONY_IPC_TOKEN_H_
#define TONY_IPC_TOKEN_H_

#include <string>

namespace tony::ipc {

// Well-known token kinds.
inline constexpr char kAmRmTokenKind[] = "YARN_AM_RM_TOKEN";
inline constexpr char kNmTokenKind[] = "NMToken";
inline constexpr char kContainerTokenKind[] = "ContainerToken";
inline constexpr char kHdfsDelegationTokenKind[] = "HDFS_DELEGATION_TOKEN";

// A value type. The password is a secret: never log it (nor the identifier, which names the
// attempt and key).
struct Token {
  std::string identifier;  // serialized identifier (e.g. AMRMTokenIdentifierProto)
  std::string password;
  std::string kind;     // e.g. "YARN_AM_RM_TOKEN"
  std::string service;  // usually "host:port"; may be empty

  bool operator==(const Token& o) const {
    return identifier == o.identifier && password == o.password && kind == o.kind &&
           service == o.service;
  }
  bool operator!=(const Token& o) const { return !(*this == o); }
};

}  // namespace tony::ipc

#endif  // TONY_IPC_TOKEN_H_
