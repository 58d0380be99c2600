// Copyright libtony authors.

#include "yarnam/wait_watch.h"

#include <atomic>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/http/test_http_server.h"

namespace tony::yarnam {
namespace {

using ::testing::HasSubstr;
using ::tony::testing::TestHttpServer;

// Hadoop 3.5's GET /ws/v1/cluster/nodes?states=RUNNING, cut to what is read: two nodes of the
// default partition, one holding 7168 MB; no node carries "gpu" (its NodeManager is gone).
constexpr char kNodes[] = R"({"nodes": {"node": [
  {"state": "RUNNING", "usedMemoryMB": 7168, "availMemoryMB": 1024, "usedVirtualCores": 2,
   "availableVirtualCores": 6},
  {"state": "RUNNING", "nodeLabels": [], "usedMemoryMB": 8192, "availMemoryMB": 0,
   "usedVirtualCores": 1, "availableVirtualCores": 7,
   "usedResource": {"memory": 8192, "vCores": 1, "resourceInformations": {"resourceInformation":
     [{"name": "yarn.io/gpu", "value": 0}]}},
   "availableResource": {"memory": 0, "vCores": 7, "resourceInformations": {"resourceInformation":
     [{"name": "yarn.io/gpu", "value": 2}]}}}]}})";

constexpr char kScheduler[] = R"({"scheduler": {"schedulerInfo": {"queueName": "root",
  "queues": {"queue": [{"queuePath": "root.default", "queueName": "default",
    "capacities": {"queueCapacitiesByPartition": [{"partitionName": "",
      "absoluteCapacity": 70.0, "absoluteUsedCapacity": 93.75, "absoluteMaxCapacity": 100.0}]},
    "resources": {"resourceUsagesByPartition": [{"partitionName": "",
      "used": {"memory": 15360, "vCores": 3}}]}}]}}}})";

class WaitWatchTest : public ::testing::Test {
 protected:
  WaitWatchTest()
      : server_([this](const TestHttpServer::Request& r) {
          TestHttpServer::Reply reply;
          if (fail_) {
            reply.status = 500;
          } else if (r.path == "/ws/v1/cluster/nodes") {
            reply.body = kNodes;
          } else if (r.path == "/ws/v1/cluster/scheduler") {
            reply.body = kScheduler;
          } else {
            reply.status = 404;
          }
          return reply;
        }) {}

  WaitWatchOptions Options() {
    WaitWatchOptions o;
    o.rm_web_urls = {server_.url()};
    o.app_id = "application_1_0001";
    o.queue = "default";
    o.user = "alice";
    o.pending = [this] {
      absl::MutexLock lock(&mu_);
      return asks_;
    };
    return o;
  }
  void SetAsks(std::vector<submit::PendingAsk> asks) {
    absl::MutexLock lock(&mu_);
    asks_ = std::move(asks);
  }

  std::atomic<bool> fail_{false};
  TestHttpServer server_;
  absl::Mutex mu_;
  std::vector<submit::PendingAsk> asks_ ABSL_GUARDED_BY(mu_);
};

TEST_F(WaitWatchTest, NamesTheLabelWithoutAnActiveNodeFromTheRestApi) {
  SetAsks({{{2048, 1, 0}, 1, "gpu"}});
  WaitWatch watch(Options());
  watch.Refresh();
  submit::WaitReason why = watch.Reason();
  EXPECT_EQ(why.kind, submit::WaitKind::kLabelNoActiveNode) << why.text;
  EXPECT_THAT(why.text, HasSubstr("label gpu has no active node"));
  EXPECT_THAT(why.text, HasSubstr("the job's <2048 MB, 1 vcore>"));
}

TEST_F(WaitWatchTest, NamesTheFullQueueWithTheNodesNumbers) {
  SetAsks({{{2048, 1, 0}, 2, ""}});
  WaitWatch watch(Options());
  watch.Refresh();
  submit::WaitReason why = watch.Reason();
  EXPECT_EQ(why.kind, submit::WaitKind::kQueueAtCapacity) << why.text;
  // 16384 MB in all, 1024 MB free: the next 2048 MB container does not fit.
  EXPECT_THAT(why.text, HasSubstr("of <16384 MB, 16 vcores, 2 GPUs>"));
  EXPECT_THAT(why.text, HasSubstr("room <1024 MB"));
}

TEST_F(WaitWatchTest, NothingPendingAsksNothing) {
  WaitWatch watch(Options());
  watch.Refresh();
  EXPECT_EQ(watch.Reason().kind, submit::WaitKind::kNotWaiting);
  EXPECT_TRUE(server_.requests().empty());
}

TEST_F(WaitWatchTest, AFailingOrUnreachableRmLeavesTheReasonUnknown) {
  SetAsks({{{2048, 1, 0}, 1, "gpu"}});
  fail_ = true;
  WaitWatch failing(Options());
  failing.Refresh();
  EXPECT_EQ(failing.Reason().kind, submit::WaitKind::kNotWaiting) << failing.Reason().text;
  EXPECT_EQ(failing.Reason().text, "");

  WaitWatchOptions o = Options();
  o.rm_web_urls = {absl::StrCat("http://127.0.0.1:", testing::UnusedLoopbackPort())};
  o.budget = absl::Seconds(2);
  WaitWatch unreachable(std::move(o));
  unreachable.Refresh();
  EXPECT_EQ(unreachable.Reason().kind, submit::WaitKind::kNotWaiting);
}

// The thread computes the reason by itself and follows the asks; Stop() joins it.
TEST_F(WaitWatchTest, ItsThreadFollowsThePendingAsks) {
  SetAsks({{{2048, 1, 0}, 1, "gpu"}});
  WaitWatchOptions o = Options();
  o.interval = absl::Milliseconds(20);
  WaitWatch watch(std::move(o));
  watch.Start();
  auto eventually = [&](submit::WaitKind kind) {
    for (absl::Time end = absl::Now() + absl::Seconds(20); absl::Now() < end;) {
      if (watch.Reason().kind == kind) return true;
      absl::SleepFor(absl::Milliseconds(5));  // a poll interval, not a decision
    }
    return watch.Reason().kind == kind;
  };
  EXPECT_TRUE(eventually(submit::WaitKind::kLabelNoActiveNode));
  SetAsks({});
  EXPECT_TRUE(eventually(submit::WaitKind::kNotWaiting));
  watch.Stop();
  watch.Stop();  // idempotent
}

}  // namespace
}  // namespace tony::yarnam
