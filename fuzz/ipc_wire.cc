// Copyright libtony authors.
//
// What a Hadoop server (or whoever answers on its port) and the NodeManager hand us as bytes:
//   - an input starting with "HDTS" is a token storage file (HADOOP_TOKEN_FILE_LOCATION, in
//     either format); whatever parses must survive a round trip through both formats;
//   - anything else is the byte stream of an RPC connection: length-prefixed response frames,
//     decoded as the connection's reader does (header, Java exception to status, delimited
//     payload), and the same bytes read as Writable vlongs, whose value must survive re-encoding.

#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/string_view.h"
#include "fuzz_check.h"
#include "hadoop/RpcHeader.pb.h"
#include "ipc/credentials.h"
#include "ipc/rpc_errors.h"
#include "ipc/wire.h"
#include "ipc/writable.h"

namespace {

using tony::ipc::Credentials;

void TokenFile(absl::string_view bytes) {
  absl::StatusOr<Credentials> creds = Credentials::Parse(bytes);
  if (!creds.ok()) return;
  for (Credentials::Format format :
       {Credentials::Format::kWritable, Credentials::Format::kProtobuf}) {
    absl::StatusOr<Credentials> again = Credentials::Parse(creds->Serialize(format));
    FUZZ_CHECK(again.ok());
    FUZZ_CHECK(again->tokens() == creds->tokens());
    FUZZ_CHECK(again->secrets() == creds->secrets());
  }
}

void ResponseFrames(absl::string_view in) {
  while (in.size() >= 4) {
    const uint32_t len = tony::ipc::DecodeFrameLength(in.data());
    if (len > tony::ipc::kMaxFrameLength || in.size() - 4 < len) return;
    const absl::string_view body = in.substr(4, len);
    in.remove_prefix(4 + len);
    absl::StatusOr<tony::ipc::ResponseFrame> frame = tony::ipc::DecodeResponseFrame(body);
    if (!frame.ok()) continue;
    const auto& h = frame->header;
    if (h.status() != tony::hadoop::common::RpcResponseHeaderProto::SUCCESS) {
      absl::Status s = tony::ipc::RemoteExceptionToStatus(
          h.exceptionclassname(), h.errormsg(),
          h.status() == tony::hadoop::common::RpcResponseHeaderProto::FATAL,
          h.has_errordetail() ? static_cast<int>(h.errordetail()) : 0);
      FUZZ_CHECK(!s.ok());
      (void)tony::ipc::RemoteExceptionClass(s);
      (void)tony::ipc::IsRemoteException(s, "StandbyException");
      (void)tony::ipc::ShouldFailOver(s);
      continue;
    }
    absl::string_view payload = frame->payload;
    tony::hadoop::common::RpcSaslProto message;
    if (tony::ipc::ConsumeDelimited(&payload, &message).ok()) {
      FUZZ_CHECK(payload.size() < frame->payload.size());
    }
  }
}

void WritableVLongs(absl::string_view in) {
  tony::ipc::WritableReader reader(in);
  for (int i = 0; i < 64 && reader.remaining() > 0; ++i) {
    const size_t before = reader.remaining();
    absl::StatusOr<int64_t> v = reader.ReadVLong();
    if (!v.ok()) return;
    FUZZ_CHECK(reader.remaining() < before);
    std::string encoded;
    tony::ipc::AppendWritableVLong(*v, &encoded);
    FUZZ_CHECK(encoded.size() <= 9);
    tony::ipc::WritableReader back(encoded);
    absl::StatusOr<int64_t> w = back.ReadVLong();
    FUZZ_CHECK(w.ok() && *w == *v && back.remaining() == 0);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const absl::string_view bytes(reinterpret_cast<const char*>(data), size);
  if (absl::StartsWith(bytes, "HDTS")) {
    TokenFile(bytes);
  } else {
    ResponseFrames(bytes);
    WritableVLongs(bytes);
  }
  return 0;
}
