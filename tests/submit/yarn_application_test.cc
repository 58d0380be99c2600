// Copyright libtony authors.
//
// The YARN Application's per-call deadline (tony::CallOptions): a ResourceManager or an
// ApplicationMaster that accepts a connection and never answers ends Status() and Kill() with
// DEADLINE_EXCEEDED naming it; the AM of a finished job is asked only briefly.

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "hadoop/yarn_service_protos.pb.h"
#include "submit/contract.h"
#include "submit/yarn_submitter.h"
#include "testing/silent_peer.h"
#include "tests/http/test_http_server.h"
#include "yarn/fake_channel.h"
#include "yarn/yarn_client.h"

namespace tony::submit {
namespace {

namespace pb = tony::hadoop::yarn;
using ::testing::HasSubstr;
using ::tony::testing::ClosedPort;
using ::tony::testing::SilentPeer;
using ::tony::testing::TestHttpServer;

std::unique_ptr<hdfs::WebHdfsClient> Hdfs(const std::string& namenode) {
  hdfs::WebHdfsClient::Options o;
  o.namenodes = {namenode};
  o.user = "tester";
  auto c = hdfs::WebHdfsClient::Create(o);
  EXPECT_TRUE(c.ok()) << c.status();
  return c.ok() ? *std::move(c) : nullptr;
}

pb::GetApplicationReportResponseProto Report(pb::YarnApplicationStateProto state, int am_port) {
  pb::GetApplicationReportResponseProto r;
  auto* a = r.mutable_application_report();
  a->mutable_applicationid()->set_cluster_timestamp(1700000000000);
  a->mutable_applicationid()->set_id(7);
  a->set_user("tester");
  a->set_yarn_application_state(state);
  a->set_host("127.0.0.1");
  a->set_rpc_port(am_port);
  if (state == pb::FINISHED) {
    a->set_final_application_status(pb::APP_SUCCEEDED);
    a->set_finishtime(absl::ToUnixMillis(absl::Now()));
  }
  return r;
}

const yarn::ApplicationId kId{1700000000000, 7};

TEST(YarnApplicationDeadlineTest, SilentResourceManagerEndsStatusAndKillWithDeadlineExceeded) {
  SilentPeer rm;
  ASSERT_GT(rm.port(), 0);
  auto cluster = std::make_shared<YarnCluster>();
  cluster->user = "tester";
  yarn::YarnClientOptions o;
  o.rm_addresses = {rm.address()};
  o.user = "tester";
  auto yarn = yarn::NewYarnClient(o);
  ASSERT_TRUE(yarn.ok()) << yarn.status();
  cluster->yarn = *std::move(yarn);
  cluster->hdfs = Hdfs(absl::StrCat("127.0.0.1:", ClosedPort()));
  std::unique_ptr<Application> app = OpenYarnApplication(cluster, kId, "secret", "");

  auto status = app->Status({.timeout = absl::Milliseconds(300)});
  EXPECT_EQ(status.status().code(), absl::StatusCode::kDeadlineExceeded) << status.status();
  EXPECT_THAT(status.status().message(), HasSubstr(rm.address()));

  absl::Status kill = app->Kill({.deadline = absl::Now() + absl::Milliseconds(300)});
  EXPECT_EQ(kill.code(), absl::StatusCode::kDeadlineExceeded) << kill;
  EXPECT_THAT(kill.message(), HasSubstr(rm.address()));
}

class YarnApplicationWithSilentAmTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_GT(am_.port(), 0);
    cluster_ = std::make_shared<YarnCluster>();
    cluster_->user = "tester";
    auto channel = std::make_unique<yarn::testing::FakeChannel>();
    rm_ = channel.get();
    cluster_->yarn = yarn::NewYarnClientOverChannel(std::move(channel), {});
    // No final progress file to be found: HDFS refuses connections.
    cluster_->hdfs = Hdfs(absl::StrCat("127.0.0.1:", ClosedPort()));
    app_ = OpenYarnApplication(cluster_, kId, "secret", "");
  }

  SilentPeer am_;
  std::shared_ptr<YarnCluster> cluster_;
  yarn::testing::FakeChannel* rm_ = nullptr;
  std::unique_ptr<Application> app_;
};

TEST_F(YarnApplicationWithSilentAmTest, StatusOfARunningJobEndsWithDeadlineExceeded) {
  rm_->Reply("getApplicationReport", Report(pb::RUNNING, am_.port()));
  auto status = app_->Status({.timeout = absl::Milliseconds(300)});
  EXPECT_EQ(status.status().code(), absl::StatusCode::kDeadlineExceeded) << status.status();
  EXPECT_THAT(status.status().message(), HasSubstr("ApplicationMaster"));
  EXPECT_THAT(status.status().message(), HasSubstr(am_.address()));
}

TEST_F(YarnApplicationWithSilentAmTest, KillOfARunningJobEndsWithDeadlineExceeded) {
  rm_->Reply("getApplicationReport", Report(pb::RUNNING, am_.port()));
  absl::Status kill = app_->Kill({.timeout = absl::Milliseconds(300)});
  EXPECT_EQ(kill.code(), absl::StatusCode::kDeadlineExceeded) << kill;
  EXPECT_THAT(kill.message(), HasSubstr(am_.address()));
  // The deadline passed while the AM was silent: YARN's kill was not tried.
  EXPECT_EQ(rm_->Count("forceKillApplication"), 0);
}

// A job YARN reports finished without final counts: its AM is asked, briefly, and its silence
// leaves the outcome as YARN tells it.
TEST_F(YarnApplicationWithSilentAmTest, StatusOfAFinishedJobDoesNotWaitForItsSilentAm) {
  rm_->Reply("getApplicationReport", Report(pb::FINISHED, am_.port()));
  auto status = app_->Status();
  ASSERT_TRUE(status.ok()) << status.status();
  EXPECT_EQ(status->state, AppState::kSucceeded);
  auto within = app_->Status({.timeout = absl::Milliseconds(300)});
  ASSERT_TRUE(within.ok()) << within.status();
  EXPECT_EQ(within->state, AppState::kSucceeded);
}

TEST_F(YarnApplicationWithSilentAmTest, APassedDeadlineAsksNobody) {
  absl::Status kill = app_->Kill({.deadline = absl::Now() - absl::Seconds(1)});
  EXPECT_EQ(kill.code(), absl::StatusCode::kDeadlineExceeded) << kill;
  EXPECT_EQ(rm_->Count("getApplicationReport"), 0);
}

// `ytf logs` right after a whole-job restart: the history is still attempt 1's while YARN runs
// attempt 2, whose AM is writing its own (an HDFS write that can outlast a short job). It is
// read again until attempt 2's lands; if none comes, the wait ends and the old one is shown.
class RecordedTaskContainersTest : public ::testing::Test {
 protected:
  void SetUp() override {
    cluster_ = std::make_shared<YarnCluster>();
    cluster_->user = "tester";
    auto channel = std::make_unique<yarn::testing::FakeChannel>();
    pb::GetApplicationReportResponseProto report = Report(pb::RUNNING, 1);
    auto* attempt = report.mutable_application_report()->mutable_currentapplicationattemptid();
    attempt->mutable_application_id()->set_cluster_timestamp(1700000000000);
    attempt->mutable_application_id()->set_id(7);
    attempt->set_attemptid(2);
    channel->Reply("getApplicationReport", report);
    cluster_->yarn = yarn::NewYarnClientOverChannel(std::move(channel), {});
    cluster_->hdfs = Hdfs(absl::StrCat("127.0.0.1:", hdfs_.port()));
  }

  static std::string History(int attempt) {
    auto id = [attempt](int n) {
      return absl::StrFormat("container_1700000000000_0007_%02d_%06d", attempt, n);
    };
    return EncodeTaskContainers({{"am", id(1), "nm:8042"}, {"worker:0", id(2), "nm:8042"}});
  }

  // WebHDFS OPEN from one loopback server: the NameNode's redirect, then the DataNode's bytes
  // (attempt 2's history from read number `attempt_two_from` on).
  TestHttpServer::Reply Serve(const TestHttpServer::Request& r) {
    TestHttpServer::Reply reply;
    if (!r.Param("dn")) {
      reply.status = 307;
      reply.headers = {{"Location", absl::StrCat(hdfs_.url(), r.target, "&dn=1")}};
      return reply;
    }
    absl::MutexLock lock(&mu_);
    ++reads_;
    reply.body = reads_ < first_full_ ? "" : History(reads_ >= attempt_two_from_ ? 2 : 1);
    return reply;
  }
  int reads() {
    absl::MutexLock lock(&mu_);
    return reads_;
  }

  absl::Mutex mu_;
  int reads_ ABSL_GUARDED_BY(mu_) = 0;
  int attempt_two_from_ ABSL_GUARDED_BY(mu_) = 3;
  int first_full_ ABSL_GUARDED_BY(mu_) = 1;  // reads before it find the file empty
  TestHttpServer hdfs_{[this](const TestHttpServer::Request& r) { return Serve(r); }};
  std::shared_ptr<YarnCluster> cluster_;
};

TEST_F(RecordedTaskContainersTest, AnEarlierAttemptsHistoryIsReadAgainUntilTheCurrentOnesLands) {
  auto containers = RecordedTaskContainers(*cluster_, kId.ToString());
  ASSERT_TRUE(containers.ok()) << containers.status();
  ASSERT_EQ(containers->size(), 2u);
  EXPECT_EQ((*containers)[1].container_id, "container_1700000000000_0007_02_000002");
  EXPECT_EQ(reads(), 3);
}

// The AM's first write goes in place: a read just after its CREATE finds the file empty.
TEST_F(RecordedTaskContainersTest, AHistoryStillEmptyIsReadAgain) {
  {
    absl::MutexLock lock(&mu_);
    attempt_two_from_ = 1;
    first_full_ = 2;
  }
  auto containers = RecordedTaskContainers(*cluster_, kId.ToString());
  ASSERT_TRUE(containers.ok()) << containers.status();
  EXPECT_EQ((*containers)[1].container_id, "container_1700000000000_0007_02_000002");
  EXPECT_EQ(reads(), 2);
}

TEST_F(RecordedTaskContainersTest, WithoutTheCurrentAttemptsHistoryTheWaitEndsByTheDeadline) {
  {
    absl::MutexLock lock(&mu_);
    attempt_two_from_ = 1000;
  }
  // A try whose deadline a starved process (the sanitizer runs at nice 19) spent inside one read
  // ends DeadlineExceeded and proves nothing: it is repeated.
  absl::StatusOr<std::vector<TaskContainer>> containers;
  int reads_before = 0;
  for (int attempt = 0; attempt < 5; ++attempt) {
    reads_before = reads();
    containers =
        RecordedTaskContainers(*cluster_, kId.ToString(), absl::Now() + absl::Milliseconds(500));
    if (!absl::IsDeadlineExceeded(containers.status())) break;
  }
  ASSERT_TRUE(containers.ok()) << containers.status();
  EXPECT_EQ((*containers)[1].container_id, "container_1700000000000_0007_01_000002");
  EXPECT_GE(reads() - reads_before, 2);
}

}  // namespace
}  // namespace tony::submit
