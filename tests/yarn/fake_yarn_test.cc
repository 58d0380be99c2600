// Copyright libtony authors.

#include "yarn/fake_yarn.h"

#include "gtest/gtest.h"

namespace tony::yarn {
namespace {

TEST(FakeYarnTest, AllocateLaunchCompleteUnregister) {
  auto cluster = std::make_shared<FakeYarnCluster>();
  cluster->AddNode({"n1", 1}, {4096, 4, {{kResourceGpu, 1}}});
  cluster->AddNode({"n2", 2}, {4096, 4, {}});
  FakeAmRmClient rm(cluster);
  FakeNmClient nm(cluster);

  EXPECT_FALSE(rm.Allocate(0).ok());
  auto reg = rm.Register("am", 0, "");
  ASSERT_TRUE(reg.ok());
  EXPECT_EQ(reg->max_capability.memory_mb, 4096);

  ContainerRequest gpu;
  gpu.capability = {1024, 1, {{kResourceGpu, 1}}};
  gpu.count = 2;  // only one GPU in the cluster
  int64_t gpu_id = rm.AddContainerRequest(gpu);
  ContainerRequest big;
  big.capability = {3000, 1, {}};
  big.count = 2;
  int64_t big_id = rm.AddContainerRequest(big);

  auto r = rm.Allocate(0);
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->allocated.size(), 3u);
  EXPECT_EQ(rm.Outstanding(gpu_id), 1);
  EXPECT_EQ(rm.Outstanding(big_id), 0);
  EXPECT_EQ(r->allocated[0].node.host, "n1");
  EXPECT_EQ(r->allocated[0].allocation_request_id, gpu_id);

  ContainerLaunchContext ctx;
  ctx.commands = {"true"};
  ASSERT_TRUE(nm.StartContainer(r->allocated[0], ctx).ok());
  EXPECT_FALSE(nm.StartContainer(r->allocated[0], ctx).ok());
  EXPECT_EQ(nm.GetContainerStatus(r->allocated[0].id, r->allocated[0].node)->state,
            ContainerState::kRunning);

  cluster->CompleteContainer(r->allocated[0].id, 7, "boom");
  ASSERT_TRUE(nm.StopContainer(r->allocated[1].id, r->allocated[1].node).ok());
  rm.ReleaseContainer(r->allocated[2].id);
  auto r2 = rm.Allocate(0);
  ASSERT_TRUE(r2.ok());
  ASSERT_EQ(r2->completed.size(), 3u);
  EXPECT_EQ(r2->completed[0].exit_status, 7);
  EXPECT_EQ(r2->completed[1].exit_status, exit_status::kKilledByAppMaster);
  EXPECT_EQ(r2->completed[2].exit_status, exit_status::kAborted);
  // The freed GPU goes to the remaining request.
  ASSERT_EQ(r2->allocated.size(), 1u);
  EXPECT_EQ(r2->allocated[0].allocation_request_id, gpu_id);

  cluster->SendAmCommand(AmCommand::kShutdown);
  EXPECT_EQ(rm.Allocate(0)->command, AmCommand::kShutdown);
  ASSERT_TRUE(rm.Unregister(FinalApplicationStatus::kFailed, "why", "").ok());
  EXPECT_EQ(cluster->final_status(), FinalApplicationStatus::kFailed);
  EXPECT_EQ(cluster->final_diagnostics(), "why");
  auto launched = cluster->container(r->allocated[0].id);
  ASSERT_TRUE(launched.has_value());
  ASSERT_TRUE(launched->context.has_value());
  EXPECT_EQ(launched->context->commands[0], "true");
}

TEST(FakeYarnTest, ClientSubmitReportKill) {
  auto cluster = std::make_shared<FakeYarnCluster>();
  cluster->AddNode({"n1", 1}, {4096, 4, {}});
  FakeYarnClient client(cluster);
  auto app = client.CreateApplication();
  ASSERT_TRUE(app.ok());
  EXPECT_EQ(client.GetApplicationReport(app->id).status().code(), absl::StatusCode::kNotFound);
  ApplicationSubmissionContext ctx;
  ctx.id = app->id;
  ctx.name = "job";
  ASSERT_TRUE(client.SubmitApplication(ctx).ok());
  EXPECT_EQ(cluster->submission(app->id)->name, "job");
  EXPECT_EQ(client.GetApplicationReport(app->id)->state, YarnApplicationState::kAccepted);
  cluster->SetApplicationState(app->id, YarnApplicationState::kRunning);
  ASSERT_TRUE(client.KillApplication(app->id, "bye").ok());
  EXPECT_EQ(client.GetApplicationReport(app->id)->state, YarnApplicationState::kKilled);
  EXPECT_EQ(client.ListNodes({})->size(), 1u);
}

}  // namespace
}  // namespace tony::yarn
