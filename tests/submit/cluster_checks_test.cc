// Copyright libtony authors.
//
// The submitter's pre-submission checks against the fake ResourceManager (src/yarn/fake_yarn.h):
// queues (unknown, stopped, forbidden, by path), node labels (unknown, not accessible from the
// queue) and per-partition node sizes (the largest node is named).

#include "submit/cluster_checks.h"

#include <memory>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "yarn/fake_yarn.h"

namespace tony::submit {
namespace {

using ::testing::HasSubstr;
using yarn::QueueInfo;
using yarn::QueueState;

class ClusterChecksTest : public ::testing::Test {
 protected:
  void SetUp() override {
    cluster_ = std::make_shared<yarn::FakeYarnCluster>();
    cluster_->AddNode({"nm1", 1}, {8192, 8, {{yarn::kResourceGpu, 2}}});
    cluster_->AddNode({"nm2", 2}, {4096, 8, {{yarn::kResourceGpu, 1}}});
    cluster_->AddNode({"nm3", 3}, {8192, 8, {{yarn::kResourceGpu, 4}}}, "gpu");
    cluster_->SetQueues({{"root", "root", QueueState::kRunning, false, {"*"}, ""},
                         {"default", "root.default", QueueState::kRunning, true, {"gpu"}, ""},
                         {"research", "root.research", QueueState::kRunning, true, {}, ""},
                         {"retired", "root.retired", QueueState::kStopped, true, {}, ""},
                         {"private", "root.private", QueueState::kRunning, true, {}, ""}},
                        {"root", "root.default", "root.research", "root.retired"});
    client_ = std::make_unique<yarn::FakeYarnClient>(cluster_);
    spec_.job_types = {JobTypeSpec{}};
    spec_.job_types[0].name = "worker";
    spec_.task_defaults.memory_mb = 1024;
  }

  absl::Status Check() {
    auto queue = CheckQueue(spec_, *client_);
    if (!queue.ok()) return queue.status();
    return CheckNodes(spec_, *queue, *client_);
  }

  std::shared_ptr<yarn::FakeYarnCluster> cluster_;
  std::unique_ptr<yarn::FakeYarnClient> client_;
  JobSpec spec_;
};

TEST_F(ClusterChecksTest, QueueByNameOrPath) {
  EXPECT_TRUE(Check().ok());
  spec_.queue = "root.research";
  EXPECT_TRUE(Check().ok());
}

TEST_F(ClusterChecksTest, ANewLeafUnderAnExistingParentIsLeftToTheRm) {
  spec_.queue = "root.alice";  // root exists: the scheduler may create the leaf
  EXPECT_TRUE(Check().ok());
  spec_.queue = "nosuch.alice";
  EXPECT_EQ(Check().code(), absl::StatusCode::kInvalidArgument);
}

TEST_F(ClusterChecksTest, UnknownStoppedOrForbiddenQueueNamesTheOpenOnes) {
  for (const auto& [queue, what] : std::vector<std::pair<std::string, std::string>>{
           {"nosuch", "queue 'nosuch' (-q/--queue) is not a leaf queue of this cluster"},
           {"root", "queue 'root' (-q/--queue) is not a leaf queue"},
           {"retired", "queue 'retired' (-q/--queue) is STOPPED"},
           {"private", "you may not submit to queue 'private' (-q/--queue)"}}) {
    spec_.queue = queue;
    absl::Status s = Check();
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << queue;
    EXPECT_THAT(std::string(s.message()), HasSubstr(what));
    EXPECT_THAT(std::string(s.message()),
                HasSubstr("; queues you may submit to: default, research"));
  }
}

TEST_F(ClusterChecksTest, LabelsMustExistAndBeAccessibleFromTheQueue) {
  spec_.job_types[0].node_label = "fpga";
  absl::Status s = Check();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(),
            "task worker:0 asks for node label 'fpga' (--node_label worker:<label>) but no running "
            "node of this cluster has it; labels on running nodes: gpu");

  spec_.job_types[0].node_label = "gpu";
  EXPECT_TRUE(Check().ok());
  spec_.queue = "research";
  s = Check();
  EXPECT_THAT(std::string(s.message()),
              HasSubstr("but queue 'research' may not use it; it may use: none"));

  spec_.queue = "default";
  spec_.job_types[0].node_label = "";
  spec_.am_node_label = "fpga";
  s = Check();
  EXPECT_THAT(std::string(s.message()),
              HasSubstr("the ApplicationMaster asks for node label 'fpga' (--am_node_label)"));
}

TEST_F(ClusterChecksTest, AntiAffinityNeedsANodeOfTheDefaultPartitionPerTask) {
  // nm1 and nm2 are the default partition; nm3 (labelled) does not count.
  spec_.job_types[0].instances = 3;
  spec_.job_types[0].anti_affinity = true;
  absl::Status s = Check();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(),
            "worker has anti_affinity (--anti_affinity): its 3 tasks need a node each, but 2 "
            "running node(s) of the default partition can hold one; lower its instances or drop "
            "anti_affinity");
  spec_.job_types[0].instances = 2;
  EXPECT_TRUE(Check().ok()) << Check();
  // A task only nm1 can hold: one node.
  spec_.task_defaults.memory_mb = 6000;
  EXPECT_THAT(std::string(Check().message()), HasSubstr("but 1 running node(s)"));
  // An elastic role needs its minimum only.
  spec_.task_defaults.memory_mb = 1024;
  spec_.framework = Framework::kPyTorch;
  spec_.job_types[0].instances = 3;
  spec_.job_types[0].elastic = ElasticRange{2, 3};
  EXPECT_TRUE(Check().ok()) << Check();
}

TEST_F(ClusterChecksTest, ANodeAttributeNeedsAMatchingNodeOfTheDefaultPartition) {
  cluster_->SetNodeAttribute("nm1", "nm.yarn.io/pool", "a");
  cluster_->SetNodeAttribute("nm3", "nm.yarn.io/pool", "b");  // the "gpu" partition's
  spec_.task_defaults.memory_mb = 1024;
  spec_.job_types[0].node_attribute = "nm.yarn.io/pool=a";
  EXPECT_TRUE(Check().ok()) << Check();
  spec_.job_types[0].node_attribute = "nm.yarn.io/pool!=a";  // nm2 has none: it matches
  EXPECT_TRUE(Check().ok()) << Check();
  spec_.job_types[0].node_attribute = "nm.yarn.io/pool=b";
  absl::Status s = Check();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(),
            "worker needs a node with nm.yarn.io/pool=b (--node_attribute), but no running node "
            "of the default partition that could hold its task has it; the nodes report: "
            "nm.yarn.io/pool=a, nm.yarn.io/pool=b");
  // Unprefixed: YARN's rm.yarn.io/.
  spec_.job_types[0].node_attribute = "pool=a";
  EXPECT_THAT(std::string(Check().message()), HasSubstr("needs a node with pool=a"));
  // nm1 has it but cannot hold a 9 GB task.
  spec_.job_types[0].node_attribute = "nm.yarn.io/pool=a";
  spec_.task_defaults.memory_mb = 9000;
  EXPECT_FALSE(Check().ok());
}

TEST_F(ClusterChecksTest, TooBigForEveryNodeOfThePartitionNamesTheLargest) {
  // 3 GPUs: the labelled node has 4, but it is not in the default partition.
  spec_.task_defaults.gpus = 3;
  absl::Status s = Check();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(),
            "task worker:0 asks for 3 GPUs (yarn.io/gpu) but no node in the default partition has "
            "that much; the largest is nm1:1 with <memory:8192, vCores:8, yarn.io/gpu:2>; lower "
            "-g/--task_gpus");
  spec_.job_types[0].node_label = "gpu";
  EXPECT_TRUE(Check().ok());

  spec_.job_types[0].node_label = "";
  spec_.task_defaults.gpus = 0;
  spec_.task_defaults.memory_mb = 9000;
  s = Check();
  EXPECT_THAT(std::string(s.message()), HasSubstr("asks for 9000 MB"));
  EXPECT_THAT(std::string(s.message()), HasSubstr("the largest is nm1:1"));
  EXPECT_THAT(std::string(s.message()), HasSubstr("lower -m/--task_memory"));

  // Each resource fits on some node, but no node has all of them.
  cluster_->AddNode({"nm4", 4}, {16384, 8, {{yarn::kResourceGpu, 0}}});
  spec_.task_defaults.memory_mb = 10000;
  spec_.task_defaults.gpus = 2;
  s = Check();
  EXPECT_THAT(std::string(s.message()),
              HasSubstr("asks for <memory:10000, vCores:1, yarn.io/gpu:2> but no node in the "
                        "default partition has that much"));
  spec_.task_defaults.memory_mb = 5000;  // nm1 holds 5000 MB and 2 GPUs
  EXPECT_TRUE(Check().ok());
}

}  // namespace
}  // namespace tony::submit
