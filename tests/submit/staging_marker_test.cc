// Copyright libtony authors.
//
// SweepStaging and the marker a client leaves while it stages (MarkStagingBy): an application
// the ResourceManager does not know has its young staging directory removed at once only when
// the marker names a process of *this* machine (boot id and host) that is gone. A home directory
// shared by NFS shows other hosts' markers, whose pids mean nothing in this host's /proc: a
// client still uploading there must not lose its staging. Fake RM (tests/yarn's channel) and
// fake NameNode (loopback HTTP).

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "common/file_util.h"
#include "gtest/gtest.h"
#include "submit/yarn_submitter.h"
#include "tests/http/test_http_server.h"
#include "yarn/fake_channel.h"
#include "yarn/yarn_client.h"

namespace tony::submit {
namespace {

using ::tony::testing::TestHttpServer;

constexpr char kApp[] = "application_1700000000000_0042";

class StagingMarkerTest : public ::testing::Test {
 protected:
  StagingMarkerTest()
      : namenode_([this](const TestHttpServer::Request& r) { return NameNode(r); }) {}

  void SetUp() override {
    std::string tmpl = ::testing::TempDir() + "/staging_marker_test.XXXXXX";
    home_ = mkdtemp(tmpl.data());
    if (const char* old = std::getenv("HOME")) old_home_ = old;
    ::setenv("HOME", home_.c_str(), 1);
    cluster_.user = "tester";
    cluster_.cluster_key = "rm-test";
    auto channel = std::make_unique<yarn::testing::FakeChannel>();
    // The RM never heard of it: the client died (or is still uploading) before submitting.
    channel->Fail("getApplicationReport",
                  absl::NotFoundError("ApplicationNotFoundException: unknown application"));
    cluster_.yarn = yarn::NewYarnClientOverChannel(std::move(channel), {});
    hdfs::WebHdfsClient::Options o;
    o.namenodes = {absl::StrCat("127.0.0.1:", namenode_.port())};
    o.user = "tester";
    cluster_.hdfs = *hdfs::WebHdfsClient::Create(o);
  }
  void TearDown() override {
    if (old_home_) ::setenv("HOME", old_home_->c_str(), 1);
    EXPECT_EQ(std::system(absl::StrCat("rm -rf '", home_, "'").c_str()), 0);
  }

  TestHttpServer::Reply NameNode(const TestHttpServer::Request& r) {
    TestHttpServer::Reply reply;
    const std::string op = r.Param("op").value_or("");
    const std::string root = "/webhdfs/v1" + StagingRoot("tester", "rm-test");
    if (op == "LISTSTATUS" && r.path == root) {
      // Staged a moment ago: far younger than the orphan age.
      reply.body = absl::StrCat(R"({"FileStatuses":{"FileStatus":[{"length":0,"modificationTime":)",
                                absl::ToUnixMillis(absl::Now()), R"(,"pathSuffix":")", kApp,
                                R"(","permission":"700","type":"DIRECTORY"}]}})");
    } else if (op == "DELETE" && r.path == root + "/" + kApp) {
      reply.body = R"({"boolean":true})";
    } else {
      reply.status = 404;
      reply.body = R"({"RemoteException":{"exception":"FileNotFoundException","message":"no"}})";
    }
    return reply;
  }

  // This process's marker with fields replaced: 0 pid, 1 start ticks, 2 boot id, 3 host.
  void Mark(const std::vector<std::pair<int, std::string>>& replace) {
    MarkStagingBy(kApp);
    const std::string file = LocalAppDir(kApp) + "/submitter";
    absl::StatusOr<std::string> text = ReadFileToString(file);
    ASSERT_TRUE(text.ok()) << text.status();
    std::vector<std::string> f = absl::StrSplit(*text, ' ');
    ASSERT_EQ(f.size(), 4u) << *text;
    for (const auto& [i, v] : replace) f[i] = v;
    ASSERT_TRUE(WriteFileAtomically(file, absl::StrJoin(f, " "), 0600).ok());
  }

  // A pid that was ours and is gone (reaped) now.
  static std::string GonePid() {
    const pid_t child = ::fork();
    if (child == 0) ::_exit(0);
    int status = 0;
    ::waitpid(child, &status, 0);
    return std::to_string(child);
  }

  bool Swept() {
    absl::StatusOr<StagingSweepResult> r = SweepStaging(cluster_, {});
    EXPECT_TRUE(r.ok()) << r.status();
    if (!r.ok()) return false;
    int deletes = 0;
    for (const auto& req : namenode_.requests()) deletes += req.Param("op") == "DELETE";
    EXPECT_EQ(deletes, static_cast<int>(r->removed.size()));
    return r->removed == std::vector<std::string>{kApp};
  }

  TestHttpServer namenode_;
  YarnCluster cluster_;
  std::string home_;
  std::optional<std::string> old_home_;
};

TEST_F(StagingMarkerTest, AGoneClientOfThisMachineHasItsStagingRemovedAtOnce) {
  Mark({{0, GonePid()}});
  EXPECT_TRUE(Swept());
  EXPECT_NE(::access((LocalAppDir(kApp) + "/submitter").c_str(), F_OK), 0)
      << "the marker outlived its staging";
}

TEST_F(StagingMarkerTest, AClientStillRunningKeepsItsStaging) {
  Mark({});
  EXPECT_FALSE(Swept());
}

TEST_F(StagingMarkerTest, AMarkerFromAnotherHostIsNotJudgedByThisHostsProc) {
  Mark({{0, GonePid()}, {3, "another-host.example.com"}});
  EXPECT_FALSE(Swept());
}

TEST_F(StagingMarkerTest, AMarkerFromAnotherBootIsNotJudgedByThisBootsProc) {
  Mark({{0, GonePid()}, {2, "00000000-0000-0000-0000-000000000000"}});
  EXPECT_FALSE(Swept());
}

TEST_F(StagingMarkerTest, AMalformedMarkerKeepsTheStagingUntilTheOrphanAge) {
  Mark({{0, "not-a-pid"}});
  EXPECT_FALSE(Swept());
  ASSERT_TRUE(WriteFileAtomically(LocalAppDir(kApp) + "/submitter", "12345", 0600).ok());
  EXPECT_FALSE(Swept());
}

}  // namespace
}  // namespace tony::submit
