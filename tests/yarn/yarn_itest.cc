// Copyright libtony authors.
//
// YARN clients against the real test cluster (one RM, three NodeManagers, each its own host).

#include <unistd.h>

#include <climits>
#include <set>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "hadoop/yarn_security_token.pb.h"
#include "hadoop/yarn_service_protos.pb.h"
#include "ipc/rpc_client.h"
#include "ipc/rpc_errors.h"
#include "tests/harness/hadoop_cluster.h"
#include "tests/testing/wait_until.h"
#include "yarn/am_rm_client.h"
#include "yarn/local_resource.h"
#include "yarn/yarn_client.h"

namespace tony::yarn {
namespace {

using ::testing::HasSubstr;

std::string TestAmPath() {
  char buf[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  std::string self(buf, n > 0 ? static_cast<size_t>(n) : 0);
  return self.substr(0, self.rfind('/')) + "/yarn_test_am";
}

class YarnItest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto& cluster = harness::HadoopCluster::Get();
    rm_ = cluster.rm_address();
    scheduler_ = cluster.scheduler_address();
    ASSERT_FALSE(rm_.empty());
    YarnClientOptions o;
    o.rm_addresses = {rm_};
    o.call_timeout = absl::Seconds(30);
    auto c = NewYarnClient(o);
    ASSERT_TRUE(c.ok()) << c.status();
    client_ = *std::move(c);
  }

  // Submits yarn_test_am in `mode`; returns the application id.
  ApplicationId SubmitTestAm(const std::string& mode) {
    auto app = client_->CreateApplication();
    EXPECT_TRUE(app.ok()) << app.status();
    if (!app.ok()) return {};
    ApplicationSubmissionContext ctx;
    ctx.id = app->id;
    ctx.name = absl::StrCat("yarn_itest-", mode);
    ctx.application_type = "LIBTONY_TEST";
    ctx.max_app_attempts = 1;
    ctx.am_resource.memory_mb = 128;
    ctx.am_resource.vcores = 1;
    ctx.am_container.environment["TONY_TEST_RM_SCHEDULER"] = scheduler_;
    // The AM binary travels as a file:// local resource: the NodeManager localizes it into the
    // container's working directory (size and mtime must match the file).
    auto am_binary = LocalFileResource(TestAmPath());
    EXPECT_TRUE(am_binary.ok()) << am_binary.status();
    if (!am_binary.ok()) return {};
    ctx.am_container.local_resources["yarn_test_am"] = *am_binary;
    ctx.am_container.commands = {"./yarn_test_am", mode, "1><LOG_DIR>/stdout",
                                 "2><LOG_DIR>/stderr"};
    absl::Status s = client_->SubmitApplication(ctx);
    EXPECT_TRUE(s.ok()) << s;
    return app->id;
  }

  ApplicationReport WaitFor(const ApplicationId& id, bool (*done)(const ApplicationReport&),
                            absl::Duration timeout) {
    ApplicationReport last;
    bool failed = false;
    const bool reached = testing::WaitUntil(
        [&] {
          auto r = client_->GetApplicationReport(id);
          EXPECT_TRUE(r.ok()) << r.status();
          if (!r.ok()) {
            failed = true;
            return true;
          }
          last = *r;
          return done(last);
        },
        timeout);
    if (failed || reached) return last;
    ADD_FAILURE() << id.ToString() << " still " << YarnApplicationStateName(last.state) << ": "
                  << last.diagnostics;
    return last;
  }

  static bool Terminal(const ApplicationReport& r) { return IsTerminal(r.state); }
  static bool Running(const ApplicationReport& r) {
    return r.state == YarnApplicationState::kRunning || IsTerminal(r.state);
  }

  std::string rm_;
  std::string scheduler_;
  std::unique_ptr<YarnClient> client_;
};

TEST_F(YarnItest, NewApplicationAndThreeNodesOneLabelled) {
  auto app = client_->CreateApplication();
  ASSERT_TRUE(app.ok()) << app.status();
  EXPECT_GT(app->id.cluster_timestamp, 0);
  EXPECT_GT(app->id.id, 0);
  EXPECT_GT(app->max_capability.memory_mb, 0);
  EXPECT_THAT(app->id.ToString(), ::testing::StartsWith("application_"));

  auto nodes = client_->ListNodes({});
  ASSERT_TRUE(nodes.ok()) << nodes.status();
  ASSERT_EQ(nodes->size(), 3u);
  std::set<NodeId> ids;
  std::vector<std::string> labelled;
  const bool multi_host =
      harness::HadoopCluster::Get().conf().Get("yarn.resourcemanager.hostname").value_or("") !=
      "localhost";
  std::set<std::string> hosts;
  for (const auto& n : *nodes) {
    ids.insert(n.id);
    hosts.insert(n.id.host);
    EXPECT_EQ(n.state, NodeState::kRunning);
    EXPECT_GT(n.capability.memory_mb, 0);
    EXPECT_GT(n.id.port, 0);
    EXPECT_EQ(n.capability.others.at(kResourceGpu), 2) << n.capability.ToString();
    if (!n.labels.empty()) labelled.push_back(n.id.ToString() + "=" + n.labels.front());
  }
  EXPECT_EQ(ids.size(), 3u);
  EXPECT_EQ(labelled.size(), 1u) << ::testing::PrintToString(labelled);
  // On the multi-host topology every NodeManager has its own name (and address).
  if (multi_host) {
    EXPECT_EQ(hosts.size(), 3u) << ::testing::PrintToString(hosts);
  }
  auto types = client_->GetResourceTypes();
  ASSERT_TRUE(types.ok()) << types.status();
  bool has_memory = false;
  bool has_gpu = false;
  for (const auto& t : *types) {
    has_memory |= t.name == "memory-mb";
    has_gpu |= t.name == kResourceGpu;
  }
  EXPECT_TRUE(has_memory);
  EXPECT_TRUE(has_gpu);
}

TEST_F(YarnItest, QueuesAndTheirAcls) {
  auto queues = client_->ListQueues();
  ASSERT_TRUE(queues.ok()) << queues.status();
  std::vector<std::string> leaves;
  for (const auto& q : *queues) {
    if (!q.leaf) continue;
    leaves.push_back(q.path);
    EXPECT_EQ(q.state, QueueState::kRunning) << q.path;
    EXPECT_THAT(q.accessible_labels, ::testing::Contains("gpu")) << q.path;
  }
  EXPECT_THAT(leaves, ::testing::UnorderedElementsAre("root.default", "root.research"));
  ASSERT_FALSE(queues->empty());
  EXPECT_EQ(queues->front().path, "root");
  auto submittable = client_->SubmittableQueues();
  ASSERT_TRUE(submittable.ok()) << submittable.status();
  // Hadoop 3.5 names queues by path here, older releases by leaf name.
  for (const std::string leaf : {"default", "research"}) {
    EXPECT_TRUE(std::count(submittable->begin(), submittable->end(), leaf) +
                    std::count(submittable->begin(), submittable->end(), "root." + leaf) >
                0)
        << leaf << " not in " << ::testing::PrintToString(*submittable);
  }
}

TEST_F(YarnItest, UnknownApplicationIsNotFound) {
  auto app = client_->CreateApplication();
  ASSERT_TRUE(app.ok()) << app.status();
  ApplicationId missing = app->id;
  missing.id += 100000;
  auto r = client_->GetApplicationReport(missing);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kNotFound) << r.status();
  EXPECT_TRUE(ipc::IsRemoteException(r.status(), "ApplicationNotFoundException")) << r.status();
  EXPECT_EQ(ipc::RemoteExceptionClass(r.status()).value_or(""),
            "org.apache.hadoop.yarn.exceptions.ApplicationNotFoundException");
  EXPECT_THAT(std::string(r.status().message()),
              ::testing::StartsWith("ApplicationNotFoundException: "));
}

TEST_F(YarnItest, FailsOverPastADeadResourceManager) {
  // A closed port first: the client must move on to the live RM.
  YarnClientOptions o;
  o.rm_addresses = {"127.0.0.1:1", rm_};
  o.call_timeout = absl::Seconds(30);
  auto c = NewYarnClient(o);
  ASSERT_TRUE(c.ok()) << c.status();
  auto app = (*c)->CreateApplication();
  ASSERT_TRUE(app.ok()) << app.status();
  auto nodes = (*c)->ListNodes({});
  ASSERT_TRUE(nodes.ok()) << nodes.status();
  EXPECT_EQ(nodes->size(), 3u);
}

TEST_F(YarnItest, NoResourceManagerIsUnavailableNotAHang) {
  YarnClientOptions o;
  o.rm_addresses = {"127.0.0.1:1"};
  o.call_timeout = absl::Seconds(3);
  auto c = NewYarnClient(o);
  ASSERT_TRUE(c.ok()) << c.status();
  absl::Time start = absl::Now();
  auto app = (*c)->CreateApplication();
  EXPECT_LT(absl::Now() - start, absl::Seconds(10));
  ASSERT_FALSE(app.ok());
  EXPECT_TRUE(absl::IsUnavailable(app.status()) || absl::IsDeadlineExceeded(app.status()))
      << app.status();
}

TEST_F(YarnItest, TestAmAllocatesTwoContainersAndSucceeds) {
  ApplicationId id = SubmitTestAm("two-containers");
  ApplicationReport r = WaitFor(id, &Terminal, absl::Minutes(4));
  EXPECT_EQ(r.state, YarnApplicationState::kFinished) << r.diagnostics;
  EXPECT_EQ(r.final_status, FinalApplicationStatus::kSucceeded) << r.diagnostics;
  EXPECT_THAT(r.diagnostics, HasSubstr("exit codes 0 and 7"));
  // A container the AM stopped through its NodeManager: KILLED_BY_APPMASTER.
  EXPECT_THAT(r.diagnostics, HasSubstr("stopped exit -105"));

  ApplicationFilter f;
  f.application_types = {"LIBTONY_TEST"};
  f.states = {YarnApplicationState::kFinished};
  auto apps = client_->ListApplications(f);
  ASSERT_TRUE(apps.ok()) << apps.status();
  bool found = false;
  for (const auto& a : *apps) found |= a.id == id;
  EXPECT_TRUE(found);
}

TEST_F(YarnItest, KillRunningApplication) {
  ApplicationId id = SubmitTestAm("sleep");
  ApplicationReport r = WaitFor(id, &Running, absl::Minutes(2));
  ASSERT_EQ(r.state, YarnApplicationState::kRunning) << r.diagnostics;
  absl::Status s = client_->KillApplication(id, "killed by yarn_itest");
  ASSERT_TRUE(s.ok()) << s;
  r = WaitFor(id, &Terminal, absl::Minutes(1));
  EXPECT_EQ(r.state, YarnApplicationState::kKilled);
  EXPECT_EQ(r.final_status, FinalApplicationStatus::kKilled);
}

TEST_F(YarnItest, CorruptedAmRmTokenIsRefusedByTheRealScheduler) {
  // The AM corrupts its real AMRMToken's password: registration must fail fast with a clear
  // authentication error; it then registers properly and reports what it saw.
  ApplicationId id = SubmitTestAm("bad-token");
  ApplicationReport r = WaitFor(id, &Terminal, absl::Minutes(3));
  EXPECT_EQ(r.final_status, FinalApplicationStatus::kSucceeded) << r.diagnostics;
  EXPECT_THAT(r.diagnostics, HasSubstr("bad-token refused"));
  EXPECT_THAT(r.diagnostics, HasSubstr("UNAUTHENTICATED"));
}

TEST_F(YarnItest, ForgedTokenIsRefusedWithAClearError) {
  // An AMRMToken for an attempt that does not exist, with a made-up password.
  tony::hadoop::yarn::AMRMTokenIdentifierProto ident;
  ident.mutable_appattemptid()->mutable_application_id()->set_id(424242);
  ident.mutable_appattemptid()->mutable_application_id()->set_cluster_timestamp(1);
  ident.mutable_appattemptid()->set_attemptid(1);
  ident.set_keyid(12345);
  AmRmClientOptions o;
  o.scheduler_addresses = {scheduler_};
  o.am_rm_token = ipc::Token{ident.SerializeAsString(), "not-the-password", "YARN_AM_RM_TOKEN", ""};
  o.call_timeout = absl::Seconds(20);
  auto am = NewAmRmClient(o);
  ASSERT_TRUE(am.ok()) << am.status();
  absl::Time start = absl::Now();
  auto reg = (*am)->Register("localhost", 0, "");
  EXPECT_LT(absl::Now() - start, absl::Seconds(10));
  ASSERT_FALSE(reg.ok());
  EXPECT_EQ(reg.status().code(), absl::StatusCode::kUnauthenticated) << reg.status();
  EXPECT_THAT(std::string(reg.status().message()), HasSubstr("TOKEN authentication with"));

  // Garbage bytes as the identifier: refused just as clearly.
  o.am_rm_token.identifier = "\x01\x02garbage";
  am = NewAmRmClient(o);
  ASSERT_TRUE(am.ok()) << am.status();
  reg = (*am)->Register("localhost", 0, "");
  ASSERT_FALSE(reg.ok());
  EXPECT_EQ(reg.status().code(), absl::StatusCode::kUnauthenticated) << reg.status();
}

TEST_F(YarnItest, SimpleAuthOnTheSchedulerPortIsRefused) {
  // The scheduler port accepts only TOKEN auth, even on an insecure cluster.
  ipc::RpcClientOptions o;
  o.address = scheduler_;
  o.protocol = kApplicationMasterProtocol;
  o.auth.user = "nobody";
  auto c = ipc::RpcClient::Create(o);
  ASSERT_TRUE(c.ok());
  tony::hadoop::yarn::RegisterApplicationMasterRequestProto req;
  tony::hadoop::yarn::RegisterApplicationMasterResponseProto resp;
  ipc::CallOptions co;
  co.timeout = absl::Seconds(10);
  absl::Status s = (*c)->Call("registerApplicationMaster", req, &resp, co);
  ASSERT_FALSE(s.ok());
  EXPECT_TRUE(s.code() == absl::StatusCode::kPermissionDenied ||
              s.code() == absl::StatusCode::kUnauthenticated)
      << s;
  EXPECT_TRUE(ipc::RemoteExceptionClass(s).has_value()) << s;
}

}  // namespace
}  // namespace tony::yarn
