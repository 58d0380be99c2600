// Copyright libtony authors.
//
// The pure parts of ipc/kerberos: _HOST resolution, short names, the one-line error causes,
// the server-principal check, and failures without any credentials. The GSSAPI exchange itself
// runs against the secure test cluster (tests/secure).

#include "ipc/kerberos.h"

#include <gssapi/gssapi.h>
#include <krb5/krb5.h>
#include <stdlib.h>

#include <string>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "ipc/credentials.h"

namespace tony::ipc {
namespace {

TEST(ResolveServerPrincipalTest, ReplacesHostWithCanonicalLowerCaseName) {
  EXPECT_EQ(ResolveServerPrincipal("rm/_HOST@EXAMPLE.COM", "rm1", "RM1.Example.Com"),
            "rm/rm1.example.com@EXAMPLE.COM");
  EXPECT_EQ(ResolveServerPrincipal("nn/_HOST", "x", "nn.example.com"), "nn/nn.example.com");
  // Only a whole _HOST host component is replaced, as Hadoop does.
  EXPECT_EQ(ResolveServerPrincipal("rm/fixed.host@R", "x", "other"), "rm/fixed.host@R");
  EXPECT_EQ(ResolveServerPrincipal("rm@R", "x", "other"), "rm@R");
  EXPECT_EQ(ResolveServerPrincipal("rm/_HOSTS@R", "x", "other"), "rm/_HOSTS@R");
}

TEST(ResolveServerPrincipalTest, LooksUpLocalhost) {
  // localhost resolves (forward and back) on every test machine.
  EXPECT_EQ(ResolveServerPrincipal("nn/_HOST@R", "LOCALHOST"), "nn/localhost@R");
}

TEST(PrincipalShortNameTest, FirstComponent) {
  EXPECT_EQ(PrincipalShortName("alice@EXAMPLE.COM"), "alice");
  EXPECT_EQ(PrincipalShortName("rm/host.example.com@EXAMPLE.COM"), "rm");
  EXPECT_EQ(PrincipalShortName("bob"), "bob");
}

void ExpectOneLine(const absl::Status& s, absl::string_view needle) {
  EXPECT_TRUE(absl::StrContains(s.message(), needle)) << s;
  EXPECT_FALSE(absl::StrContains(s.message(), "\n")) << s;
}

TEST(KerberosErrorTest, NamesCauseAndFix) {
  absl::Status s = KerberosError(GSS_S_FAILURE, KRB5_FCC_NOFILE, "GSSAPI");
  EXPECT_TRUE(absl::IsUnauthenticated(s));
  ExpectOneLine(s, "no Kerberos ticket");
  ExpectOneLine(s, "kinit");

  ExpectOneLine(KerberosError(GSS_S_NO_CRED, 0, "GSSAPI"), "no Kerberos ticket");
  ExpectOneLine(KerberosError(GSS_S_CREDENTIALS_EXPIRED, 0, "GSSAPI"), "expired");
  ExpectOneLine(KerberosError(GSS_S_FAILURE, KRB5KRB_AP_ERR_TKT_EXPIRED, "GSSAPI"), "expired");
  ExpectOneLine(KerberosError(GSS_S_FAILURE, KRB5KRB_AP_ERR_SKEW, "GSSAPI"), "clock skew");

  s = KerberosError(GSS_S_FAILURE, KRB5KDC_ERR_S_PRINCIPAL_UNKNOWN, "GSSAPI", "rm/h@R");
  ExpectOneLine(s, "rm/h@R");
  ExpectOneLine(s, "yarn.resourcemanager.principal");
  ExpectOneLine(KerberosError(GSS_S_FAILURE, KRB5KDC_ERR_PREAUTH_FAILED, "login"), "--keytab");
  ExpectOneLine(KerberosError(GSS_S_FAILURE, KRB5_KT_NOTFOUND, "login"), "--principal");

  s = KerberosError(GSS_S_FAILURE, KRB5_KDC_UNREACH, "GSSAPI");
  EXPECT_TRUE(absl::IsUnavailable(s)) << s;
  ExpectOneLine(s, "KDC");

  // Anything else: GSS-API's own words, still one line.
  s = KerberosError(GSS_S_BAD_MECH, 0, "GSSAPI");
  EXPECT_TRUE(absl::IsUnauthenticated(s));
  ExpectOneLine(s, "Kerberos: GSSAPI: ");
}

// A wrapped message that verifies but comes twice, late, out of order or after a gap: GSS-API
// says so only in supplementary bits beside GSS_S_COMPLETE, and the layer must refuse it.
TEST(GssMessageStatusTest, SupplementaryBitsAfterUnwrapAreRefused) {
  const struct {
    OM_uint32 major;
    absl::StatusCode code;
    const char* says;
  } kTable[] = {
      {GSS_S_COMPLETE, absl::StatusCode::kOk, ""},
      {GSS_S_DUPLICATE_TOKEN, absl::StatusCode::kDataLoss, "replayed message (duplicate"},
      {GSS_S_OLD_TOKEN, absl::StatusCode::kDataLoss, "replayed message (a token too old"},
      {GSS_S_UNSEQ_TOKEN, absl::StatusCode::kDataLoss, "out of order"},
      {GSS_S_GAP_TOKEN, absl::StatusCode::kDataLoss, "after a missing one"},
      {GSS_S_UNSEQ_TOKEN | GSS_S_GAP_TOKEN, absl::StatusCode::kDataLoss, "out of order"},
      {GSS_S_BAD_SIG, absl::StatusCode::kUnauthenticated, "gss_unwrap"},
      {GSS_S_BAD_SIG | GSS_S_DUPLICATE_TOKEN, absl::StatusCode::kUnauthenticated, "gss_unwrap"},
  };
  for (const auto& row : kTable) {
    SCOPED_TRACE(row.major);
    absl::Status s = GssMessageStatus(row.major, 0, "gss_unwrap");
    EXPECT_EQ(s.code(), row.code) << s;
    EXPECT_TRUE(absl::StrContains(s.message(), row.says)) << s;
  }
}

TEST(GssapiClientTest, RefusesAServerPrincipalOtherThanConfigured) {
  SaslOffer offer{"KERBEROS", "GSSAPI", "rm", "evil.example.com"};
  auto mech = NewGssapiClient("rm/rm1.example.com@EXAMPLE.COM", offer);
  ASSERT_FALSE(mech.ok());
  EXPECT_TRUE(absl::IsUnauthenticated(mech.status()));
  ExpectOneLine(mech.status(), "server principal mismatch");
  ExpectOneLine(mech.status(), "rm/evil.example.com");

  offer.server_id = "RM1.example.com";  // Kerberos host names compare case-insensitively
  EXPECT_TRUE(NewGssapiClient("rm/rm1.example.com@EXAMPLE.COM", offer).ok());
}

class NoTicketTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* old = getenv("KRB5CCNAME");
    if (old != nullptr) saved_ = old;
    had_ = old != nullptr;
    setenv("KRB5CCNAME", "FILE:/nonexistent/libtony-test-ccache", 1);
  }
  void TearDown() override {
    if (had_) {
      setenv("KRB5CCNAME", saved_.c_str(), 1);
    } else {
      unsetenv("KRB5CCNAME");
    }
  }
  std::string saved_;
  bool had_ = false;
};

TEST_F(NoTicketTest, CurrentIdentityNamesTheMissingTicket) {
  auto id = CurrentKerberosIdentity();
  ASSERT_FALSE(id.ok());
  EXPECT_TRUE(absl::IsUnauthenticated(id.status())) << id.status();
  ExpectOneLine(id.status(), "no Kerberos ticket");
}

TEST_F(NoTicketTest, GssapiStepWithoutTicketFailsInOneLine) {
  SaslOffer offer{"KERBEROS", "GSSAPI", "rm", "localhost"};
  auto mech = NewGssapiClient("rm/localhost@EXAMPLE.COM", offer);
  ASSERT_TRUE(mech.ok()) << mech.status();
  auto first = (*mech)->Step("");
  ASSERT_FALSE(first.ok());
  EXPECT_FALSE(absl::StrContains(first.status().message(), "\n"));
}

TEST(KerberosLoginTest, MissingKeytabNamesTheFlag) {
  auto id = KerberosLogin::FromKeytab("alice@EXAMPLE.COM", "/nonexistent/alice.keytab");
  ASSERT_FALSE(id.ok());
  EXPECT_TRUE(absl::IsUnauthenticated(id.status()));
  ExpectOneLine(id.status(), "--keytab");
}

TEST(TokenUrlStringTest, RoundTripsAndIsUrlSafe) {
  Token t{std::string("\x00\xff\xfe id", 6), std::string("pw\xfb\xff", 4), "HDFS_DELEGATION_TOKEN",
          "127.0.0.1:8020"};
  std::string encoded = EncodeTokenUrlString(t);
  EXPECT_EQ(encoded.find_first_of("+/=\n"), std::string::npos) << encoded;
  auto back = DecodeTokenUrlString(encoded);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, t);
  EXPECT_FALSE(DecodeTokenUrlString("not base64 at all!").ok());
  EXPECT_FALSE(DecodeTokenUrlString(encoded + "AAAA").ok());
}

}  // namespace
}  // namespace tony::ipc
