// Copyright libtony authors.

#include "ipc/rpc_client.h"

#include <algorithm>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/logging.h"
#include "common/status_macros.h"
#include "hadoop/ProtobufRpcEngine2.pb.h"
#include "ipc/connection.h"
#include "ipc/rpc_errors.h"
#include "ipc/wire.h"

namespace tony::ipc {

absl::StatusOr<std::unique_ptr<RpcClient>> RpcClient::Create(RpcClientOptions options) {
  TONY_ASSIGN_OR_RETURN(HostPort hp, ParseHostPort(options.address));
  if (options.protocol.empty()) return absl::InvalidArgumentError("RpcClient: no protocol name");
  if (options.auth.method == AuthMethod::kToken && !options.auth.token.has_value()) {
    return absl::InvalidArgumentError("RpcClient: TOKEN auth without a token");
  }
  if (options.max_connect_attempts < 1) options.max_connect_attempts = 1;
  return std::unique_ptr<RpcClient>(new RpcClient(std::move(options), std::move(hp)));
}

RpcClient::RpcClient(RpcClientOptions options, HostPort address)
    : options_(std::move(options)),
      host_port_(std::move(address)),
      client_id_(NewClientId()),
      auth_(options_.auth) {}

RpcClient::~RpcClient() { Close(); }

void RpcClient::Close() {
  std::shared_ptr<Connection> conn;
  {
    absl::MutexLock lock(&mu_);
    closed_ = true;
    conn = std::move(connection_);
  }
  if (conn != nullptr) conn->Close();
}

void RpcClient::Disconnect() {
  std::shared_ptr<Connection> conn;
  {
    absl::MutexLock lock(&mu_);
    conn = std::move(connection_);
  }
  if (conn != nullptr) conn->Close();
}

void RpcClient::UpdateToken(const Token& token) {
  absl::MutexLock lock(&mu_);
  auth_.token = token;
}

absl::StatusOr<std::shared_ptr<Connection>> RpcClient::GetConnection(absl::Time deadline) {
  ConnectionParams params;
  std::shared_ptr<Connection> old;
  {
    absl::MutexLock lock(&mu_);
    // One caller connects; the others wait for its result (bounded by their deadlines).
    auto ready = [this]() ABSL_SHARED_LOCKS_REQUIRED(mu_) { return !connecting_ || closed_; };
    if (!mu_.AwaitWithDeadline(absl::Condition(&ready), deadline)) {
      return absl::DeadlineExceededError(
          absl::StrCat("waiting for the connection to ", options_.address));
    }
    if (closed_) return absl::CancelledError("RpcClient closed");
    if (connection_ != nullptr && !connection_->broken()) return connection_;
    old = std::move(connection_);
    connecting_ = true;
    params.address = host_port_;
    params.protocol = options_.protocol;
    params.auth = auth_;
    params.client_id = client_id_;
    params.ping_interval = options_.ping_interval;
    params.max_idle = options_.max_idle;
  }
  if (old != nullptr) old->Close();  // joins its (already finishing) reader thread
  absl::Time connect_deadline = std::min(deadline, absl::Now() + options_.connect_timeout);
  absl::StatusOr<std::unique_ptr<Connection>> opened = Connection::Open(params, connect_deadline);
  if (opened.ok()) {
    // Before taking mu_: the host's log sink runs with no libtony lock held (tony/log.h).
    TONY_LOG(DEBUG) << "connected to " << options_.address << " (" << options_.protocol << ", "
                    << AuthMethodName(params.auth.method) << ")";
  }
  absl::MutexLock lock(&mu_);
  connecting_ = false;
  if (!opened.ok()) return opened.status();
  if (closed_) {
    (*opened)->Close();
    return absl::CancelledError("RpcClient closed");
  }
  connection_ = std::shared_ptr<Connection>(std::move(*opened));
  return connection_;
}

absl::Status RpcClient::Call(absl::string_view method, const google::protobuf::MessageLite& request,
                             google::protobuf::MessageLite* response, const CallOptions& options) {
  const absl::Duration timeout =
      options.timeout > absl::ZeroDuration() ? options.timeout : options_.call_timeout;
  const absl::Time deadline = absl::Now() + timeout;
  const int32_t call_id = next_call_id_.fetch_add(1) & 0x7fffffff;

  tony::hadoop::common::RequestHeaderProto engine_header;
  engine_header.set_methodname(std::string(method));
  engine_header.set_declaringclassprotocolname(options_.protocol);
  engine_header.set_clientprotocolversion(options_.protocol_version);

  int retry_count = 0;
  int connect_attempts = 0;
  absl::Status last;
  while (true) {
    absl::StatusOr<std::shared_ptr<Connection>> conn = GetConnection(deadline);
    absl::StatusOr<std::string> payload =
        conn.ok() ? absl::StatusOr<std::string>(absl::UnknownError("unset")) : conn.status();
    if (conn.ok()) {
      auto header = MakeRequestHeader(call_id, retry_count, client_id_);
      std::string frame = EncodeFrame({&header, &engine_header, &request});
      payload = (*conn)->Call(call_id, frame, deadline);
    }
    if (payload.ok()) {
      absl::string_view body = *payload;
      absl::Status parsed = ConsumeDelimited(&body, response);
      if (!parsed.ok()) {
        return absl::DataLossError(
            absl::StrCat(method, " reply from ", options_.address, ": ", parsed.message()));
      }
      return absl::OkStatus();
    }
    last = payload.status();
    std::optional<ConnectionFailure> failure = GetConnectionFailure(last);
    if (!failure.has_value()) break;
    bool retry = false;
    if (*failure == ConnectionFailure::kConnect) {
      retry = ++connect_attempts < options_.max_connect_attempts;
    } else if (options.idempotent) {
      // Resend on a new connection; retryCount lets the server spot a duplicate.
      retry = ++retry_count < options_.max_connect_attempts;
    }
    absl::Time next = absl::Now() + options_.connect_retry_interval;
    if (!retry || next >= deadline) break;
    TONY_LOG(DEBUG) << method << " to " << options_.address << ": " << last.message()
                    << "; retrying";
    absl::SleepFor(options_.connect_retry_interval);
  }
  if (absl::IsDeadlineExceeded(last)) {
    return absl::DeadlineExceededError(
        absl::StrCat(method, " to ", options_.address, " timed out after ",
                     absl::FormatDuration(timeout), ": ", last.message()));
  }
  return last;
}

}  // namespace tony::ipc
