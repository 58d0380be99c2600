// Copyright libtony authors.
//
// What the TensorBoard launcher refuses to read on a cluster, against a fake NameNode: an output
// path outside HDFS, another user's directory, and a listing whose entry names would lead out
// of the cache directory. None of these reaches the command (it would fail the test if run).

#include "history/tensorboard_launcher.h"

#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <optional>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/http/test_http_server.h"

namespace tony::history {
namespace {

using ::testing::HasSubstr;
using ::tony::testing::TestHttpServer;

// A NameNode whose /out is owned by `owner` and lists `entry` (a file of 3 bytes), which it
// serves (as its own DataNode) only when `serve` is set.
class FakeNameNode {
 public:
  FakeNameNode(std::string owner, std::string entry, bool serve = false)
      : owner_(std::move(owner)),
        entry_(std::move(entry)),
        serve_(serve),
        server_([this](const auto& r) { return Answer(r); }) {}
  std::string address() const { return absl::StrCat("127.0.0.1:", server_.port()); }

 private:
  TestHttpServer::Reply Answer(const TestHttpServer::Request& r) {
    TestHttpServer::Reply reply;
    const std::string op = r.Param("op").value_or("");
    if (op == "GETFILESTATUS") {
      reply.body = absl::StrCat(
          R"({"FileStatus":{"length":0,"modificationTime":1,"pathSuffix":"","owner":")", owner_,
          R"(","permission":"755","type":"DIRECTORY"}})");
    } else if (op == "LISTSTATUS") {
      reply.body = absl::StrCat(
          R"({"FileStatuses":{"FileStatus":[{"length":3,"modificationTime":1,"pathSuffix":")",
          entry_, R"(","owner":"alice","permission":"644","type":"FILE"}]}})");
    } else if (op == "OPEN" && serve_ && r.Param("dn").has_value()) {
      reply.body = "abc";
    } else if (op == "OPEN" && serve_) {
      reply.status = 307;
      reply.headers.emplace_back("Location",
                                 absl::StrCat("http://", address(), r.path, "?op=OPEN&dn=1"));
    } else {
      reply.status = 400;  // OPEN, above all: nothing is to be read
    }
    return reply;
  }

  const std::string owner_;
  const std::string entry_;
  const bool serve_;
  TestHttpServer server_;
};

class TensorBoardLauncherTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = ::testing::TempDir() + "/tensorboard_launcher_test.XXXXXX";
    dir_ = mkdtemp(tmpl.data());
  }
  void TearDown() override { (void)system(absl::StrCat("rm -rf '", dir_, "'").c_str()); }

  absl::Status Launch(const FakeNameNode& nn, const std::string& output,
                      const std::string& user = "alice", const std::string& command = "exit 1; :") {
    hdfs::WebHdfsClient::Options o;
    o.namenodes = {nn.address()};
    o.user = "historyserver";
    o.default_fs = "hdfs://nn:8020";
    auto client = hdfs::WebHdfsClient::Create(o);
    EXPECT_TRUE(client.ok()) << client.status();
    TensorBoardLauncherOptions options;
    options.command = command;  // by default never meant to run
    options.cache_dir = dir_ + "/cache";
    TensorBoardLauncher launch = MakeTensorBoardLauncher(options, client->get());
    return launch(TensorBoardJob{"application_1_0001", output, user}).status();
  }
  std::string dir_;
};

TEST_F(TensorBoardLauncherTest, OnAClusterOnlyTheJobUsersHdfsDirectoryIsRead) {
  FakeNameNode nn("alice", "events.out.tfevents.1");
  for (const std::string output : {"file:///etc", "gs://bucket/run", "relative/dir"}) {
    absl::Status s = Launch(nn, output);
    EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << output << ": " << s;
    EXPECT_THAT(s.message(), HasSubstr("is not in HDFS")) << output;
  }
  FakeNameNode foreign("mallory", "events.out.tfevents.1");
  absl::Status s = Launch(foreign, "hdfs://nn:8020/out");
  EXPECT_EQ(s.code(), absl::StatusCode::kPermissionDenied) << s;
  EXPECT_THAT(s.message(), HasSubstr("belongs to mallory, not to the job's user alice"));
}

TEST_F(TensorBoardLauncherTest, AJobWhoseUserIsUnknownReadsNothing) {
  FakeNameNode nn("alice", "events.out.tfevents.1");
  absl::Status s = Launch(nn, "hdfs://nn:8020/out", /*user=*/"");
  EXPECT_EQ(s.code(), absl::StatusCode::kPermissionDenied) << s;
  EXPECT_THAT(s.message(), HasSubstr("the job's user is not known"));
}

TEST_F(TensorBoardLauncherTest, CopiesArePrivateToTheServersAccount) {
  FakeNameNode nn("alice", "events.out.tfevents.1", /*serve=*/true);
  // The "TensorBoard" notes the modes of what it was given to read, then fails (the copy goes
  // with it).
  const std::string modes = dir_ + "/modes";
  EXPECT_FALSE(
      Launch(nn, "/out", "alice",
             absl::StrCat("sh -c 'stat -c %a \"$2\"/.. \"$2\" \"$2\"/events.out.tfevents.1 "
                          "> ",
                          modes, "; exit 1' stat"))
          .ok());
  std::ifstream in(modes);
  std::string cache, job, file;
  in >> cache >> job >> file;
  EXPECT_EQ(cache, "700");
  EXPECT_EQ(job, "700");
  EXPECT_EQ(file, "600");
}

TEST_F(TensorBoardLauncherTest, AListingNameThatLeadsOutOfTheCacheIsRefused) {
  for (const std::string name : {"../../escape.tfevents", "..", "a/b.tfevents"}) {
    FakeNameNode nn("alice", name);
    absl::Status s = Launch(nn, "/out");
    EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss) << name << ": " << s;
    EXPECT_THAT(s.message(), HasSubstr("no file name")) << name;
  }
  struct stat st {};
  EXPECT_NE(stat((dir_ + "/escape.tfevents").c_str(), &st), 0);
  EXPECT_NE(stat((dir_ + "/cache/escape.tfevents").c_str(), &st), 0);
}

// TensorBoard's own line only, and only a host of this machine: text in its output from event
// files or plugins must not choose where the history server sends browsers.
TEST(TensorBoardAddressTest, OnlyTensorBoardsOwnLineWithALocalHost) {
  EXPECT_EQ(TensorBoardAddress("TensorBoard 2.15.1 at http://127.0.0.1:40123/ (Press CTRL+C to "
                               "quit)\n",
                               "127.0.0.1"),
            "http://127.0.0.1:40123/");
  EXPECT_EQ(TensorBoardAddress("W1128 warning\nTensorBoard 1.15.0 at http://localhost:6006/\r\n",
                               "127.0.0.1"),
            "http://localhost:6006/");
  EXPECT_EQ(TensorBoardAddress("TensorBoard 2.15.1 at http://0.0.0.0:6006/\n", "0.0.0.0"),
            "http://0.0.0.0:6006/");
  // Decoys before the real line: anywhere in a line, another host, a path, a bad port.
  const std::string decoys =
      "W plugin: run 'x' at http://evil.example/ loaded\n"
      "TensorBoard 2.15.1 at http://evil.example:6006/ (Press CTRL+C to quit)\n"
      "TensorBoard 2.15.1 at http://10.1.2.3:6006/\n"
      "TensorBoard 2.15.1 at http://127.0.0.1:6006/@evil.example/\n"
      "TensorBoard 2.15.1 at http://127.0.0.1:99999/\n"
      "  TensorBoard 2.15.1 at http://127.0.0.1:1111/\n"
      "TensorBoard 2.15.1 at https://127.0.0.1:6006/\n";
  EXPECT_EQ(TensorBoardAddress(decoys, "127.0.0.1"), std::nullopt);
  EXPECT_EQ(TensorBoardAddress(decoys + "TensorBoard 2.15.1 at http://127.0.0.1:40123/ (Press "
                                        "CTRL+C to quit)\n",
                               "127.0.0.1"),
            "http://127.0.0.1:40123/");
  EXPECT_EQ(TensorBoardAddress("", "127.0.0.1"), std::nullopt);
}

// Through the launcher: a command printing a decoy first, then TensorBoard's line.
TEST_F(TensorBoardLauncherTest, TheLaunchersAddressIsTensorBoardsOwn) {
  ASSERT_EQ(system(absl::StrCat("mkdir -p '", dir_, "/out'").c_str()), 0);
  TensorBoardLauncherOptions options;
  // The appended arguments go to the inner script, which prints and waits to be stopped.
  options.command =
      "sh -c \"echo 'loading run at http://evil.example/'; "
      "echo 'TensorBoard 2.0 at http://evil.example:80/'; "
      "echo 'TensorBoard 2.0 at http://127.0.0.1:4321/ (Press CTRL+C to quit)'; "
      "exec sleep 60\" tensorboard";
  options.cache_dir = dir_ + "/cache";
  TensorBoardLauncher launch = MakeTensorBoardLauncher(options, nullptr);
  auto process = launch(TensorBoardJob{"application_1_0002", dir_ + "/out", "alice"});
  ASSERT_TRUE(process.ok()) << process.status();
  EXPECT_EQ((*process)->url(), "http://127.0.0.1:4321/");
}

// A local job's output path (ytf history-server --local) is read only when it is a directory of
// this user's own: a log naming /etc or another user's directory starts nothing.
TEST_F(TensorBoardLauncherTest, LocallyOnlyTheUsersOwnDirectoryIsServed) {
  TensorBoardLauncherOptions options;
  options.command = "exit 1; :";  // never meant to run
  options.cache_dir = dir_ + "/cache";
  TensorBoardLauncher launch = MakeTensorBoardLauncher(options, nullptr);
  auto missing = launch(TensorBoardJob{"local_1", dir_ + "/nothing-here", "alice"});
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound) << missing.status();
  if (::geteuid() != 0) {
    auto etc = launch(TensorBoardJob{"local_1", "file:///etc", "alice"});
    EXPECT_EQ(etc.status().code(), absl::StatusCode::kPermissionDenied) << etc.status();
  }
  // As root, a directory another user owns (made here and given away).
  const std::string theirs = dir_ + "/theirs";
  ASSERT_EQ(::mkdir(theirs.c_str(), 0755), 0);
  if (::geteuid() == 0) {
    ASSERT_EQ(::chown(theirs.c_str(), 65534, 65534), 0);
  }
  auto other = launch(TensorBoardJob{"local_1", theirs, "alice"});
  if (::geteuid() == 0) {
    EXPECT_EQ(other.status().code(), absl::StatusCode::kPermissionDenied) << other.status();
    EXPECT_THAT(other.status().message(), HasSubstr("belongs to user 65534"));
  }
}

}  // namespace
}  // namespace tony::history
