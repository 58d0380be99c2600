// Copyright libtony authors.

#include "ipc/credentials.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "common/unique_fd.h"
#include "google/protobuf/io/coded_stream.h"
#include "hadoop/Security.pb.h"
#include "ipc/writable.h"

namespace tony::ipc {
namespace {

constexpr absl::string_view kMagic = "HDTS";

absl::Status ParseWritableBody(absl::string_view body, Credentials* creds) {
  WritableReader in(body);
  TONY_ASSIGN_OR_RETURN(int32_t num_tokens, in.ReadLength());
  for (int32_t i = 0; i < num_tokens; ++i) {
    Token token;
    TONY_ASSIGN_OR_RETURN(std::string alias, in.ReadText());
    TONY_ASSIGN_OR_RETURN(token.identifier, in.ReadBytes());
    TONY_ASSIGN_OR_RETURN(token.password, in.ReadBytes());
    TONY_ASSIGN_OR_RETURN(token.kind, in.ReadText());
    TONY_ASSIGN_OR_RETURN(token.service, in.ReadText());
    creds->AddToken(alias, std::move(token));
  }
  TONY_ASSIGN_OR_RETURN(int32_t num_secrets, in.ReadLength());
  for (int32_t i = 0; i < num_secrets; ++i) {
    TONY_ASSIGN_OR_RETURN(std::string alias, in.ReadText());
    TONY_ASSIGN_OR_RETURN(std::string secret, in.ReadBytes());
    creds->AddSecret(alias, std::move(secret));
  }
  return absl::OkStatus();
}

absl::Status ParseProtobufBody(absl::string_view body, Credentials* creds) {
  google::protobuf::io::CodedInputStream in(reinterpret_cast<const uint8_t*>(body.data()),
                                            static_cast<int>(body.size()));
  uint32_t size = 0;
  if (!in.ReadVarint32(&size)) return absl::DataLossError("token storage: truncated length");
  google::protobuf::io::CodedInputStream::Limit limit = in.PushLimit(static_cast<int>(size));
  tony::hadoop::common::CredentialsProto proto;
  if (!proto.ParseFromCodedStream(&in) || !in.ConsumedEntireMessage() ||
      in.BytesUntilLimit() != 0) {
    return absl::DataLossError("token storage: bad CredentialsProto");
  }
  in.PopLimit(limit);
  for (const auto& kv : proto.tokens()) {
    const auto& t = kv.token();
    creds->AddToken(kv.alias(), Token{t.identifier(), t.password(), t.kind(), t.service()});
  }
  for (const auto& kv : proto.secrets()) creds->AddSecret(kv.alias(), kv.secret());
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<Credentials> Credentials::Parse(absl::string_view bytes) {
  if (bytes.size() < kMagic.size() + 1 || bytes.substr(0, kMagic.size()) != kMagic) {
    return absl::DataLossError("not a Hadoop token storage stream (no HDTS magic)");
  }
  uint8_t format = static_cast<uint8_t>(bytes[kMagic.size()]);
  absl::string_view body = bytes.substr(kMagic.size() + 1);
  Credentials creds;
  switch (format) {
    case 0:
      TONY_RETURN_IF_ERROR(ParseWritableBody(body, &creds));
      break;
    case 1:
      TONY_RETURN_IF_ERROR(ParseProtobufBody(body, &creds));
      break;
    default:
      return absl::UnimplementedError(
          absl::StrCat("unknown token storage format ", static_cast<int>(format)));
  }
  return creds;
}

absl::StatusOr<Credentials> Credentials::ReadFile(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) {
    return absl::NotFoundError(
        absl::StrCat("cannot open token file ", path, ": ", std::strerror(errno)));
  }
  std::ostringstream ss;
  ss << f.rdbuf();
  absl::StatusOr<Credentials> creds = Parse(ss.str());
  if (!creds.ok()) {
    return absl::Status(creds.status().code(),
                        absl::StrCat("token file ", path, ": ", creds.status().message()));
  }
  return creds;
}

absl::StatusOr<Credentials> Credentials::ReadFromEnvironment() {
  const char* path = std::getenv("HADOOP_TOKEN_FILE_LOCATION");
  if (path == nullptr || *path == '\0') {
    return absl::NotFoundError("HADOOP_TOKEN_FILE_LOCATION is not set");
  }
  return ReadFile(path);
}

std::string EncodeTokenUrlString(const Token& token) {
  std::string raw;
  AppendWritableBytes(token.identifier, &raw);
  AppendWritableBytes(token.password, &raw);
  AppendWritableText(token.kind, &raw);
  AppendWritableText(token.service, &raw);
  return absl::WebSafeBase64Escape(raw);
}

absl::StatusOr<Token> DecodeTokenUrlString(absl::string_view encoded) {
  std::string raw;
  if (!absl::WebSafeBase64Unescape(encoded, &raw)) {
    return absl::InvalidArgumentError("token: not URL-safe base64");
  }
  WritableReader in(raw);
  Token token;
  TONY_ASSIGN_OR_RETURN(token.identifier, in.ReadBytes());
  TONY_ASSIGN_OR_RETURN(token.password, in.ReadBytes());
  TONY_ASSIGN_OR_RETURN(token.kind, in.ReadText());
  TONY_ASSIGN_OR_RETURN(token.service, in.ReadText());
  if (in.remaining() != 0) return absl::InvalidArgumentError("token: trailing bytes");
  return token;
}

std::string Credentials::Serialize(Format format) const {
  std::string out(kMagic);
  out.push_back(static_cast<char>(format));
  if (format == Format::kWritable) {
    AppendWritableVLong(static_cast<int64_t>(tokens_.size()), &out);
    for (const auto& [alias, t] : tokens_) {
      AppendWritableText(alias, &out);
      AppendWritableBytes(t.identifier, &out);
      AppendWritableBytes(t.password, &out);
      AppendWritableText(t.kind, &out);
      AppendWritableText(t.service, &out);
    }
    AppendWritableVLong(static_cast<int64_t>(secrets_.size()), &out);
    for (const auto& [alias, secret] : secrets_) {
      AppendWritableText(alias, &out);
      AppendWritableBytes(secret, &out);
    }
    return out;
  }
  tony::hadoop::common::CredentialsProto proto;
  for (const auto& [alias, t] : tokens_) {
    auto* kv = proto.add_tokens();
    kv->set_alias(alias);
    auto* tp = kv->mutable_token();
    tp->set_identifier(t.identifier);
    tp->set_password(t.password);
    tp->set_kind(t.kind);
    tp->set_service(t.service);
  }
  for (const auto& [alias, secret] : secrets_) {
    auto* kv = proto.add_secrets();
    kv->set_alias(alias);
    kv->set_secret(secret);
  }
  // Java's writeDelimitedTo: a varint size, then the message.
  std::string body = proto.SerializeAsString();
  uint8_t varint[10];
  uint8_t* end = google::protobuf::io::CodedOutputStream::WriteVarint32ToArray(
      static_cast<uint32_t>(body.size()), varint);
  out.append(reinterpret_cast<const char*>(varint), end - varint);
  out.append(body);
  return out;
}

absl::Status Credentials::WriteFile(const std::string& path, Format format) const {
  std::string data = Serialize(format);
  std::string tmp = absl::StrCat(path, ".tmp.", getpid());
  // Created new, never through a planted symlink (a stale one of an earlier pid is replaced).
  constexpr int kFlags = O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC;
  UniqueFd fd(::open(tmp.c_str(), kFlags, 0600));
  if (!fd.valid() && errno == EEXIST) {
    ::unlink(tmp.c_str());
    fd.Reset(::open(tmp.c_str(), kFlags, 0600));
  }
  if (!fd.valid()) {
    return absl::InternalError(absl::StrCat("create ", tmp, ": ", std::strerror(errno)));
  }
  absl::Status status = WriteAll(fd.get(), data, tmp);
  absl::Status closed = fd.Close(tmp);
  if (status.ok()) status = closed;
  if (status.ok() && ::rename(tmp.c_str(), path.c_str()) != 0) {
    status = absl::InternalError(absl::StrCat("write ", path, ": ", std::strerror(errno)));
  }
  if (!status.ok()) ::unlink(tmp.c_str());
  return status;
}

std::optional<Token> Credentials::FindTokenByKind(absl::string_view kind) const {
  for (const auto& [alias, t] : tokens_) {
    if (t.kind == kind) return t;
  }
  return std::nullopt;
}

std::optional<Token> Credentials::FindToken(const std::string& alias) const {
  auto it = tokens_.find(alias);
  if (it == tokens_.end()) return std::nullopt;
  return it->second;
}

std::optional<std::string> Credentials::FindSecret(const std::string& alias) const {
  auto it = secrets_.find(alias);
  if (it == secrets_.end()) return std::nullopt;
  return it->second;
}

}  // namespace tony::ipc
