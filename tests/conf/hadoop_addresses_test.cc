// Copyright libtony authors.

#include "conf/hadoop_addresses.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tony::conf {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::vector<std::string> Strings(const std::vector<HostPort>& addresses) {
  std::vector<std::string> out;
  for (const HostPort& hp : addresses) out.push_back(hp.ToString());
  return out;
}

TEST(HostPortTest, Parses) {
  EXPECT_EQ(*ParseHostPort("nn:8020", 0), (HostPort{"nn", 8020}));
  EXPECT_EQ(*ParseHostPort(" nn ", 9870), (HostPort{"nn", 9870}));
  EXPECT_EQ(*ParseHostPort("[::1]:80", 0), (HostPort{"::1", 80}));
  EXPECT_EQ(ParseHostPort("[::1]:80", 0)->ToString(), "[::1]:80");
  EXPECT_EQ(*ParseHostPort("hdfs://nn:8020/x", 0), (HostPort{"nn", 8020}));
  EXPECT_TRUE(ParseHostPort("0.0.0.0:1", 0)->IsWildcard());
  EXPECT_FALSE(ParseHostPort("nn", 0).ok());
  EXPECT_FALSE(ParseHostPort("nn:", 1).ok());
  EXPECT_FALSE(ParseHostPort("nn:99999", 1).ok());
  auto bad = ParseHostPort(":80", 0, "my.key");
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr("my.key"));
}

TEST(FsUriTest, Parses) {
  auto uri = ParseFsUri("hdfs://nn:8020/user/x");
  ASSERT_TRUE(uri.ok());
  EXPECT_EQ(uri->scheme, "hdfs");
  EXPECT_EQ(uri->authority, "nn:8020");
  EXPECT_EQ(uri->path, "/user/x");
  EXPECT_EQ(ParseFsUri("file:///")->path, "/");
  EXPECT_EQ(ParseFsUri("file:///")->authority, "");
  EXPECT_EQ(ParseFsUri("HDFS://ns1")->scheme, "hdfs");
  EXPECT_EQ(ParseFsUri("HDFS://ns1")->path, "");
  EXPECT_EQ(ParseFsUri("/plain/path")->scheme, "");
  EXPECT_EQ(ParseFsUri("/plain/path")->path, "/plain/path");
  EXPECT_FALSE(ParseFsUri("relative/path").ok());
}

TEST(HadoopAddressesTest, Defaults) {
  Configuration conf;
  EXPECT_THAT(Strings(*RmAddresses(conf)), ElementsAre("0.0.0.0:8032"));
  EXPECT_EQ(RmSchedulerAddress(conf)->ToString(), "0.0.0.0:8030");
  EXPECT_THAT(Strings(*RmWebAddresses(conf)), ElementsAre("0.0.0.0:8088"));
  EXPECT_EQ(*DefaultFs(conf), "file:///");
  EXPECT_EQ(NameNodeWebAddress(conf)->ToString(), "0.0.0.0:9870");
  EXPECT_EQ(NodeManagerWebAddress(conf)->ToString(), "0.0.0.0:8042");
  EXPECT_EQ(*NameNodeWebScheme(conf), "http");
}

TEST(HadoopAddressesTest, HostnameDrivesDefaults) {
  Configuration conf;
  conf.Set("yarn.resourcemanager.hostname", "rm");
  conf.Set("yarn.resourcemanager.webapp.address", "rmweb:1234");
  EXPECT_THAT(Strings(*RmAddresses(conf)), ElementsAre("rm:8032"));
  EXPECT_EQ(RmSchedulerAddress(conf)->ToString(), "rm:8030");
  EXPECT_THAT(*RmWebUrls(conf), ElementsAre("http://rmweb:1234"));
  conf.Set("yarn.http.policy", "HTTPS_ONLY");
  EXPECT_THAT(*RmWebUrls(conf), ElementsAre("https://rm:8090"));
}

TEST(HadoopAddressesTest, WebProxyIsTheRmUnlessOneRunsApart) {
  Configuration conf;
  conf.Set("yarn.resourcemanager.webapp.address", "rmweb:1234");
  EXPECT_THAT(*WebProxyUrls(conf), ElementsAre("http://rmweb:1234"));
  conf.Set("yarn.web-proxy.address", "proxy:9046");
  EXPECT_THAT(*WebProxyUrls(conf), ElementsAre("http://proxy:9046"));
  conf.Set("yarn.http.policy", "HTTPS_ONLY");
  EXPECT_THAT(*WebProxyUrls(conf), ElementsAre("https://proxy:9046"));
  conf.Set("yarn.web-proxy.address", "proxy");
  EXPECT_THAT(WebProxyUrls(conf).status().message(), testing::HasSubstr("yarn.web-proxy.address"));
}

TEST(HadoopAddressesTest, ResourceManagerHa) {
  Configuration conf;
  conf.Set("yarn.resourcemanager.hostname", "ignored");
  conf.Set("yarn.resourcemanager.ha.enabled", "true");
  conf.Set("yarn.resourcemanager.ha.rm-ids", "rm1, rm2");
  conf.Set("yarn.resourcemanager.address.rm1", "host1:7032");
  conf.Set("yarn.resourcemanager.hostname.rm1", "host1");
  conf.Set("yarn.resourcemanager.hostname.rm2", "host2");
  conf.Set("yarn.resourcemanager.webapp.address.rm2", "web2:9999");
  EXPECT_THAT(*RmHaIds(conf), ElementsAre("rm1", "rm2"));
  EXPECT_THAT(Strings(*RmAddresses(conf)), ElementsAre("host1:7032", "host2:8032"));
  EXPECT_THAT(Strings(*RmSchedulerAddresses(conf)), ElementsAre("host1:8030", "host2:8030"));
  EXPECT_THAT(Strings(*RmWebAddresses(conf)), ElementsAre("host1:8088", "web2:9999"));

  conf.Set("yarn.resourcemanager.ha.rm-ids", "rm1,rm3");
  auto missing = RmAddresses(conf);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(missing.status().message(), HasSubstr("yarn.resourcemanager.hostname.rm3"));

  conf.Set("yarn.resourcemanager.ha.rm-ids", "");
  EXPECT_FALSE(RmAddresses(conf).ok());
}

TEST(HadoopAddressesTest, NameNodeWildcardUsesRpcHost) {
  Configuration conf;
  conf.Set("fs.defaultFS", "hdfs://nn.example.com:8020");
  EXPECT_EQ(NameNodeWebAddress(conf)->ToString(), "nn.example.com:9870");
  conf.Set("dfs.namenode.http-address", "web.example.com:50070");
  EXPECT_EQ(NameNodeWebAddress(conf)->ToString(), "web.example.com:50070");
  conf.Set("dfs.http.policy", "HTTPS_ONLY");
  EXPECT_EQ(NameNodeWebAddress(conf)->ToString(), "nn.example.com:9871");
  EXPECT_EQ(*NameNodeWebScheme(conf), "https");
}

TEST(HadoopAddressesTest, NameNodeHaNameservice) {
  Configuration conf;
  conf.Set("fs.defaultFS", "hdfs://ns1");
  conf.Set("dfs.nameservices", "ns1,other");
  conf.Set("dfs.ha.namenodes.ns1", "nn1,nn2");
  conf.Set("dfs.namenode.http-address.ns1.nn1", "a:9870");
  conf.Set("dfs.namenode.http-address.ns1.nn2", "0.0.0.0:9870");
  conf.Set("dfs.namenode.rpc-address.ns1.nn2", "b:8020");
  EXPECT_THAT(Strings(*NameNodeWebAddresses(conf)), ElementsAre("a:9870", "b:9870"));
  conf.Set("dfs.ha.namenodes.ns1", "nn1,nn3");
  EXPECT_THAT(NameNodeWebAddresses(conf).status().message(),
              HasSubstr("dfs.namenode.http-address.ns1.nn3"));
  // A federated, non-HA nameservice.
  conf.Set("dfs.ha.namenodes.ns1", "");
  conf.Set("dfs.namenode.http-address.ns1", "c:1");
  EXPECT_THAT(Strings(*NameNodeWebAddresses(conf)), ElementsAre("c:1"));
}

}  // namespace
}  // namespace tony::conf
