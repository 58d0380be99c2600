// Copyright libtony authors.

#include "yarn/am_rm_client.h"

#include "fake_channel.h"
#include "gtest/gtest.h"
#include "hadoop/yarn_service_protos.pb.h"
#include "ipc/rpc_errors.h"
#include "yarn/proto_convert.h"

namespace tony::yarn {
namespace {

namespace pb = tony::hadoop::yarn;
using testing::FakeChannel;

class AmRmClientTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto channel = std::make_unique<FakeChannel>();
    fake_ = channel.get();
    AmRmClientOptions o;
    o.nm_tokens = nm_tokens_;
    o.unregister_timeout = absl::Seconds(5);
    client_ = NewAmRmClientOverChannel(std::move(channel), o,
                                       [this](const ipc::Token& t) { rolled_.push_back(t); });
    pb::RegisterApplicationMasterResponseProto reg;
    reg.mutable_maximumcapability()->set_memory(8192);
    reg.mutable_maximumcapability()->set_virtual_cores(8);
    reg.set_queue("root.default");
    fake_->Reply("registerApplicationMaster", reg);
  }

  void Register() {
    auto r = client_->Register("amhost", 1234, "http://track");
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ(r->max_capability.memory_mb, 8192);
    EXPECT_EQ(r->queue, "root.default");
  }

  pb::ContainerProto Container(int64_t seq, int64_t request_id, int port = 100) {
    pb::ContainerProto c;
    ContainerId id;
    id.attempt.application = {1700000000000, 1};
    id.attempt.attempt = 1;
    id.id = seq;
    *c.mutable_id() = ToProto(id);
    c.mutable_nodeid()->set_host("node");
    c.mutable_nodeid()->set_port(port);
    c.mutable_resource()->set_memory(1024);
    c.set_allocation_request_id(request_id);
    c.mutable_container_token()->set_identifier("cid");
    c.mutable_container_token()->set_password("cpw");
    c.mutable_container_token()->set_kind("ContainerToken");
    c.mutable_container_token()->set_service("node:100");
    return c;
  }

  pb::AllocateResponseProto Response(int32_t id) {
    pb::AllocateResponseProto r;
    r.set_response_id(id);
    r.set_num_cluster_nodes(2);
    return r;
  }

  std::vector<pb::AllocateRequestProto> Allocates() {
    return fake_->Requests<pb::AllocateRequestProto>("allocate");
  }

  FakeChannel* fake_ = nullptr;
  std::shared_ptr<NmTokenCache> nm_tokens_ = std::make_shared<NmTokenCache>();
  std::vector<ipc::Token> rolled_;
  std::unique_ptr<AmRmClient> client_;
};

TEST_F(AmRmClientTest, AllocateBeforeRegisterFails) {
  EXPECT_EQ(client_->Allocate(0).status().code(), absl::StatusCode::kFailedPrecondition);
}

// The scheduler's notice of containers it is about to take reaches the AM as records: strict
// and contract apart, a container in both counted once (as strict), an answer without one empty.
TEST_F(AmRmClientTest, PreemptionNoticeIsConverted) {
  Register();
  pb::AllocateResponseProto first = Response(1);
  auto id = [&](int64_t seq) { return Container(seq, 0).id(); };
  pb::PreemptionMessageProto* msg = first.mutable_preempt();
  *msg->mutable_strictcontract()->add_container()->mutable_id() = id(2);
  *msg->mutable_contract()->add_container()->mutable_id() = id(2);
  *msg->mutable_contract()->add_container()->mutable_id() = id(3);
  msg->mutable_contract()->add_container();  // no id: nothing to name
  fake_->Reply("allocate", first);
  auto r1 = client_->Allocate(0);
  ASSERT_TRUE(r1.ok()) << r1.status();
  ASSERT_EQ(r1->preemption.strict.size(), 1u);
  EXPECT_EQ(r1->preemption.strict[0], FromProto(id(2)));
  ASSERT_EQ(r1->preemption.contract.size(), 1u);
  EXPECT_EQ(r1->preemption.contract[0], FromProto(id(3)));
  EXPECT_EQ(r1->preemption.contract[0].ToString(), "container_1700000000000_0001_01_000003");

  fake_->Reply("allocate", Response(2));
  auto r2 = client_->Allocate(0);
  ASSERT_TRUE(r2.ok()) << r2.status();
  EXPECT_TRUE(r2->preemption.empty());
}

TEST_F(AmRmClientTest, AsksAreTotalsSentOnlyWhenChanged) {
  Register();
  auto reg =
      fake_->Requests<pb::RegisterApplicationMasterRequestProto>("registerApplicationMaster");
  ASSERT_EQ(reg.size(), 1u);
  EXPECT_EQ(reg[0].host(), "amhost");
  EXPECT_EQ(reg[0].rpc_port(), 1234);

  ContainerRequest req;
  req.capability = Resource{2048, 2, {{"yarn.io/gpu", 1}}};
  req.priority = 3;
  req.count = 2;
  req.node_label_expression = "gpu";
  int64_t id = client_->AddContainerRequest(req);
  EXPECT_EQ(client_->Outstanding(id), 2);

  fake_->Reply("allocate", Response(1));
  auto r1 = client_->Allocate(0.1f);
  ASSERT_TRUE(r1.ok()) << r1.status();
  EXPECT_EQ(r1->num_cluster_nodes, 2);

  // One container arrives, with an NMToken for its node.
  pb::AllocateResponseProto second = Response(2);
  *second.add_allocated_containers() = Container(2, id);
  auto* nmt = second.add_nm_tokens();
  nmt->mutable_nodeid()->set_host("node");
  nmt->mutable_nodeid()->set_port(100);
  nmt->mutable_token()->set_identifier("nmid");
  nmt->mutable_token()->set_password("nmpw");
  nmt->mutable_token()->set_kind("NMToken");
  nmt->mutable_token()->set_service("node:100");
  fake_->Reply("allocate", second);
  auto r2 = client_->Allocate(0.2f);
  ASSERT_TRUE(r2.ok()) << r2.status();
  ASSERT_EQ(r2->allocated.size(), 1u);
  EXPECT_EQ(r2->allocated[0].allocation_request_id, id);
  EXPECT_EQ(r2->allocated[0].node.ToString(), "node:100");
  EXPECT_EQ(r2->allocated[0].token.kind, "ContainerToken");
  EXPECT_EQ(client_->Outstanding(id), 1);
  ASSERT_TRUE(nm_tokens_->Get("node:100").has_value());
  EXPECT_EQ(nm_tokens_->Get("node:100")->password, "nmpw");

  // Two more arrive for the one still wanted: the surplus goes back to the RM.
  pb::AllocateResponseProto third = Response(3);
  *third.add_allocated_containers() = Container(3, id);
  *third.add_allocated_containers() = Container(4, id);
  fake_->Reply("allocate", third);
  auto r3 = client_->Allocate(0.3f);
  ASSERT_TRUE(r3.ok());
  ASSERT_EQ(r3->allocated.size(), 1u);
  EXPECT_EQ(r3->allocated[0].id.id, 3);
  EXPECT_EQ(client_->Outstanding(id), 0);

  fake_->Reply("allocate", Response(4));
  ASSERT_TRUE(client_->Allocate(0.4f).ok());

  auto sent = Allocates();
  ASSERT_EQ(sent.size(), 4u);
  // First heartbeat: the whole ask, as a total, with its request id, label and GPU.
  EXPECT_EQ(sent[0].response_id(), 0);
  ASSERT_EQ(sent[0].ask_size(), 1);
  const auto& ask = sent[0].ask(0);
  EXPECT_EQ(ask.resource_name(), "*");
  EXPECT_EQ(ask.num_containers(), 2);
  EXPECT_EQ(ask.priority().priority(), 3);
  EXPECT_EQ(ask.allocation_request_id(), id);
  EXPECT_EQ(ask.node_label_expression(), "gpu");
  EXPECT_EQ(ask.capability().memory(), 2048);
  EXPECT_EQ(ask.capability().virtual_cores(), 2);
  ASSERT_EQ(ask.capability().resource_value_map_size(), 1);
  EXPECT_EQ(ask.capability().resource_value_map(0).key(), "yarn.io/gpu");
  EXPECT_EQ(ask.capability().resource_value_map(0).value(), 1);
  // Later heartbeats carry the last response id and no repeated ask.
  EXPECT_EQ(sent[1].response_id(), 1);
  EXPECT_EQ(sent[1].ask_size(), 0);
  EXPECT_EQ(sent[2].response_id(), 2);
  EXPECT_EQ(sent[2].ask_size(), 0);
  EXPECT_EQ(sent[3].response_id(), 3);
  ASSERT_EQ(sent[3].release_size(), 1);
  EXPECT_EQ(sent[3].release(0).id(), 4);
  EXPECT_FLOAT_EQ(sent[3].progress(), 0.4f);
}

TEST_F(AmRmClientTest, RemoveSendsTheLowerTotal) {
  Register();
  ContainerRequest req;
  req.capability = Resource{512, 1, {}};
  req.count = 3;
  int64_t id = client_->AddContainerRequest(req);
  fake_->Reply("allocate", Response(1));
  ASSERT_TRUE(client_->Allocate(0).ok());
  client_->RemoveContainerRequest(id, 2);
  EXPECT_EQ(client_->Outstanding(id), 1);
  client_->RemoveContainerRequest(id, 5);
  EXPECT_EQ(client_->Outstanding(id), 0);
  ASSERT_TRUE(client_->Allocate(0).ok());
  auto sent = Allocates();
  ASSERT_EQ(sent.size(), 2u);
  ASSERT_EQ(sent[1].ask_size(), 1);
  EXPECT_EQ(sent[1].ask(0).num_containers(), 0);
}

TEST_F(AmRmClientTest, AntiAffinityIsASchedulingRequestNeverInACallWithAsks) {
  Register();
  ContainerRequest plain;
  plain.capability = Resource{512, 1, {}};
  const int64_t ps = client_->AddContainerRequest(plain);
  ContainerRequest spread;
  spread.capability = Resource{1024, 2, {}};
  spread.priority = 2;
  spread.count = 2;
  spread.allocation_tag = "worker";
  spread.anti_affinity = true;
  const int64_t workers = client_->AddContainerRequest(spread);
  fake_->Reply("allocate", Response(1));
  ASSERT_TRUE(client_->Allocate(0).ok());
  // One container for the workers; then the RM gives up on the other.
  pb::AllocateResponseProto second = Response(2);
  *second.add_allocated_containers() = Container(2, workers);
  fake_->Reply("allocate", second);
  auto r2 = client_->Allocate(0);
  ASSERT_TRUE(r2.ok()) << r2.status();
  EXPECT_EQ(client_->Outstanding(workers), 1);
  pb::AllocateResponseProto third = Response(3);
  auto* rejected = third.add_rejected_scheduling_requests();
  rejected->set_reason(pb::RRP_COULD_NOT_PLACE_ON_NODE);
  rejected->mutable_request()->set_allocationrequestid(workers);
  fake_->Reply("allocate", third);
  auto r3 = client_->Allocate(0);
  ASSERT_TRUE(r3.ok()) << r3.status();
  ASSERT_EQ(r3->rejected.size(), 1u);
  EXPECT_EQ(r3->rejected[0].first, workers);
  EXPECT_EQ(r3->rejected[0].second, "RRP_COULD_NOT_PLACE_ON_NODE");
  EXPECT_EQ(client_->Outstanding(workers), 0);

  auto sent = Allocates();
  ASSERT_EQ(sent.size(), 3u);
  // The ask first, alone: the CapacityScheduler would skip SchedulingRequests beside it.
  ASSERT_EQ(sent[0].ask_size(), 1);
  EXPECT_EQ(sent[0].ask(0).allocation_request_id(), ps);
  EXPECT_EQ(sent[0].scheduling_requests_size(), 0);
  // Then the SchedulingRequest, every field set, a total of 2, at most one per node.
  EXPECT_EQ(sent[1].ask_size(), 0);
  ASSERT_EQ(sent[1].scheduling_requests_size(), 1);
  const pb::SchedulingRequestProto& sr = sent[1].scheduling_requests(0);
  EXPECT_EQ(sr.allocationrequestid(), workers);
  EXPECT_EQ(sr.priority().priority(), 2);
  EXPECT_EQ(sr.executiontype().execution_type(), pb::GUARANTEED);
  ASSERT_EQ(sr.allocationtags_size(), 1);
  EXPECT_EQ(sr.allocationtags(0), "worker");
  EXPECT_EQ(sr.resourcesizing().numallocations(), 2);
  EXPECT_EQ(sr.resourcesizing().resources().memory(), 1024);
  const pb::SimplePlacementConstraintProto& c = sr.placementconstraint().simpleconstraint();
  EXPECT_EQ(c.scope(), "node");
  EXPECT_EQ(c.mincardinality(), 0);
  EXPECT_EQ(c.maxcardinality(), 0);
  ASSERT_EQ(c.targetexpressions_size(), 1);
  EXPECT_EQ(c.targetexpressions(0).targettype(),
            pb::PlacementConstraintTargetProto::ALLOCATION_TAG);
  EXPECT_EQ(c.targetexpressions(0).targetkey(), "self");
  EXPECT_EQ(c.targetexpressions(0).targetvalues(0), "worker");
  // An allocation is the RM's own decrement: nothing is sent again for it.
  EXPECT_EQ(sent[2].scheduling_requests_size(), 0);
}

TEST_F(AmRmClientTest, ANodeAttributeIsASchedulingRequestWithItsOpCode) {
  Register();
  ContainerRequest placed;
  placed.capability = Resource{512, 1, {}};
  placed.allocation_tag = "worker";
  placed.node_attribute = NodeAttributeMatch{"nm.yarn.io/pool", "a", false};
  const int64_t id = client_->AddContainerRequest(placed);
  fake_->Reply("allocate", Response(1));
  ASSERT_TRUE(client_->Allocate(0).ok());
  auto sent = Allocates();
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_EQ(sent[0].ask_size(), 0);
  ASSERT_EQ(sent[0].scheduling_requests_size(), 1);
  const pb::SchedulingRequestProto& sr = sent[0].scheduling_requests(0);
  EXPECT_EQ(sr.allocationrequestid(), id);
  EXPECT_EQ(sr.allocationtags(0), "worker");
  // As Hadoop's PlacementConstraints.targetNodeAttribute builds it.
  const pb::SimplePlacementConstraintProto& c = sr.placementconstraint().simpleconstraint();
  EXPECT_EQ(c.scope(), "node");
  EXPECT_EQ(c.mincardinality(), -1);
  EXPECT_EQ(c.maxcardinality(), -1);
  EXPECT_EQ(c.attributeopcode(), pb::NODE_ATTRIBUTE_NE);
  ASSERT_EQ(c.targetexpressions_size(), 1);
  EXPECT_EQ(c.targetexpressions(0).targettype(),
            pb::PlacementConstraintTargetProto::NODE_ATTRIBUTE);
  EXPECT_EQ(c.targetexpressions(0).targetkey(), "nm.yarn.io/pool");
  EXPECT_EQ(c.targetexpressions(0).targetvalues(0), "a");
}

TEST_F(AmRmClientTest, StrictLocalityAsks) {
  Register();
  ContainerRequest req;
  req.capability = Resource{512, 1, {}};
  req.nodes = {"h1"};
  req.relax_locality = false;
  req.node_label_expression = "x";
  client_->AddContainerRequest(req);
  fake_->Reply("allocate", Response(1));
  ASSERT_TRUE(client_->Allocate(0).ok());
  auto sent = Allocates();
  ASSERT_EQ(sent[0].ask_size(), 3);
  std::map<std::string, pb::ResourceRequestProto> by_name;
  for (const auto& a : sent[0].ask()) by_name[a.resource_name()] = a;
  EXPECT_TRUE(by_name.at("h1").relax_locality());
  EXPECT_FALSE(by_name.at("/default-rack").relax_locality());
  EXPECT_FALSE(by_name.at("*").relax_locality());
  EXPECT_FALSE(by_name.at("h1").has_node_label_expression());
  EXPECT_EQ(by_name.at("*").node_label_expression(), "x");
}

TEST_F(AmRmClientTest, NotRegisteredMeansRegisterAgainAndResendEverything) {
  Register();
  ContainerRequest req;
  req.capability = Resource{512, 1, {}};
  req.count = 1;
  client_->AddContainerRequest(req);
  fake_->Reply("allocate", Response(5));
  ASSERT_TRUE(client_->Allocate(0).ok());
  fake_->Fail("allocate", ipc::RemoteExceptionToStatus(
                              "org.apache.hadoop.yarn.exceptions."
                              "ApplicationMasterNotRegisteredException",
                              "Application Master is trying to allocate before registering"));
  fake_->Reply("allocate", Response(1));
  auto r = client_->Allocate(0);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->command, AmCommand::kResync);
  EXPECT_EQ(fake_->Count("registerApplicationMaster"), 2);
  auto sent = Allocates();
  ASSERT_EQ(sent.size(), 3u);
  EXPECT_EQ(sent[1].response_id(), 5);
  EXPECT_EQ(sent[2].response_id(), 0);
  EXPECT_EQ(sent[2].ask_size(), 1);  // the outstanding ask again
}

// Blacklisted hosts go out once; a failed heartbeat and a resync send them again.
TEST_F(AmRmClientTest, BlacklistAdditionsSentOnceAndAfterResync) {
  Register();
  client_->AddToBlacklist({"bad1", "bad2"});
  client_->AddToBlacklist({"bad1"});  // excluded twice: once on the wire
  fake_->Fail("allocate", ipc::ConnectionFailureStatus(ipc::ConnectionFailure::kConnect, "down"));
  EXPECT_FALSE(client_->Allocate(0).ok());
  fake_->Reply("allocate", Response(1));
  ASSERT_TRUE(client_->Allocate(0).ok());
  fake_->Reply("allocate", Response(2));
  ASSERT_TRUE(client_->Allocate(0).ok());
  fake_->Fail("allocate", ipc::RemoteExceptionToStatus(
                              "org.apache.hadoop.yarn.exceptions."
                              "ApplicationMasterNotRegisteredException",
                              "Application Master is trying to allocate before registering"));
  fake_->Reply("allocate", Response(1));
  ASSERT_TRUE(client_->Allocate(0).ok());
  auto sent = Allocates();
  ASSERT_EQ(sent.size(), 5u);
  auto additions = [](const pb::AllocateRequestProto& r) {
    return std::vector<std::string>(r.blacklist_request().blacklist_additions().begin(),
                                    r.blacklist_request().blacklist_additions().end());
  };
  const std::vector<std::string> both = {"bad1", "bad2"};
  EXPECT_EQ(additions(sent[0]), both);  // failed
  EXPECT_EQ(additions(sent[1]), both);  // sent again
  EXPECT_FALSE(sent[2].has_blacklist_request());
  EXPECT_FALSE(sent[3].has_blacklist_request());  // not registered
  EXPECT_EQ(additions(sent[4]), both);            // the RM may have forgotten them
}

// A host back in use: a removal for what the RM heard of, nothing for what it did not; a
// failed heartbeat sends the removal again; a resync sends only what is still excluded.
TEST_F(AmRmClientTest, BlacklistRemovalsUndoOnlyWhatWasSent) {
  Register();
  auto list = [](const google::protobuf::RepeatedPtrField<std::string>& hosts) {
    return std::vector<std::string>(hosts.begin(), hosts.end());
  };
  client_->AddToBlacklist({"lost1", "lost2"});
  fake_->Reply("allocate", Response(1));
  ASSERT_TRUE(client_->Allocate(0).ok());
  client_->AddToBlacklist({"flap"});
  client_->RemoveFromBlacklist({"flap", "lost1", "never"});  // "flap" never went out
  fake_->Fail("allocate", ipc::ConnectionFailureStatus(ipc::ConnectionFailure::kConnect, "down"));
  EXPECT_FALSE(client_->Allocate(0).ok());
  fake_->Reply("allocate", Response(2));
  ASSERT_TRUE(client_->Allocate(0).ok());
  fake_->Reply("allocate", Response(3));
  ASSERT_TRUE(client_->Allocate(0).ok());
  fake_->Fail("allocate", ipc::RemoteExceptionToStatus(
                              "org.apache.hadoop.yarn.exceptions."
                              "ApplicationMasterNotRegisteredException",
                              "Application Master is trying to allocate before registering"));
  fake_->Reply("allocate", Response(1));
  ASSERT_TRUE(client_->Allocate(0).ok());
  auto sent = Allocates();
  ASSERT_EQ(sent.size(), 6u);
  using V = std::vector<std::string>;
  EXPECT_EQ(list(sent[0].blacklist_request().blacklist_additions()), (V{"lost1", "lost2"}));
  EXPECT_EQ(list(sent[1].blacklist_request().blacklist_removals()), V{"lost1"});  // failed
  EXPECT_TRUE(sent[1].blacklist_request().blacklist_additions().empty());
  EXPECT_EQ(list(sent[2].blacklist_request().blacklist_removals()), V{"lost1"});  // again
  EXPECT_FALSE(sent[3].has_blacklist_request());
  EXPECT_FALSE(sent[4].has_blacklist_request());  // not registered
  EXPECT_EQ(list(sent[5].blacklist_request().blacklist_additions()), V{"lost2"});
  EXPECT_TRUE(sent[5].blacklist_request().blacklist_removals().empty());
}

TEST_F(AmRmClientTest, FailedHeartbeatKeepsAsksAndReleases) {
  Register();
  ContainerRequest req;
  req.capability = Resource{512, 1, {}};
  client_->AddContainerRequest(req);
  ContainerId gone;
  gone.id = 9;
  client_->ReleaseContainer(gone);
  fake_->Fail("allocate", ipc::ConnectionFailureStatus(ipc::ConnectionFailure::kConnect, "down"));
  fake_->Reply("allocate", Response(1));
  EXPECT_FALSE(client_->Allocate(0).ok());
  ASSERT_TRUE(client_->Allocate(0).ok());
  auto sent = Allocates();
  ASSERT_EQ(sent.size(), 2u);
  EXPECT_EQ(sent[1].ask_size(), 1);
  EXPECT_EQ(sent[1].release_size(), 1);
  EXPECT_EQ(sent[1].response_id(), 0);
}

TEST_F(AmRmClientTest, ShutdownCommandAndRolledToken) {
  Register();
  pb::AllocateResponseProto r = Response(1);
  r.set_a_m_command(pb::AM_SHUTDOWN);
  r.mutable_am_rm_token()->set_identifier("new-id");
  r.mutable_am_rm_token()->set_password("new-pw");
  r.mutable_am_rm_token()->set_kind("YARN_AM_RM_TOKEN");
  r.mutable_am_rm_token()->set_service("");
  auto* done = r.add_completed_container_statuses();
  done->mutable_container_id()->set_id(7);
  done->set_state(pb::C_COMPLETE);
  done->set_exit_status(-105);
  done->set_diagnostics("Container killed by the ApplicationMaster.");
  fake_->Reply("allocate", r);
  auto got = client_->Allocate(1);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->command, AmCommand::kShutdown);
  ASSERT_EQ(rolled_.size(), 1u);
  EXPECT_EQ(rolled_[0].password, "new-pw");
  ASSERT_EQ(got->completed.size(), 1u);
  EXPECT_EQ(got->completed[0].exit_status, exit_status::kKilledByAppMaster);
  EXPECT_EQ(got->completed[0].state, ContainerState::kComplete);
}

TEST_F(AmRmClientTest, UnregisterRepeatsUntilConfirmed) {
  Register();
  pb::FinishApplicationMasterResponseProto not_yet, done;
  done.set_isunregistered(true);
  fake_->Reply("finishApplicationMaster", not_yet);
  fake_->Reply("finishApplicationMaster", done);
  absl::Status s = client_->Unregister(FinalApplicationStatus::kSucceeded, "all good", "");
  ASSERT_TRUE(s.ok()) << s;
  auto sent = fake_->Requests<pb::FinishApplicationMasterRequestProto>("finishApplicationMaster");
  ASSERT_EQ(sent.size(), 2u);
  EXPECT_EQ(sent[0].final_application_status(), pb::APP_SUCCEEDED);
  EXPECT_EQ(sent[0].diagnostics(), "all good");
}

TEST_F(AmRmClientTest, UnregisterGivesUpAtItsDeadline) {
  Register();
  pb::FinishApplicationMasterResponseProto not_yet;
  fake_->Reply("finishApplicationMaster", not_yet);
  absl::Time start = absl::Now();
  absl::Status s = client_->Unregister(FinalApplicationStatus::kFailed, "", "");
  EXPECT_EQ(s.code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_LT(absl::Now() - start, absl::Seconds(20));  // not the default 60 s
}

}  // namespace
}  // namespace tony::yarn
