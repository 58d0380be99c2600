// Copyright libtony authors.
//
// The harness gives tests a live cluster: both NodeManagers RUNNING, addresses from the
// cluster's own configuration.

#include <cstdlib>
#include <set>
#include <string>

#include "absl/strings/match.h"
#include "conf/hadoop_addresses.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "http/client.h"
#include "http/json.h"
#include "tests/harness/hadoop_cluster.h"

namespace tony::harness {
namespace {

using ::testing::StartsWith;

TEST(ClusterTest, AccessorsComeFromTheClusterConfiguration) {
  const HadoopCluster& c = HadoopCluster::Get();
  EXPECT_EQ(std::string(std::getenv("HADOOP_CONF_DIR")), c.conf_dir());
  EXPECT_THAT(c.rm_web_url(), StartsWith("http://"));
  EXPECT_THAT(c.namenode_web_url(), StartsWith("http://"));
  EXPECT_THAT(c.default_fs(), StartsWith("hdfs://"));
  EXPECT_FALSE(c.rm_address().empty());
  EXPECT_FALSE(c.scheduler_address().empty());
  EXPECT_NE(c.rm_address(), c.scheduler_address());
  EXPECT_FALSE(c.user().empty());
  // Loading through HADOOP_CONF_DIR finds the same cluster.
  auto conf = conf::Configuration::Load();
  ASSERT_TRUE(conf.ok()) << conf.status();
  EXPECT_EQ(conf::RmAddresses(*conf)->front().ToString(), c.rm_address());
}

TEST(ClusterTest, ResourceManagerListsThreeRunningNodeManagersOnTheirOwnHosts) {
  const HadoopCluster& c = HadoopCluster::Get();
  http::Client client;
  auto response =
      client.Get(c.rm_web_url() + "/ws/v1/cluster/nodes", {{"Accept", "application/json"}});
  ASSERT_TRUE(response.ok()) << response.status();
  ASSERT_EQ(response->status, 200) << response->body;
  auto json = http::ParseJson(response->body, "/ws/v1/cluster/nodes");
  ASSERT_TRUE(json.ok()) << json.status();
  const http::Json* nodes = http::JsonField(*json, "nodes");
  ASSERT_NE(nodes, nullptr) << response->body;
  const http::Json* list = http::JsonField(*nodes, "node");
  ASSERT_NE(list, nullptr) << response->body;
  ASSERT_TRUE(list->is_array());
  int running = 0;
  std::set<std::string> hosts;
  for (const http::Json& node : *list) {
    auto state = http::JsonString(node, "state", "node");
    ASSERT_TRUE(state.ok()) << state.status();
    if (*state == "RUNNING") ++running;
    auto host = http::JsonString(node, "nodeHostName", "node");
    ASSERT_TRUE(host.ok()) << host.status();
    hosts.insert(*host);
  }
  EXPECT_EQ(running, 3) << response->body;
  // Multi-host topology (the default): every NodeManager has its own name, none is localhost.
  if (c.conf().Get("yarn.resourcemanager.hostname").value_or("") != "localhost") {
    EXPECT_EQ(hosts.size(), 3u) << response->body;
    EXPECT_EQ(hosts.count("localhost"), 0u) << response->body;
  }
}

}  // namespace
}  // namespace tony::harness
