// Copyright libtony authors.
//
// Gathers what ClassifyWait (wait_reason.h) needs about one application from the
// ResourceManager: its RUNNING nodes by label and the queue's earlier applications through the
// YarnClient (Hadoop RPC, as the submitter's cluster checks; without one, as in the AM, the
// nodes come from GET /ws/v1/cluster/nodes and earlier applications stay unknown), the queue's
// numbers through the scheduler's REST answer (GET /ws/v1/cluster/scheduler: the RPC's QueueInfo
// has no user limit nor per-partition usage). Every request ends by the caller's deadline; a source
// that fails leaves its facts unknown, so a reason is still given from the rest.
//
// Thread-safe as far as the clients given are.

#ifndef TONY_SUBMIT_WAIT_FACTS_H_
#define TONY_SUBMIT_WAIT_FACTS_H_

#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "http/client.h"
#include "submit/wait_reason.h"
#include "yarn/records.h"
#include "yarn/yarn_client.h"

namespace tony::submit {

struct WaitSources {
  yarn::YarnClient* yarn = nullptr;    // null: the nodes from the REST API, apps ahead unknown
  const http::Client* http = nullptr;  // null: the queue's numbers stay unknown
  // The RM's web services, "http://host:port" (conf::RmWebUrls), tried in order.
  std::vector<std::string> rm_web_urls;
  // A Kerberos cluster's RM wants SPNEGO; gss_ccache as http::Request's.
  bool negotiate = false;
  std::string gss_ccache;
};

// What the active nodes of each partition ("" = default) hold in all and leave free.
struct PartitionTotals {
  ResourceAmount total;
  ResourceAmount free;
  int nodes = 0;
};
std::map<std::string, PartitionTotals> TotalsByPartition(
    const std::vector<yarn::NodeReport>& nodes);

// The same from GET /ws/v1/cluster/nodes's body (RUNNING nodes only; a node's partition is its
// first label).
absl::StatusOr<std::map<std::string, PartitionTotals>> ParseNodesTotals(absl::string_view body);

// The numbers of leaf queue `queue` (its name or path) in every partition the scheduler reports
// for it, from GET /ws/v1/cluster/scheduler's body; `user`'s limit where the queue lists the
// user. NotFound when the answer has no such leaf queue.
absl::StatusOr<std::map<std::string, QueueNumbers>> ParseSchedulerQueue(
    absl::string_view body, absl::string_view queue, absl::string_view user,
    const std::map<std::string, PartitionTotals>& partitions);

// The containers an application's scheduler requests still ask for (its "*" requests), from
// GET /ws/v1/cluster/apps/<id>'s body. Placement-constrained SchedulingRequests are not listed.
absl::StatusOr<std::vector<PendingAsk>> ParseAppAsks(absl::string_view body);

// The facts about `report`'s application, which waits for `asks`; empty `asks`: what the RM
// lists as its pending requests (the AM's container while YARN has not started it).
WaitFacts GatherWaitFacts(const WaitSources& sources, const yarn::ApplicationReport& report,
                          std::vector<PendingAsk> asks, absl::Time deadline);

}  // namespace tony::submit

#endif  // TONY_SUBMIT_WAIT_FACTS_H_
