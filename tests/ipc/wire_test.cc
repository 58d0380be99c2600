// Copyright libtony authors.
//
// Framing against golden bytes worked out by hand from the .proto definitions: field key =
// (number << 3) | wire type; sint32 is zigzag (-4 -> 7, -33 -> 65); uint32 callId -33 arrives as
// 4294967263 = varint df ff ff ff 0f.

#include "ipc/wire.h"

#include <string>

#include "gtest/gtest.h"
#include "hadoop/ProtobufRpcEngine2.pb.h"
#include "hadoop/yarn_service_protos.pb.h"

namespace tony::ipc {
namespace {

std::string Bytes(std::initializer_list<int> bytes) {
  std::string s;
  for (int b : bytes) s.push_back(static_cast<char>(b));
  return s;
}

std::string ClientId() {
  std::string id;
  for (int i = 0; i < 16; ++i) id.push_back(static_cast<char>(i));
  return id;
}

TEST(WireTest, Preamble) {
  EXPECT_EQ(ConnectionPreamble(kAuthProtocolNone), Bytes({'h', 'r', 'p', 'c', 9, 0, 0}));
  EXPECT_EQ(ConnectionPreamble(kAuthProtocolSasl), Bytes({'h', 'r', 'p', 'c', 9, 0, 0xdf}));
}

TEST(WireTest, PingFrame) {
  auto header = MakeRequestHeader(kPingCallId, kInvalidRetryCount, ClientId());
  std::string want = Bytes({0, 0, 0, 27,  // frame length
                            26,           // header length
                            0x08, 2,      // rpcKind = RPC_PROTOCOL_BUFFER
                            0x10, 0,      // rpcOp = RPC_FINAL_PACKET
                            0x18, 7,      // callId = zigzag(-4)
                            0x22, 16});   // clientId, 16 bytes
  want += ClientId();
  want += Bytes({0x28, 1});  // retryCount = zigzag(-1)
  EXPECT_EQ(EncodeFrame({&header}), want);
}

TEST(WireTest, CallFrame) {
  auto header = MakeRequestHeader(5, 0, ClientId());
  tony::hadoop::common::RequestHeaderProto engine;
  engine.set_methodname("getNewApplication");
  engine.set_declaringclassprotocolname("P");
  engine.set_clientprotocolversion(1);
  tony::hadoop::yarn::GetNewApplicationRequestProto request;

  std::string rpc_header = Bytes({26, 0x08, 2, 0x10, 0, 0x18, 10, 0x22, 16}) + ClientId() +
                           Bytes({0x28, 0});  // callId zigzag(5) = 10, retryCount 0
  std::string engine_header =
      Bytes({24, 0x0a, 17}) + "getNewApplication" + Bytes({0x12, 1, 'P', 0x18, 1});
  std::string body = rpc_header + engine_header + Bytes({0});  // empty request, length 0
  std::string want = Bytes({0, 0, 0, static_cast<int>(body.size())}) + body;
  EXPECT_EQ(EncodeFrame({&header, &engine, &request}), want);
}

TEST(WireTest, DecodeSaslResponseCallIdIsUnsignedOnTheWire) {
  // RpcResponseHeaderProto{callId = 4294967263, status = SUCCESS, serverIpcVersionNum = 9},
  // then a delimited RpcSaslProto{state = NEGOTIATE}.
  std::string frame = Bytes({10, 0x08, 0xdf, 0xff, 0xff, 0xff, 0x0f, 0x10, 0, 0x18, 9, 2, 0x10, 1});
  auto decoded = DecodeResponseFrame(frame);
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  EXPECT_EQ(decoded->call_id, kSaslCallId);
  EXPECT_EQ(decoded->header.status(), tony::hadoop::common::RpcResponseHeaderProto::SUCCESS);
  EXPECT_EQ(decoded->header.serveripcversionnum(), 9u);
  tony::hadoop::common::RpcSaslProto sasl;
  absl::string_view payload = decoded->payload;
  ASSERT_TRUE(ConsumeDelimited(&payload, &sasl).ok());
  EXPECT_EQ(sasl.state(), tony::hadoop::common::RpcSaslProto::NEGOTIATE);
  EXPECT_TRUE(payload.empty());
}

TEST(WireTest, DecodeErrorResponse) {
  tony::hadoop::common::RpcResponseHeaderProto h;
  h.set_callid(7);
  h.set_status(tony::hadoop::common::RpcResponseHeaderProto::ERROR);
  h.set_exceptionclassname("java.io.IOException");
  h.set_errormsg("boom");
  std::string frame;
  AppendDelimited(h, &frame);
  auto decoded = DecodeResponseFrame(frame);
  ASSERT_TRUE(decoded.ok());
  EXPECT_EQ(decoded->call_id, 7);
  EXPECT_EQ(decoded->header.exceptionclassname(), "java.io.IOException");
  EXPECT_TRUE(decoded->payload.empty());
}

TEST(WireTest, TruncatedInputIsDataLoss) {
  tony::hadoop::common::RpcSaslProto sasl;
  absl::string_view short_body = "\x05\x10";
  EXPECT_EQ(ConsumeDelimited(&short_body, &sasl).code(), absl::StatusCode::kDataLoss);
  absl::string_view empty;
  EXPECT_EQ(ConsumeDelimited(&empty, &sasl).code(), absl::StatusCode::kDataLoss);
  EXPECT_FALSE(DecodeResponseFrame(Bytes({3, 0x08})).ok());
}

TEST(WireTest, FrameLength) {
  EXPECT_EQ(DecodeFrameLength("\x00\x00\x01\x02"), 258u);
  EXPECT_EQ(DecodeFrameLength("\x01\x00\x00\xff"), 16777471u);
}

TEST(WireTest, ClientIdIsAVersion4Uuid) {
  std::string a = NewClientId();
  std::string b = NewClientId();
  ASSERT_EQ(a.size(), 16u);
  EXPECT_NE(a, b);
  EXPECT_EQ(static_cast<uint8_t>(a[6]) >> 4, 4);
  EXPECT_EQ(static_cast<uint8_t>(a[8]) >> 6, 2);
}

}  // namespace
}  // namespace tony::ipc
