// Copyright libtony authors.

#include "am/node_exclusion.h"

#include <algorithm>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "nlohmann/json.hpp"

namespace tony::am {

NodeExclusion::NodeExclusion(NodeExclusionOptions options) : options_(std::move(options)) {}

std::string NodeExclusion::HostOf(const std::string& node) {
  const size_t colon = node.rfind(':');
  return colon == std::string::npos ? node : node.substr(0, colon);
}

void NodeExclusion::Exclude(const std::string& host, Why why, const std::string& reason,
                            const std::string& task, ExclusionDecision* out) {
  Node& n = nodes_[host];
  const bool already = n.why != Why::kNone;
  if (why > n.why) n.why = why;  // a stronger reason keeps it excluded past YARN's next report
  if (already) return;
  out->excluded.push_back(host);
  JobRecord r{"node_excluded", task, {{"node", host}, {"reason", reason}}};
  if (n.failures > 0) r.fields["failures"] = n.failures;
  out->records.push_back(std::move(r));
}

// The excluded nodes YARN still runs may not be all of them.
void NodeExclusion::CheckSomethingLeft(ExclusionDecision* out) {
  if (failed_ || running_nodes_ <= 0) return;
  int excluded_running = 0;
  for (const auto& [host, n] : nodes_) excluded_running += n.why != Why::kNone && !n.down;
  if (excluded_running < running_nodes_) return;
  failed_ = true;
  out->fail = absl::StrCat("every node the job may use is excluded (", ExcludedHosts().size(), ": ",
                           absl::StrJoin(ExcludedHosts(), ", "),
                           "); see max_node_failures and exclude_nodes in docs/job-spec.md");
}

ExclusionDecision NodeExclusion::Start() {
  ExclusionDecision out;
  for (const std::string& node : options_.initial) {
    if (!node.empty())
      Exclude(HostOf(node), Why::kUser, "excluded by the job (exclude_nodes)", "", &out);
  }
  CheckSomethingLeft(&out);
  return out;
}

ExclusionDecision NodeExclusion::OnTaskFailure(const std::string& node, const std::string& task) {
  ExclusionDecision out;
  if (node.empty()) return out;
  const std::string host = HostOf(node);
  Node& n = nodes_[host];
  // Tasks lost with a node YARN reports down are the node's loss, excluded for already: counted,
  // a node with two tasks would be out for good at its first loss, also once it runs again.
  if (n.down) return out;
  ++n.failures;
  if (options_.max_node_failures > 0 && n.failures >= options_.max_node_failures) {
    Exclude(host, Why::kFailures,
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
    auto it = nodes_.find(host);
    if (it == nodes_.end()) return out;
    it->second.down = false;
    if (it->second.why == Why::kState) {
      it->second.why = Why::kNone;
      out.included.push_back(host);
      out.records.push_back(
          {"node_included", "", {{"node", host}, {"reason", "YARN reports it RUNNING again"}}});
    }
    CheckSomethingLeft(&out);
    return out;
  }
  if (state != "UNHEALTHY" && state != "LOST" && state != "DECOMMISSIONED" && state != "SHUTDOWN") {
    return out;
  }
  Node& n = nodes_[host];
  n.down = true;
  Exclude(host, Why::kState, absl::StrCat("YARN reports it ", state), "", &out);
  return out;
}

ExclusionDecision NodeExclusion::OnClusterNodes(int running) {
  ExclusionDecision out;
  running_nodes_ = running;
  CheckSomethingLeft(&out);
  return out;
}

std::vector<std::string> NodeExclusion::ExcludedInEventLog(const std::string& log) {
  std::vector<std::string> hosts;
  for (absl::string_view line : absl::StrSplit(log, '\n', absl::SkipEmpty())) {
    if (!absl::StrContains(line, "\"node_")) continue;  // most lines: no parse
    nlohmann::json j = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (!j.is_object() || !j.contains("node") || !j["node"].is_string()) continue;
    const std::string event = j.value("event", ""), host = j["node"].get<std::string>();
    auto at = std::find(hosts.begin(), hosts.end(), host);
    if (event == "node_excluded" && at == hosts.end()) hosts.push_back(host);
    if (event == "node_included" && at != hosts.end()) hosts.erase(at);
  }
  return hosts;
}

bool NodeExclusion::Excluded(const std::string& node) const {
  auto it = nodes_.find(HostOf(node));
  return it != nodes_.end() && it->second.why != Why::kNone;
}

std::vector<std::string> NodeExclusion::ExcludedHosts() const {
  std::vector<std::string> out;
  for (const auto& [host, n] : nodes_) {
    if (n.why != Why::kNone) out.push_back(host);
  }
  return out;
}

}  // namespace tony::am
