// Copyright libtony authors.

#include "http/client.h"

#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "http/json.h"
#include "tests/http/test_http_server.h"

namespace tony::http {
namespace {

using ::testing::HasSubstr;
using ::tony::testing::TestHttpServer;
using ::tony::testing::UnusedLoopbackPort;

std::string TempPath(const std::string& name) {
  const char* base = std::getenv("TMPDIR");
  return absl::StrCat(base && *base ? base : "/tmp", "/tony-http-test-", getpid(), "-", name);
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(HttpClientTest, GetReturnsStatusHeadersAndBody) {
  TestHttpServer server([](const TestHttpServer::Request& r) {
    TestHttpServer::Reply reply;
    reply.headers = {{"Content-Type", "application/json"},
                     {"X-Echo", r.Header("x-in").value_or("")}};
    reply.body = R"({"path":")" + r.path + "\"}";
    return reply;
  });
  Client client;
  auto response = client.Get(server.url() + "/a/b?x=1", {{"X-In", "hello"}});
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(response->status, 200);
  EXPECT_TRUE(response->ok());
  EXPECT_EQ(response->Header("content-type"), "application/json");
  EXPECT_EQ(response->Header("X-ECHO"), "hello");
  auto json = ParseJson(response->body, "reply");
  ASSERT_TRUE(json.ok());
  EXPECT_EQ(*JsonString(*json, "path", "reply"), "/a/b");
  EXPECT_EQ(server.requests().at(0).query, "x=1");
}

TEST(HttpClientTest, MethodsSendBodies) {
  TestHttpServer server([](const TestHttpServer::Request& r) {
    TestHttpServer::Reply reply;
    reply.status = r.method == "PUT" ? 201 : 200;
    reply.body = r.method + ":" + r.body;
    return reply;
  });
  Client client;
  auto put = client.Put(server.url() + "/p", "put-body");
  ASSERT_TRUE(put.ok());
  EXPECT_EQ(put->status, 201);
  EXPECT_EQ(put->body, "PUT:put-body");
  auto post =
      client.Post(server.url() + "/p", R"({"a":1})", {{"Content-Type", "application/json"}});
  ASSERT_TRUE(post.ok());
  EXPECT_EQ(post->body, R"(POST:{"a":1})");
  auto del = client.Delete(server.url() + "/p");
  ASSERT_TRUE(del.ok());
  EXPECT_EQ(del->body, "DELETE:");
  auto empty_put = client.Put(server.url() + "/p", "");
  ASSERT_TRUE(empty_put.ok());
  EXPECT_EQ(empty_put->body, "PUT:");
  auto requests = server.requests();
  ASSERT_EQ(requests.size(), 4u);
  EXPECT_EQ(requests[1].Header("content-type"), "application/json");
  EXPECT_EQ(requests[3].Header("content-length"), "0");
  EXPECT_FALSE(requests[0].Header("expect").has_value());
}

TEST(HttpClientTest, RedirectsAreFollowedOnlyWhenAsked) {
  TestHttpServer target([](const TestHttpServer::Request& r) {
    TestHttpServer::Reply reply;
    reply.status = 201;
    reply.body = "landed:" + r.body;
    return reply;
  });
  TestHttpServer redirector([&](const TestHttpServer::Request& r) {
    TestHttpServer::Reply reply;
    reply.status = 307;
    reply.headers = {{"Location", target.url() + "/dest"}};
    reply.body = "redirect body";
    return reply;
  });
  Client client;
  Request request;
  request.method = Method::kPut;
  request.url = redirector.url() + "/src";
  request.body = "payload";
  auto manual = client.Do(request);
  ASSERT_TRUE(manual.ok());
  EXPECT_EQ(manual->status, 307);
  EXPECT_EQ(manual->Header("location"), target.url() + "/dest");
  EXPECT_TRUE(target.requests().empty());

  request.follow_redirects = true;
  auto followed = client.Do(request);
  ASSERT_TRUE(followed.ok()) << followed.status();
  EXPECT_EQ(followed->status, 201);
  EXPECT_EQ(followed->body, "landed:payload");  // the body was re-sent after the redirect
  EXPECT_EQ(followed->url, target.url() + "/dest");
}

TEST(HttpClientTest, RedirectLoopIsFailedPrecondition) {
  TestHttpServer server([](const TestHttpServer::Request& r) {
    TestHttpServer::Reply reply;
    reply.status = 307;
    reply.headers = {{"Location", "/again"}};
    return reply;
  });
  Client client;
  Request request;
  request.url = server.url() + "/start";
  request.follow_redirects = true;
  request.max_redirects = 3;
  auto r = client.Do(request);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kFailedPrecondition);
}

TEST(HttpClientTest, StreamsUploadFromFileAndDownloadToFile) {
  std::string data(3 * 1024 * 1024 + 17, '\0');
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<char>((i * 131) % 251);
  std::string upload = TempPath("upload");
  std::string download = TempPath("download");
  std::ofstream(upload, std::ios::binary) << data;
  std::string stored;
  TestHttpServer server([&](const TestHttpServer::Request& r) {
    TestHttpServer::Reply reply;
    if (r.method == "PUT") {
      stored = r.body;
      reply.status = 201;
    } else if (r.path == "/missing") {
      reply.status = 404;
      reply.body = "no such thing";
    } else {
      reply.body = stored;
    }
    return reply;
  });
  Client client;
  Request put;
  put.method = Method::kPut;
  put.url = server.url() + "/file";
  put.body_file = upload;
  auto put_response = client.Do(put);
  ASSERT_TRUE(put_response.ok()) << put_response.status();
  EXPECT_EQ(put_response->status, 201);
  EXPECT_EQ(stored, data);

  Request get;
  get.url = server.url() + "/file";
  get.response_file = download;
  auto get_response = client.Do(get);
  ASSERT_TRUE(get_response.ok()) << get_response.status();
  EXPECT_EQ(get_response->file_bytes, static_cast<int64_t>(data.size()));
  EXPECT_TRUE(get_response->body.empty());
  EXPECT_EQ(ReadFile(download), data);

  // An error reply stays in memory and leaves the file alone.
  get.url = server.url() + "/missing";
  auto missing = client.Do(get);
  ASSERT_TRUE(missing.ok());
  EXPECT_EQ(missing->status, 404);
  EXPECT_EQ(missing->body, "no such thing");
  EXPECT_EQ(ReadFile(download), data);
  EXPECT_EQ(HttpError(*missing, "GET /missing").code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(HttpError(*missing, "GET /missing").message(),
              HasSubstr("GET /missing: HTTP 404: no such thing"));

  put.body_file = TempPath("does-not-exist");
  EXPECT_EQ(client.Do(put).status().code(), absl::StatusCode::kNotFound);
  std::remove(upload.c_str());
  std::remove(download.c_str());
}

TEST(HttpClientTest, ConnectionRefusedIsUnavailable) {
  Client client;
  int port = UnusedLoopbackPort();
  absl::Time start = absl::Now();
  auto r = client.Get(absl::StrCat("http://127.0.0.1:", port, "/x?secret=1"));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(r.status().message(), HasSubstr(absl::StrCat("GET http://127.0.0.1:", port)));
  EXPECT_THAT(r.status().message(), ::testing::Not(HasSubstr("secret")));
  EXPECT_LT(absl::Now() - start, absl::Seconds(8));  // not the 10 s connect timeout
}

TEST(HttpClientTest, TheEgressGuardRefusesBeforeConnectingAlsoAfterARedirect) {
  TestHttpServer server([](const TestHttpServer::Request& r) {
    TestHttpServer::Reply reply;
    reply.status = 307;
    // Off the allowed network: nothing may be sent there.
    reply.headers = {{"Location", "http://127.0.0.2:9/elsewhere?delegation=token"}};
    return reply;
  });
  setenv("TONY_ALLOWED_NETWORKS", "127.0.0.1/32", 1);
  Client client;
  Request request;
  request.url = server.url() + "/start";
  request.follow_redirects = true;
  auto redirected = client.Do(request);
  ASSERT_FALSE(redirected.ok());
  EXPECT_EQ(redirected.status().code(), absl::StatusCode::kPermissionDenied);
  EXPECT_THAT(redirected.status().message(), HasSubstr("127.0.0.2"));
  EXPECT_THAT(redirected.status().message(), ::testing::Not(HasSubstr("token")));
  EXPECT_EQ(server.requests().size(), 1u);

  // A new client: the first one may keep its (allowed) connection to the server alive.
  setenv("TONY_ALLOWED_NETWORKS", "10.0.0.0/8", 1);
  Client fresh;
  auto refused = fresh.Get(server.url() + "/again");
  unsetenv("TONY_ALLOWED_NETWORKS");
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kPermissionDenied);
  EXPECT_THAT(refused.status().message(), HasSubstr("TONY_ALLOWED_NETWORKS=10.0.0.0/8"));
  EXPECT_EQ(server.requests().size(), 1u) << "a refused destination got a request";
}

TEST(HttpClientTest, UnresolvableHostIsUnavailable) {
  Client client;
  Request request;
  request.url = "http://no-such-host.invalid/x";
  request.timeout = absl::Seconds(20);
  auto r = client.Do(request);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kUnavailable) << r.status();
}

TEST(HttpClientTest, SlowServerIsDeadlineExceeded) {
  TestHttpServer server([](const TestHttpServer::Request&) {
    TestHttpServer::Reply reply;
    reply.delay = absl::Seconds(30);
    return reply;
  });
  Client client;
  Request request;
  request.url = server.url() + "/slow";
  request.timeout = absl::Milliseconds(300);
  absl::Time start = absl::Now();
  auto r = client.Do(request);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kDeadlineExceeded) << r.status();
  EXPECT_LT(absl::Now() - start, absl::Seconds(20));  // not the default 60 s
}

TEST(HttpClientTest, HangUpIsUnavailable) {
  TestHttpServer server([](const TestHttpServer::Request&) {
    TestHttpServer::Reply reply;
    reply.hang_up = true;
    return reply;
  });
  Client client;
  auto r = client.Get(server.url() + "/x");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kUnavailable) << r.status();
}

TEST(HttpClientTest, MalformedUrlIsInvalidArgument) {
  Client client;
  EXPECT_EQ(client.Get("notaurl://x").status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(HttpClientTest, OversizedBodyIsResourceExhausted) {
  TestHttpServer server([](const TestHttpServer::Request&) {
    TestHttpServer::Reply reply;
    reply.body = std::string(10000, 'x');
    return reply;
  });
  Client client;
  Request request;
  request.url = server.url();
  request.max_response_bytes = 100;
  EXPECT_EQ(client.Do(request).status().code(), absl::StatusCode::kResourceExhausted);
}

TEST(HttpClientTest, ReusesConnections) {
  TestHttpServer server([](const TestHttpServer::Request&) { return TestHttpServer::Reply(); });
  Client client;
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(client.Get(server.url() + "/x").ok());
  EXPECT_EQ(server.requests().size(), 5u);
  EXPECT_EQ(server.connections(), 1);
}

TEST(HttpStatusTest, MapsCodes) {
  EXPECT_EQ(HttpStatusToCode(200), absl::StatusCode::kOk);
  EXPECT_EQ(HttpStatusToCode(404), absl::StatusCode::kNotFound);
  EXPECT_EQ(HttpStatusToCode(403), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(HttpStatusToCode(503), absl::StatusCode::kUnavailable);
  EXPECT_EQ(HttpStatusToCode(500), absl::StatusCode::kInternal);
  EXPECT_EQ(HttpStatusToCode(418), absl::StatusCode::kFailedPrecondition);
}

TEST(UrlTest, Encodes) {
  EXPECT_EQ(UrlEncode("a b/c?d=e&f~"), "a%20b%2Fc%3Fd%3De%26f~");
  EXPECT_EQ(UrlEncodePath("/user/a b/%x"), "/user/a%20b/%25x");
  EXPECT_EQ(RedactUrl("http://h/p?delegation=secret"), "http://h/p?...");
  EXPECT_EQ(RedactUrl("http://h/p"), "http://h/p");
}

TEST(JsonTest, ParsesWithoutExceptions) {
  EXPECT_EQ(ParseJson("{not json", "doc").status().code(), absl::StatusCode::kInvalidArgument);
  auto j = ParseJson(R"({"s":"x","i":12345678901,"b":true,"n":null})", "doc");
  ASSERT_TRUE(j.ok());
  EXPECT_EQ(*JsonString(*j, "s", "doc"), "x");
  EXPECT_EQ(*JsonInt(*j, "i", "doc"), 12345678901);
  EXPECT_TRUE(*JsonBool(*j, "b", "doc"));
  EXPECT_FALSE(JsonInt(*j, "s", "doc").ok());
  EXPECT_THAT(JsonString(*j, "missing", "doc").status().message(), HasSubstr("\"missing\""));
  EXPECT_EQ(JsonField(*j, "missing"), nullptr);
}

}  // namespace
}  // namespace tony::http
