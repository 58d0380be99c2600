// Copyright libtony authors.
//
// AmLocator: the latest AM attempt's address from a WebHDFS LISTSTATUS (a test NameNode here).

#include "executor/am_locator.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/http/test_http_server.h"

namespace tony::executor {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::tony::testing::TestHttpServer;

constexpr char kListing[] = R"({"FileStatuses":{"FileStatus":[
  {"pathSuffix":"1_nm1.example_40001","type":"DIRECTORY"},
  {"pathSuffix":"2_nm3.example_40777","type":"DIRECTORY"},
  {"pathSuffix":"junk","type":"FILE"}]}})";

TEST(AmLocatorTest, FindsTheLatestAttemptWithTheUsersName) {
  TestHttpServer nn([](const TestHttpServer::Request& r) {
    TestHttpServer::Reply reply;
    if (r.path != "/webhdfs/v1/user/u/.tony/staging/app/am-address" ||
        r.Param("op").value_or("") != "LISTSTATUS") {
      reply.status = 404;
      return reply;
    }
    reply.body = kListing;
    return reply;
  });
  AmLocatorOptions o;
  o.dir = "/user/u/.tony/staging/app/am-address";
  o.namenodes = {"127.0.0.1:" + std::to_string(tony::testing::UnusedLoopbackPort()),
                 "127.0.0.1:" + std::to_string(nn.port())};  // the first one is down
  o.user = "u";
  AmLocator locator(o);
  absl::StatusOr<broker::AmAddress> a = locator.Latest();
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(a->attempt, 2);
  EXPECT_EQ(a->address, "nm3.example:40777");
  ASSERT_EQ(nn.requests().size(), 1u);
  EXPECT_EQ(nn.requests()[0].Param("user.name").value_or(""), "u");
}

TEST(AmLocatorTest, SendsTheDelegationTokenInsteadOfTheUser) {
  TestHttpServer nn([](const TestHttpServer::Request&) {
    TestHttpServer::Reply reply;
    reply.body = R"({"FileStatuses":{"FileStatus":[]}})";
    return reply;
  });
  AmLocatorOptions o;
  o.dir = "/s/am-address";
  o.namenodes = {"127.0.0.1:" + std::to_string(nn.port())};
  o.user = "u";
  o.delegation = "AbC-_x";
  absl::StatusOr<broker::AmAddress> a = AmLocator(o).Latest();
  EXPECT_TRUE(absl::IsNotFound(a.status())) << a.status();
  ASSERT_EQ(nn.requests().size(), 1u);
  EXPECT_EQ(nn.requests()[0].Param("delegation").value_or(""), "AbC-_x");
  EXPECT_FALSE(nn.requests()[0].Param("user.name").has_value());
}

TEST(AmLocatorTest, AnErrorAnswerIsNoAddress) {
  TestHttpServer nn([](const TestHttpServer::Request&) {
    TestHttpServer::Reply reply;
    reply.status = 404;
    reply.body = R"({"RemoteException":{"exception":"FileNotFoundException"}})";
    return reply;
  });
  AmLocatorOptions o;
  o.dir = "/s/am-address";
  o.namenodes = {"127.0.0.1:" + std::to_string(nn.port())};
  absl::StatusOr<broker::AmAddress> a = AmLocator(o).Latest();
  EXPECT_FALSE(a.ok());
  EXPECT_THAT(std::string(a.status().message()), HasSubstr("404"));
}

TEST(AmLocatorTest, ReadsChunkedAndPlainBodies) {
  auto plain = HttpResponseBody("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhi");
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(*plain, "hi");
  auto chunked = HttpResponseBody(
      "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2;x=y\r\nde\r\n0\r\n\r\n");
  ASSERT_TRUE(chunked.ok()) << chunked.status();
  EXPECT_EQ(*chunked, "abcde");
  EXPECT_FALSE(
      HttpResponseBody("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n9\r\nab").ok());
  EXPECT_FALSE(HttpResponseBody("garbage").ok());
  EXPECT_TRUE(absl::IsFailedPrecondition(
      HttpResponseBody("HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n").status()));
}

TEST(AmLocatorTest, ParsesListStatusNames) {
  auto names = ParseListStatusNames(kListing);
  ASSERT_TRUE(names.ok());
  EXPECT_THAT(*names, ElementsAre("1_nm1.example_40001", "2_nm3.example_40777", "junk"));
  EXPECT_FALSE(ParseListStatusNames("{").ok());
  EXPECT_FALSE(ParseListStatusNames("[]").ok());
}

TEST(AmAddressTest, NamesRoundTripAndJunkIsIgnored) {
  broker::AmAddress a{3, "host_with_underscore.example:4567"};
  std::optional<broker::AmAddress> back = broker::ParseAmAddressName(broker::AmAddressName(a));
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->attempt, 3);
  EXPECT_EQ(back->address, a.address);
  for (const char* junk : {"", "2", "2_", "x_h_1", "0_h_1", "2_h_0", "2_h_70000", "2__1", "2_h_"}) {
    EXPECT_FALSE(broker::ParseAmAddressName(junk).has_value()) << junk;
  }
  std::optional<broker::AmAddress> latest =
      broker::LatestAmAddress({"2_b_2", "10_c_3", "junk", "9_a_1"});
  ASSERT_TRUE(latest.has_value());
  EXPECT_EQ(latest->address, "c:3");
  EXPECT_FALSE(broker::LatestAmAddress({"junk"}).has_value());
}

}  // namespace
}  // namespace tony::executor
