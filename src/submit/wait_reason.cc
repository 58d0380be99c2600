// Copyright libtony authors.

#include "submit/wait_reason.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace tony::submit {
namespace {

bool Fits(const ResourceAmount& ask, const ResourceAmount& room) {
  return ask.memory_mb <= room.memory_mb && ask.vcores <= room.vcores && ask.gpus <= room.gpus;
}

ResourceAmount Min(const ResourceAmount& a, const ResourceAmount& b) {
  return {std::min(a.memory_mb, b.memory_mb), std::min(a.vcores, b.vcores),
          std::min(a.gpus, b.gpus)};
}

ResourceAmount Minus(const ResourceAmount& a, const ResourceAmount& b) {
  return {std::max<int64_t>(0, a.memory_mb - b.memory_mb),
          std::max<int64_t>(0, a.vcores - b.vcores), std::max<int64_t>(0, a.gpus - b.gpus)};
}

std::string PartitionName(const std::string& label) {
  return label.empty() ? "the default partition" : absl::StrCat("label ", label);
}

// "root.default uses 100.0 % of the default partition (capacity 70.0 %, max 100.0 %): <...> of
// <...>"
std::string QueueLine(const QueueNumbers& q, const std::string& label) {
  return absl::StrFormat("%s uses %.1f %% of %s (capacity %.1f %%, max %.1f %%): %s of %s", q.path,
                         q.used_pct, PartitionName(label), q.capacity_pct, q.max_pct,
                         FormatAmount(q.used), FormatAmount(q.max));
}

// The pending asks of one partition: their total and their smallest container.
struct PartitionAsk {
  ResourceAmount total;
  ResourceAmount smallest;
  bool any = false;
};

std::map<std::string, PartitionAsk> ByPartition(const std::vector<PendingAsk>& asks) {
  std::map<std::string, PartitionAsk> out;
  for (const PendingAsk& a : asks) {
    if (a.count <= 0) continue;
    PartitionAsk& p = out[a.label];
    p.total.memory_mb += a.each.memory_mb * a.count;
    p.total.vcores += a.each.vcores * a.count;
    p.total.gpus += a.each.gpus * a.count;
    p.smallest = p.any ? Min(p.smallest, a.each) : a.each;
    p.any = true;
  }
  return out;
}

std::string Diagnostics(const std::string& d) { return d.empty() || d == "N/A" ? "" : d; }

}  // namespace

std::string FormatAmount(const ResourceAmount& r) {
  std::string out =
      absl::StrCat("<", r.memory_mb, " MB, ", r.vcores, r.vcores == 1 ? " vcore" : " vcores");
  if (r.gpus > 0) absl::StrAppend(&out, ", ", r.gpus, r.gpus == 1 ? " GPU" : " GPUs");
  return out + ">";
}

absl::string_view WaitKindName(WaitKind kind) {
  switch (kind) {
    case WaitKind::kNotWaiting:
      return "";
    case WaitKind::kLabelNoActiveNode:
      return "label-no-active-node";
    case WaitKind::kGangNeverFits:
      return "gang-never-fits";
    case WaitKind::kQueueAtCapacity:
      return "queue-at-capacity";
    case WaitKind::kUserLimit:
      return "user-limit";
    case WaitKind::kAppsAhead:
      return "apps-ahead";
    case WaitKind::kAmNotLaunched:
      return "am-not-launched";
    case WaitKind::kUnknown:
      return "unknown";
  }
  return "unknown";
}

WaitReason ClassifyWait(const WaitFacts& facts) {
  const std::map<std::string, PartitionAsk> asks = ByPartition(facts.asks);
  if (asks.empty() && facts.am_running) return {};
  const std::string whose = facts.am_running ? "the job's" : "the ApplicationMaster's";
  // Labels first: no amount of waiting brings a node.
  for (const auto& [label, ask] : asks) {
    auto it = facts.active_nodes.find(label);
    if (!label.empty() && facts.nodes_known &&
        (it == facts.active_nodes.end() || it->second == 0)) {
      return {WaitKind::kLabelNoActiveNode,
              absl::StrCat("label ", label, " has no active node: ", whose, " ",
                           FormatAmount(ask.total), " asked there wait until a node with it runs")};
    }
  }
  for (const auto& [label, ask] : asks) {
    auto q = facts.queue.find(label);
    if (q == facts.queue.end() || Fits(ask.total, q->second.max)) continue;
    return {WaitKind::kGangNeverFits,
            absl::StrCat("the gang can never fit: ", whose, " pending ", FormatAmount(ask.total),
                         " exceeds what ", q->second.path, " may ever hold on ",
                         PartitionName(label), " (max ", absl::StrFormat("%.1f", q->second.max_pct),
                         " % = ", FormatAmount(q->second.max), ")")};
  }
  for (const auto& [label, ask] : asks) {
    auto it = facts.queue.find(label);
    if (it == facts.queue.end()) continue;
    const QueueNumbers& q = it->second;
    const ResourceAmount room = Min(Minus(q.max, q.used), q.partition_free);
    if (!Fits(ask.smallest, room)) {
      return {WaitKind::kQueueAtCapacity,
              absl::StrCat("queue at capacity: ", QueueLine(q, label), "; room ",
                           FormatAmount(room), " < the next container ", FormatAmount(ask.smallest),
                           Fits(ask.smallest, Minus(q.max, q.used))
                               ? " (other queues hold the rest of the partition)"
                               : "")};
    }
    if (q.user_limit && !Fits(ask.smallest, Minus(*q.user_limit, q.user_used))) {
      return {WaitKind::kUserLimit,
              absl::StrCat("at the user limit of ", q.path, ": the user holds ",
                           FormatAmount(q.user_used), " of ", FormatAmount(*q.user_limit),
                           "; the next container ", FormatAmount(ask.smallest))};
    }
  }
  if (facts.apps_ahead > 0) {
    return {WaitKind::kAppsAhead,
            absl::StrCat(facts.apps_ahead, " other application", facts.apps_ahead == 1 ? "" : "s",
                         " of the queue submitted earlier ", facts.apps_ahead == 1 ? "is" : "are",
                         " ahead")};
  }
  if (!facts.am_running) {
    std::string d = Diagnostics(facts.rm_diagnostics);
    return {WaitKind::kAmNotLaunched,
            absl::StrCat("the ApplicationMaster's container is not launched yet",
                         d.empty() ? "" : absl::StrCat(" (the ResourceManager: ", d, ")"))};
  }
  return {WaitKind::kUnknown, "the scheduler has not placed the pending containers yet"};
}

}  // namespace tony::submit
