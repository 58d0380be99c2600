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
#include "tests/ipc/fake_sasl_transport.h"

namespace tony::ipc {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

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

// A challenge offering only `ciphers`.
OneChallengeTransport OneChallenge(const std::string& ciphers) {
  return OneChallengeTransport(
      "realm=\"default\",nonce=\"n\",qop=\"auth-conf\",charset=utf-8,cipher=\"" + ciphers +
      "\",algorithm=md5-sess");
}

TEST(ParseDigestCiphersTest, ClientAuthCarriesTheCiphersToTheMechanism) {
  ClientAuth auth;
  auth.method = AuthMethod::kToken;
  auth.token = Token{"user", "password", kAmRmTokenKind, ""};
  auth.min_protection = Protection::kPrivacy;
  std::unique_ptr<SaslSecurityLayer> layer;

  OneChallengeTransport by_default = OneChallenge("rc4");
  EXPECT_EQ(NegotiateSasl(auth, &by_default, &layer).status().code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(by_default.sent().size(), 1u);

  auth.digest_ciphers = *ParseDigestCiphers("3des,rc4");
  OneChallengeTransport allowed = OneChallenge("rc4");
  (void)NegotiateSasl(auth, &allowed, &layer);  // the transport stops after INITIATE
  ASSERT_EQ(allowed.sent().size(), 2u);
  EXPECT_THAT(allowed.sent()[1].token(), HasSubstr("cipher=\"rc4\""));

  auth.digest_ciphers = {"rc4-40"};
  OneChallengeTransport weak = OneChallenge("rc4-40");
  auto refused = NegotiateSasl(auth, &weak, &layer);
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(weak.sent().size(), 1u);
}

}  // namespace
}  // namespace tony::ipc
