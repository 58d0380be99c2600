// Copyright libtony authors.
//
// The client side of Hadoop's SASL exchange with TOKEN auth (DIGEST-MD5): the input is what the
// server sends, as the byte stream of the connection (length-prefixed RPC response frames with
// callId -33 carrying RpcSaslProto), decoded the way the connection's handshake does. That covers
// offer selection, the echoed INITIATE, the DIGEST-MD5 challenge parsing (ipc/digest_md5) and the
// state machine up to SUCCESS. Since the client nonce is random, SUCCESS can never verify: the
// exchange must never succeed.

#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "fuzz_check.h"
#include "hadoop/RpcHeader.pb.h"
#include "ipc/rpc_errors.h"
#include "ipc/sasl.h"
#include "ipc/wire.h"

namespace {

using tony::hadoop::common::RpcResponseHeaderProto;
using tony::hadoop::common::RpcSaslProto;

class ScriptedServer : public tony::ipc::SaslTransport {
 public:
  explicit ScriptedServer(absl::string_view stream) : stream_(stream) {}

  absl::Status Send(const RpcSaslProto& message) override {
    if (message.state() == RpcSaslProto::INITIATE) {
      // The chosen offer is echoed without its challenge.
      FUZZ_CHECK(message.auths_size() == 1);
      FUZZ_CHECK(!message.auths(0).has_challenge());
    }
    return absl::OkStatus();
  }

  absl::StatusOr<RpcSaslProto> Receive() override {
    if (stream_.size() < 4) return absl::OutOfRangeError("closed");
    const uint32_t len = tony::ipc::DecodeFrameLength(stream_.data());
    if (len > tony::ipc::kMaxFrameLength) return absl::DataLossError("frame too long");
    if (stream_.size() - 4 < len) return absl::OutOfRangeError("closed");
    const absl::string_view body = stream_.substr(4, len);
    stream_.remove_prefix(4 + len);
    absl::StatusOr<tony::ipc::ResponseFrame> frame = tony::ipc::DecodeResponseFrame(body);
    if (!frame.ok()) return frame.status();
    const RpcResponseHeaderProto& h = frame->header;
    if (h.status() != RpcResponseHeaderProto::SUCCESS) {
      return tony::ipc::RemoteExceptionToStatus(
          h.exceptionclassname(), h.errormsg(), h.status() == RpcResponseHeaderProto::FATAL,
          h.has_errordetail() ? static_cast<int>(h.errordetail()) : 0);
    }
    if (frame->call_id != tony::ipc::kSaslCallId) {
      return absl::InternalError(absl::StrCat("unexpected call id ", frame->call_id));
    }
    RpcSaslProto message;
    absl::string_view payload = frame->payload;
    absl::Status s = tony::ipc::ConsumeDelimited(&payload, &message);
    if (!s.ok()) return s;
    return message;
  }

 private:
  absl::string_view stream_;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 64 * 1024) return 0;
  tony::ipc::ClientAuth auth;
  auth.method = tony::ipc::AuthMethod::kToken;
  auth.token = tony::ipc::Token{"identifier", "password", "YARN_AM_RM_TOKEN", "127.0.0.1:8030"};
  ScriptedServer server(absl::string_view(reinterpret_cast<const char*>(data), size));
  absl::StatusOr<tony::ipc::SaslOffer> offer = tony::ipc::NegotiateSasl(auth, &server);
  FUZZ_CHECK(!offer.ok());
  return 0;
}
