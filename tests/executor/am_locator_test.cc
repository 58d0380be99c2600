// Copyright libtony authors.
//
// AmLocator: the latest AM attempt's address from a WebHDFS LISTSTATUS (a test NameNode here).

#include "executor/am_locator.h"

#include <netinet/in.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <memory>
#include <string>
#include <thread>

#include "absl/strings/str_cat.h"
#include "broker/tls.h"
#include "common/unique_fd.h"
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
  // A status line too short to hold a status code (found by fuzzing: an out_of_range throw).
  EXPECT_EQ(HttpResponseBody("HTTP/1.K\r\n\r\n").status().code(),
            absl::StatusCode::kFailedPrecondition);
  // A chunk size near 2^64 wrapped `size + 2` and read far past the buffer (an abort).
  EXPECT_EQ(HttpResponseBody("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
                             "ffffffffffffffff\r\nab\r\n0\r\n\r\n")
                .status()
                .code(),
            absl::StatusCode::kDataLoss);
  EXPECT_EQ(HttpResponseBody("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
                             "fffffffffffffffe\r\nab")
                .status()
                .code(),
            absl::StatusCode::kDataLoss);
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

// A one-connection HTTPS NameNode on 127.0.0.1 with `identity` (a self-signed certificate for
// the name "tony-broker"): answers LISTSTATUS with kListing, or just closes when the client's
// handshake fails.
class TlsNameNode {
 public:
  explicit TlsNameNode(const broker::TlsIdentity& identity) {
    listen_.Reset(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(::bind(listen_.get(), reinterpret_cast<sockaddr*>(&a), sizeof(a)), 0);
    EXPECT_EQ(::listen(listen_.get(), 4), 0);
    socklen_t len = sizeof(a);
    ::getsockname(listen_.get(), reinterpret_cast<sockaddr*>(&a), &len);
    port_ = ntohs(a.sin_port);
    ctx_.reset(SSL_CTX_new(TLS_server_method()));
    BIO* key = BIO_new_mem_buf(identity.key_pem.data(), static_cast<int>(identity.key_pem.size()));
    BIO* cert =
        BIO_new_mem_buf(identity.cert_pem.data(), static_cast<int>(identity.cert_pem.size()));
    EVP_PKEY* pkey = PEM_read_bio_PrivateKey(key, nullptr, nullptr, nullptr);
    X509* x509 = PEM_read_bio_X509(cert, nullptr, nullptr, nullptr);
    EXPECT_EQ(SSL_CTX_use_certificate(ctx_.get(), x509), 1);
    EXPECT_EQ(SSL_CTX_use_PrivateKey(ctx_.get(), pkey), 1);
    EVP_PKEY_free(pkey);
    X509_free(x509);
    BIO_free(key);
    BIO_free(cert);
    thread_ = std::thread([this] { Serve(); });
  }
  ~TlsNameNode() { thread_.join(); }
  int port() const { return port_; }

 private:
  void Serve() {
    UniqueFd fd(::accept4(listen_.get(), nullptr, nullptr, SOCK_CLOEXEC));
    std::unique_ptr<SSL, void (*)(SSL*)> ssl(SSL_new(ctx_.get()), SSL_free);
    SSL_set_fd(ssl.get(), fd.get());
    if (SSL_accept(ssl.get()) != 1) return;  // the client refused the certificate
    char buf[4096];
    (void)SSL_read(ssl.get(), buf, sizeof(buf));
    const std::string listing = kListing;
    const std::string reply = absl::StrCat("HTTP/1.1 200 OK\r\nContent-Length: ", listing.size(),
                                           "\r\nConnection: close\r\n\r\n", listing);
    SSL_write(ssl.get(), reply.data(), static_cast<int>(reply.size()));
    SSL_shutdown(ssl.get());
  }

  UniqueFd listen_;
  int port_ = 0;
  std::unique_ptr<SSL_CTX, void (*)(SSL_CTX*)> ctx_{nullptr, SSL_CTX_free};
  std::thread thread_;
};

TEST(AmLocatorTest, OverHttpsTheNameNodeMustChainToTheCaAndCarryTheName) {
  absl::StatusOr<broker::TlsIdentity> server = broker::GenerateTlsIdentity();
  absl::StatusOr<broker::TlsIdentity> other = broker::GenerateTlsIdentity();
  ASSERT_TRUE(server.ok() && other.ok());
  struct Case {
    const char* what;
    std::string ca;
    std::vector<std::string> hosts;
    bool ok;
  };
  const Case cases[] = {
      {"its CA and its name", server->cert_pem, {"nn.example", "tony-broker"}, true},
      {"another CA", other->cert_pem, {"tony-broker"}, false},
      {"another name", server->cert_pem, {"nn.example"}, false},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    TlsNameNode nn(*server);
    AmLocatorOptions o;
    o.dir = "/s/am-address";
    o.namenodes = {absl::StrCat("127.0.0.1:", nn.port())};
    o.tls_ca_pem = c.ca;
    o.tls_hosts = c.hosts;
    absl::StatusOr<broker::AmAddress> a = AmLocator(o).Latest();
    if (c.ok) {
      ASSERT_TRUE(a.ok()) << a.status();
      EXPECT_EQ(a->address, "nm3.example:40777");
    } else {
      EXPECT_EQ(a.status().code(), absl::StatusCode::kUnavailable) << a.status();
      EXPECT_THAT(a.status().message(), HasSubstr("TLS with 127.0.0.1"));
    }
  }
}

}  // namespace
}  // namespace tony::executor
