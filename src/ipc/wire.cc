// Copyright libtony authors.

#include "ipc/wire.h"

#include "absl/random/random.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "google/protobuf/io/coded_stream.h"

namespace tony::ipc {

using google::protobuf::io::CodedInputStream;
using google::protobuf::io::CodedOutputStream;

std::string ConnectionPreamble(uint8_t auth_protocol) {
  std::string out = "hrpc";
  out.push_back(static_cast<char>(kRpcVersion));
  out.push_back(0);  // service class: default
  out.push_back(static_cast<char>(auth_protocol));
  return out;
}

tony::hadoop::common::RpcRequestHeaderProto MakeRequestHeader(int32_t call_id, int32_t retry_count,
                                                              absl::string_view client_id) {
  tony::hadoop::common::RpcRequestHeaderProto h;
  h.set_rpckind(tony::hadoop::common::RPC_PROTOCOL_BUFFER);
  h.set_rpcop(tony::hadoop::common::RpcRequestHeaderProto::RPC_FINAL_PACKET);
  h.set_callid(call_id);
  h.set_clientid(std::string(client_id));
  h.set_retrycount(retry_count);
  return h;
}

void AppendDelimited(const google::protobuf::MessageLite& message, std::string* out) {
  size_t size = message.ByteSizeLong();
  uint8_t varint[10];
  uint8_t* end = CodedOutputStream::WriteVarint32ToArray(static_cast<uint32_t>(size), varint);
  out->append(reinterpret_cast<const char*>(varint), end - varint);
  message.AppendToString(out);
}

std::string EncodeFrame(std::initializer_list<const google::protobuf::MessageLite*> messages) {
  std::string out(4, '\0');
  for (const auto* m : messages) AppendDelimited(*m, &out);
  uint32_t len = static_cast<uint32_t>(out.size() - 4);
  out[0] = static_cast<char>(len >> 24);
  out[1] = static_cast<char>(len >> 16);
  out[2] = static_cast<char>(len >> 8);
  out[3] = static_cast<char>(len);
  return out;
}

absl::Status ConsumeDelimited(absl::string_view* in, google::protobuf::MessageLite* message) {
  CodedInputStream s(reinterpret_cast<const uint8_t*>(in->data()), static_cast<int>(in->size()));
  uint32_t size = 0;
  if (!s.ReadVarint32(&size)) return absl::DataLossError("truncated message length");
  int header = s.CurrentPosition();
  if (size > in->size() - static_cast<size_t>(header)) {
    return absl::DataLossError(absl::StrCat("truncated ", message->GetTypeName(), ": need ", size,
                                            " bytes, have ", in->size() - header));
  }
  if (!message->ParseFromArray(in->data() + header, static_cast<int>(size))) {
    return absl::DataLossError(absl::StrCat("cannot parse ", message->GetTypeName()));
  }
  in->remove_prefix(header + size);
  return absl::OkStatus();
}

uint32_t DecodeFrameLength(const char bytes[4]) {
  return (static_cast<uint32_t>(static_cast<uint8_t>(bytes[0])) << 24) |
         (static_cast<uint32_t>(static_cast<uint8_t>(bytes[1])) << 16) |
         (static_cast<uint32_t>(static_cast<uint8_t>(bytes[2])) << 8) |
         static_cast<uint32_t>(static_cast<uint8_t>(bytes[3]));
}

absl::StatusOr<ResponseFrame> DecodeResponseFrame(absl::string_view frame_body) {
  ResponseFrame frame;
  absl::Status s = ConsumeDelimited(&frame_body, &frame.header);
  if (!s.ok()) return absl::DataLossError(absl::StrCat("bad RPC response header: ", s.message()));
  frame.call_id = static_cast<int32_t>(frame.header.callid());
  frame.payload = std::string(frame_body);
  return frame;
}

std::string NewClientId() {
  absl::BitGen gen;
  std::string id(16, '\0');
  for (char& c : id) c = static_cast<char>(absl::Uniform<uint32_t>(gen, 0, 256));
  // Shape it as a version-4 UUID, as Java's ClientId does.
  id[6] = static_cast<char>((id[6] & 0x0f) | 0x40);
  id[8] = static_cast<char>((id[8] & 0x3f) | 0x80);
  return id;
}

}  // namespace tony::ipc
