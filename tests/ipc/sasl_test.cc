// Copyright libtony authors.
//
// DIGEST-MD5 checks against independent implementations: an RFC 2831 calculator (OpenSSL MD5)
// for the response to the RFC's challenge with the cnonce the client chose, and the Hadoop
// exchange (NegotiateSasl) against a libgsasl DIGEST-MD5 *server* playing the RM's part, with
// qop auth and auth-int (libgsasl has no auth-conf; tests/ipc/digest_md5_test.cc checks that
// against Java's own answers).

#include "ipc/sasl.h"

#include <gsasl.h>
#include <openssl/evp.h>

#include <deque>
#include <map>
#include <memory>
#include <string>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "gtest/gtest.h"
#include "ipc/digest_md5.h"
#include "ipc/rpc_errors.h"

namespace tony::ipc {
namespace {

using tony::hadoop::common::RpcSaslProto;

std::string Md5(absl::string_view data) {
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_Digest(data.data(), data.size(), out, &len, EVP_md5(), nullptr);
  return std::string(reinterpret_cast<char*>(out), len);
}

std::string Hex(absl::string_view bytes) { return absl::BytesToHexString(bytes); }

// RFC 2831 section 2.1.2.1, qop=auth, no authzid.
std::string DigestResponse(const std::string& user, const std::string& realm,
                           const std::string& password, const std::string& nonce,
                           const std::string& cnonce, const std::string& nc,
                           const std::string& digest_uri) {
  std::string a1 = Md5(absl::StrCat(user, ":", realm, ":", password)) + ":" + nonce + ":" + cnonce;
  std::string a2 = absl::StrCat("AUTHENTICATE:", digest_uri);
  return Hex(
      Md5(absl::StrCat(Hex(Md5(a1)), ":", nonce, ":", nc, ":", cnonce, ":auth:", Hex(Md5(a2)))));
}

// key=value / key="value" pairs of a DIGEST-MD5 message (no commas inside our test values).
std::map<std::string, std::string> Fields(absl::string_view msg) {
  std::map<std::string, std::string> out;
  for (absl::string_view part : absl::StrSplit(msg, ',')) {
    std::pair<std::string, std::string> kv = absl::StrSplit(part, absl::MaxSplits('=', 1));
    absl::string_view v = kv.second;
    absl::ConsumePrefix(&v, "\"");
    absl::ConsumeSuffix(&v, "\"");
    out[std::string(absl::StripAsciiWhitespace(kv.first))] = std::string(v);
  }
  return out;
}

absl::StatusOr<std::unique_ptr<SaslMechanism>> NewDigestMd5Client(absl::string_view user,
                                                                  absl::string_view password,
                                                                  absl::string_view service,
                                                                  absl::string_view host) {
  DigestMd5Options o;
  o.username = std::string(user);
  o.password = std::string(password);
  o.service = std::string(service);
  o.host = std::string(host);
  return NewDigestMd5Mechanism(std::move(o));
}

constexpr char kRfcChallenge[] =
    "realm=\"elwood.innosoft.com\",nonce=\"OA6MG9tEQGm2hh\",qop=\"auth\",algorithm=md5-sess,"
    "charset=utf-8";

TEST(DigestMd5Test, CalculatorReproducesRfc2831Example) {
  EXPECT_EQ(DigestResponse("chris", "elwood.innosoft.com", "secret", "OA6MG9tEQGm2hh",
                           "OA6MHXh6VqTrRk", "00000001", "imap/elwood.innosoft.com"),
            "d388dad90d4bbd760a152321f2143af7");
}

TEST(DigestMd5Test, AnswersTheRfcChallengeCorrectly) {
  auto mech = NewDigestMd5Client("chris", "secret", "imap", "elwood.innosoft.com");
  ASSERT_TRUE(mech.ok()) << mech.status();
  auto response = (*mech)->Step(kRfcChallenge);
  ASSERT_TRUE(response.ok()) << response.status();
  auto f = Fields(*response);
  EXPECT_EQ(f["username"], "chris");
  EXPECT_EQ(f["realm"], "elwood.innosoft.com");
  EXPECT_EQ(f["nonce"], "OA6MG9tEQGm2hh");
  EXPECT_EQ(f["nc"], "00000001");
  EXPECT_EQ(f["qop"], "auth");
  EXPECT_EQ(f["digest-uri"], "imap/elwood.innosoft.com");
  ASSERT_FALSE(f["cnonce"].empty());
  EXPECT_EQ(f["response"],
            DigestResponse("chris", "elwood.innosoft.com", "secret", "OA6MG9tEQGm2hh", f["cnonce"],
                           "00000001", "imap/elwood.innosoft.com"));
  EXPECT_FALSE((*mech)->complete());
}

TEST(DigestMd5Test, HadoopTokenParameters) {
  // What Hadoop's SaslRpcClient does for a token: base64 identifier and password, protocol "",
  // serverId "default", so the digest-uri is "/default".
  Token token{std::string("\x0a\x04\x08\x01\x10\x02", 6), std::string("\x00\xffpw", 4),
              kAmRmTokenKind, ""};
  EXPECT_EQ(TokenSaslUsername(token), "CgQIARAC");
  EXPECT_EQ(TokenSaslPassword(token), "AP9wdw==");
  auto mech = NewDigestMd5Client(TokenSaslUsername(token), TokenSaslPassword(token), "", "default");
  ASSERT_TRUE(mech.ok()) << mech.status();
  auto response = (*mech)->Step(
      "realm=\"default\",nonce=\"abcdefgh\",qop=\"auth\",charset=utf-8,algorithm=md5-sess");
  ASSERT_TRUE(response.ok()) << response.status();
  auto f = Fields(*response);
  EXPECT_EQ(f["digest-uri"], "/default");
  EXPECT_EQ(f["realm"], "default");
  EXPECT_EQ(f["qop"], "auth");
  EXPECT_EQ(f.count("authzid"), 0u);
  EXPECT_EQ(f["response"], DigestResponse("CgQIARAC", "default", "AP9wdw==", "abcdefgh",
                                          f["cnonce"], "00000001", "/default"));
}

// ---------------------------------------------------------------------------------------------
// NegotiateSasl against a libgsasl DIGEST-MD5 server speaking Hadoop's RpcSaslProto.

std::string* g_server_password = nullptr;

int ServerCallback(Gsasl*, Gsasl_session* session, Gsasl_property prop) {
  if (prop == GSASL_PASSWORD && g_server_password != nullptr) {
    return gsasl_property_set(session, GSASL_PASSWORD, g_server_password->c_str());
  }
  return GSASL_NO_CALLBACK;
}

class FakeHadoopSaslServer : public SaslTransport {
 public:
  FakeHadoopSaslServer(std::string password, std::vector<RpcSaslProto::SaslAuth> extra_auths = {},
                       bool simple_only = false, std::string qops = "qop-auth")
      : password_(std::move(password)),
        extra_(std::move(extra_auths)),
        simple_only_(simple_only),
        qops_(std::move(qops)) {
    EXPECT_EQ(gsasl_init(&ctx_), GSASL_OK);
    gsasl_callback_set(ctx_, ServerCallback);
    g_server_password = &password_;
  }
  ~FakeHadoopSaslServer() override {
    if (session_ != nullptr) gsasl_finish(session_);
    gsasl_done(ctx_);
    g_server_password = nullptr;
  }

  absl::Status Send(const RpcSaslProto& m) override {
    received_.push_back(m);
    if (m.state() == RpcSaslProto::NEGOTIATE) {
      RpcSaslProto reply;
      if (simple_only_) {
        reply.set_state(RpcSaslProto::SUCCESS);
      } else {
        reply.set_state(RpcSaslProto::NEGOTIATE);
        for (const auto& a : extra_) *reply.add_auths() = a;
        EXPECT_EQ(gsasl_server_start(ctx_, "DIGEST-MD5", &session_), GSASL_OK);
        gsasl_property_set(session_, GSASL_SERVICE, "");
        gsasl_property_set(session_, GSASL_HOSTNAME, "default");
        gsasl_property_set(session_, GSASL_REALM, "default");
        gsasl_property_set(session_, GSASL_QOPS, qops_.c_str());
        auto* auth = reply.add_auths();
        *auth = Advertised();
        auth->set_challenge(Step(""));
      }
      replies_.push_back(reply);
    } else if (m.state() == RpcSaslProto::INITIATE || m.state() == RpcSaslProto::RESPONSE) {
      std::string out;
      int rc = StepRc(m.token(), &out);
      if (rc != GSASL_OK && rc != GSASL_NEEDS_MORE) {
        // What the RM sends: FATAL, FATAL_UNAUTHORIZED, the SaslException's toString().
        failure_ = RemoteExceptionToStatus(
            "javax.security.sasl.SaslException",
            "javax.security.sasl.SaslException: DIGEST-MD5: digest response format violation. "
            "Mismatched response.",
            true, 15);
        return absl::OkStatus();
      }
      RpcSaslProto reply;
      reply.set_state(rc == GSASL_OK ? RpcSaslProto::SUCCESS : RpcSaslProto::CHALLENGE);
      reply.set_token(out);
      replies_.push_back(reply);
    }
    return absl::OkStatus();
  }

  absl::StatusOr<RpcSaslProto> Receive() override {
    if (!failure_.ok()) return failure_;
    if (replies_.empty()) return absl::InternalError("client waits for nothing");
    RpcSaslProto r = replies_.front();
    replies_.pop_front();
    return r;
  }

  static RpcSaslProto::SaslAuth Advertised() {
    RpcSaslProto::SaslAuth a;
    a.set_method("TOKEN");
    a.set_mechanism("DIGEST-MD5");
    a.set_protocol("");
    a.set_serverid("default");
    return a;
  }

  const std::vector<RpcSaslProto>& received() const { return received_; }

  // The server's integrity layer (libgsasl's encode/decode carry a 4-byte length that Hadoop's
  // WRAP tokens do not).
  std::string Encode(const std::string& plain) {
    char* out = nullptr;
    size_t len = 0;
    EXPECT_EQ(gsasl_encode(session_, plain.data(), plain.size(), &out, &len), GSASL_OK);
    std::string wrapped = len >= 4 ? std::string(out + 4, len - 4) : std::string();
    gsasl_free(out);
    return wrapped;
  }
  absl::StatusOr<std::string> Decode(const std::string& token) {
    const uint32_t n = static_cast<uint32_t>(token.size());
    const std::string framed = std::string({static_cast<char>(n >> 24), static_cast<char>(n >> 16),
                                            static_cast<char>(n >> 8), static_cast<char>(n)}) +
                               token;
    char* out = nullptr;
    size_t len = 0;
    int rc = gsasl_decode(session_, framed.data(), framed.size(), &out, &len);
    std::string plain = out != nullptr ? std::string(out, len) : std::string();
    gsasl_free(out);
    if (rc != GSASL_OK) return absl::DataLossError(gsasl_strerror(rc));
    return plain;
  }

 private:
  int StepRc(const std::string& in, std::string* out) {
    char* o = nullptr;
    size_t len = 0;
    int rc = gsasl_step(session_, in.data(), in.size(), &o, &len);
    if (o != nullptr) out->assign(o, len);
    gsasl_free(o);
    return rc;
  }
  std::string Step(const std::string& in) {
    std::string out;
    EXPECT_EQ(StepRc(in, &out), GSASL_NEEDS_MORE);
    return out;
  }

  std::string password_;
  std::vector<RpcSaslProto::SaslAuth> extra_;
  bool simple_only_;
  std::string qops_;
  Gsasl* ctx_ = nullptr;
  Gsasl_session* session_ = nullptr;
  std::vector<RpcSaslProto> received_;
  std::deque<RpcSaslProto> replies_;
  absl::Status failure_;
};

ClientAuth TokenAuth(const std::string& password) {
  ClientAuth auth;
  auth.method = AuthMethod::kToken;
  auth.token = Token{"identifier-bytes", password, kAmRmTokenKind, ""};
  return auth;
}

TEST(NegotiateSaslTest, TokenExchangeLikeHadoop) {
  ClientAuth auth = TokenAuth("the-password");
  FakeHadoopSaslServer server(TokenSaslPassword(*auth.token));
  auto offer = NegotiateSasl(auth, &server);
  ASSERT_TRUE(offer.ok()) << offer.status();
  EXPECT_EQ(offer->method, "TOKEN");
  EXPECT_EQ(offer->mechanism, "DIGEST-MD5");
  EXPECT_EQ(offer->server_id, "default");

  const auto& got = server.received();
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].state(), RpcSaslProto::NEGOTIATE);
  EXPECT_EQ(got[0].auths_size(), 0);
  EXPECT_EQ(got[1].state(), RpcSaslProto::INITIATE);
  ASSERT_EQ(got[1].auths_size(), 1);
  // The server compares with protobuf equality: protocol present (empty), no challenge.
  const auto& echoed = got[1].auths(0);
  EXPECT_EQ(echoed.SerializeAsString(), FakeHadoopSaslServer::Advertised().SerializeAsString());
  EXPECT_TRUE(echoed.has_protocol());
  EXPECT_FALSE(echoed.has_challenge());
  EXPECT_NE(got[1].token().find("digest-uri=\"/default\""), std::string::npos);
}

TEST(NegotiateSaslTest, IntegrityWithAnIndependentServerBothWays) {
  ClientAuth auth = TokenAuth("the-password");
  FakeHadoopSaslServer server(TokenSaslPassword(*auth.token), {}, false, "qop-auth, qop-int");
  std::unique_ptr<SaslSecurityLayer> layer;
  auto offer = NegotiateSasl(auth, &server, &layer);
  ASSERT_TRUE(offer.ok()) << offer.status();
  ASSERT_NE(layer, nullptr) << "the strongest offered, auth-int, was not taken";
  EXPECT_EQ(layer->qop(), "auth-int");
  for (const std::string& msg :
       std::vector<std::string>{"connection context", "", std::string(5000, 'x')}) {
    auto wrapped = layer->Wrap(msg);
    ASSERT_TRUE(wrapped.ok());
    auto at_server = server.Decode(*wrapped);
    ASSERT_TRUE(at_server.ok()) << at_server.status();
    EXPECT_EQ(*at_server, msg);
    auto back = layer->Unwrap(server.Encode("reply to " + msg));
    ASSERT_TRUE(back.ok()) << back.status();
    EXPECT_EQ(*back, "reply to " + msg);
  }
}

TEST(NegotiateSaslTest, AMinimumAboveWhatTheServerOffersRefusesBeforeAuthenticating) {
  ClientAuth auth = TokenAuth("pw");
  auth.min_protection = Protection::kPrivacy;
  FakeHadoopSaslServer server(TokenSaslPassword(*auth.token), {}, false, "qop-auth, qop-int");
  std::unique_ptr<SaslSecurityLayer> layer;
  auto offer = NegotiateSasl(auth, &server, &layer);
  ASSERT_FALSE(offer.ok());
  EXPECT_EQ(offer.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(server.received().size(), 1u) << "a response was sent to a too-weak server";
}

TEST(NegotiateSaslTest, SkipsOffersItCannotUse) {
  RpcSaslProto::SaslAuth kerberos;
  kerberos.set_method("KERBEROS");
  kerberos.set_mechanism("GSSAPI");
  kerberos.set_protocol("rm");
  kerberos.set_serverid("host.example.com");
  ClientAuth auth = TokenAuth("pw");
  FakeHadoopSaslServer server(TokenSaslPassword(*auth.token), {kerberos});
  auto offer = NegotiateSasl(auth, &server);
  ASSERT_TRUE(offer.ok()) << offer.status();
  EXPECT_EQ(offer->method, "TOKEN");
}

TEST(NegotiateSaslTest, WrongPasswordIsUnauthenticatedWithTheServersClass) {
  FakeHadoopSaslServer server(TokenSaslPassword(Token{"", "right", "", ""}));
  auto offer = NegotiateSasl(TokenAuth("wrong"), &server);
  ASSERT_FALSE(offer.ok());
  EXPECT_EQ(offer.status().code(), absl::StatusCode::kUnauthenticated);
  EXPECT_TRUE(IsRemoteException(offer.status(), "SaslException")) << offer.status();
}

TEST(NegotiateSaslTest, NoUsableOffer) {
  ClientAuth kerberos;
  kerberos.method = AuthMethod::kKerberos;
  FakeHadoopSaslServer server("pw");
  auto offer = NegotiateSasl(kerberos, &server);
  ASSERT_FALSE(offer.ok());
  EXPECT_EQ(offer.status().code(), absl::StatusCode::kUnauthenticated);
  EXPECT_NE(offer.status().message().find("TOKEN/DIGEST-MD5"), absl::string_view::npos);
}

TEST(NegotiateSaslTest, SimpleOnlyServerIsRefused) {
  FakeHadoopSaslServer server("pw", {}, /*simple_only=*/true);
  auto offer = NegotiateSasl(TokenAuth("pw"), &server);
  EXPECT_EQ(offer.status().code(), absl::StatusCode::kFailedPrecondition);
}

TEST(NegotiateSaslTest, AuthMethodNames) {
  EXPECT_EQ(AuthMethodName(AuthMethod::kSimple), "SIMPLE");
  EXPECT_EQ(AuthMethodName(AuthMethod::kToken), "TOKEN");
  EXPECT_EQ(AuthMethodName(AuthMethod::kKerberos), "KERBEROS");
  ClientAuth simple;
  FakeHadoopSaslServer server("pw");
  EXPECT_EQ(NegotiateSasl(simple, &server).status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace tony::ipc
