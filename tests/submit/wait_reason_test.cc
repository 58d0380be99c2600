// Copyright libtony authors.

#include "submit/wait_reason.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tony::submit {
namespace {

using ::testing::HasSubstr;

// A 3-node cluster of <8192 MB, 8 vcores, 2 GPUs> each: two in the default partition, one gpu.
QueueNumbers DefaultQueue(int64_t used_mb, int64_t used_vcores) {
  QueueNumbers q;
  q.path = "root.default";
  q.capacity_pct = 70;
  q.max_pct = 100;
  q.used_pct = 100.0 * static_cast<double>(used_mb) / 16384;
  q.used = {used_mb, used_vcores, 0};
  q.max = {16384, 16, 4};
  q.partition_free = {16384 - used_mb, 16 - used_vcores, 4};
  return q;
}

WaitFacts Base() {
  WaitFacts f;
  f.am_running = true;
  f.nodes_known = true;
  f.active_nodes = {{"", 2}, {"gpu", 1}};
  f.queue[""] = DefaultQueue(0, 0);
  return f;
}

struct Case {
  std::string name;
  WaitFacts facts;
  WaitKind want;
  std::string text;  // a part of the line
};

std::vector<Case> Cases() {
  std::vector<Case> cases;
  {
    Case c{"nothing pending", Base(), WaitKind::kNotWaiting, ""};
    cases.push_back(c);
  }
  {
    Case c{"label without an active node", Base(), WaitKind::kLabelNoActiveNode,
           "label gpu has no active node"};
    c.facts.active_nodes["gpu"] = 0;
    c.facts.asks = {{{2048, 1, 1}, 2, "gpu"}};
    cases.push_back(c);
  }
  {
    Case c{"label no node reports", Base(), WaitKind::kLabelNoActiveNode, "label tpu"};
    c.facts.asks = {{{2048, 1, 0}, 1, "tpu"}};
    cases.push_back(c);
  }
  {
    Case c{"label checks need the nodes", Base(), WaitKind::kUnknown, "not placed"};
    c.facts.nodes_known = false;
    c.facts.asks = {{{2048, 1, 0}, 1, "tpu"}};
    cases.push_back(c);
  }
  {
    Case c{"gang beyond the queue's max", Base(), WaitKind::kGangNeverFits,
           "pending <20480 MB, 5 vcores> exceeds what root.default may ever hold"};
    c.facts.asks = {{{4096, 1, 0}, 5, ""}};
    cases.push_back(c);
  }
  {
    Case c{"gang beyond the max in GPUs", Base(), WaitKind::kGangNeverFits, "5 GPUs"};
    c.facts.asks = {{{1024, 1, 1}, 5, ""}};
    cases.push_back(c);
  }
  {
    Case c{"queue at capacity", Base(), WaitKind::kQueueAtCapacity,
           "root.default uses 93.8 % of the default partition (capacity 70.0 %, max 100.0 %)"};
    c.facts.queue[""] = DefaultQueue(15360, 4);
    c.facts.asks = {{{2048, 1, 0}, 2, ""}};
    cases.push_back(c);
  }
  {
    Case c{
        "partition full though the queue is not", Base(), WaitKind::kQueueAtCapacity,
        "room <1024 MB, 12 vcores, 4 GPUs> < the next container <2048 MB, 1 vcore> (other queues"};
    c.facts.queue[""] = DefaultQueue(8192, 4);
    c.facts.queue[""].partition_free = {1024, 12, 4};  // another queue holds the rest
    c.facts.asks = {{{2048, 1, 0}, 1, ""}};
    cases.push_back(c);
  }
  {
    Case c{"the smallest container decides", Base(), WaitKind::kUnknown, ""};
    c.facts.queue[""] = DefaultQueue(14336, 4);
    c.facts.asks = {{{4096, 1, 0}, 1, ""}, {{1024, 1, 0}, 1, ""}};
    cases.push_back(c);
  }
  {
    Case c{"user limit", Base(), WaitKind::kUserLimit,
           "the user holds <6144 MB, 3 vcores> of <6144 MB, 6 vcores>"};
    c.facts.queue[""] = DefaultQueue(6144, 3);
    c.facts.queue[""].user_limit = ResourceAmount{6144, 6, 0};
    c.facts.queue[""].user_used = {6144, 3, 0};
    c.facts.asks = {{{1024, 1, 0}, 1, ""}};
    cases.push_back(c);
  }
  {
    Case c{"applications ahead", Base(), WaitKind::kAppsAhead, "2 other applications"};
    c.facts.am_running = false;
    c.facts.apps_ahead = 2;
    c.facts.asks = {{{1024, 1, 0}, 1, ""}};
    cases.push_back(c);
  }
  {
    Case c{"AM not launched", Base(), WaitKind::kAmNotLaunched,
           "(the ResourceManager: waiting for AM container to be allocated)"};
    c.facts.am_running = false;
    c.facts.rm_diagnostics = "waiting for AM container to be allocated";
    c.facts.asks = {{{1024, 1, 0}, 1, ""}};
    cases.push_back(c);
  }
  {
    Case c{"AM not launched, no ask known, no diagnostics", Base(), WaitKind::kAmNotLaunched,
           "not launched yet"};
    c.facts.am_running = false;
    c.facts.rm_diagnostics = "N/A";
    cases.push_back(c);
  }
  {
    Case c{"a label beats a full queue", Base(), WaitKind::kLabelNoActiveNode, "label gpu"};
    c.facts.queue[""] = DefaultQueue(16384, 16);
    c.facts.active_nodes.erase("gpu");
    c.facts.asks = {{{1024, 1, 0}, 1, ""}, {{1024, 1, 1}, 1, "gpu"}};
    cases.push_back(c);
  }
  {
    Case c{"never fits beats a full queue", Base(), WaitKind::kGangNeverFits, "never fit"};
    c.facts.queue[""] = DefaultQueue(16384, 16);
    c.facts.asks = {{{8192, 1, 0}, 3, ""}};
    cases.push_back(c);
  }
  {
    Case c{"a full queue beats applications ahead", Base(), WaitKind::kQueueAtCapacity,
           "queue at capacity"};
    c.facts.queue[""] = DefaultQueue(16384, 16);
    c.facts.apps_ahead = 1;
    c.facts.asks = {{{1024, 1, 0}, 1, ""}};
    cases.push_back(c);
  }
  {
    Case c{"an unknown partition is not judged", Base(), WaitKind::kUnknown, ""};
    c.facts.asks = {{{1024, 1, 1}, 1, "gpu"}};
    cases.push_back(c);
  }
  return cases;
}

TEST(WaitReasonTest, Table) {
  for (const Case& c : Cases()) {
    SCOPED_TRACE(c.name);
    WaitReason r = ClassifyWait(c.facts);
    EXPECT_EQ(r.kind, c.want) << r.text;
    EXPECT_THAT(r.text, HasSubstr(c.text));
    EXPECT_EQ(r.text.empty(), c.want == WaitKind::kNotWaiting) << r.text;
    EXPECT_EQ(r.text.find('\n'), std::string::npos);
  }
}

TEST(WaitReasonTest, KindNames) {
  EXPECT_EQ(WaitKindName(WaitKind::kQueueAtCapacity), "queue-at-capacity");
  EXPECT_EQ(WaitKindName(WaitKind::kLabelNoActiveNode), "label-no-active-node");
  EXPECT_EQ(WaitKindName(WaitKind::kGangNeverFits), "gang-never-fits");
  EXPECT_EQ(WaitKindName(WaitKind::kNotWaiting), "");
}

TEST(WaitReasonTest, FormatAmount) {
  EXPECT_EQ(FormatAmount({2048, 1, 0}), "<2048 MB, 1 vcore>");
  EXPECT_EQ(FormatAmount({2048, 4, 1}), "<2048 MB, 4 vcores, 1 GPU>");
}

}  // namespace
}  // namespace tony::submit
