// Copyright libtony authors.

#include "hdfs/webhdfs_client.h"

#include <memory>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "hdfs/remote_exception.h"
#include "tests/http/test_http_server.h"

namespace tony::hdfs {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::tony::testing::TestHttpServer;
using ::tony::testing::UnusedLoopbackPort;

std::string Remote(const std::string& exception, const std::string& message) {
  return absl::StrCat(R"({"RemoteException":{"exception":")", exception,
                      R"(","javaClassName":"org.apache.hadoop.x.)", exception, R"(","message":")",
                      message, R"("}})");
}

TEST(RemoteExceptionTest, MapsHadoopExceptions) {
  auto code = [](const std::string& exception, int http = 400) {
    return WebHdfsErrorStatus(http, Remote(exception, "msg"), "op").code();
  };
  EXPECT_EQ(code("FileNotFoundException", 404), absl::StatusCode::kNotFound);
  EXPECT_EQ(code("AccessControlException", 403), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(code("FileAlreadyExistsException", 403), absl::StatusCode::kAlreadyExists);
  EXPECT_EQ(code("SafeModeException", 403), absl::StatusCode::kUnavailable);
  EXPECT_EQ(code("StandbyException", 403), absl::StatusCode::kUnavailable);
  EXPECT_EQ(code("PathIsNotEmptyDirectoryException", 403), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(code("DSQuotaExceededException", 403), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(code("IllegalArgumentException", 400), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(code("IOException", 500), absl::StatusCode::kInternal);

  absl::Status safe = WebHdfsErrorStatus(
      403, Remote("RetriableException", "Cannot create file. Name node is in safe mode."),
      "WebHDFS CREATE /x");
  EXPECT_EQ(safe.code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(safe.message(), HasSubstr("NameNode is in safe mode"));

  absl::Status nf = WebHdfsErrorStatus(
      404, Remote("FileNotFoundException", "File does not exist: /x"), "WebHDFS GETFILESTATUS /x");
  EXPECT_EQ(nf.message(),
            "WebHDFS GETFILESTATUS /x: FileNotFoundException: File does not exist: /x");

  // A DataNode sends the Java stack along: only the message is kept.
  absl::Status placed = WebHdfsErrorStatus(
      403,
      Remote("IOException",
             "File /x could only be written to 0 of the 1 minReplication nodes.\\n\\tat "
             "org.apache.hadoop.hdfs.server.blockmanagement.BlockManager.chooseTarget4NewBlock("
             "BlockManager.java:2487)\\n\\tat org.apache.hadoop.ipc.Server.call(Server.java:1)"),
      "WebHDFS CREATE /x");
  EXPECT_EQ(placed.message(),
            "WebHDFS CREATE /x: IOException: File /x could only be written to 0 of the 1 "
            "minReplication nodes.");

  // Not a RemoteException: the HTTP status decides.
  EXPECT_EQ(WebHdfsErrorStatus(503, "<html>busy</html>", "op").code(),
            absl::StatusCode::kUnavailable);
}

TEST(FileStatusTest, Parses) {
  auto json = http::ParseJson(
      R"({"accessTime":1,"blockSize":134217728,"childrenNum":0,"fileId":16386,"group":"supergroup",
          "length":10485760,"modificationTime":1700000000123,"owner":"u","pathSuffix":"",
          "permission":"1755","replication":1,"storagePolicy":0,"type":"FILE"})",
      "t");
  ASSERT_TRUE(json.ok());
  auto s = ParseFileStatus(*json, "/user/u/f.bin");
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->path, "/user/u/f.bin");
  EXPECT_EQ(s->name, "f.bin");
  EXPECT_EQ(s->type, FileType::kFile);
  EXPECT_EQ(s->length, 10485760);
  EXPECT_EQ(s->modification_time_ms, 1700000000123);
  EXPECT_EQ(s->permission, 01755);
  EXPECT_EQ(s->owner, "u");
  EXPECT_EQ(s->block_size, 134217728);

  auto bad = http::ParseJson(R"({"pathSuffix":"x","type":"FILE","length":"big"})", "t");
  EXPECT_EQ(ParseFileStatus(*bad, "/d").status().code(), absl::StatusCode::kInvalidArgument);
}

// A fake NameNode + DataNode pair on loopback, enough to drive the two-step protocols.
class FakeHdfs {
 public:
  FakeHdfs()
      : datanode_([this](const TestHttpServer::Request& r) { return DataNode(r); }),
        namenode_([this](const TestHttpServer::Request& r) { return NameNode(r); }) {}

  std::string namenode() const { return absl::StrCat("127.0.0.1:", namenode_.port()); }
  TestHttpServer& namenode_server() { return namenode_; }
  std::string stored;
  bool standby = false;
  // PUTs the DataNode refuses as a busy cluster's DataNode can, before it takes one.
  int refuse_puts = 0;
  bool refuse_rename = false;
  int deletes = 0;
  // When set, the DataNode holds every PUT until it is notified (or a minute passed).
  absl::Notification* hold_puts = nullptr;

 private:
  TestHttpServer::Reply NameNode(const TestHttpServer::Request& r) {
    TestHttpServer::Reply reply;
    if (standby) {
      reply.status = 403;
      reply.body = Remote("StandbyException", "Operation category READ is not supported");
      return reply;
    }
    std::string op = r.Param("op").value_or("");
    if (op == "CREATE" || op == "OPEN") {
      EXPECT_TRUE(r.body.empty());
      reply.status = 307;
      reply.headers = {
          {"Location", absl::StrCat(datanode_.url(), r.path, "?op=", op, "&namenoderpcaddress=x")}};
    } else if (op == "GETFILESTATUS" && absl::StartsWith(r.path, "/webhdfs/v1/user/u/")) {
      reply.body = absl::StrCat(
          R"({"FileStatus":{"length":)", stored.size(),
          R"(,"modificationTime":42,"pathSuffix":"","permission":"644","type":"FILE"}})");
    } else if (op == "GETFILESTATUS") {
      reply.status = 404;
      reply.body = Remote("FileNotFoundException", "File does not exist: /nope");
    } else if (op == "LISTSTATUS") {
      reply.body = R"({"FileStatuses":{"FileStatus":[
          {"length":0,"modificationTime":1,"pathSuffix":"a","permission":"755","type":"DIRECTORY"},
          {"length":3,"modificationTime":2,"pathSuffix":"b","permission":"600","type":"FILE"}]}})";
    } else if (op == "RENAME") {
      reply.status = refuse_rename ? 403 : 200;  // with rename options: no body
      if (refuse_rename) reply.body = Remote("AccessControlException", "Permission denied");
    } else if (op == "MKDIRS" || op == "DELETE") {
      if (op == "DELETE") ++deletes;
      reply.body = R"({"boolean":true})";
    } else {
      reply.status = 400;
      reply.body = Remote("IllegalArgumentException", "Invalid value for webhdfs parameter");
    }
    return reply;
  }

  TestHttpServer::Reply DataNode(const TestHttpServer::Request& r) {
    TestHttpServer::Reply reply;
    if (hold_puts != nullptr && r.method == "PUT") {
      hold_puts->WaitForNotificationWithTimeout(absl::Minutes(1));
    }
    if (r.method == "PUT" && refuse_puts > 0) {
      --refuse_puts;
      reply.status = 403;
      reply.body =
          Remote("IOException",
                 "File /user/u/f could only be written to 0 of the 1 minReplication nodes. "
                 "There are 1 datanode(s) running and 1 node(s) are excluded in this "
                 "operation.");
    } else if (r.method == "PUT") {
      stored = r.body;
      reply.status = 201;
    } else {
      reply.body = stored;
    }
    return reply;
  }

  TestHttpServer datanode_;
  TestHttpServer namenode_;
};

std::unique_ptr<WebHdfsClient> ClientFor(std::vector<std::string> namenodes) {
  WebHdfsClient::Options options;
  options.namenodes = std::move(namenodes);
  options.user = "u";
  options.default_fs = "hdfs://nn:8020";
  auto client = WebHdfsClient::Create(options);
  EXPECT_TRUE(client.ok()) << client.status();
  return *std::move(client);
}

TEST(WebHdfsClientTest, TwoStepCreateAndOpen) {
  FakeHdfs fake;
  auto client = ClientFor({fake.namenode()});
  UploadOptions upload;
  upload.permission = 0600;
  auto status = client->UploadString("hello", "hdfs://nn:8020/user/u//f/", upload);
  ASSERT_TRUE(status.ok()) << status.status();
  EXPECT_EQ(fake.stored, "hello");
  EXPECT_EQ(status->length, 5);
  EXPECT_EQ(status->modification_time_ms, 42);
  auto create = fake.namenode_server().requests().at(0);
  EXPECT_EQ(create.method, "PUT");
  EXPECT_EQ(create.path, "/webhdfs/v1/user/u/f");
  EXPECT_EQ(create.Param("user.name"), "u");
  EXPECT_EQ(create.Param("overwrite"), "true");
  EXPECT_EQ(create.Param("permission"), "600");
  EXPECT_EQ(*client->ReadToString("/user/u/f"), "hello");
}

// A DataNode that could not place the block: the empty file is removed and the upload tried
// again, a bounded number of times; any other refusal is final at once.
TEST(WebHdfsClientTest, AnUploadTheDataNodeCouldNotPlaceIsTriedAgain) {
  FakeHdfs fake;
  auto client = ClientFor({fake.namenode()});
  fake.refuse_puts = 1;
  auto status = client->UploadString("hello", "/user/u/f");
  ASSERT_TRUE(status.ok()) << status.status();
  EXPECT_EQ(fake.stored, "hello");
  EXPECT_EQ(fake.deletes, 1);

  fake.refuse_puts = 5;
  auto failed = client->UploadString("again", "/user/u/f");
  EXPECT_THAT(failed.status().message(), HasSubstr("could only be written to 0 of the 1"));
  EXPECT_EQ(fake.refuse_puts, 2);  // three tries
  EXPECT_EQ(fake.deletes, 3);
}

// Past its bound, a bounded client asks nothing; before it, it works as the client it came from.
TEST(WebHdfsClientTest, ABoundedClientAsksNothingPastItsDeadline) {
  FakeHdfs fake;
  auto client = ClientFor({fake.namenode()});
  std::unique_ptr<WebHdfsClient> passed = client->BoundedBy(absl::InfinitePast());
  EXPECT_EQ(passed->Mkdirs("/user/u/d").code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_EQ(passed->Stat("/user/u/f").status().code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_EQ(passed->UploadString("x", "/user/u/f").status().code(),
            absl::StatusCode::kDeadlineExceeded);
  EXPECT_EQ(passed->ReadToString("/user/u/f").status().code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_TRUE(fake.namenode_server().requests().empty());

  std::unique_ptr<WebHdfsClient> open = client->BoundedBy(absl::InfiniteFuture());
  ASSERT_TRUE(open->UploadString("hello", "/user/u/f").ok());
  EXPECT_EQ(*open->ReadToString("/user/u/f"), "hello");
  // A bound on a bound keeps the earlier one.
  EXPECT_EQ(passed->BoundedBy(absl::InfiniteFuture())->Mkdirs("/user/u/d").code(),
            absl::StatusCode::kDeadlineExceeded);
}

// The bound ends a DataNode transfer too, not only the NameNode's part of an upload.
TEST(WebHdfsClientTest, ABoundedUploadEndsAtTheDataNodeByItsDeadline) {
  // Declared before the fake: the fake's server thread may still be inside the wait on it when
  // the test body ends, and the fake's destructor joins that thread.
  absl::Notification release;
  FakeHdfs fake;
  fake.hold_puts = &release;
  auto client = ClientFor({fake.namenode()});
  auto uploaded =
      client->BoundedBy(absl::Now() + absl::Seconds(2))->UploadString("hello", "/user/u/f");
  release.Notify();
  EXPECT_EQ(uploaded.status().code(), absl::StatusCode::kDeadlineExceeded) << uploaded.status();
  EXPECT_THAT(uploaded.status().message(), HasSubstr("DataNode"));
}

TEST(WebHdfsClientTest, DelegationTokenReplacesUserName) {
  FakeHdfs fake;
  WebHdfsClient::Options options;
  options.namenodes = {fake.namenode()};
  options.user = "u";
  options.spnego = true;  // a token wins over SPNEGO: containers have no ticket
  options.delegation = "TOKEN_url-safe";
  auto client = WebHdfsClient::Create(options);
  ASSERT_TRUE(client.ok()) << client.status();
  auto uploaded = (*client)->UploadString("x", "/user/u/f");
  ASSERT_TRUE(uploaded.ok()) << uploaded.status();
  auto create = fake.namenode_server().requests().at(0);
  EXPECT_EQ(create.Param("delegation"), "TOKEN_url-safe");
  EXPECT_EQ(create.Param("user.name"), std::nullopt);
}

// A replacement is uploaded beside the file under a temporary name that cannot collide, then
// renamed over it in one NameNode operation; a failed rename removes the temporary file.
TEST(WebHdfsClientTest, ReplaceWithStringUploadsBesideThenRenamesOver) {
  FakeHdfs fake;
  auto client = ClientFor({fake.namenode()});
  UploadOptions private_file;
  private_file.permission = 0600;
  auto status = client->ReplaceWithString("hello", "/user/u/f", private_file);
  ASSERT_TRUE(status.ok()) << status.status();
  std::vector<TestHttpServer::Request> requests = fake.namenode_server().requests();
  ASSERT_EQ(requests.size(), 4u);  // CREATE, GETFILESTATUS of the upload, RENAME, GETFILESTATUS
  EXPECT_EQ(requests[0].Param("op"), "CREATE");
  EXPECT_THAT(requests[0].path,
              ::testing::MatchesRegex("/webhdfs/v1/user/u/\\.f\\.[0-9]+-[0-9]+\\.tmp"));
  EXPECT_EQ(requests[0].Param("overwrite"), "false");
  EXPECT_EQ(requests[0].Param("permission"), "600");
  EXPECT_EQ(requests[2].Param("op"), "RENAME");
  EXPECT_EQ(requests[2].path, requests[0].path);
  EXPECT_EQ(requests[2].Param("destination"), "%2Fuser%2Fu%2Ff");
  EXPECT_EQ(requests[2].Param("renameoptions"), "OVERWRITE");
  EXPECT_EQ(requests[3].path, "/webhdfs/v1/user/u/f");
  EXPECT_EQ(fake.deletes, 0);

  fake.refuse_rename = true;
  auto refused = client->ReplaceWithString("hello", "/user/u/f", private_file);
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kPermissionDenied) << refused.status();
  EXPECT_EQ(fake.deletes, 1);  // the temporary file
}

TEST(WebHdfsClientTest, ListMkdirsDeleteAndErrors) {
  FakeHdfs fake;
  auto client = ClientFor({fake.namenode()});
  auto list = client->List("/d");
  ASSERT_TRUE(list.ok()) << list.status();
  ASSERT_EQ(list->size(), 2u);
  EXPECT_EQ((*list)[0].path, "/d/a");
  EXPECT_TRUE((*list)[0].is_directory());
  EXPECT_EQ((*list)[1].permission, 0600);
  EXPECT_TRUE(client->Mkdirs("/d/e", 0755).ok());
  EXPECT_TRUE(*client->Delete("/d", true));
  EXPECT_EQ(client->Stat("/nope").status().code(), absl::StatusCode::kNotFound);
  EXPECT_FALSE(*client->Exists("/nope"));
  EXPECT_EQ(client->Delete("/", true).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(client->Stat("hdfs://other:8020/x").status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(client->Stat("s3a://bucket/x").status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(client->Stat("relative").status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(WebHdfsClientTest, UnreachableNameNodeIsUnavailableNamingIt) {
  std::string nn = absl::StrCat("127.0.0.1:", UnusedLoopbackPort());
  auto client = ClientFor({nn});
  auto status = client->Stat("/x");
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(status.status().message(), HasSubstr("NameNode at " + nn + " is unreachable"));
}

TEST(WebHdfsClientTest, FailsOverPastUnreachableAndStandbyNameNodes) {
  FakeHdfs active;
  FakeHdfs standby;
  standby.standby = true;
  std::string dead = absl::StrCat("127.0.0.1:", UnusedLoopbackPort());
  auto client = ClientFor({dead, standby.namenode(), active.namenode()});
  EXPECT_TRUE(client->Mkdirs("/x").ok());
  EXPECT_EQ(active.namenode_server().requests().size(), 1u);
  // The active NameNode is remembered.
  EXPECT_TRUE(client->Mkdirs("/y").ok());
  EXPECT_EQ(standby.namenode_server().requests().size(), 1u);

  auto all_down = ClientFor({dead, standby.namenode()});
  auto status = all_down->Stat("/x");
  EXPECT_EQ(status.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(status.status().message(), HasSubstr("is in standby"));
}

TEST(WebHdfsClientTest, OptionsFromConfiguration) {
  conf::Configuration conf;
  conf.Set("fs.defaultFS", "hdfs://localhost:18800");
  conf.Set("dfs.namenode.http-address", "localhost:18801");
  auto options = WebHdfsClient::OptionsFromConfiguration(conf);
  ASSERT_TRUE(options.ok()) << options.status();
  EXPECT_THAT(options->namenodes, ElementsAre("localhost:18801"));
  EXPECT_EQ(options->scheme, "http");
  EXPECT_EQ(options->default_fs, "hdfs://localhost:18800");
  EXPECT_FALSE(options->spnego);
  conf.Set("hadoop.security.authentication", "kerberos");
  auto kerberos = WebHdfsClient::OptionsFromConfiguration(conf);
  ASSERT_TRUE(kerberos.ok()) << kerberos.status();
  EXPECT_TRUE(kerberos->spnego);
  conf.Set("hadoop.security.authentication", "ldap");
  EXPECT_EQ(WebHdfsClient::OptionsFromConfiguration(conf).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(WebHdfsClient::Create(WebHdfsClient::Options()).status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace tony::hdfs
