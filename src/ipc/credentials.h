// Copyright libtony authors.
//
// Hadoop's Credentials and its token storage stream ("HDTS"): what the NodeManager writes to
// HADOOP_TOKEN_FILE_LOCATION for every container, and what ContainerLaunchContext.tokens holds.
//
//   "HDTS", format byte, body
//   format 0 (Writable): vint n; n x (Text alias, Token); vint m; m x (Text alias, vint len, bytes)
//     Token = vint idLen, id, vint pwLen, pw, Text kind, Text service
//   format 1 (protobuf): a varint-delimited CredentialsProto (Security.proto)

#ifndef TONY_IPC_CREDENTIALS_H_
#define TONY_IPC_CREDENTIALS_H_

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "ipc/token.h"

namespace tony::ipc {

// Not thread-safe (a value type). Aliases are kept in sorted order, so writing is deterministic.
class Credentials {
 public:
  enum class Format { kWritable = 0, kProtobuf = 1 };

  // Parses an "HDTS" stream in either format.
  static absl::StatusOr<Credentials> Parse(absl::string_view bytes);
  // Reads a token storage file; the error names the path.
  static absl::StatusOr<Credentials> ReadFile(const std::string& path);
  // Reads the file named by $HADOOP_TOKEN_FILE_LOCATION (NotFound when the variable is unset).
  static absl::StatusOr<Credentials> ReadFromEnvironment();

  // Serializes as an "HDTS" stream. Format 0 is what Hadoop's NodeManager writes and what every
  // Hadoop version reads.
  std::string Serialize(Format format = Format::kWritable) const;
  // Writes atomically (temporary file + rename), mode 0600.
  absl::Status WriteFile(const std::string& path, Format format = Format::kWritable) const;

  void AddToken(const std::string& alias, Token token) { tokens_[alias] = std::move(token); }
  void AddSecret(const std::string& alias, std::string secret) {
    secrets_[alias] = std::move(secret);
  }
  bool RemoveToken(const std::string& alias) { return tokens_.erase(alias) > 0; }
  bool RemoveSecret(const std::string& alias) { return secrets_.erase(alias) > 0; }

  // The first token (in alias order) of the given kind.
  std::optional<Token> FindTokenByKind(absl::string_view kind) const;
  std::optional<Token> FindToken(const std::string& alias) const;
  std::optional<std::string> FindSecret(const std::string& alias) const;

  const std::map<std::string, Token>& tokens() const { return tokens_; }
  const std::map<std::string, std::string>& secrets() const { return secrets_; }
  bool empty() const { return tokens_.empty() && secrets_.empty(); }

 private:
  std::map<std::string, Token> tokens_;
  std::map<std::string, std::string> secrets_;
};

// A token as Hadoop's Token.encodeToUrlString writes it (WebHDFS GETDELEGATIONTOKEN's
// "urlString", the delegation= parameter): URL-safe base64, unpadded, of the Writable token
// (vint idLen, id, vint pwLen, pw, Text kind, Text service).
std::string EncodeTokenUrlString(const Token& token);
absl::StatusOr<Token> DecodeTokenUrlString(absl::string_view encoded);

}  // namespace tony::ipc

#endif  // TONY_IPC_CREDENTIALS_H_
