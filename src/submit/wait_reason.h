// Copyright libtony authors.
//
// Why a job waits, in the scheduler's terms: from what a client or the AM can know (the RM's
// application report, the queue's numbers from the scheduler's REST answer, the active nodes
// by label, the job's pending asks), ClassifyWait names ONE reason. The facts are gathered by
// GatherWaitFacts (wait_facts.h); the classifier itself asks nothing, so a table tests it.
//
// Thread-safe: pure functions and value types.

#ifndef TONY_SUBMIT_WAIT_REASON_H_
#define TONY_SUBMIT_WAIT_REASON_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace tony::submit {

struct ResourceAmount {
  int64_t memory_mb = 0;
  int64_t vcores = 0;
  int64_t gpus = 0;
};

// "<8192 MB, 4 vcores, 2 GPUs>" (GPUs only when there are).
std::string FormatAmount(const ResourceAmount& r);

// One queue's numbers in one partition, as the scheduler's REST answer has them.
struct QueueNumbers {
  std::string path;               // "root.default"
  double capacity_pct = 0;        // absolute capacity, % of the partition
  double used_pct = 0;            // absolute used capacity
  double max_pct = 0;             // absolute maximum capacity
  ResourceAmount used;            // what the queue's containers hold in the partition
  ResourceAmount max;             // max_pct of the partition's active nodes
  ResourceAmount partition_free;  // what no container holds on the partition's active nodes
  std::optional<ResourceAmount> user_limit;  // the job owner's limit here, when reported
  ResourceAmount user_used;                  // what the job owner's containers hold here
};

// Containers the job still waits for, `count` of one shape.
struct PendingAsk {
  ResourceAmount each;
  int count = 1;
  std::string label;  // "" for the default partition
};

struct WaitFacts {
  // The AM's container runs (YARN state RUNNING). False: the ask below (if any) is the AM's.
  bool am_running = false;
  std::string rm_diagnostics;  // the application report's ("" or "N/A": none)
  std::vector<PendingAsk> asks;
  // RUNNING nodes by label ("" = the default partition); nodes_known false when not asked.
  bool nodes_known = false;
  std::map<std::string, int> active_nodes;
  // The job's queue, by partition ("" = default); missing partitions are unknown.
  std::map<std::string, QueueNumbers> queue;
  // Applications of the same queue submitted earlier whose AM has not started either.
  int apps_ahead = 0;
};

enum class WaitKind {
  kNotWaiting,         // nothing pending
  kLabelNoActiveNode,  // an asked label has no RUNNING node
  kGangNeverFits,      // the pending asks exceed the queue's maximum capacity
  kQueueAtCapacity,    // the queue has no room for the next container
  kUserLimit,          // the job owner is at the queue's user limit
  kAppsAhead,          // earlier applications of the queue wait first
  kAmNotLaunched,      // the AM's container is not launched yet; the RM's diagnostics say why
  kUnknown,            // waiting, none of the above holds: the scheduler has not placed it yet
};
// "label-no-active-node", "gang-never-fits", "queue-at-capacity", "user-limit", "apps-ahead",
// "am-not-launched", "unknown", "" for kNotWaiting.
absl::string_view WaitKindName(WaitKind kind);

struct WaitReason {
  WaitKind kind = WaitKind::kNotWaiting;
  std::string text;  // one line with the numbers; "" for kNotWaiting
};

// The first that holds, in this order (those that can never resolve by waiting come first):
// label without an active node, asks beyond the queue's maximum, no room in the queue for the
// smallest pending container, no room under the user limit, earlier applications pending, AM
// not launched, unknown.
WaitReason ClassifyWait(const WaitFacts& facts);

}  // namespace tony::submit

#endif  // TONY_SUBMIT_WAIT_REASON_H_
