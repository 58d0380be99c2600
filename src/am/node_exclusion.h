// Copyright libtony authors.
//
// NodeExclusion: which nodes a job keeps its later containers off, as a decision with no
// threads and no clock. Facts go in (a task failed on a node, YARN says a node is unhealthy,
// how many nodes the cluster runs); what to do comes out: nodes newly excluded (the driver adds
// them to YARN's blacklist and the history), nodes back in use, or the reason the job must fail
// because nothing would be left to run on.
//
// The rules (docs/job-spec.md, "Bad nodes"):
//   - A node where the job's tasks failed `max_node_failures` times is excluded; 0 turns
//     counting off. A preemption is the scheduler's doing, never the node's; tasks lost while
//     YARN reports their node down are the node's loss, not counted either.
//   - A node YARN reports unhealthy, lost, decommissioned or shut down is excluded at once,
//     whatever the count (also with counting off). When YARN reports it RUNNING again (a
//     restarted NodeManager, a passing health check), it is back in use, unless the job's own
//     failures there or the user excluded it too: a rolling restart of the NodeManagers must
//     not cost a long job every node.
//   - The user's own list (exclude_nodes) and those kept from earlier attempts are excluded
//     from the start.
//   - A job never excludes every node: once the excluded nodes YARN still counts as running
//     are as many as the nodes it runs, the job fails, naming them.
//   - A node excluded again (another failure, a repeated report) changes nothing.
//
// Thread-compatible: the driver serialises every call.

#ifndef TONY_AM_NODE_EXCLUSION_H_
#define TONY_AM_NODE_EXCLUSION_H_

#include <map>
#include <string>
#include <vector>

#include "am/job_record.h"

namespace tony::am {

struct NodeExclusionOptions {
  // Task failures on one node that exclude it; 0 never excludes for failures. Default: 2.
  int max_node_failures = 2;
  // Hosts excluded from the start (the spec's exclude_nodes, earlier attempts'). Default: none.
  std::vector<std::string> initial;
};

struct ExclusionDecision {
  std::vector<std::string> excluded;  // hosts newly excluded, in the order decided
  std::vector<std::string> included;  // hosts back in use (YARN runs them again)
  std::vector<JobRecord> records;     // "node_excluded" or "node_included", one per host
  std::string fail;                   // non-empty: the job must fail, for this reason
};

class NodeExclusion {
 public:
  explicit NodeExclusion(NodeExclusionOptions options);

  // The initial exclusions (each once), for the job's first requests.
  ExclusionDecision Start();
  // A task's failure the AM counted, on `node` ("host" or "host:port"; "" is ignored).
  ExclusionDecision OnTaskFailure(const std::string& node, const std::string& task);
  // YARN reported `node` in `state` ("UNHEALTHY", "LOST", "DECOMMISSIONED", "SHUTDOWN" exclude it;
  // "RUNNING" counts it again among the running nodes and lifts an exclusion YARN's report alone
  // made; others are ignored).
  ExclusionDecision OnNodeState(const std::string& node, const std::string& state);
  // The ResourceManager's count of running nodes (0: unknown, nothing decided).
  ExclusionDecision OnClusterNodes(int running);

  bool Excluded(const std::string& node) const;
  // Every excluded host, sorted.
  std::vector<std::string> ExcludedHosts() const;

  // "host" of "host:port".
  static std::string HostOf(const std::string& node);
  // The hosts still excluded at the end of an event log's lines (JSON, one per line): each
  // node_excluded adds its node, each node_included takes it out again; in the order first
  // excluded. Lines that do not parse are skipped.
  static std::vector<std::string> ExcludedInEventLog(const std::string& log);

 private:
  // Why a node is excluded: the strongest reason wins (a user's or the job's own failures are
  // never lifted; YARN's report is, by YARN's next report).
  enum class Why { kNone, kState, kFailures, kUser };
  struct Node {
    int failures = 0;
    Why why = Why::kNone;
    bool down = false;  // YARN no longer counts it among its running nodes
  };
  void Exclude(const std::string& host, Why why, const std::string& reason, const std::string& task,
               ExclusionDecision* out);
  void CheckSomethingLeft(ExclusionDecision* out);

  const NodeExclusionOptions options_;
  std::map<std::string, Node> nodes_;  // by host
  int running_nodes_ = 0;              // 0: unknown
  bool failed_ = false;                // the job was told to fail (once)
};

}  // namespace tony::am

#endif  // TONY_AM_NODE_EXCLUSION_H_
