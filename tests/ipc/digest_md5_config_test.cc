// Copyright libtony authors.
//
// How the DIGEST-MD5 cipher choice is configured: tony.rpc.digest-md5.ciphers parsed
// (ParseDigestCiphers) and carried by ClientAuth into the mechanism NegotiateSasl runs.

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ipc/digest_md5.h"
#include "ipc/sasl.h"

namespace tony::ipc {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using tony::hadoop::common::RpcSaslProto;

TEST(ParseDigestCiphersTest, ThreeDesByDefaultRc4OnRequestNothingWeaker) {
  EXPECT_THAT(*ParseDigestCiphers(""), ElementsAre("3des"));
  EXPECT_THAT(*ParseDigestCiphers(" , "), ElementsAre("3des"));
  EXPECT_THAT(*ParseDigestCiphers("3des"), ElementsAre("3des"));
  EXPECT_THAT(*ParseDigestCiphers("RC4, 3des"), ElementsAre("3des", "rc4"));
  EXPECT_THAT(*ParseDigestCiphers("rc4"), ElementsAre("rc4"));
  for (const char* weak : {"des", "3des,rc4-56", "rc4-40,3des"}) {
    auto got = ParseDigestCiphers(weak);
    ASSERT_FALSE(got.ok()) << weak;
    EXPECT_EQ(got.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(got.status().message(), HasSubstr("tony.rpc.digest-md5.ciphers: '"));
    EXPECT_THAT(got.status().message(), HasSubstr("too weak"));
  }
  EXPECT_THAT(ParseDigestCiphers("aes").status().message(), HasSubstr("unknown"));
}

// Replies to NEGOTIATE with a challenge offering only `ciphers`, then stops.
class OneChallenge : public SaslTransport {
 public:
  explicit OneChallenge(std::string ciphers) : ciphers_(std::move(ciphers)) {}
  absl::Status Send(const RpcSaslProto& m) override {
    sent_.push_back(m);
    return absl::OkStatus();
  }
  absl::StatusOr<RpcSaslProto> Receive() override {
    if (sent_.size() != 1) return absl::UnavailableError("no more");
    RpcSaslProto reply;
    reply.set_state(RpcSaslProto::NEGOTIATE);
    RpcSaslProto::SaslAuth* a = reply.add_auths();
    a->set_method("TOKEN");
    a->set_mechanism("DIGEST-MD5");
    a->set_protocol("");
    a->set_serverid("default");
    a->set_challenge("realm=\"default\",nonce=\"n\",qop=\"auth-conf\",charset=utf-8,cipher=\"" +
                     ciphers_ + "\",algorithm=md5-sess");
    return reply;
  }
  const std::vector<RpcSaslProto>& sent() const { return sent_; }

 private:
  const std::string ciphers_;
  std::vector<RpcSaslProto> sent_;
};

TEST(ParseDigestCiphersTest, ClientAuthCarriesTheCiphersToTheMechanism) {
  ClientAuth auth;
  auth.method = AuthMethod::kToken;
  auth.token = Token{"user", "password", kAmRmTokenKind, ""};
  auth.min_protection = Protection::kPrivacy;
  std::unique_ptr<SaslSecurityLayer> layer;

  OneChallenge by_default("rc4");
  EXPECT_EQ(NegotiateSasl(auth, &by_default, &layer).status().code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(by_default.sent().size(), 1u);

  auth.digest_ciphers = *ParseDigestCiphers("3des,rc4");
  OneChallenge allowed("rc4");
  (void)NegotiateSasl(auth, &allowed, &layer);  // the transport stops after INITIATE
  ASSERT_EQ(allowed.sent().size(), 2u);
  EXPECT_THAT(allowed.sent()[1].token(), HasSubstr("cipher=\"rc4\""));

  auth.digest_ciphers = {"rc4-40"};
  OneChallenge weak("rc4-40");
  auto refused = NegotiateSasl(auth, &weak, &layer);
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(weak.sent().size(), 1u);
}

}  // namespace
}  // namespace tony::ipc
