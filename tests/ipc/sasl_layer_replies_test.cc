// Copyright libtony authors.
//
// Connection with a negotiated SASL integrity layer (auth-int; libgsasl's DIGEST-MD5 server as
// the peer, over loopback TCP): a reply outside the layer is never believed. An on-path
// attacker can inject a clear SUCCESS ("KILLED") or FATAL frame; only WRAP messages count.

#include <arpa/inet.h>
#include <gsasl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <memory>
#include <string>
#include <thread>

#include "absl/strings/str_cat.h"
#include "fake_ipc_server.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "hadoop/RpcHeader.pb.h"
#include "ipc/connection.h"
#include "ipc/sasl.h"
#include "ipc/wire.h"

namespace tony::ipc {
namespace {

using ::testing::HasSubstr;
using tony::hadoop::common::RpcRequestHeaderProto;
using tony::hadoop::common::RpcResponseHeaderProto;
using tony::hadoop::common::RpcSaslProto;
using ::tony::ipc::testing::ReadFull;

constexpr int32_t kCallId = 7;

std::string* g_password = nullptr;

int PasswordCallback(Gsasl*, Gsasl_session* session, Gsasl_property prop) {
  if (prop == GSASL_PASSWORD && g_password != nullptr) {
    return gsasl_property_set(session, GSASL_PASSWORD, g_password->c_str());
  }
  return GSASL_NO_CALLBACK;
}

std::string Frame(const std::string& body) {
  const uint32_t n = static_cast<uint32_t>(body.size());
  return std::string({static_cast<char>(n >> 24), static_cast<char>(n >> 16),
                      static_cast<char>(n >> 8), static_cast<char>(n)}) +
         body;
}

std::string ResponseBody(int32_t call_id, RpcResponseHeaderProto::RpcStatusProto status,
                         const std::string& payload) {
  RpcResponseHeaderProto h;
  h.set_callid(static_cast<uint32_t>(call_id));
  h.set_status(status);
  h.set_serveripcversionnum(9);
  if (status == RpcResponseHeaderProto::FATAL) {
    h.set_exceptionclassname("org.apache.hadoop.ipc.StandbyException");
    h.set_errormsg("forged");
    h.set_errordetail(RpcResponseHeaderProto::FATAL_UNKNOWN);
  }
  std::string body;
  AppendDelimited(h, &body);
  return body + payload;
}

// One connection: the Hadoop SASL exchange with qop auth-int, then it reads the wrapped
// connection context and call, and answers the call as `answer` says.
class IntegrityServer {
 public:
  enum class Answer { kWrapped, kClearSuccess, kClearFatal };

  IntegrityServer(std::string password, Answer answer)
      : password_(std::move(password)), answer_(answer) {
    EXPECT_EQ(gsasl_init(&ctx_), GSASL_OK);
    gsasl_callback_set(ctx_, PasswordCallback);
    g_password = &password_;
    listen_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
    EXPECT_EQ(::listen(listen_fd_, 1), 0);
    socklen_t len = sizeof(addr);
    ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
    thread_ = std::thread([this] { Serve(); });
  }
  ~IntegrityServer() {
    ::shutdown(listen_fd_, SHUT_RDWR);
    if (fd_ >= 0) ::shutdown(fd_, SHUT_RDWR);
    thread_.join();
    if (fd_ >= 0) ::close(fd_);
    ::close(listen_fd_);
    if (session_ != nullptr) gsasl_finish(session_);
    gsasl_done(ctx_);
    g_password = nullptr;
  }

  int port() const { return port_; }

 private:
  void Send(const RpcSaslProto& m) {
    std::string body = ResponseBody(kSaslCallId, RpcResponseHeaderProto::SUCCESS, "");
    AppendDelimited(m, &body);
    Write(Frame(body));
  }
  void Write(const std::string& bytes) {
    for (size_t done = 0; done < bytes.size();) {
      ssize_t n = ::send(fd_, bytes.data() + done, bytes.size() - done, MSG_NOSIGNAL);
      if (n <= 0) return;
      done += static_cast<size_t>(n);
    }
  }
  std::string Step(const std::string& in, int* rc) {
    char* out = nullptr;
    size_t len = 0;
    *rc = gsasl_step(session_, in.data(), in.size(), &out, &len);
    std::string s = out != nullptr ? std::string(out, len) : std::string();
    gsasl_free(out);
    return s;
  }
  // libgsasl's layer carries a 4-byte length that Hadoop's WRAP tokens do not.
  std::string Unwrap(const std::string& token) {
    std::string framed = Frame(token);
    char* out = nullptr;
    size_t len = 0;
    EXPECT_EQ(gsasl_decode(session_, framed.data(), framed.size(), &out, &len), GSASL_OK);
    std::string plain = out != nullptr ? std::string(out, len) : std::string();
    gsasl_free(out);
    return plain;
  }
  std::string Wrap(const std::string& plain) {
    char* out = nullptr;
    size_t len = 0;
    EXPECT_EQ(gsasl_encode(session_, plain.data(), plain.size(), &out, &len), GSASL_OK);
    std::string token = len >= 4 ? std::string(out + 4, len - 4) : std::string();
    gsasl_free(out);
    return token;
  }

  void Serve() {
    fd_ = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    char preamble[7];
    if (fd_ < 0 || !ReadFull(fd_, preamble, 7)) return;
    std::string plain;  // unwrapped client bytes
    while (true) {
      char len_bytes[4];
      if (!ReadFull(fd_, len_bytes, 4)) return;
      std::string body(DecodeFrameLength(len_bytes), '\0');
      if (!ReadFull(fd_, body.data(), body.size())) return;
      absl::string_view in = body;
      RpcRequestHeaderProto header;
      RpcSaslProto m;
      if (!ConsumeDelimited(&in, &header).ok() || header.callid() != kSaslCallId ||
          !ConsumeDelimited(&in, &m).ok()) {
        ADD_FAILURE() << "the client sent a frame outside SASL";
        return;
      }
      int rc = GSASL_OK;
      if (m.state() == RpcSaslProto::NEGOTIATE) {
        EXPECT_EQ(gsasl_server_start(ctx_, "DIGEST-MD5", &session_), GSASL_OK);
        gsasl_property_set(session_, GSASL_SERVICE, "");
        gsasl_property_set(session_, GSASL_HOSTNAME, "default");
        gsasl_property_set(session_, GSASL_REALM, "default");
        gsasl_property_set(session_, GSASL_QOPS, "qop-int");
        RpcSaslProto reply;
        reply.set_state(RpcSaslProto::NEGOTIATE);
        auto* auth = reply.add_auths();
        auth->set_method("TOKEN");
        auth->set_mechanism("DIGEST-MD5");
        auth->set_protocol("");
        auth->set_serverid("default");
        auth->set_challenge(Step("", &rc));
        Send(reply);
      } else if (m.state() == RpcSaslProto::INITIATE || m.state() == RpcSaslProto::RESPONSE) {
        RpcSaslProto reply;
        reply.set_token(Step(m.token(), &rc));
        reply.set_state(rc == GSASL_OK ? RpcSaslProto::SUCCESS : RpcSaslProto::CHALLENGE);
        Send(reply);
      } else if (m.state() == RpcSaslProto::WRAP) {
        plain += Unwrap(m.token());
        while (plain.size() >= 4 && plain.size() - 4 >= DecodeFrameLength(plain.data())) {
          const size_t n = DecodeFrameLength(plain.data());
          absl::string_view call = absl::string_view(plain).substr(4, n);
          RpcRequestHeaderProto h;
          EXPECT_TRUE(ConsumeDelimited(&call, &h).ok());
          plain.erase(0, 4 + n);
          if (h.callid() == kCallId) AnswerTheCall();
        }
      }
    }
  }

  void AnswerTheCall() {
    // The delimited response message: a one-byte message.
    const std::string payload("\x01z", 2);
    switch (answer_) {
      case Answer::kWrapped: {
        RpcSaslProto wrap;
        wrap.set_state(RpcSaslProto::WRAP);
        wrap.set_token(
            Wrap(Frame(ResponseBody(kCallId, RpcResponseHeaderProto::SUCCESS, payload))));
        Send(wrap);
        break;
      }
      case Answer::kClearSuccess:
        Write(Frame(ResponseBody(kCallId, RpcResponseHeaderProto::SUCCESS, payload)));
        break;
      case Answer::kClearFatal:
        Write(Frame(ResponseBody(kCallId, RpcResponseHeaderProto::FATAL, "")));
        break;
    }
  }

  std::string password_;
  Answer answer_;
  Gsasl* ctx_ = nullptr;
  Gsasl_session* session_ = nullptr;
  int listen_fd_ = -1;
  int fd_ = -1;
  int port_ = 0;
  std::thread thread_;
};

absl::StatusOr<std::string> CallThroughLayer(IntegrityServer::Answer answer) {
  ClientAuth auth;
  auth.method = AuthMethod::kToken;
  auth.token = Token{"identifier-bytes", "the-password", kAmRmTokenKind, ""};
  IntegrityServer server(TokenSaslPassword(*auth.token), answer);
  ConnectionParams params;
  params.address = HostPort{"127.0.0.1", server.port()};
  params.protocol = "org.apache.hadoop.yarn.api.ApplicationMasterProtocolPB";
  params.auth = auth;
  params.client_id = NewClientId();
  const absl::Time deadline = absl::Now() + absl::Seconds(20);
  absl::StatusOr<std::unique_ptr<Connection>> conn = Connection::Open(params, deadline);
  if (!conn.ok()) return conn.status();
  auto header = MakeRequestHeader(kCallId, 0, params.client_id);
  absl::StatusOr<std::string> got = (*conn)->Call(kCallId, EncodeFrame({&header}), deadline);
  (*conn)->Close();
  return got;
}

TEST(SaslLayerRepliesTest, AWrappedReplyIsAccepted) {
  absl::StatusOr<std::string> got = CallThroughLayer(IntegrityServer::Answer::kWrapped);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(*got, std::string("\x01z", 2));
}

TEST(SaslLayerRepliesTest, AClearSuccessAfterTheLayerIsOnFailsTheCall) {
  absl::StatusOr<std::string> got = CallThroughLayer(IntegrityServer::Answer::kClearSuccess);
  ASSERT_FALSE(got.ok()) << "a forged clear reply was believed";
  EXPECT_EQ(got.status().code(), absl::StatusCode::kDataLoss) << got.status();
  EXPECT_THAT(got.status().message(),
              HasSubstr("sent a response outside the negotiated SASL auth-int layer"));
}

TEST(SaslLayerRepliesTest, AClearFatalAfterTheLayerIsOnOnlyClosesTheConnection) {
  absl::StatusOr<std::string> got = CallThroughLayer(IntegrityServer::Answer::kClearFatal);
  ASSERT_FALSE(got.ok());
  // Not the forged StandbyException, which would send the client to fail over.
  EXPECT_EQ(got.status().code(), absl::StatusCode::kDataLoss) << got.status();
  EXPECT_THAT(got.status().message(),
              HasSubstr("sent a FATAL response outside the negotiated SASL auth-int layer"));
}

}  // namespace
}  // namespace tony::ipc
