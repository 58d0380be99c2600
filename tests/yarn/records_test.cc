// Copyright libtony authors.

#include "yarn/records.h"

#include "gtest/gtest.h"
#include "hadoop/yarn_service_protos.pb.h"
#include "yarn/proto_convert.h"

namespace tony::yarn {
namespace {

namespace pb = tony::hadoop::yarn;

TEST(RecordsTest, IdStrings) {
  ApplicationId app{1700000000123, 7};
  EXPECT_EQ(app.ToString(), "application_1700000000123_0007");
  EXPECT_EQ(ApplicationAttemptId({app, 2}).ToString(), "appattempt_1700000000123_0007_000002");
  ContainerId c{{app, 2}, 5};
  EXPECT_EQ(c.ToString(), "container_1700000000123_0007_02_000005");
  ContainerId with_epoch{{app, 1}, (int64_t{17} << 40) | 12345678};
  EXPECT_EQ(with_epoch.ToString(), "container_e17_1700000000123_0007_01_12345678");
  EXPECT_EQ((NodeId{"h", 45454}).ToString(), "h:45454");
  EXPECT_EQ((Resource{1024, 2, {{"yarn.io/gpu", 1}}}).ToString(),
            "<memory:1024, vCores:2, yarn.io/gpu:1>");
}

TEST(RecordsTest, ParseRoundTrips) {
  auto app = ParseApplicationId("application_1700000000123_12345");
  ASSERT_TRUE(app.ok());
  EXPECT_EQ(app->id, 12345);
  EXPECT_EQ(app->ToString(), "application_1700000000123_12345");
  for (const char* text :
       {"container_1700000000123_0007_02_000005", "container_e17_1700000000123_0007_01_12345678"}) {
    auto c = ParseContainerId(text);
    ASSERT_TRUE(c.ok()) << text;
    EXPECT_EQ(c->ToString(), text);
  }
  EXPECT_FALSE(ParseApplicationId("app_1_2").ok());
  EXPECT_FALSE(ParseContainerId("container_x_1_1_1").ok());
  EXPECT_FALSE(ParseContainerId("container_1_1_1").ok());
}

TEST(RecordsTest, Names) {
  EXPECT_EQ(YarnApplicationStateName(YarnApplicationState::kRunning), "RUNNING");
  EXPECT_EQ(FinalApplicationStatusName(FinalApplicationStatus::kSucceeded), "SUCCEEDED");
  EXPECT_TRUE(IsTerminal(YarnApplicationState::kKilled));
  EXPECT_FALSE(IsTerminal(YarnApplicationState::kAccepted));
  EXPECT_EQ(NodeStateName(NodeState::kUnhealthy), "UNHEALTHY");
  EXPECT_EQ(ContainerStateName(ContainerState::kComplete), "COMPLETE");
}

TEST(ProtoConvertTest, Urls) {
  auto hdfs = UrlToProto("hdfs://nn.example.com:8020/user/u/app.zip");
  ASSERT_TRUE(hdfs.ok());
  EXPECT_EQ(hdfs->scheme(), "hdfs");
  EXPECT_EQ(hdfs->host(), "nn.example.com");
  EXPECT_EQ(hdfs->port(), 8020);
  EXPECT_EQ(hdfs->file(), "/user/u/app.zip");
  EXPECT_EQ(UrlFromProto(*hdfs), "hdfs://nn.example.com:8020/user/u/app.zip");

  auto local = UrlToProto("file:///opt/libtony/bin/am");
  ASSERT_TRUE(local.ok());
  EXPECT_EQ(local->scheme(), "file");
  EXPECT_FALSE(local->has_host());
  EXPECT_TRUE(local->has_port());
  EXPECT_EQ(local->port(), -1);  // unset would read as 0 and break the path on the NM
  EXPECT_EQ(local->file(), "/opt/libtony/bin/am");

  auto ns = UrlToProto("hdfs://nameservice1/a");
  ASSERT_TRUE(ns.ok());
  EXPECT_EQ(ns->host(), "nameservice1");
  EXPECT_EQ(ns->port(), -1);

  EXPECT_FALSE(UrlToProto("/no/scheme").ok());
  EXPECT_FALSE(UrlToProto("hdfs://h:notaport/x").ok());
}

TEST(ProtoConvertTest, ResourcesDropBuiltinsFromTheMap) {
  pb::ResourceProto p;
  p.set_memory(4096);
  p.set_virtual_cores(4);
  for (auto [k, v] :
       {std::pair<const char*, int>{"memory-mb", 4096}, {"vcores", 4}, {"yarn.io/gpu", 2}}) {
    auto* i = p.add_resource_value_map();
    i->set_key(k);
    i->set_value(v);
  }
  Resource r = FromProto(p);
  EXPECT_EQ(r.memory_mb, 4096);
  EXPECT_EQ(r.vcores, 4);
  ASSERT_EQ(r.others.size(), 1u);
  EXPECT_EQ(r.others.at("yarn.io/gpu"), 2);
  pb::ResourceProto back = ToProto(r);
  ASSERT_EQ(back.resource_value_map_size(), 1);
  EXPECT_EQ(back.resource_value_map(0).key(), "yarn.io/gpu");
}

TEST(ProtoConvertTest, LaunchContext) {
  ContainerLaunchContext ctx;
  ctx.local_resources["am"] = LocalResource{"hdfs://nn:8020/a/am",
                                            1234,
                                            1700000000999,
                                            LocalResourceType::kFile,
                                            LocalResourceVisibility::kApplication,
                                            ""};
  ctx.environment["A"] = "1";
  ctx.commands = {"./am", "1><LOG_DIR>/stdout"};
  auto p = ToProto(ctx);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_FALSE(p->has_tokens());  // absent, never an empty (unparseable) stream
  ASSERT_EQ(p->localresources_size(), 1);
  const auto& lr = p->localresources(0).value();
  EXPECT_EQ(p->localresources(0).key(), "am");
  EXPECT_EQ(lr.resource().port(), 8020);
  EXPECT_EQ(lr.size(), 1234);
  EXPECT_EQ(lr.timestamp(), 1700000000999);
  EXPECT_EQ(lr.type(), pb::FILE);
  EXPECT_EQ(lr.visibility(), pb::APPLICATION);
  ASSERT_EQ(p->command_size(), 2);
  EXPECT_EQ(p->environment(0).key(), "A");

  ctx.tokens.AddToken("t", ipc::Token{"i", "p", "K", ""});
  p = ToProto(ctx);
  ASSERT_TRUE(p.ok());
  auto creds = ipc::Credentials::Parse(p->tokens());
  ASSERT_TRUE(creds.ok());
  EXPECT_TRUE(creds->FindToken("t").has_value());

  ctx.local_resources["bad"].url = "relative/path";
  EXPECT_EQ(ToProto(ctx).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(ProtoConvertTest, SubmissionContext) {
  ApplicationSubmissionContext ctx;
  ctx.id = {17, 3};
  ctx.name = "job";
  ctx.queue = "q";
  ctx.application_type = "TONY";
  ctx.tags = {"a", "b"};
  ctx.am_resource = {512, 1, {}};
  ctx.max_app_attempts = 2;
  ctx.am_node_label_expression = "amlabel";
  ctx.lifetime = absl::Minutes(10);
  auto p = ToProto(ctx);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->application_id().id(), 3);
  EXPECT_EQ(p->application_id().cluster_timestamp(), 17);
  EXPECT_EQ(p->queue(), "q");
  EXPECT_EQ(p->applicationtype(), "TONY");
  EXPECT_EQ(p->resource().memory(), 512);
  EXPECT_EQ(p->maxappattempts(), 2);
  EXPECT_EQ(p->applicationtags_size(), 2);
  ASSERT_EQ(p->am_container_resource_request_size(), 1);
  EXPECT_EQ(p->am_container_resource_request(0).node_label_expression(), "amlabel");
  EXPECT_EQ(p->am_container_resource_request(0).resource_name(), "*");
  ASSERT_EQ(p->application_timeouts_size(), 1);
  EXPECT_EQ(p->application_timeouts(0).timeout(), 600);
  // No priority given: none sent, so that the queue's default applies (0 would override it).
  EXPECT_FALSE(p->has_priority());
  ctx.priority = 4;
  EXPECT_EQ(ToProto(ctx)->priority().priority(), 4);
}

TEST(ProtoConvertTest, ContainerAndReports) {
  pb::ContainerStatusProto st;
  st.mutable_container_id()->set_id(5);
  st.set_state(pb::C_COMPLETE);
  ContainerStatus s = FromProto(st);
  EXPECT_EQ(s.exit_status, exit_status::kInvalid);  // proto default when unset
  EXPECT_EQ(s.diagnostics, "N/A");

  pb::ApplicationReportProto ar;
  ar.mutable_applicationid()->set_id(4);
  ar.set_yarn_application_state(pb::KILLED);
  ar.set_final_application_status(pb::APP_KILLED);
  ar.mutable_currentapplicationattemptid()->set_attemptid(1);
  EXPECT_FALSE(FromProto(ar).priority.has_value());
  ar.mutable_priority()->set_priority(10);
  ApplicationReport r = FromProto(ar);
  EXPECT_EQ(r.priority, 10);
  EXPECT_EQ(r.state, YarnApplicationState::kKilled);
  EXPECT_EQ(r.final_status, FinalApplicationStatus::kKilled);
  ASSERT_TRUE(r.current_attempt.has_value());
  EXPECT_EQ(r.current_attempt->attempt, 1);
}

}  // namespace
}  // namespace tony::yarn
