// Copyright libtony authors.

#include "ipc/credentials.h"

#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <string>

#include "gtest/gtest.h"
#include "ipc/writable.h"

namespace tony::ipc {
namespace {

std::string CredentialBytes(std::initializer_list<int> bytes) {
  std::string s;
  for (int b : bytes) s.push_back(static_cast<char>(b));
  return s;
}

std::string VLong(int64_t v) {
  std::string s;
  AppendWritableVLong(v, &s);
  return s;
}

TEST(WritableTest, VLongGoldenBytes) {
  // WritableUtils.writeVLong: one byte for -112..127, else a length marker and big-endian bytes.
  EXPECT_EQ(VLong(0), CredentialBytes({0x00}));
  EXPECT_EQ(VLong(127), CredentialBytes({0x7f}));
  EXPECT_EQ(VLong(-1), CredentialBytes({0xff}));
  EXPECT_EQ(VLong(-112), CredentialBytes({0x90}));
  EXPECT_EQ(VLong(128), CredentialBytes({0x8f, 0x80}));  // -113: one positive byte
  EXPECT_EQ(VLong(255), CredentialBytes({0x8f, 0xff}));
  EXPECT_EQ(VLong(256), CredentialBytes({0x8e, 0x01, 0x00}));
  EXPECT_EQ(VLong(-113), CredentialBytes({0x87, 0x70}));  // -121: one negative byte, ~(-113) = 112
  EXPECT_EQ(VLong(int64_t{1} << 31), CredentialBytes({0x8c, 0x80, 0x00, 0x00, 0x00}));
}

TEST(WritableTest, VLongRoundTrip) {
  for (int64_t v : {int64_t{0}, int64_t{1}, int64_t{-1}, int64_t{127}, int64_t{-112}, int64_t{-113},
                    int64_t{128}, int64_t{65535}, int64_t{-65536}, INT64_MAX, INT64_MIN}) {
    std::string bytes = VLong(v);
    WritableReader r(bytes);
    auto got = r.ReadVLong();
    ASSERT_TRUE(got.ok()) << v;
    EXPECT_EQ(*got, v);
    EXPECT_EQ(r.remaining(), 0u);
  }
}

TEST(WritableTest, TruncatedIsDataLoss) {
  std::string short_vlong = CredentialBytes({0x8e, 0x01});
  WritableReader r(short_vlong);
  EXPECT_EQ(r.ReadVLong().status().code(), absl::StatusCode::kDataLoss);
  std::string short_text = CredentialBytes({0x05, 'a', 'b'});
  WritableReader t(short_text);
  EXPECT_EQ(t.ReadText().status().code(), absl::StatusCode::kDataLoss);
}

Credentials Sample() {
  Credentials c;
  c.AddToken("app-token", Token{std::string("\x01\x02\x00\x03", 4), std::string(200, 'p'),
                                "YARN_AM_RM_TOKEN", ""});
  c.AddToken("nm", Token{"id2", "pw2", "NMToken", "localhost:18830"});
  c.AddSecret("secret", std::string("\xff\x00s", 3));
  return c;
}

void ExpectSample(const Credentials& c) {
  ASSERT_EQ(c.tokens().size(), 2u);
  ASSERT_EQ(c.secrets().size(), 1u);
  auto amrm = c.FindTokenByKind("YARN_AM_RM_TOKEN");
  ASSERT_TRUE(amrm.has_value());
  EXPECT_EQ(amrm->identifier, std::string("\x01\x02\x00\x03", 4));
  EXPECT_EQ(amrm->password, std::string(200, 'p'));
  EXPECT_EQ(amrm->service, "");
  EXPECT_EQ(c.FindToken("nm")->service, "localhost:18830");
  EXPECT_EQ(*c.FindSecret("secret"), std::string("\xff\x00s", 3));
}

TEST(CredentialsTest, WritableGoldenBytes) {
  Credentials c;
  c.AddToken("a", Token{"id", "pw", "K", "s:1"});
  c.AddSecret("k", "v");
  std::string want = std::string("HDTS") + CredentialBytes({0}) +   // magic, format 0
                     CredentialBytes({1}) +                         // one token
                     CredentialBytes({1, 'a'}) +                    // alias
                     CredentialBytes({2, 'i', 'd', 2, 'p', 'w'}) +  // identifier, password
                     CredentialBytes({1, 'K', 3, 's', ':', '1'}) +  // kind, service
                     CredentialBytes({1, 1, 'k', 1, 'v'});          // one secret
  EXPECT_EQ(c.Serialize(Credentials::Format::kWritable), want);
  auto parsed = Credentials::Parse(want);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(*parsed->FindToken("a"), (Token{"id", "pw", "K", "s:1"}));
}

TEST(CredentialsTest, ProtobufGoldenBytes) {
  Credentials c;
  c.AddToken("a", Token{"i", "p", "K", ""});
  // HDTS 01, then a delimited CredentialsProto{tokens {alias "a" token {i, p, K, ""}}}.
  std::string token = CredentialBytes({0x0a, 1, 'i', 0x12, 1, 'p', 0x1a, 1, 'K', 0x22, 0});
  std::string kv = CredentialBytes({0x0a, 1, 'a', 0x12, static_cast<int>(token.size())}) + token;
  std::string body = CredentialBytes({0x0a, static_cast<int>(kv.size())}) + kv;
  std::string want =
      std::string("HDTS") + CredentialBytes({1, static_cast<int>(body.size())}) + body;
  EXPECT_EQ(c.Serialize(Credentials::Format::kProtobuf), want);
}

TEST(CredentialsTest, RoundTripBothFormats) {
  for (auto format : {Credentials::Format::kWritable, Credentials::Format::kProtobuf}) {
    std::string bytes = Sample().Serialize(format);
    EXPECT_EQ(bytes[4], static_cast<char>(format));
    auto parsed = Credentials::Parse(bytes);
    ASSERT_TRUE(parsed.ok()) << parsed.status();
    ExpectSample(*parsed);
  }
}

TEST(CredentialsTest, FileRoundTripAndEnvironment) {
  std::string dir = ::testing::TempDir();
  std::string path = dir + "/credentials_test_tokens";
  ASSERT_TRUE(Sample().WriteFile(path, Credentials::Format::kProtobuf).ok());
  auto read = Credentials::ReadFile(path);
  ASSERT_TRUE(read.ok()) << read.status();
  ExpectSample(*read);

  ASSERT_EQ(setenv("HADOOP_TOKEN_FILE_LOCATION", path.c_str(), 1), 0);
  auto env = Credentials::ReadFromEnvironment();
  ASSERT_TRUE(env.ok()) << env.status();
  ExpectSample(*env);
  unsetenv("HADOOP_TOKEN_FILE_LOCATION");
  EXPECT_EQ(Credentials::ReadFromEnvironment().status().code(), absl::StatusCode::kNotFound);
  unlink(path.c_str());
  EXPECT_EQ(Credentials::ReadFile(path).status().code(), absl::StatusCode::kNotFound);
}

TEST(CredentialsTest, RejectsGarbage) {
  EXPECT_EQ(Credentials::Parse("nope").status().code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(Credentials::Parse(std::string("HDTS") + CredentialBytes({7})).status().code(),
            absl::StatusCode::kUnimplemented);
  std::string truncated = Sample().Serialize();
  truncated.resize(truncated.size() - 3);
  EXPECT_EQ(Credentials::Parse(truncated).status().code(), absl::StatusCode::kDataLoss);
  std::string bad_proto = std::string("HDTS") + CredentialBytes({1, 5, 0xff, 0xff});
  EXPECT_EQ(Credentials::Parse(bad_proto).status().code(), absl::StatusCode::kDataLoss);
}

TEST(CredentialsTest, EmptyCredentials) {
  Credentials c;
  EXPECT_TRUE(c.empty());
  EXPECT_EQ(c.Serialize(), std::string("HDTS") + CredentialBytes({0, 0, 0}));
  auto parsed = Credentials::Parse(c.Serialize(Credentials::Format::kProtobuf));
  ASSERT_TRUE(parsed.ok());
  EXPECT_TRUE(parsed->empty());
}

}  // namespace
}  // namespace tony::ipc
