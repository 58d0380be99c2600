// Copyright libtony authors.

#include "am/node_exclusion.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace tony::am {

NodeExclusion::NodeExclusion(NodeExclusionOptions options) : options_(std::move(options)) {}

std::string NodeExclusion::HostOf(const std::string& node) {
  const size_t colon = node.rfind(':');
  return colon == std::string::npos ? node : node.substr(0, colon);
}

void NodeExclusion::Exclude(const std::string& host, const std::string& reason,
                            const std::string& task, ExclusionDecision* out) {
  Node& n = nodes_[host];
  if (n.excluded) return;
  n.excluded = true;
  out->excluded.push_back(host);
  JobRecord r{"node_excluded", task, {{"node", host}, {"reason", reason}}};
  if (n.failures > 0) r.fields["failures"] = n.failures;
  out->records.push_back(std::move(r));
}

// The excluded nodes YARN still runs may not be all of them.
void NodeExclusion::CheckSomethingLeft(ExclusionDecision* out) {
  if (failed_ || running_nodes_ <= 0) return;
  int excluded_running = 0;
  for (const auto& [host, n] : nodes_) excluded_running += n.excluded && !n.down;
  if (excluded_running < running_nodes_) return;
  failed_ = true;
  out->fail = absl::StrCat("every node the job may use is excluded (", ExcludedHosts().size(), ": ",
                           absl::StrJoin(ExcludedHosts(), ", "),
                           "); see max_node_failures and exclude_nodes in docs/job-spec.md");
}

ExclusionDecision NodeExclusion::Start() {
  ExclusionDecision out;
  for (const std::string& node : options_.initial) {
    if (!node.empty()) Exclude(HostOf(node), "excluded by the job (exclude_nodes)", "", &out);
  }
  CheckSomethingLeft(&out);
  return out;
}

ExclusionDecision NodeExclusion::OnTaskFailure(const std::string& node, const std::string& task) {
  ExclusionDecision out;
  if (node.empty()) return out;
  const std::string host = HostOf(node);
  Node& n = nodes_[host];
  ++n.failures;
  if (options_.max_node_failures > 0 && n.failures >= options_.max_node_failures) {
    Exclude(host,
            absl::StrCat(n.failures, " task failures on it (max_node_failures ",
                         options_.max_node_failures, ")"),
            task, &out);
  }
  CheckSomethingLeft(&out);
  return out;
}

ExclusionDecision NodeExclusion::OnNodeState(const std::string& node, const std::string& state) {
  ExclusionDecision out;
  if (node.empty()) return out;
  const std::string host = HostOf(node);
  if (state == "RUNNING") {
    if (auto it = nodes_.find(host); it != nodes_.end()) it->second.down = false;
    CheckSomethingLeft(&out);
    return out;
  }
  if (state != "UNHEALTHY" && state != "LOST" && state != "DECOMMISSIONED" && state != "SHUTDOWN") {
    return out;
  }
  Node& n = nodes_[host];
  n.down = true;
  Exclude(host, absl::StrCat("YARN reports it ", state), "", &out);
  return out;
}

ExclusionDecision NodeExclusion::OnClusterNodes(int running) {
  ExclusionDecision out;
  running_nodes_ = running;
  CheckSomethingLeft(&out);
  return out;
}

bool NodeExclusion::Excluded(const std::string& node) const {
  auto it = nodes_.find(HostOf(node));
  return it != nodes_.end() && it->second.excluded;
}

std::vector<std::string> NodeExclusion::ExcludedHosts() const {
  std::vector<std::string> out;
  for (const auto& [host, n] : nodes_) {
    if (n.excluded) out.push_back(host);
  }
  return out;
}

}  // namespace tony::am
