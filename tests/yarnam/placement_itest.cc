// Copyright libtony authors.
//
// Placement on the real test YARN: sizes checked before submission, queues, node labels, GPUs;
// and, with the cluster to themselves (*Exclusive*), jobs whose tasks must land on two nodes.
// After every test no container or process of its job remains.

#include <arpa/inet.h>
#include <dirent.h>
#include <netdb.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "broker/broker_client.h"
#include "broker/secret.h"
#include "common/file_util.h"
#include "common/subprocess.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "http/client.h"
#include "http/json.h"
#include "ipc/credentials.h"
#include "tests/harness/hadoop_cluster.h"
#include "yarn/yarn_client.h"

#include "tests/yarnam/job_itest_util.h"

namespace tony::itest {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

TEST(YarnPlacementTest, AskingMoreThanAnyNodeHasFailsBeforeSubmitting) {
  Result r = RunCommand({Submit(), "--yarn", "-r", "worker:1", "-m", "worker:100g", "true"});
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_THAT(r.err, HasSubstr("asks for 102400 MB but no node in the default partition"));
  EXPECT_THAT(r.err, HasSubstr("the largest is "));
  EXPECT_EQ(AppIdOf(r), "");
}

TEST(YarnPlacementTest, AGangThatCanNeverRunAtOnceFailsBeforeSubmitting) {
  // Every task fits a node, but the AM and three 8 GB tasks never fit the test cluster at once:
  // before this check the job sat at "0/2 allocated" until the registration deadline.
  Result r = RunCommand({Submit(), "--yarn", "-r", "ps:1,worker:2", "-m", "8g", "true"});
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_THAT(r.err, HasSubstr("can never run at once"));
  EXPECT_EQ(AppIdOf(r), "");
}

TEST(YarnPlacementTest, NodeLabelsPlaceTasksAndTheAmOnlyOnTheLabelledNode) {
  const std::vector<std::string> gpu_nodes = NodeHosts("gpu");
  ASSERT_EQ(gpu_nodes.size(), 1u);
  Result r = RunCommand({Submit(), "--yarn", "-n", "itest-label", "-r", "ps:1,worker:2", "-m",
                         "256m", "--node_label", "worker:gpu", "--node_label", "ps:gpu",
                         "--am_node_label", "gpu", "echo \"on $NM_HOST\""});
  std::string app = AppIdOf(r);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_THAT(NodesThatRan(app), ::testing::ElementsAre(3));
  Result logs = RunCommand({Ytf(), "logs", app, "--task", "worker:1"});
  EXPECT_THAT(logs.out, HasSubstr("on " + gpu_nodes[0]));
  ExpectNothingLeft(app);
}

TEST(YarnPlacementTest, UnknownNodeLabelFailsBeforeSubmittingNamingTheLabels) {
  Result r = RunCommand(
      {Submit(), "--yarn", "-r", "worker:1", "-m", "256m", "--node_label", "worker:fpga", "true"});
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_THAT(r.err, HasSubstr("'fpga' (--node_label worker:<label>)"));
  EXPECT_THAT(r.err, HasSubstr("labels on running nodes: gpu"));
  EXPECT_EQ(AppIdOf(r), "");
  Result am = RunCommand(
      {Submit(), "--yarn", "-r", "worker:1", "-m", "256m", "--am_node_label", "fpga", "true"});
  EXPECT_EQ(am.exit_code, 2) << am.out << am.err;
  EXPECT_THAT(am.err, HasSubstr("ApplicationMaster asks for node label 'fpga'"));
}

TEST(YarnPlacementTest, QueueResearchTakesTheJobAndAnUnknownQueueFailsBeforeSubmitting) {
  Result r = RunCommand({Submit(), "--yarn", "-n", "itest-queue", "-q", "research", "-r",
                         "worker:1", "-m", "256m", "true"});
  std::string app = AppIdOf(r);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  http::Json a = Rm("/ws/v1/cluster/apps/" + app);
  ASSERT_TRUE(a.contains("app")) << app;
  EXPECT_THAT(a["app"]["queue"].get<std::string>(), ::testing::EndsWith("research"));

  Result bad = RunCommand({Submit(), "--yarn", "-q", "nosuch", "-r", "worker:1", "true"});
  EXPECT_EQ(bad.exit_code, 2) << bad.out << bad.err;
  EXPECT_THAT(bad.err, HasSubstr("queue 'nosuch' (-q/--queue)"));
  EXPECT_THAT(bad.err, HasSubstr("queues you may submit to: default, research"));
  EXPECT_EQ(AppIdOf(bad), "");
}

TEST(YarnPlacementTest, GpusArePlacedAndMoreThanAnyNodeHasFailsNamingTheLargestNode) {
  Result r = RunCommand({Submit(), "--yarn", "-n", "itest-gpu", "-r", "worker:2", "-m", "256m",
                         "-g", "2", "echo \"gpus:[${CUDA_VISIBLE_DEVICES-unset}]\""});
  std::string app = AppIdOf(r);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  // 2 GPUs per node: the two workers need both default-partition nodes.
  EXPECT_THAT(NodesThatRan(app), ::testing::ElementsAre(1, 2));
  // The test cluster has no GPU plugin: YARN counts GPUs but assigns no devices, as the
  // executor learnt from its NodeManager.
  Result logs = RunCommand({Ytf(), "logs", app, "--task", "worker:0"});
  EXPECT_THAT(logs.out, HasSubstr("gpus:[unset]"));
  Result err = RunCommand({Ytf(), "logs", app, "--task", "worker:0", "--file", "stderr"});
  EXPECT_THAT(err.out, HasSubstr("YARN assigned no GPU device to container_")) << err.out;

  Result big = RunCommand({Submit(), "--yarn", "-r", "worker:1", "-m", "256m", "-g", "3", "true"});
  EXPECT_EQ(big.exit_code, 2) << big.out << big.err;
  EXPECT_THAT(big.err, HasSubstr("asks for 3 GPUs (yarn.io/gpu)"));
  EXPECT_THAT(big.err, HasSubstr("the largest is "));
  EXPECT_THAT(big.err, HasSubstr("yarn.io/gpu:2"));
  EXPECT_EQ(AppIdOf(big), "");
}

// Two small workers would fit one node; anti-affinity puts them on two. A third has no node
// left: refused before submission.
TEST(YarnPlacementTest, AntiAffinityPutsEachWorkerOnANodeOfItsOwn) {
  Result r = RunCommand({Submit(), "--yarn", "-n", "itest-anti-affinity", "-r", "worker:2", "-m",
                         "256m", "--anti_affinity", "worker", "echo \"on $NM_HOST\""});
  const std::string app = AppIdOf(r);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  std::set<std::string> nodes;  // each worker's NodeManager, from its log's header
  for (int i = 0; i < 2; ++i) {
    Result logs =
        RunCommand({Ytf(), "logs", app, "--task", absl::StrCat("worker:", i), "--file", "stdout"});
    // From the NodeManager ("on HOST:PORT") or, once YARN aggregated the finished job's logs,
    // from HDFS (".../HOST_PORT"): either way the node's host.
    std::smatch m;
    static const std::regex header(
        "\\(container_[0-9_e]+ (on ([^):]+)|from the aggregated logs in \\S*/([^/_)]+)_[0-9]+)");
    ASSERT_TRUE(std::regex_search(logs.out, m, header)) << logs.out;
    nodes.insert(m[2].matched ? m[2].str() : m[3].str());
  }
  EXPECT_EQ(nodes.size(), 2u) << "both workers ran on " << *nodes.begin();

  Result three = RunCommand(
      {Submit(), "--yarn", "-r", "worker:3", "-m", "256m", "--anti_affinity", "worker", "true"});
  EXPECT_EQ(three.exit_code, 2) << three.out << three.err;
  EXPECT_THAT(three.err, HasSubstr("its 3 tasks need a node each, but 2 running node(s)"));
  EXPECT_EQ(AppIdOf(three), "");
}

// Each test NodeManager reports the node attribute nm.yarn.io/node=nm<i> (scripts/hadoop-cluster).
TEST(YarnPlacementTest, ANodeAttributeKeepsARoleOnTheNodesThatMatch) {
  // The node whose attribute says nm2, as the ResourceManager knows it.
  std::string nm2;
  ASSERT_TRUE(WaitUntil(
      [&] {
        http::Json nodes = Rm("/ws/v1/cluster/nodes");
        if (!nodes.contains("nodes") || !nodes["nodes"].contains("node")) return false;
        for (const http::Json& n : nodes["nodes"]["node"]) {
          if (absl::StrContains(n.dump(), "\"nm2\"")) nm2 = n.value("nodeHTTPAddress", "");
        }
        return !nm2.empty();
      },
      absl::Seconds(30)))
      << "no node reports nm.yarn.io/node=nm2: " << Rm("/ws/v1/cluster/nodes").dump();
  const std::string nm2_host = nm2.substr(0, nm2.find(':'));  // as the task's $NM_HOST
  auto node_of = [](const std::string& app, const std::string& task) {
    Result logs = RunCommand({Ytf(), "logs", app, "--task", task, "--file", "stdout"});
    // The task's own line (the log's header names the NodeManager, or HDFS once YARN
    // aggregated the job's logs).
    std::smatch m;
    static const std::regex line("(^|\n)on ([^\n]+)");
    return std::regex_search(logs.out, m, line) ? m[2].str() : logs.out + logs.err;
  };
  Result eq = RunCommand({Submit(), "--yarn", "-n", "itest-node-attribute", "-r", "ps:1,worker:2",
                          "-m", "256m", "--node_attribute", "worker:nm.yarn.io/node=nm2",
                          "echo \"on $NM_HOST\""});
  const std::string app = AppIdOf(eq);
  EXPECT_EQ(eq.exit_code, 0) << eq.out << eq.err;
  EXPECT_EQ(node_of(app, "worker:0"), nm2_host);
  EXPECT_EQ(node_of(app, "worker:1"), nm2_host);
  Result ne = RunCommand({Submit(), "--yarn", "-n", "itest-node-attribute-ne", "-r", "worker:1",
                          "-m", "256m", "--node_attribute", "worker:nm.yarn.io/node!=nm1",
                          "echo \"on $NM_HOST\""});
  EXPECT_EQ(ne.exit_code, 0) << ne.out << ne.err;
  EXPECT_EQ(node_of(AppIdOf(ne), "worker:0"), nm2_host);  // nm3 is the "gpu" partition's

  Result bad = RunCommand(
      {Submit(), "--yarn", "-r", "worker:1", "--node_attribute", "worker:nm.yarn.io/node", "true"});
  EXPECT_EQ(bad.exit_code, 2) << bad.out << bad.err;
  EXPECT_THAT(bad.err, HasSubstr("is not a node attribute expression"));
  EXPECT_EQ(AppIdOf(bad), "");
}

TEST(YarnPlacementExclusiveTest, TasksOnTwoNodesAdvertiseTheirNodesAddressesAndReachEachOther) {
  const std::string src = harness::HadoopCluster::Get().source_dir();
  Result r =
      RunCommand({Submit(), "--yarn", "-n", "itest-cross-node", "-r", "worker:2", "-m", "5g", "-s",
                  src + "/tests/yarnam/cross_node_probe.py", Python() + " ${DTF_TASK_SCRIPT}"});
  std::string app = AppIdOf(r);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_THAT(NodesThatRan(app), ::testing::ElementsAre(1, 2));
  std::vector<std::string> hosts;
  for (int i = 0; i < 2; ++i) {
    Result logs = RunCommand({Ytf(), "logs", app, "--task", absl::StrCat("worker:", i)});
    EXPECT_THAT(logs.out, HasSubstr(absl::StrCat("reached worker:", 1 - i))) << logs.out;
    EXPECT_THAT(logs.out, HasSubstr("probe done")) << logs.out;
    std::smatch m;
    static const std::regex re("advertises ([^:]+):[0-9]+ \\(([0-9.]+)\\); NM_HOST=([^;]*)");
    ASSERT_TRUE(std::regex_search(logs.out, m, re)) << logs.out;
    // The address a task advertises is its node's: the NodeManager's name, and the address its
    // connections to the other node come from.
    EXPECT_EQ(m[1].str(), m[3].str());
    EXPECT_THAT(logs.out, HasSubstr(absl::StrCat(" from ", m[2].str(), ":")));
    hosts.push_back(m[1].str());
  }
  if (MultiHost()) {
    ASSERT_EQ(hosts.size(), 2u);
    EXPECT_NE(hosts[0], hosts[1]);
    for (const std::string& h : hosts) {
      EXPECT_NE(h, "localhost");
      EXPECT_THAT(NodeHosts(""), ::testing::Contains(h));
    }
  }
  ExpectNothingLeft(app);
}

TEST(YarnPlacementExclusiveTest, PyTorchDdpExampleTrainsAcrossTwoNodes) {
  const std::string src = harness::HadoopCluster::Get().source_dir();
  // 5 GB workers cannot share an 8 GB node: rank 0 and rank 1 are on different nodes, and gloo
  // connects them over the network by the addresses the ranks advertise.
  Result r = RunCommand(
      {Submit(), "--yarn", "-n", "itest-pytorch", "--framework", "pytorch", "-r", "worker:2", "-m",
       "5g", "-s", src + "/examples/pytorch_ddp.py", Python() + " ${DTF_TASK_SCRIPT}"},
      absl::Minutes(10));
  std::string app = AppIdOf(r);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(WaitForEnd(app), "FINISHED/SUCCEEDED");
  EXPECT_THAT(NodesThatRan(app), ::testing::ElementsAre(1, 2));
  std::vector<std::string> nodes;
  for (int i = 0; i < 2; ++i) {
    const std::string task = absl::StrCat("worker:", i);
    Result logs = RunCommand({Ytf(), "logs", app, "--task", task});
    EXPECT_THAT(logs.out, HasSubstr(absl::StrCat("pytorch_ddp done: rank ", i, "/2"))) << logs.out;
    nodes.push_back(NodeInLogs(app, task, "rank [0-9]/2 on ([^,]+),"));
  }
  EXPECT_NE(nodes[0], "");
  EXPECT_NE(nodes[0], nodes[1]);
  ExpectNothingLeft(app);
}

TEST(YarnPlacementExclusiveTest, Tf2MultiWorkerMirroredExampleTrainsAcrossTwoNodes) {
  const std::string src = harness::HadoopCluster::Get().source_dir();
  Result r = RunCommand({Submit(), "--yarn", "-n", "itest-mwms", "-r", "worker:2", "-m", "5g", "-s",
                         src + "/examples/tf2_multi_worker_mirrored.py",
                         Python() + " ${DTF_TASK_SCRIPT} --steps 100"},
                        absl::Minutes(10));
  std::string app = AppIdOf(r);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(WaitForEnd(app), "FINISHED/SUCCEEDED");
  EXPECT_THAT(NodesThatRan(app), ::testing::ElementsAre(1, 2));
  std::vector<std::string> nodes;
  for (int i = 0; i < 2; ++i) {
    const std::string task = absl::StrCat("worker:", i);
    Result logs = RunCommand({Ytf(), "logs", app, "--task", task});
    EXPECT_THAT(logs.out,
                HasSubstr(absl::StrCat("tf2_multi_worker_mirrored done: worker ", i, " of 2")))
        << logs.out;
    nodes.push_back(NodeInLogs(app, task, "worker [0-9] on ([^:]+):"));
  }
  EXPECT_NE(nodes[0], "");
  EXPECT_NE(nodes[0], nodes[1]);
  ExpectNothingLeft(app);
}

}  // namespace
}  // namespace tony::itest
