// Copyright libtony authors.

#include "yarn/yarn_client.h"

#include "fake_channel.h"
#include "gtest/gtest.h"
#include "hadoop/yarn_service_protos.pb.h"
#include "ipc/rpc_errors.h"

namespace tony::yarn {
namespace {

namespace pb = tony::hadoop::yarn;
using testing::FakeChannel;

class YarnClientTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto channel = std::make_unique<FakeChannel>();
    fake_ = channel.get();
    YarnClientOptions o;
    o.state_change_timeout = absl::Seconds(3);
    client_ = NewYarnClientOverChannel(std::move(channel), o);
  }

  pb::GetApplicationReportResponseProto Report(pb::YarnApplicationStateProto state) {
    pb::GetApplicationReportResponseProto r;
    r.mutable_application_report()->mutable_applicationid()->set_id(1);
    r.mutable_application_report()->set_yarn_application_state(state);
    return r;
  }

  FakeChannel* fake_ = nullptr;
  std::unique_ptr<YarnClient> client_;
};

TEST_F(YarnClientTest, SubmitWaitsUntilTheRmSavedTheApplication) {
  fake_->Reply("submitApplication", pb::SubmitApplicationResponseProto());
  fake_->Reply("getApplicationReport", Report(pb::NEW_SAVING));
  fake_->Reply("getApplicationReport", Report(pb::ACCEPTED));
  ApplicationSubmissionContext ctx;
  ctx.id = {99, 1};
  ctx.am_resource = {256, 1, {}};
  ctx.am_container.commands = {"./am"};
  ASSERT_TRUE(client_->SubmitApplication(ctx).ok());
  EXPECT_EQ(fake_->Count("getApplicationReport"), 2);
  auto sent = fake_->Requests<pb::SubmitApplicationRequestProto>("submitApplication");
  ASSERT_EQ(sent.size(), 1u);
  const auto& sc = sent[0].application_submission_context();
  EXPECT_EQ(sc.application_id().cluster_timestamp(), 99);
  EXPECT_EQ(sc.am_container_spec().command(0), "./am");
  EXPECT_EQ(sc.resource().memory(), 256);
}

TEST_F(YarnClientTest, SubmitGivesUpWhenTheRmNeverAccepts) {
  fake_->Reply("submitApplication", pb::SubmitApplicationResponseProto());
  fake_->Reply("getApplicationReport", Report(pb::NEW_SAVING));
  ApplicationSubmissionContext ctx;
  EXPECT_EQ(client_->SubmitApplication(ctx).code(), absl::StatusCode::kDeadlineExceeded);
}

TEST_F(YarnClientTest, SubmissionCallsPastTheirDeadlineAskNothing) {
  const absl::Time passed = absl::InfinitePast();
  EXPECT_EQ(client_->CreateApplication(passed).status().code(),
            absl::StatusCode::kDeadlineExceeded);
  EXPECT_EQ(client_->SubmitApplication(ApplicationSubmissionContext(), passed).code(),
            absl::StatusCode::kDeadlineExceeded);
  EXPECT_EQ(client_->ListQueues(passed).status().code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_EQ(client_->SubmittableQueues(passed).status().code(),
            absl::StatusCode::kDeadlineExceeded);
  EXPECT_EQ(client_->ListNodes({}, passed).status().code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_EQ(client_->GetResourceTypes(passed).status().code(), absl::StatusCode::kDeadlineExceeded);
  for (const char* method : {"getNewApplication", "submitApplication", "getQueueInfo",
                             "getQueueUserAcls", "getClusterNodes", "getResourceTypeInfo"}) {
    EXPECT_EQ(fake_->Count(method), 0) << method;
  }
}

// With no state-change timeout, only the call's deadline ends the wait for the RM to save the
// application; the error says the application went out.
TEST_F(YarnClientTest, SubmitStopsWaitingForTheRmAtTheCallsDeadline) {
  auto channel = std::make_unique<FakeChannel>();
  FakeChannel* fake = channel.get();
  YarnClientOptions o;
  o.state_change_timeout = absl::InfiniteDuration();
  std::unique_ptr<YarnClient> client = NewYarnClientOverChannel(std::move(channel), o);
  fake->Reply("submitApplication", pb::SubmitApplicationResponseProto());
  fake->Reply("getApplicationReport", Report(pb::NEW_SAVING));
  ApplicationSubmissionContext ctx;
  ctx.id = {99, 7};
  absl::Status s = client->SubmitApplication(ctx, absl::Now() + absl::Seconds(1));
  EXPECT_EQ(s.code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_NE(s.message().find("submitted application_99_0007"), absl::string_view::npos) << s;
  EXPECT_NE(s.message().find("the call's deadline"), absl::string_view::npos) << s;
}

TEST_F(YarnClientTest, KillRepeatsUntilComplete) {
  pb::KillApplicationResponseProto pending, done;
  done.set_is_kill_completed(true);
  fake_->Reply("forceKillApplication", pending);
  fake_->Reply("forceKillApplication", done);
  ASSERT_TRUE(client_->KillApplication({1, 2}, "why").ok());
  auto sent = fake_->Requests<pb::KillApplicationRequestProto>("forceKillApplication");
  ASSERT_EQ(sent.size(), 2u);
  EXPECT_EQ(sent[0].diagnostics(), "why");
}

TEST_F(YarnClientTest, ErrorsPassThrough) {
  fake_->Fail("getApplicationReport",
              ipc::RemoteExceptionToStatus(
                  "org.apache.hadoop.yarn.exceptions.ApplicationNotFoundException", "nope"));
  auto r = client_->GetApplicationReport({1, 2});
  EXPECT_EQ(r.status().code(), absl::StatusCode::kNotFound);
}

TEST_F(YarnClientTest, ListNodesDefaultsToRunning) {
  pb::GetClusterNodesResponseProto nodes;
  auto* n = nodes.add_nodereports();
  n->mutable_nodeid()->set_host("h");
  n->mutable_nodeid()->set_port(1);
  n->set_node_state(pb::NS_RUNNING);
  n->mutable_capability()->set_memory(8192);
  fake_->Reply("getClusterNodes", nodes);
  auto got = client_->ListNodes({});
  ASSERT_TRUE(got.ok());
  ASSERT_EQ(got->size(), 1u);
  EXPECT_EQ((*got)[0].capability.memory_mb, 8192);
  auto sent = fake_->Requests<pb::GetClusterNodesRequestProto>("getClusterNodes");
  ASSERT_EQ(sent[0].nodestates_size(), 1);
  EXPECT_EQ(sent[0].nodestates(0), pb::NS_RUNNING);
}

TEST_F(YarnClientTest, ListApplicationsFilter) {
  fake_->Reply("getApplications", pb::GetApplicationsResponseProto());
  ApplicationFilter f;
  f.states = {YarnApplicationState::kRunning};
  f.application_types = {"TONY"};
  f.tags = {"t"};
  f.limit = 5;
  ASSERT_TRUE(client_->ListApplications(f).ok());
  auto sent = fake_->Requests<pb::GetApplicationsRequestProto>("getApplications");
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_EQ(sent[0].application_states(0), pb::RUNNING);
  EXPECT_EQ(sent[0].application_types(0), "TONY");
  EXPECT_EQ(sent[0].applicationtags(0), "t");
  EXPECT_EQ(sent[0].limit(), 5);
}

}  // namespace
}  // namespace tony::yarn
