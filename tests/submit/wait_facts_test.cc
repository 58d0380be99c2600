// Copyright libtony authors.

#include "submit/wait_facts.h"

#include <string>

#include "gtest/gtest.h"

namespace tony::submit {
namespace {

// The shape of Hadoop 3.5's GET /ws/v1/cluster/scheduler, cut to what is read.
constexpr char kScheduler[] = R"({"scheduler": {"schedulerInfo": {
  "type": "capacityScheduler", "queueName": "root", "queuePath": "root",
  "queues": {"queue": [
    {"queuePath": "root.default", "queueName": "default", "queueType": "leaf",
     "capacities": {"queueCapacitiesByPartition": [
       {"partitionName": "", "absoluteCapacity": 70.0, "absoluteUsedCapacity": 93.75,
        "absoluteMaxCapacity": 100.0},
       {"partitionName": "gpu", "absoluteCapacity": 50.0, "absoluteUsedCapacity": 0.0,
        "absoluteMaxCapacity": 50.0}]},
     "resources": {"resourceUsagesByPartition": [
       {"partitionName": "", "used": {"memory": 15360, "vCores": 5, "resourceInformations":
         {"resourceInformation": [{"name": "memory-mb", "value": 15360},
                                  {"name": "yarn.io/gpu", "value": 1}]}}},
       {"partitionName": "gpu", "used": {"memory": 0, "vCores": 0}}]},
     "users": {"user": [
       {"username": "other", "resourcesUsed": {"memory": 1, "vCores": 1},
        "userResourceLimit": {"memory": 2, "vCores": 2}},
       {"username": "alice", "resourcesUsed": {"memory": 15360, "vCores": 5},
        "userResourceLimit": {"memory": 16384, "vCores": 16}}]}},
    {"queuePath": "root.research", "queueName": "research", "queueType": "leaf",
     "users": {}}]}}}})";

std::map<std::string, PartitionTotals> Totals() {
  std::map<std::string, PartitionTotals> t;
  t[""] = {{16384, 16, 4}, {1024, 11, 3}, 2};
  t["gpu"] = {{8192, 8, 2}, {8192, 8, 2}, 1};
  return t;
}

TEST(WaitFactsTest, ParsesTheQueueByNameOrPath) {
  for (const char* name : {"default", "root.default"}) {
    auto q = ParseSchedulerQueue(kScheduler, name, "alice", Totals());
    ASSERT_TRUE(q.ok()) << q.status();
    ASSERT_EQ(q->size(), 2u);
    const QueueNumbers& d = q->at("");
    EXPECT_EQ(d.path, "root.default");
    EXPECT_DOUBLE_EQ(d.capacity_pct, 70.0);
    EXPECT_DOUBLE_EQ(d.used_pct, 93.75);
    EXPECT_EQ(d.used.memory_mb, 15360);
    EXPECT_EQ(d.used.vcores, 5);
    EXPECT_EQ(d.used.gpus, 1);
    EXPECT_EQ(d.max.memory_mb, 16384);
    EXPECT_EQ(d.partition_free.memory_mb, 1024);
    ASSERT_TRUE(d.user_limit.has_value());
    EXPECT_EQ(d.user_limit->memory_mb, 16384);
    EXPECT_EQ(d.user_used.vcores, 5);
    const QueueNumbers& g = q->at("gpu");
    EXPECT_EQ(g.max.memory_mb, 4096);  // 50 % of the gpu node
    EXPECT_EQ(g.max.gpus, 1);
    EXPECT_FALSE(g.user_limit.has_value());
  }
}

TEST(WaitFactsTest, AnUnknownQueueIsNotFound) {
  EXPECT_TRUE(absl::IsNotFound(ParseSchedulerQueue(kScheduler, "nope", "a", Totals()).status()));
  EXPECT_TRUE(absl::IsNotFound(ParseSchedulerQueue(kScheduler, "root", "a", Totals()).status()));
  EXPECT_FALSE(ParseSchedulerQueue("{", "default", "a", Totals()).ok());
}

TEST(WaitFactsTest, TotalsCountRunningNodesByLabel) {
  yarn::NodeReport a;
  a.state = yarn::NodeState::kRunning;
  a.capability = {8192, 8, {{yarn::kResourceGpu, 2}}};
  a.used = {2048, 1, {{yarn::kResourceGpu, 1}}};
  yarn::NodeReport b = a;
  b.labels = {"gpu"};
  yarn::NodeReport lost = a;
  lost.state = yarn::NodeState::kLost;
  auto t = TotalsByPartition({a, b, lost});
  ASSERT_EQ(t.size(), 2u);
  EXPECT_EQ(t[""].nodes, 1);
  EXPECT_EQ(t[""].free.memory_mb, 6144);
  EXPECT_EQ(t[""].free.gpus, 1);
  EXPECT_EQ(t["gpu"].total.vcores, 8);
}

TEST(WaitFactsTest, AppAsksCountTheAnyRequests) {
  auto asks = ParseAppAsks(R"({"app": {"id": "application_1_0001", "resourceRequests": [
    {"resourceName": "*", "numContainers": 2, "nodeLabelExpression": "gpu",
     "capability": {"memory": 2048, "vCores": 1, "resourceInformations": {"resourceInformation":
       [{"name": "yarn.io/gpu", "value": 1}]}}},
    {"resourceName": "tony-nm3", "numContainers": 2, "capability": {"memory": 2048}},
    {"resourceName": "*", "numContainers": 0, "capability": {"memory": 4096}}]}})");
  ASSERT_TRUE(asks.ok()) << asks.status();
  ASSERT_EQ(asks->size(), 1u);
  EXPECT_EQ((*asks)[0].count, 2);
  EXPECT_EQ((*asks)[0].label, "gpu");
  EXPECT_EQ((*asks)[0].each.memory_mb, 2048);
  EXPECT_EQ((*asks)[0].each.gpus, 1);
  auto none = ParseAppAsks(R"({"app": {"id": "application_1_0001"}})");
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
  EXPECT_FALSE(ParseAppAsks("{}").ok());
}

}  // namespace
}  // namespace tony::submit

namespace tony::submit {
namespace {

// GET /ws/v1/cluster/nodes as Hadoop 3.5 answers it (cut): a node of label "gpu", one of the
// default partition (no nodeLabels), a LOST one that does not count.
TEST(WaitFactsTest, NodesTotalsFromTheRestApiByLabel) {
  auto t = ParseNodesTotals(R"({"nodes": {"node": [
    {"state": "RUNNING", "nodeLabels": ["gpu"], "usedMemoryMB": 7168, "availMemoryMB": 1024,
     "usedVirtualCores": 1, "availableVirtualCores": 7,
     "usedResource": {"memory": 7168, "resourceInformations": {"resourceInformation":
       [{"name": "yarn.io/gpu", "value": 1}]}},
     "availableResource": {"memory": 1024, "resourceInformations": {"resourceInformation":
       [{"name": "yarn.io/gpu", "value": 1}]}}},
    {"state": "RUNNING", "usedMemoryMB": 0, "availMemoryMB": 8192, "usedVirtualCores": 0,
     "availableVirtualCores": 8},
    {"state": "LOST", "usedMemoryMB": 0, "availMemoryMB": 8192}]}})");
  ASSERT_TRUE(t.ok()) << t.status();
  ASSERT_EQ(t->size(), 2u);
  EXPECT_EQ(t->at("gpu").nodes, 1);
  EXPECT_EQ(t->at("gpu").total.memory_mb, 8192);
  EXPECT_EQ(t->at("gpu").total.gpus, 2);
  EXPECT_EQ(t->at("gpu").free.memory_mb, 1024);
  EXPECT_EQ(t->at("gpu").free.gpus, 1);
  EXPECT_EQ(t->at("").nodes, 1);
  EXPECT_EQ(t->at("").total.vcores, 8);
  auto none = ParseNodesTotals(R"({"nodes": null})");
  ASSERT_TRUE(none.ok()) << none.status();
  EXPECT_TRUE(none->empty());
  EXPECT_FALSE(ParseNodesTotals(R"({"other": 1})").ok());
  EXPECT_FALSE(ParseNodesTotals("[").ok());
}

}  // namespace
}  // namespace tony::submit
