// Copyright libtony authors.

#include "submit/wait_facts.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/logging.h"
#include "common/status_macros.h"
#include "http/json.h"

namespace tony::submit {
namespace {

using http::Json;

double Number(const Json& obj, const char* key) {
  const Json* v = http::JsonField(obj, key);
  return v != nullptr && v->is_number() ? v->get<double>() : 0.0;
}

std::string Text(const Json& obj, const char* key) {
  const Json* v = http::JsonField(obj, key);
  return v != nullptr && v->is_string() ? v->get<std::string>() : std::string();
}

// The members of a list the RM wraps in an object: {"queue": [...]}, {"user": [...]}.
const Json* Listed(const Json& obj, const char* outer, const char* inner) {
  const Json* o = http::JsonField(obj, outer);
  const Json* list = o != nullptr ? http::JsonField(*o, inner) : nullptr;
  return list != nullptr && list->is_array() ? list : nullptr;
}

// {"memory": 2048, "vCores": 2, "resourceInformations": {"resourceInformation": [...]}}
ResourceAmount Amount(const Json* r) {
  ResourceAmount out;
  if (r == nullptr || !r->is_object()) return out;
  out.memory_mb = static_cast<int64_t>(Number(*r, "memory"));
  out.vcores = static_cast<int64_t>(Number(*r, "vCores"));
  if (const Json* infos = Listed(*r, "resourceInformations", "resourceInformation")) {
    for (const Json& info : *infos) {
      if (Text(info, "name") == yarn::kResourceGpu) {
        out.gpus = static_cast<int64_t>(Number(info, "value"));
      }
    }
  }
  return out;
}

ResourceAmount Share(const ResourceAmount& total, double pct) {
  auto part = [pct](int64_t v) {
    return static_cast<int64_t>(std::floor(static_cast<double>(v) * pct / 100.0 + 1e-6));
  };
  return {part(total.memory_mb), part(total.vcores), part(total.gpus)};
}

const Json* FindLeaf(const Json& queue, absl::string_view name) {
  const Json* children = Listed(queue, "queues", "queue");
  if (children == nullptr || children->empty()) {
    return Text(queue, "queuePath") == name || Text(queue, "queueName") == name ? &queue : nullptr;
  }
  for (const Json& child : *children) {
    if (const Json* found = FindLeaf(child, name)) return found;
  }
  return nullptr;
}

// Earlier applications of the queue whose AM has not started.
absl::StatusOr<int> AppsAhead(yarn::YarnClient& yarn, const yarn::ApplicationReport& report,
                              absl::Time deadline) {
  yarn::ApplicationFilter filter;
  filter.states = {yarn::YarnApplicationState::kSubmitted, yarn::YarnApplicationState::kAccepted};
  filter.queues = {report.queue};
  TONY_ASSIGN_OR_RETURN(std::vector<yarn::ApplicationReport> apps,
                        yarn.ListApplications(filter, deadline));
  int ahead = 0;
  for (const yarn::ApplicationReport& a : apps) {
    if (a.id == report.id || a.queue != report.queue) continue;
    if (a.start_time_ms < report.start_time_ms ||
        (a.start_time_ms == report.start_time_ms && a.id.id < report.id.id)) {
      ++ahead;
    }
  }
  return ahead;
}

// GET `path` of the RM's web services, "/ws/v1/cluster/scheduler".
absl::StatusOr<std::string> FetchRm(const WaitSources& sources, absl::string_view path,
                                    absl::Time deadline) {
  absl::Status last = absl::UnavailableError("no ResourceManager web address is configured");
  for (const std::string& base : sources.rm_web_urls) {
    const absl::Duration left = deadline - absl::Now();
    if (left <= absl::ZeroDuration()) {
      return absl::DeadlineExceededError(
          absl::StrCat("the deadline passed before ", path, " was asked"));
    }
    http::Request request;
    request.url = absl::StrCat(base, path);
    request.headers = {{"Accept", "application/json"}};
    request.negotiate = sources.negotiate;
    request.gss_ccache = sources.gss_ccache;
    // Whole milliseconds at least: curl takes a zero limit for none.
    request.timeout = std::max(absl::Milliseconds(1), std::min(request.timeout, left));
    request.connect_timeout = std::min(request.connect_timeout, request.timeout);
    auto got = sources.http->Do(request);
    if (got.ok() && got->ok()) return std::move(got->body);
    // A standby RM answers with a redirect or an error: try the next one.
    last = got.ok() ? http::HttpError(*got, request.url) : got.status();
  }
  return last;
}

// The active nodes by partition: through the YarnClient when there is one, else the REST API.
absl::StatusOr<std::map<std::string, PartitionTotals>> NodeTotals(const WaitSources& sources,
                                                                  absl::Time deadline) {
  if (sources.yarn != nullptr) {
    TONY_ASSIGN_OR_RETURN(std::vector<yarn::NodeReport> nodes,
                          sources.yarn->ListNodes({}, deadline));
    return TotalsByPartition(nodes);
  }
  if (sources.http == nullptr) return absl::UnavailableError("no client to ask for the nodes");
  TONY_ASSIGN_OR_RETURN(std::string body,
                        FetchRm(sources, "/ws/v1/cluster/nodes?states=RUNNING", deadline));
  return ParseNodesTotals(body);
}

}  // namespace

std::map<std::string, PartitionTotals> TotalsByPartition(
    const std::vector<yarn::NodeReport>& nodes) {
  std::map<std::string, PartitionTotals> out;
  for (const yarn::NodeReport& n : nodes) {
    if (n.state != yarn::NodeState::kRunning) continue;
    PartitionTotals& p = out[n.labels.empty() ? std::string() : n.labels.front()];
    auto gpus = [](const yarn::Resource& r) {
      auto it = r.others.find(yarn::kResourceGpu);
      return it == r.others.end() ? int64_t{0} : it->second;
    };
    p.total.memory_mb += n.capability.memory_mb;
    p.total.vcores += n.capability.vcores;
    p.total.gpus += gpus(n.capability);
    p.free.memory_mb += std::max<int64_t>(0, n.capability.memory_mb - n.used.memory_mb);
    p.free.vcores += std::max<int64_t>(0, n.capability.vcores - n.used.vcores);
    p.free.gpus += std::max<int64_t>(0, gpus(n.capability) - gpus(n.used));
    ++p.nodes;
  }
  return out;
}

absl::StatusOr<std::map<std::string, PartitionTotals>> ParseNodesTotals(absl::string_view body) {
  TONY_ASSIGN_OR_RETURN(Json doc, http::ParseJson(body, "the nodes' REST answer"));
  const Json* outer = http::JsonField(doc, "nodes");
  if (outer == nullptr || !(outer->is_object() || outer->is_null())) {
    return absl::InvalidArgumentError("the nodes' REST answer has no \"nodes\"");
  }
  std::map<std::string, PartitionTotals> out;
  const Json* nodes = outer->is_object() ? Listed(doc, "nodes", "node") : nullptr;
  if (nodes == nullptr) return out;  // {"nodes": null}: no node at all
  for (const Json& n : *nodes) {
    if (Text(n, "state") != "RUNNING") continue;
    std::string label;
    if (const Json* labels = http::JsonField(n, "nodeLabels");
        labels != nullptr && labels->is_array() && !labels->empty() &&
        labels->front().is_string()) {
      label = labels->front().get<std::string>();
    }
    PartitionTotals& p = out[label];
    // usedMemoryMB + availMemoryMB is the node's capability in every supported release;
    // GPUs only come in the resource objects.
    const ResourceAmount used = Amount(http::JsonField(n, "usedResource"));
    const ResourceAmount avail = Amount(http::JsonField(n, "availableResource"));
    const int64_t used_mb = static_cast<int64_t>(Number(n, "usedMemoryMB"));
    const int64_t avail_mb = static_cast<int64_t>(Number(n, "availMemoryMB"));
    const int64_t used_vc = static_cast<int64_t>(Number(n, "usedVirtualCores"));
    const int64_t avail_vc = static_cast<int64_t>(Number(n, "availableVirtualCores"));
    p.total.memory_mb += used_mb + avail_mb;
    p.total.vcores += used_vc + avail_vc;
    p.total.gpus += used.gpus + avail.gpus;
    p.free.memory_mb += avail_mb;
    p.free.vcores += avail_vc;
    p.free.gpus += avail.gpus;
    ++p.nodes;
  }
  return out;
}

absl::StatusOr<std::map<std::string, QueueNumbers>> ParseSchedulerQueue(
    absl::string_view body, absl::string_view queue, absl::string_view user,
    const std::map<std::string, PartitionTotals>& partitions) {
  TONY_ASSIGN_OR_RETURN(Json doc, http::ParseJson(body, "the scheduler's REST answer"));
  const Json* scheduler = http::JsonField(doc, "scheduler");
  const Json* info = scheduler != nullptr ? http::JsonField(*scheduler, "schedulerInfo") : nullptr;
  const Json* leaf = info != nullptr ? FindLeaf(*info, queue) : nullptr;
  if (leaf == nullptr) {
    return absl::NotFoundError(
        absl::StrCat("the scheduler's REST answer has no leaf queue ", queue));
  }
  std::map<std::string, QueueNumbers> out;
  if (const Json* caps = Listed(*leaf, "capacities", "queueCapacitiesByPartition")) {
    for (const Json& c : *caps) {
      QueueNumbers& q = out[Text(c, "partitionName")];
      q.path = Text(*leaf, "queuePath");
      q.capacity_pct = Number(c, "absoluteCapacity");
      q.used_pct = Number(c, "absoluteUsedCapacity");
      q.max_pct = Number(c, "absoluteMaxCapacity");
    }
  }
  if (const Json* used = Listed(*leaf, "resources", "resourceUsagesByPartition")) {
    for (const Json& u : *used) {
      auto it = out.find(Text(u, "partitionName"));
      if (it != out.end()) it->second.used = Amount(http::JsonField(u, "used"));
    }
  }
  for (auto& [partition, q] : out) {
    auto totals = partitions.find(partition);
    if (totals == partitions.end()) continue;  // no active node: max and free stay 0
    q.max = Share(totals->second.total, q.max_pct);
    q.partition_free = totals->second.free;
  }
  // The user limit the CapacityScheduler computed for users with applications in the queue
  // (the default partition's).
  if (const Json* users = Listed(*leaf, "users", "user"); users != nullptr && out.count("")) {
    for (const Json& u : *users) {
      if (Text(u, "username") != user) continue;
      out[""].user_limit = Amount(http::JsonField(u, "userResourceLimit"));
      out[""].user_used = Amount(http::JsonField(u, "resourcesUsed"));
    }
  }
  return out;
}

absl::StatusOr<std::vector<PendingAsk>> ParseAppAsks(absl::string_view body) {
  TONY_ASSIGN_OR_RETURN(Json doc, http::ParseJson(body, "the application's REST answer"));
  const Json* app = http::JsonField(doc, "app");
  if (app == nullptr || !app->is_object()) {
    return absl::InvalidArgumentError("the application's REST answer has no \"app\"");
  }
  std::vector<PendingAsk> out;
  const Json* requests = http::JsonField(*app, "resourceRequests");
  if (requests == nullptr) return out;
  auto add = [&out](const Json& r) {
    // Host and rack requests repeat the "*" one's containers.
    if (Text(r, "resourceName") != "*") return;
    const int count = static_cast<int>(Number(r, "numContainers"));
    if (count <= 0) return;
    out.push_back(
        {Amount(http::JsonField(r, "capability")), count, Text(r, "nodeLabelExpression")});
  };
  if (requests->is_array()) {
    for (const Json& r : *requests) add(r);
  } else if (requests->is_object()) {
    add(*requests);
  }
  return out;
}

WaitFacts GatherWaitFacts(const WaitSources& sources, const yarn::ApplicationReport& report,
                          std::vector<PendingAsk> asks, absl::Time deadline) {
  WaitFacts facts;
  facts.am_running = report.state == yarn::YarnApplicationState::kRunning;
  facts.rm_diagnostics = report.diagnostics;
  facts.asks = std::move(asks);
  const std::string id = report.id.ToString();
  if (facts.asks.empty() && sources.http != nullptr) {
    auto body = FetchRm(sources, absl::StrCat("/ws/v1/cluster/apps/", id), deadline);
    auto asks = body.ok() ? ParseAppAsks(*body) : body.status();
    if (asks.ok()) {
      facts.asks = *std::move(asks);
    } else {
      TONY_LOG(DEBUG) << "why " << id << " waits: its pending requests: " << asks.status();
    }
  }
  auto partitions = NodeTotals(sources, deadline);
  if (partitions.ok()) {
    facts.nodes_known = true;
    for (const auto& [label, p] : *partitions) facts.active_nodes[label] = p.nodes;
  } else {
    TONY_LOG(DEBUG) << "why " << id << " waits: the nodes: " << partitions.status();
  }
  if (sources.yarn != nullptr) {
    if (auto ahead = AppsAhead(*sources.yarn, report, deadline); ahead.ok()) {
      facts.apps_ahead = *ahead;
    } else {
      TONY_LOG(DEBUG) << "why " << id << " waits: the queue's applications: " << ahead.status();
    }
  }
  if (sources.http != nullptr && facts.nodes_known) {
    auto body = FetchRm(sources, "/ws/v1/cluster/scheduler", deadline);
    auto queue = body.ok() ? ParseSchedulerQueue(*body, report.queue, report.user, *partitions)
                           : body.status();
    if (queue.ok()) {
      facts.queue = *std::move(queue);
    } else {
      TONY_LOG(DEBUG) << "why " << id << " waits: the queue's numbers: " << queue.status();
    }
  }
  return facts;
}

}  // namespace tony::submit
