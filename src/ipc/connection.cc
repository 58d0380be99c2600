// Copyright libtony authors.

#include "ipc/connection.h"

#include <algorithm>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/logging.h"
#include "common/status_macros.h"
#include "hadoop/IpcConnectionContext.pb.h"
#include "hadoop/RpcHeader.pb.h"
#include "ipc/kerberos.h"
#include "ipc/rpc_errors.h"
#include "ipc/wire.h"

namespace tony::ipc {
namespace {

using tony::hadoop::common::RpcResponseHeaderProto;
using tony::hadoop::common::RpcSaslProto;

// A handshake-time I/O failure: the server never saw a call, so retrying is always safe.
absl::Status HandshakeIoError(const HostPort& addr, const absl::Status& s) {
  if (absl::IsDeadlineExceeded(s)) {
    return absl::DeadlineExceededError(
        absl::StrCat("connection setup with ", addr.ToString(), ": ", s.message()));
  }
  return ConnectionFailureStatus(
      ConnectionFailure::kConnect,
      absl::StrCat("connection setup with ", addr.ToString(), ": ", s.message()));
}

absl::Status StatusFromHeader(const RpcResponseHeaderProto& h) {
  return RemoteExceptionToStatus(h.exceptionclassname(), h.errormsg(),
                                 h.status() == RpcResponseHeaderProto::FATAL,
                                 h.has_errordetail() ? static_cast<int>(h.errordetail()) : 0);
}

// SASL messages travel as frames with callId -33 before the reader thread exists.
class HandshakeTransport : public SaslTransport {
 public:
  HandshakeTransport(Socket* socket, const ConnectionParams& params, absl::Time deadline)
      : socket_(socket), params_(params), deadline_(deadline) {}

  absl::Status Send(const RpcSaslProto& message) override {
    auto header = MakeRequestHeader(kSaslCallId, kInvalidRetryCount, params_.client_id);
    absl::Status s = socket_->WriteAll(EncodeFrame({&header, &message}), deadline_);
    if (!s.ok()) return HandshakeIoError(params_.address, s);
    if (message.state() == RpcSaslProto::INITIATE || message.state() == RpcSaslProto::RESPONSE) {
      credentials_sent_ = true;
    }
    return s;
  }

  absl::StatusOr<RpcSaslProto> Receive() override {
    char len_bytes[4];
    absl::Status s = socket_->ReadFull(len_bytes, 4, deadline_);
    if (absl::IsOutOfRange(s) && credentials_sent_) {
      // Hadoop's server answers most token failures with a FATAL reply, but a token it cannot
      // look up at all ("IO error acquiring password") trips a NullPointerException in its
      // error path and it just closes the connection. Either way the token was refused:
      // retrying or failing over would only repeat that.
      return absl::UnauthenticatedError(
          "server closed the connection after checking our credentials (token unknown to the "
          "server, expired, or corrupt)");
    }
    if (!s.ok()) return HandshakeIoError(params_.address, s);
    uint32_t len = DecodeFrameLength(len_bytes);
    if (len > kMaxFrameLength) {
      return absl::DataLossError(absl::StrCat("SASL reply of ", len, " bytes"));
    }
    std::string body(len, '\0');
    s = socket_->ReadFull(body.data(), len, deadline_);
    if (!s.ok()) return HandshakeIoError(params_.address, s);
    TONY_ASSIGN_OR_RETURN(ResponseFrame frame, DecodeResponseFrame(body));
    if (frame.header.status() != RpcResponseHeaderProto::SUCCESS) {
      return StatusFromHeader(frame.header);
    }
    if (frame.call_id != kSaslCallId) {
      return absl::InternalError(
          absl::StrCat("SASL: reply with unexpected call id ", frame.call_id));
    }
    RpcSaslProto msg;
    absl::string_view payload = frame.payload;
    TONY_RETURN_IF_ERROR(ConsumeDelimited(&payload, &msg));
    return msg;
  }

 private:
  Socket* socket_;
  const ConnectionParams& params_;
  absl::Time deadline_;
  bool credentials_sent_ = false;
};

}  // namespace

Connection::Connection(ConnectionParams params, Socket socket)
    : params_(std::move(params)),
      socket_(std::move(socket)),
      last_io_(absl::Now()),
      last_call_(absl::Now()) {}

absl::StatusOr<std::unique_ptr<Connection>> Connection::Open(const ConnectionParams& params,
                                                             absl::Time deadline) {
  TONY_ASSIGN_OR_RETURN(Socket socket, Socket::Connect(params.address, deadline));
  std::unique_ptr<Connection> conn(new Connection(params, std::move(socket)));
  TONY_RETURN_IF_ERROR(conn->Handshake(deadline));
  conn->reader_ = std::thread([c = conn.get()] { c->ReaderLoop(); });
  return conn;
}

absl::Status Connection::Handshake(absl::Time deadline) {
  const bool sasl = params_.auth.method != AuthMethod::kSimple;
  absl::Status s =
      socket_.WriteAll(ConnectionPreamble(sasl ? kAuthProtocolSasl : kAuthProtocolNone), deadline);
  if (!s.ok()) return HandshakeIoError(params_.address, s);
  if (sasl) {
    HandshakeTransport transport(&socket_, params_, deadline);
    ClientAuth auth = params_.auth;
    if (auth.method == AuthMethod::kKerberos) {
      auth.server_principal = ResolveServerPrincipal(auth.server_principal, params_.address.host);
    }
    absl::StatusOr<SaslOffer> offer = NegotiateSasl(auth, &transport, &layer_);
    if (!offer.ok()) {
      if (GetConnectionFailure(offer.status()).has_value() ||
          absl::IsDeadlineExceeded(offer.status())) {
        return offer.status();
      }
      // Keep the remote class payload; say where it happened.
      std::string why(offer.status().message());
      if (auth.method == AuthMethod::kKerberos &&
          IsRemoteException(offer.status(), "SaslException") &&
          absl::StrContains(why, "GSS initiate failed")) {
        // The server's GSS acceptor refused our ticket and says no more; these are the usual
        // causes (the KDC's own refusals, e.g. a clock skew at the ticket request, are named).
        why = absl::StrCat(
            "the server refused our Kerberos ticket (GSS initiate failed): check "
            "that this host's clock agrees with the server's (NTP; a clock skew "
            "beyond the tolerance, 5 minutes by default) and that ",
            auth.server_principal, " is the principal of the server's keytab");
      }
      absl::Status refused(
          offer.status().code(),
          absl::StrCat(AuthMethodName(params_.auth.method), " authentication with ",
                       params_.address.ToString(), " failed: ", why));
      offer.status().ForEachPayload(
          [&](absl::string_view url, const absl::Cord& p) { refused.SetPayload(url, p); });
      return refused;
    }
    TONY_LOG(DEBUG) << "SASL " << offer->method << "/" << offer->mechanism << " with "
                    << params_.address.ToString() << " succeeded"
                    << (layer_ != nullptr ? absl::StrCat(", qop ", layer_->qop()) : "");
  }
  tony::hadoop::common::IpcConnectionContextProto context;
  context.set_protocol(params_.protocol);
  auto* user = context.mutable_userinfo();
  // With a token the connection itself establishes the user: send none.
  if (params_.auth.method == AuthMethod::kSimple) user->set_effectiveuser(params_.auth.user);
  auto header = MakeRequestHeader(kConnectionContextCallId, kInvalidRetryCount, params_.client_id);
  std::string frame = EncodeFrame({&header, &context});
  if (layer_ != nullptr) {
    TONY_ASSIGN_OR_RETURN(frame, WrapFrame(frame));
  }
  s = socket_.WriteAll(frame, deadline);
  if (!s.ok()) return HandshakeIoError(params_.address, s);
  return absl::OkStatus();
}

absl::StatusOr<std::string> Connection::WrapFrame(absl::string_view frame) const {
  // Hadoop's client wraps whatever its buffered stream flushes, at most the negotiated size at
  // a time; the server unwraps each message and reads frames from the concatenation.
  const size_t max = std::max<size_t>(layer_->max_wrap_input(), 1);
  auto header = MakeRequestHeader(kSaslCallId, kInvalidRetryCount, params_.client_id);
  std::string out;
  for (size_t pos = 0; pos < frame.size(); pos += max) {
    TONY_ASSIGN_OR_RETURN(std::string token, layer_->Wrap(frame.substr(pos, max)));
    RpcSaslProto wrap;
    wrap.set_state(RpcSaslProto::WRAP);
    wrap.set_token(std::move(token));
    out += EncodeFrame({&header, &wrap});
  }
  return out;
}

Connection::~Connection() { Close(); }

void Connection::Close() {
  {
    absl::MutexLock lock(&mu_);
    closing_ = true;
  }
  socket_.Shutdown();
  if (reader_.joinable() && reader_.get_id() != std::this_thread::get_id()) reader_.join();
  // Calls still waiting may have been sent: kLost, so only idempotent ones are resent.
  Break(ConnectionFailureStatus(ConnectionFailure::kLost, "connection closed"));
}

bool Connection::broken() const {
  absl::MutexLock lock(&mu_);
  return broken_ || closing_ || write_failed_;
}

void Connection::Break(const absl::Status& status) {
  {
    absl::MutexLock lock(&mu_);
    if (broken_) return;
    broken_ = true;
    broken_status_ = status;
    for (auto& [id, p] : pending_) {
      p->result = status;
      p->done = true;
    }
    pending_.clear();
  }
  socket_.Shutdown();
}

absl::Status Connection::WriteFrame(const std::string& frame, absl::Time deadline) {
  {
    absl::MutexLock lock(&mu_);
    auto writer_free = [this]() ABSL_SHARED_LOCKS_REQUIRED(mu_) { return !writing_ || broken_; };
    if (!mu_.AwaitWithDeadline(absl::Condition(&writer_free), deadline)) {
      return absl::DeadlineExceededError(
          absl::StrCat("waiting to write to ", params_.address.ToString()));
    }
    if (broken_) return broken_status_;
    if (write_failed_) return write_failed_status_;
    writing_ = true;
  }
  // Wrapping happens in write order: GSS sequence numbers must reach the server in order.
  absl::Status s;
  if (layer_ != nullptr) {
    absl::StatusOr<std::string> wrapped = WrapFrame(frame);
    s = wrapped.ok() ? socket_.WriteAll(*wrapped, deadline) : wrapped.status();
  } else {
    s = socket_.WriteAll(frame, deadline);
  }
  {
    absl::MutexLock lock(&mu_);
    writing_ = false;
    last_io_ = absl::Now();
  }
  if (!s.ok()) {
    // A partly written frame desynchronizes the stream: this connection is done. When the peer
    // closed it (EPIPE, ECONNRESET), its last words (e.g. the exception refusing our
    // authentication) may still wait in the receive buffer: the reader delivers them, then sees
    // the end and breaks the connection. Otherwise break it now.
    absl::Status lost = ConnectionFailureStatus(
        ConnectionFailure::kLost,
        absl::StrCat("write to ", params_.address.ToString(), ": ", s.message()));
    if (absl::IsDeadlineExceeded(s)) {
      Break(lost);
    } else {
      absl::MutexLock lock(&mu_);
      write_failed_ = true;
      write_failed_status_ = lost;
    }
  }
  return s;
}

absl::StatusOr<std::string> Connection::Call(int32_t call_id, const std::string& frame,
                                             absl::Time deadline) {
  Pending pending;
  {
    absl::MutexLock lock(&mu_);
    if (broken_ || closing_ || write_failed_) {
      // Nothing was sent: always safe to retry on a new connection.
      return ConnectionFailureStatus(
          ConnectionFailure::kConnect,
          absl::StrCat("connection to ", params_.address.ToString(), " is closed"));
    }
    pending_[call_id] = &pending;
    last_call_ = absl::Now();
  }
  absl::Status ws = WriteFrame(frame, deadline);
  absl::MutexLock lock(&mu_);
  if (!ws.ok() && !pending.done && !absl::IsDeadlineExceeded(ws)) {
    // The peer closed the connection: its answer, if it sent one, is on its way to the reader.
    mu_.AwaitWithDeadline(absl::Condition(&pending.done),
                          std::min(deadline, absl::Now() + absl::Seconds(2)));
  }
  if (!ws.ok() && !pending.done) {
    pending_.erase(call_id);
    if (absl::IsDeadlineExceeded(ws)) return ws;
    return ConnectionFailureStatus(
        ConnectionFailure::kLost,
        absl::StrCat("send to ", params_.address.ToString(), ": ", ws.message()));
  }
  if (!mu_.AwaitWithDeadline(absl::Condition(&pending.done), deadline)) {
    pending_.erase(call_id);
    return absl::DeadlineExceededError(
        absl::StrCat("no response from ", params_.address.ToString(), " for call ", call_id));
  }
  return std::move(pending.result);
}

void Connection::ReaderLoop() {
  std::string inbuf;
  char chunk[64 * 1024];
  while (true) {
    absl::Time wake;
    {
      absl::MutexLock lock(&mu_);
      if (closing_ || broken_) return;
      wake = last_io_ + params_.ping_interval;
      if (params_.max_idle > absl::ZeroDuration()) {
        wake = std::min(wake, last_call_ + params_.max_idle);
      }
    }
    absl::StatusOr<bool> readable = socket_.WaitReadable(wake);
    if (!readable.ok()) {
      Break(ConnectionFailureStatus(ConnectionFailure::kLost, readable.status().message()));
      return;
    }
    if (!*readable) {
      bool due;
      bool closing;
      DeferredLog log;  // lines written once mu_ is released (tony/log.h)
      {
        absl::MutexLock lock(&mu_);
        absl::Time now = absl::Now();
        if (params_.max_idle > absl::ZeroDuration() && pending_.empty() &&
            now >= last_call_ + params_.max_idle) {
          // Unused for a while: give the thread and socket back. Nothing is pending, and Call()
          // sees broken_ under this lock, so no request can be caught in between.
          broken_ = true;
          broken_status_ = ConnectionFailureStatus(ConnectionFailure::kConnect, "idle, closed");
          TONY_DEFER_LOG(log, DEBUG) << "closing idle connection to " << params_.address.ToString();
        }
        // Idle: a ping keeps the server (and any middlebox) from dropping the connection.
        due = !broken_ && now >= last_io_ + params_.ping_interval;
        closing = broken_;
        if (closing) socket_.Shutdown();
      }
      log.Emit();
      if (closing) return;
      if (due) {
        auto header = MakeRequestHeader(kPingCallId, kInvalidRetryCount, params_.client_id);
        TONY_LOG(DEBUG) << "ping " << params_.address.ToString();
        (void)WriteFrame(EncodeFrame({&header}), absl::Now() + params_.ping_interval);
      }
      continue;
    }
    absl::StatusOr<Socket::ReadResult> got = socket_.ReadSome(chunk, sizeof(chunk));
    if (!got.ok() || got->eof) {
      bool closing;
      {
        absl::MutexLock lock(&mu_);
        closing = closing_;
      }
      Break(ConnectionFailureStatus(
          ConnectionFailure::kLost,
          closing ? std::string("connection closed")
                  : absl::StrCat("connection to ", params_.address.ToString(), " lost: ",
                                 got.ok() ? "closed by server" : got.status().message())));
      return;
    }
    if (got->bytes == 0) continue;
    {
      absl::MutexLock lock(&mu_);
      last_io_ = absl::Now();
    }
    inbuf.append(chunk, got->bytes);
    size_t pos = 0;
    while (inbuf.size() - pos >= 4) {
      uint32_t len = DecodeFrameLength(inbuf.data() + pos);
      if (len > kMaxFrameLength) {
        Break(absl::DataLossError(
            absl::StrCat("response frame of ", len, " bytes from ", params_.address.ToString())));
        return;
      }
      if (inbuf.size() - pos - 4 < len) break;
      if (layer_ != nullptr) {
        DispatchWrapped(absl::string_view(inbuf).substr(pos + 4, len));
      } else {
        Dispatch(absl::string_view(inbuf).substr(pos + 4, len));
      }
      pos += 4 + len;
    }
    inbuf.erase(0, pos);
  }
}

void Connection::DispatchWrapped(absl::string_view frame_body) {
  absl::StatusOr<ResponseFrame> frame = DecodeResponseFrame(frame_body);
  if (!frame.ok()) {
    Break(frame.status());
    return;
  }
  if (frame->call_id != kSaslCallId || frame->header.status() != RpcResponseHeaderProto::SUCCESS) {
    // Once a layer is on, nothing unwrapped is believed: an on-path attacker could forge any
    // clear reply ("KILLED" would make a client delete a running job's staging). Even a FATAL in
    // the clear only ends the connection, as Hadoop's client does ("non-wrapped response").
    const bool fatal = frame->header.status() == RpcResponseHeaderProto::FATAL;
    Break(absl::DataLossError(
        absl::StrCat(params_.address.ToString(), " sent a ", fatal ? "FATAL " : "",
                     "response outside the negotiated SASL ", layer_->qop(),
                     " layer; the connection is closed and nothing in it was used",
                     fatal ? absl::StrCat(" (it said: ", frame->header.exceptionclassname(), ": ",
                                          frame->header.errormsg(), ")")
                           : "")));
    return;
  }
  RpcSaslProto msg;
  absl::string_view payload = frame->payload;
  absl::Status s = ConsumeDelimited(&payload, &msg);
  if (s.ok() && msg.state() != RpcSaslProto::WRAP) {
    s = absl::DataLossError(absl::StrCat("expected a SASL WRAP message from ",
                                         params_.address.ToString(), ", got ",
                                         RpcSaslProto::SaslState_Name(msg.state())));
  }
  absl::StatusOr<std::string> plain =
      s.ok() ? layer_->Unwrap(msg.token()) : absl::StatusOr<std::string>(s);
  if (!plain.ok()) {
    Break(plain.status());
    return;
  }
  plain_ += *plain;
  size_t pos = 0;
  while (plain_.size() - pos >= 4) {
    uint32_t len = DecodeFrameLength(plain_.data() + pos);
    if (len > kMaxFrameLength) {
      Break(absl::DataLossError(
          absl::StrCat("response frame of ", len, " bytes from ", params_.address.ToString())));
      return;
    }
    if (plain_.size() - pos - 4 < len) break;
    Dispatch(absl::string_view(plain_).substr(pos + 4, len));
    pos += 4 + len;
  }
  plain_.erase(0, pos);
}

void Connection::Dispatch(absl::string_view frame_body) {
  absl::StatusOr<ResponseFrame> frame = DecodeResponseFrame(frame_body);
  if (!frame.ok()) {
    Break(frame.status());
    return;
  }
  const RpcResponseHeaderProto& h = frame->header;
  if (h.status() == RpcResponseHeaderProto::FATAL) {
    // The server closes the connection after a FATAL reply; every waiting call learns why.
    absl::Status fatal = StatusFromHeader(h);
    TONY_LOG(DEBUG) << "fatal RPC error from " << params_.address.ToString() << ": " << fatal;
    Break(fatal);
    return;
  }
  absl::MutexLock lock(&mu_);
  auto it = pending_.find(frame->call_id);
  if (it == pending_.end()) return;  // the caller gave up (deadline) before the reply came
  Pending* p = it->second;
  pending_.erase(it);
  last_call_ = absl::Now();
  if (h.status() == RpcResponseHeaderProto::SUCCESS) {
    p->result = std::move(frame->payload);
  } else {
    p->result = StatusFromHeader(h);
  }
  p->done = true;
}

}  // namespace tony::ipc
