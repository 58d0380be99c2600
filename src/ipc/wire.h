// Copyright libtony authors.
//
// Hadoop IPC (RPC version 9) framing, as pure functions over bytes so tests can check them
// against hand-computed golden bytes.
//
//   connection: preamble "hrpc" 9 <service class> <auth protocol>, then frames both ways
//   request frame: u32be length | delimited RpcRequestHeaderProto | delimited payload...
//   response frame: u32be length | delimited RpcResponseHeaderProto | delimited payload (SUCCESS)
//
// Thread-safety: stateless functions, safe to call concurrently.

#ifndef TONY_IPC_WIRE_H_
#define TONY_IPC_WIRE_H_

#include <cstdint>
#include <initializer_list>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "google/protobuf/message_lite.h"
#include "hadoop/RpcHeader.pb.h"

namespace tony::ipc {

inline constexpr uint8_t kRpcVersion = 9;
// Connection preamble auth protocols.
inline constexpr uint8_t kAuthProtocolNone = 0;
inline constexpr uint8_t kAuthProtocolSasl = 0xDF;  // -33 as a signed byte

// Call ids with a fixed meaning.
inline constexpr int32_t kAuthFailedCallId = -1;  // server-side fatal auth/version errors
inline constexpr int32_t kConnectionContextCallId = -3;
inline constexpr int32_t kPingCallId = -4;
inline constexpr int32_t kSaslCallId = -33;
// retryCount on special frames; normal calls start at 0.
inline constexpr int32_t kInvalidRetryCount = -1;

// Hadoop's default ipc.maximum.response.length is 128 MiB; refuse anything larger.
inline constexpr uint32_t kMaxFrameLength = 128u << 20;

// The 7-byte connection preamble.
std::string ConnectionPreamble(uint8_t auth_protocol);

// An RpcRequestHeaderProto for a protobuf-engine call.
tony::hadoop::common::RpcRequestHeaderProto MakeRequestHeader(int32_t call_id, int32_t retry_count,
                                                              absl::string_view client_id);

// Appends the varint length and the serialized message.
void AppendDelimited(const google::protobuf::MessageLite& message, std::string* out);

// A complete frame: 4-byte big-endian length, then every message varint-delimited.
std::string EncodeFrame(std::initializer_list<const google::protobuf::MessageLite*> messages);

// Reads one varint-delimited message from the front of *in and advances it.
absl::Status ConsumeDelimited(absl::string_view* in, google::protobuf::MessageLite* message);

// Big-endian 4-byte length prefix of a frame.
uint32_t DecodeFrameLength(const char bytes[4]);

// A response frame's body (without the length prefix), split into header and payload.
struct ResponseFrame {
  tony::hadoop::common::RpcResponseHeaderProto header;
  // Call id as the signed value the request used (the header's field is uint32 on the wire).
  int32_t call_id = 0;
  std::string payload;  // the rest of the frame: the delimited response message, if any
};
absl::StatusOr<ResponseFrame> DecodeResponseFrame(absl::string_view frame_body);

// 16 random bytes, the client id of one RpcClient.
std::string NewClientId();

}  // namespace tony::ipc

#endif  // TONY_IPC_WIRE_H_
