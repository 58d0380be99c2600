// Copyright libtony authors.

#include "submit/cluster_checks.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/status_macros.h"
#include "spec/parse_util.h"
#include "submit/gang_fit.h"

namespace tony::submit {
namespace {

std::string ListOrNone(const std::vector<std::string>& names) {
  return names.empty() ? "none" : absl::StrJoin(names, ", ");
}

bool Contains(const std::vector<std::string>& v, absl::string_view s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

int64_t Gpus(const yarn::Resource& r) {
  auto it = r.others.find(yarn::kResourceGpu);
  return it == r.others.end() ? 0 : it->second;
}

// What one container asks for, and where it may go.
struct Placement {
  std::string who;    // "task worker:0", "the ApplicationMaster"
  std::string flag;   // the option that sets its label
  std::string label;  // "" for the default partition
  int64_t memory_mb = 0;
  int vcores = 0;
  int gpus = 0;
};

}  // namespace

absl::StatusOr<yarn::QueueInfo> CheckQueue(const JobSpec& spec, yarn::YarnClient& yarn) {
  TONY_ASSIGN_OR_RETURN(std::vector<yarn::QueueInfo> queues, yarn.ListQueues());
  TONY_ASSIGN_OR_RETURN(std::vector<std::string> submittable, yarn.SubmittableQueues());
  std::vector<std::string> open;
  const yarn::QueueInfo* chosen = nullptr;
  bool may_submit = false;
  for (const yarn::QueueInfo& q : queues) {
    bool may = Contains(submittable, q.name) || Contains(submittable, q.path);
    if (q.leaf &&
        (q.name == spec.queue || q.path == spec.queue || q.path == "root." + spec.queue)) {
      chosen = &q;
      may_submit = may;
    }
    if (q.leaf && may && q.state == yarn::QueueState::kRunning) open.push_back(q.name);
  }
  const std::string choices = absl::StrCat("; queues you may submit to: ", ListOrNone(open));
  if (chosen == nullptr) {
    // A path under an existing parent queue may be created on submission (the
    // CapacityScheduler's auto-created leaf queues, the FairScheduler's placement rules): only
    // the ResourceManager can tell.
    if (size_t dot = spec.queue.rfind('.'); dot != std::string::npos) {
      const std::string parent = spec.queue.substr(0, dot);
      for (const yarn::QueueInfo& q : queues) {
        if (!q.leaf && (q.path == parent || q.path == "root." + parent)) {
          yarn::QueueInfo created;
          created.name = spec.queue.substr(dot + 1);
          created.path = q.path + "." + created.name;
          created.accessible_labels = {"*"};
          return created;
        }
      }
    }
    return absl::InvalidArgumentError(absl::StrCat("queue '", spec.queue,
                                                   "' (-q/--queue) is not a leaf queue of this "
                                                   "cluster",
                                                   choices));
  }
  if (chosen->state != yarn::QueueState::kRunning) {
    return absl::InvalidArgumentError(absl::StrCat("queue '", spec.queue, "' (-q/--queue) is ",
                                                   yarn::QueueStateName(chosen->state), choices));
  }
  if (!may_submit) {
    return absl::InvalidArgumentError(
        absl::StrCat("you may not submit to queue '", spec.queue, "' (-q/--queue)", choices));
  }
  return *chosen;
}

// An anti-affinity role's tasks (an elastic one's minimum) each need a node of the default
// partition that can hold one: with fewer running nodes the job would wait forever.
absl::Status CheckAntiAffinity(const JobSpec& spec, const std::vector<yarn::NodeReport>& nodes) {
  std::map<std::string, TaskSpec> largest;  // per anti-affinity role
  for (const TaskSpec& t : ResolveTasks(spec)) {
    if (!t.anti_affinity) continue;
    auto [it, fresh] = largest.emplace(t.job_name, t);
    if (!fresh && t.memory_mb > it->second.memory_mb) it->second = t;
  }
  for (const auto& [role, t] : largest) {
    const JobTypeSpec* jt = spec.FindJobType(role);
    const int needed = jt->elastic ? jt->elastic->min : jt->instances;
    int room = 0;
    for (const yarn::NodeReport& n : nodes) {
      const yarn::Resource& c = n.capability;
      room += n.labels.empty() && c.memory_mb >= t.memory_mb && c.vcores >= t.vcores &&
              Gpus(c) >= t.gpus;
    }
    if (room < needed) {
      return absl::InvalidArgumentError(absl::StrCat(
          role, " has anti_affinity (--anti_affinity): its ", needed,
          " tasks need a node each, but ", room,
          " running node(s) of the default partition can hold one; lower its instances or "
          "drop anti_affinity"));
    }
  }
  return absl::OkStatus();
}

// A role with a node attribute would wait for ever where no node has it (YARN's placement is
// a hard constraint): one node of the default partition that matches and could hold its task.
absl::Status CheckNodeAttributes(const JobSpec& spec, const std::vector<yarn::NodeReport>& nodes) {
  for (const JobTypeSpec& jt : spec.job_types) {
    if (jt.node_attribute.empty()) continue;
    absl::StatusOr<spec::NodeAttributeExpr> want = spec::ParseNodeAttribute(jt.node_attribute);
    if (!want.ok()) return want.status();
    // YARN's default prefix, where none is given.
    const std::string name =
        absl::StrContains(want->name, '/') ? want->name : "rm.yarn.io/" + want->name;
    // Its largest task (task_resources may differ by index).
    std::optional<TaskSpec> largest;
    for (const TaskSpec& each : ResolveTasks(spec)) {
      if (each.job_name != jt.name) continue;
      if (!largest || each.memory_mb > largest->memory_mb) largest = each;
    }
    if (!largest) continue;
    const TaskSpec& t = *largest;
    std::set<std::string> seen;
    bool room = false;
    for (const yarn::NodeReport& n : nodes) {
      for (const auto& [k, v] : n.attributes) seen.insert(absl::StrCat(k, "=", v));
      auto a = n.attributes.find(name);
      const bool match = (a != n.attributes.end() && a->second == want->value) == want->equal;
      const yarn::Resource& c = n.capability;
      room = room || (match && n.labels.empty() && c.memory_mb >= t.memory_mb &&
                      c.vcores >= t.vcores && Gpus(c) >= t.gpus);
    }
    if (!room) {
      return absl::InvalidArgumentError(absl::StrCat(
          jt.name, " needs a node with ", jt.node_attribute,
          " (--node_attribute), but no running node of the default partition that could hold "
          "its task has it; the nodes report: ",
          seen.empty() ? "no attributes" : absl::StrJoin(seen, ", ")));
    }
  }
  return absl::OkStatus();
}

absl::Status CheckNodes(const JobSpec& spec, const yarn::QueueInfo& queue, yarn::YarnClient& yarn) {
  std::vector<Placement> placements;
  for (const TaskSpec& t : ResolveTasks(spec)) {
    placements.push_back({"task " + t.id(), "--node_label " + t.job_name + ":<label>", t.node_label,
                          t.memory_mb, t.vcores, t.gpus});
  }
  placements.push_back({"the ApplicationMaster", "--am_node_label", spec.am_node_label,
                        spec.am_memory_mb, spec.am_vcores, 0});
  TONY_ASSIGN_OR_RETURN(std::vector<yarn::NodeReport> nodes, yarn.ListNodes({}));
  std::vector<std::string> labels;
  for (const yarn::NodeReport& n : nodes) {
    for (const std::string& l : n.labels) {
      if (!Contains(labels, l)) labels.push_back(l);
    }
  }
  const bool queue_has_all = Contains(queue.accessible_labels, "*");
  for (const Placement& p : placements) {
    if (p.label.empty()) continue;
    if (!Contains(labels, p.label)) {
      return absl::InvalidArgumentError(
          absl::StrCat(p.who, " asks for node label '", p.label, "' (", p.flag,
                       ") but no running node of this cluster has it; labels on running nodes: ",
                       ListOrNone(labels)));
    }
    if (!queue_has_all && !Contains(queue.accessible_labels, p.label)) {
      return absl::InvalidArgumentError(absl::StrCat(
          p.who, " asks for node label '", p.label, "' (", p.flag, ") but queue '", queue.name,
          "' may not use it; it may use: ", ListOrNone(queue.accessible_labels)));
    }
  }
  for (const Placement& p : placements) {
    const yarn::NodeReport* most_gpus = nullptr;
    const yarn::NodeReport* most_memory = nullptr;
    const yarn::NodeReport* most_vcores = nullptr;
    bool fits = false;
    for (const yarn::NodeReport& n : nodes) {
      // A node's partition is its (only) label; no label is the default partition.
      const std::string partition = n.labels.empty() ? "" : n.labels.front();
      if (partition != p.label) continue;
      const yarn::Resource& c = n.capability;
      fits = fits || (c.memory_mb >= p.memory_mb && c.vcores >= p.vcores && Gpus(c) >= p.gpus);
      if (most_gpus == nullptr || Gpus(c) > Gpus(most_gpus->capability)) most_gpus = &n;
      if (most_memory == nullptr || c.memory_mb > most_memory->capability.memory_mb) {
        most_memory = &n;
      }
      if (most_vcores == nullptr || c.vcores > most_vcores->capability.vcores) most_vcores = &n;
    }
    if (fits) continue;
    const std::string where =
        p.label.empty() ? "the default partition" : absl::StrCat("node label '", p.label, "'");
    if (most_gpus == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat(p.who, " cannot be placed: no running node in ", where));
    }
    std::string what;
    std::string fix;
    const yarn::NodeReport* largest = most_gpus;
    if (p.gpus > Gpus(most_gpus->capability)) {
      what = absl::StrCat(p.gpus, " GPUs (yarn.io/gpu)");
      fix = "lower -g/--task_gpus";
    } else if (p.memory_mb > most_memory->capability.memory_mb) {
      largest = most_memory;
      what = absl::StrCat(p.memory_mb, " MB");
      fix = p.who == "the ApplicationMaster" ? "lower --am_memory" : "lower -m/--task_memory";
    } else if (p.vcores > most_vcores->capability.vcores) {
      largest = most_vcores;
      what = absl::StrCat(p.vcores, " vcores");
      fix = "lower -c/--task_vcores";
    } else {
      yarn::Resource r;
      r.memory_mb = p.memory_mb;
      r.vcores = p.vcores;
      if (p.gpus > 0) r.others[yarn::kResourceGpu] = p.gpus;
      what = r.ToString();
      fix = "ask for less";
    }
    return absl::InvalidArgumentError(absl::StrCat(
        p.who, " asks for ", what, " but no node in ", where, " has that much; the largest is ",
        largest->id.ToString(), " with ", largest->capability.ToString(), "; ", fix));
  }
  TONY_RETURN_IF_ERROR(CheckAntiAffinity(spec, nodes));
  TONY_RETURN_IF_ERROR(CheckNodeAttributes(spec, nodes));
  // Each container fits somewhere; can they all run at once (submit/gang_fit.h)?
  std::vector<GangItem> containers, gang_nodes;
  for (const Placement& p : placements) {
    containers.push_back({p.who, p.memory_mb, p.vcores, p.gpus, p.label});
  }
  for (const yarn::NodeReport& n : nodes) {
    gang_nodes.push_back({n.id.host, n.capability.memory_mb, n.capability.vcores,
                          Gpus(n.capability), n.labels.empty() ? "" : n.labels.front()});
  }
  return CheckGangFits(containers, gang_nodes);
}

}  // namespace tony::submit
