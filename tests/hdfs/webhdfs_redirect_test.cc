// Copyright libtony authors.
//
// Where a WebHDFS 307 may send the body: a hostile or confused NameNode answering CREATE with
// `Location: file:///...` once had the upload written to a local file, and one that sends an
// HTTPS client to http:// would carry the delegation token in the clear. Two independent
// guards: WebHdfsClient takes only a Location of its own scheme, and http::Client restricts
// curl to http/https and redirects to the scheme in use.

#include <arpa/inet.h>
#include <netinet/in.h>
#include <openssl/ssl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "hdfs/webhdfs_client.h"
#include "http/client.h"
#include "tests/http/test_http_server.h"

namespace tony::hdfs {
namespace {

using ::testing::HasSubstr;
using ::tony::testing::TestHttpServer;

// An HTTPS server on 127.0.0.1 (a certificate for IP 127.0.0.1 made by the openssl CLI) that
// answers every request with a 307 to `location`.
class TlsRedirector {
 public:
  TlsRedirector(const std::string& dir, std::string location) : location_(std::move(location)) {
    cert_ = dir + "/cert.pem";
    const std::string key = dir + "/key.pem";
    const std::string make = absl::StrCat(
        "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 1 "
        "-subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 -keyout '",
        key, "' -out '", cert_, "' 2>/dev/null");
    EXPECT_EQ(std::system(make.c_str()), 0) << make;
    ctx_.reset(SSL_CTX_new(TLS_server_method()));
    EXPECT_EQ(SSL_CTX_use_certificate_chain_file(ctx_.get(), cert_.c_str()), 1);
    EXPECT_EQ(SSL_CTX_use_PrivateKey_file(ctx_.get(), key.c_str(), SSL_FILETYPE_PEM), 1);
    listen_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(::bind(listen_fd_, reinterpret_cast<sockaddr*>(&a), sizeof(a)), 0);
    EXPECT_EQ(::listen(listen_fd_, 8), 0);
    socklen_t len = sizeof(a);
    ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&a), &len);
    port_ = ntohs(a.sin_port);
    thread_ = std::thread([this] { Serve(); });
  }
  ~TlsRedirector() {
    stopping_ = true;
    thread_.join();
    ::close(listen_fd_);
  }
  std::string address() const { return absl::StrCat("127.0.0.1:", port_); }
  const std::string& ca_file() const { return cert_; }
  int answered() const { return answered_; }

 private:
  void Serve() {
    while (!stopping_) {
      pollfd p{listen_fd_, POLLIN, 0};
      if (::poll(&p, 1, 50) <= 0) continue;
      const int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (fd < 0) continue;
      std::unique_ptr<SSL, void (*)(SSL*)> ssl(SSL_new(ctx_.get()), SSL_free);
      SSL_set_fd(ssl.get(), fd);
      if (SSL_accept(ssl.get()) == 1) {
        std::string request;
        char buf[4096];
        while (request.find("\r\n\r\n") == std::string::npos) {
          const int n = SSL_read(ssl.get(), buf, sizeof(buf));
          if (n <= 0) break;
          request.append(buf, static_cast<size_t>(n));
        }
        const std::string reply =
            absl::StrCat("HTTP/1.1 307 Temporary Redirect\r\nLocation: ", location_,
                         "\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
        SSL_write(ssl.get(), reply.data(), static_cast<int>(reply.size()));
        SSL_shutdown(ssl.get());
        ++answered_;
      }
      ::close(fd);
    }
  }

  std::string location_;
  std::string cert_;
  std::unique_ptr<SSL_CTX, void (*)(SSL_CTX*)> ctx_{nullptr, SSL_CTX_free};
  int listen_fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stopping_{false};
  std::atomic<int> answered_{0};
  std::thread thread_;
};

class WebHdfsRedirectTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = ::testing::TempDir() + "/webhdfs_redirect_test.XXXXXX";
    dir_ = mkdtemp(tmpl.data());
    target_ = dir_ + "/overwritten";
  }
  void TearDown() override {
    EXPECT_EQ(std::system(absl::StrCat("rm -rf '", dir_, "'").c_str()), 0);
  }
  bool TargetExists() const { return ::access(target_.c_str(), F_OK) == 0; }

  std::string dir_;
  std::string target_;
};

std::unique_ptr<WebHdfsClient> Client(const std::string& namenode, const std::string& scheme,
                                      const std::string& ca_file = "") {
  WebHdfsClient::Options options;
  options.namenodes = {namenode};
  options.scheme = scheme;
  options.ca_file = ca_file;
  options.user = "u";
  auto client = WebHdfsClient::Create(options);
  EXPECT_TRUE(client.ok()) << client.status();
  return *std::move(client);
}

TEST_F(WebHdfsRedirectTest, ACreateRedirectedToAFileUrlIsRefusedAndNothingLocalIsWritten) {
  TestHttpServer namenode([&](const TestHttpServer::Request&) {
    TestHttpServer::Reply reply;
    reply.status = 307;
    reply.headers = {{"Location", "file://" + target_}};
    return reply;
  });
  auto client = Client(absl::StrCat("127.0.0.1:", namenode.port()), "http");
  auto uploaded = client->UploadString("the runtime bundle", "/user/u/f");
  ASSERT_FALSE(uploaded.ok());
  EXPECT_EQ(uploaded.status().code(), absl::StatusCode::kPermissionDenied) << uploaded.status();
  EXPECT_THAT(uploaded.status().message(), HasSubstr("not to an http:// DataNode address"));
  EXPECT_FALSE(TargetExists());
  auto read = client->ReadToString("/user/u/f");
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(read.status().code(), absl::StatusCode::kPermissionDenied) << read.status();
}

TEST_F(WebHdfsRedirectTest, AnHttpsNameNodeCannotSendTheUploadToPlainHttp) {
  TestHttpServer datanode([](const TestHttpServer::Request&) {
    TestHttpServer::Reply reply;
    reply.status = 201;
    return reply;
  });
  TlsRedirector namenode(dir_, datanode.url() + "/webhdfs/v1/user/u/f?op=CREATE");
  auto client = Client(namenode.address(), "https", namenode.ca_file());
  auto uploaded = client->UploadString("the runtime bundle", "/user/u/f");
  ASSERT_FALSE(uploaded.ok());
  EXPECT_EQ(uploaded.status().code(), absl::StatusCode::kPermissionDenied) << uploaded.status();
  EXPECT_THAT(uploaded.status().message(), HasSubstr("not to an https:// DataNode address"));
  EXPECT_GE(namenode.answered(), 1) << "the TLS NameNode was never reached";
  EXPECT_TRUE(datanode.requests().empty());
}

// The host part: a Location whose authority carries user information, or whose host is an
// address no DataNode has (cloud metadata at 169.254.169.254, in any spelling curl resolves),
// is refused before anything is sent to it.
TEST_F(WebHdfsRedirectTest, ACreateRedirectedToUserInfoOrALinkLocalHostIsRefused) {
  TestHttpServer datanode([](const TestHttpServer::Request&) {
    TestHttpServer::Reply reply;
    reply.status = 201;
    return reply;
  });
  const std::string port = absl::StrCat(datanode.port());
  struct Case {
    std::string location;
    std::string reason;
  };
  const std::vector<Case> cases = {
      {"http://namenode.example:9870@127.0.0.1:" + port + "/webhdfs/v1/user/u/f?op=CREATE",
       "user information"},
      {"http://u:secret@127.0.0.1:" + port + "/webhdfs/v1/user/u/f", "user information"},
      // Only loopback addresses go through a client: a link-local host (which a regression
      // would connect to) is checked by the pure function below.
      {"http://0.0.0.0:" + port + "/x", "unspecified"},
      {"http://:" + port + "/x", "without a host"},
      {"http://127.0.0.1:99999/x", "bad port"},
      {"http://127.0.0.1:" + port + "\\@evil.example/x", "backslash"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.location);
    TestHttpServer namenode([&](const TestHttpServer::Request&) {
      TestHttpServer::Reply reply;
      reply.status = 307;
      reply.headers = {{"Location", c.location}};
      return reply;
    });
    auto client = Client(absl::StrCat("127.0.0.1:", namenode.port()), "http");
    auto uploaded = client->UploadString("the runtime bundle", "/user/u/f");
    ASSERT_FALSE(uploaded.ok());
    EXPECT_EQ(uploaded.status().code(), absl::StatusCode::kPermissionDenied) << uploaded.status();
    EXPECT_THAT(uploaded.status().message(), HasSubstr(c.reason));
    EXPECT_THAT(uploaded.status().message(), ::testing::Not(HasSubstr("secret")));
  }
  EXPECT_TRUE(datanode.requests().empty());
}

TEST(DataNodeUrlTest, AddressesNoDataNodeHasAreRefusedInAnySpelling) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"http://169.254.169.254:9864/latest/meta-data/", "link-local"},
      {"http://2852039166:9864/latest/meta-data/", "link-local"},
      {"http://0xa9fea9fe:9864/x", "link-local"},
      {"http://[fe80::1]:9864/x", "link-local"},
      {"http://[fe80::1%25eth0]:9864/x", "zone"},
      {"http://[::ffff:169.254.169.254]:9864/x", "link-local"},
      {"http://224.0.0.1:9864/x", "multicast"},
      {"http://0.0.0.0:9864/x", "unspecified"},
      {"http://u@dn1:9864/x", "user information"},
      {"https://dn1:9865/x", "not to an http:// DataNode"},
  };
  for (const auto& [url, reason] : cases) {
    EXPECT_THAT(BadDataNodeUrl(url, "http"), HasSubstr(reason)) << url;
  }
  for (const char* fine : {"http://dn1.example:9864/webhdfs/v1/f?op=OPEN", "http://10.1.2.3:9864/",
                           "http://[2001:db8::1]:9864/x", "HTTP://dn1:9864/x"}) {
    EXPECT_EQ(BadDataNodeUrl(fine, "http"), "") << fine;
  }
}

TEST_F(WebHdfsRedirectTest, APlainDataNodeRedirectIsFollowed) {
  TestHttpServer datanode([](const TestHttpServer::Request&) {
    TestHttpServer::Reply reply;
    reply.status = 201;
    return reply;
  });
  for (const char* host : {"127.0.0.1", "localhost"}) {
    SCOPED_TRACE(host);
    TestHttpServer namenode([&](const TestHttpServer::Request& r) {
      TestHttpServer::Reply reply;
      if (r.Param("op") == "GETFILESTATUS") {
        reply.body = R"({"FileStatus":{"pathSuffix":"","type":"FILE","length":18,"owner":"u",)"
                     R"("group":"g","permission":"644","modificationTime":1,"replication":1,)"
                     R"("blockSize":1}})";
        return reply;
      }
      reply.status = 307;
      reply.headers = {{"Location", absl::StrCat("http://", host, ":", datanode.port(),
                                                 "/webhdfs/v1/user/u/f?op=CREATE")}};
      return reply;
    });
    auto client = Client(absl::StrCat("127.0.0.1:", namenode.port()), "http");
    auto uploaded = client->UploadString("the runtime bundle", "/user/u/f");
    EXPECT_TRUE(uploaded.ok()) << uploaded.status();
  }
  EXPECT_EQ(datanode.requests().size(), 2u);
}

// The HTTP client's own guard, for every caller that follows redirects.
TEST_F(WebHdfsRedirectTest, TheHttpClientFollowsNoRedirectToAFileUrl) {
  TestHttpServer server([&](const TestHttpServer::Request&) {
    TestHttpServer::Reply reply;
    reply.status = 307;
    reply.headers = {{"Location", "file://" + target_}};
    return reply;
  });
  http::Client client;
  http::Request request;
  request.method = http::Method::kPut;
  request.url = server.url() + "/upload";
  request.body = "the runtime bundle";
  request.follow_redirects = true;
  auto r = client.Do(request);
  EXPECT_FALSE(r.ok() && r->status / 100 == 2) << "followed to " << r->url;
  EXPECT_FALSE(TargetExists());
  // Not even a file:// URL given directly.
  request.follow_redirects = false;
  request.url = "file://" + target_;
  EXPECT_FALSE(client.Do(request).ok());
  EXPECT_FALSE(TargetExists());
}

TEST_F(WebHdfsRedirectTest, TheHttpClientFollowsNoRedirectFromHttpsToHttp) {
  TestHttpServer plain([](const TestHttpServer::Request&) {
    TestHttpServer::Reply reply;
    reply.body = "plain";
    return reply;
  });
  TlsRedirector tls(dir_, plain.url() + "/landed");
  http::Client::Options options;
  options.ca_file = tls.ca_file();
  http::Client client(options);
  http::Request request;
  request.url = absl::StrCat("https://", tls.address(), "/start?delegation=secret");
  request.follow_redirects = true;
  auto r = client.Do(request);
  EXPECT_FALSE(r.ok() && r->status == 200) << "followed to " << r->url;
  EXPECT_GE(tls.answered(), 1) << "the TLS server was never reached";
  EXPECT_TRUE(plain.requests().empty());
}

}  // namespace
}  // namespace tony::hdfs
