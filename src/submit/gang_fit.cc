// Copyright libtony authors.

#include "submit/gang_fit.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace tony::submit {
namespace {

std::string Text(const GangItem& r) {
  std::string s = absl::StrCat("<", r.memory_mb, " MB, ", r.vcores, " vcores");
  if (r.gpus > 0) absl::StrAppend(&s, ", ", r.gpus, " GPUs");
  return s + ">";
}

bool Fits(const GangItem& c, const GangItem& room) {
  return c.memory_mb <= room.memory_mb && c.vcores <= room.vcores && c.gpus <= room.gpus;
}

// Depth-first placement of items[i..] into `room`, largest first; identical rooms are tried
// once. False also when the step budget runs out (then *exhausted is set).
bool Place(const std::vector<GangItem>& items, size_t i, std::vector<GangItem>& room,
           int64_t& steps, bool* exhausted) {
  if (i == items.size()) return true;
  if (--steps < 0) {
    *exhausted = true;
    return false;
  }
  const GangItem& c = items[i];
  std::set<std::tuple<int64_t, int64_t, int64_t>> tried;
  for (GangItem& r : room) {
    if (!Fits(c, r) || !tried.insert({r.memory_mb, r.vcores, r.gpus}).second) continue;
    r.memory_mb -= c.memory_mb;
    r.vcores -= c.vcores;
    r.gpus -= c.gpus;
    bool placed = Place(items, i + 1, room, steps, exhausted);
    r.memory_mb += c.memory_mb;
    r.vcores += c.vcores;
    r.gpus += c.gpus;
    if (placed) return true;
    if (*exhausted) return false;
  }
  return false;
}

}  // namespace

absl::Status CheckGangFits(const std::vector<GangItem>& containers,
                           const std::vector<GangItem>& nodes) {
  if (nodes.empty()) return absl::OkStatus();  // nothing known: YARN will say
  // One search per label; unlabelled containers may use every node.
  std::map<std::string, std::vector<GangItem>> by_label;
  for (const GangItem& c : containers) by_label[c.label].push_back(c);
  for (auto& [label, items] : by_label) {
    std::vector<GangItem> room;
    for (const GangItem& n : nodes) {
      if (label.empty() || n.label == label) room.push_back(n);
    }
    if (room.empty()) continue;  // an unknown label is refused elsewhere
    std::sort(items.begin(), items.end(), [](const GangItem& a, const GangItem& b) {
      return std::tie(a.memory_mb, a.vcores, a.gpus) > std::tie(b.memory_mb, b.vcores, b.gpus);
    });
    GangItem need, have;
    for (const GangItem& c : items) {
      need.memory_mb += c.memory_mb;
      need.vcores += c.vcores;
      need.gpus += c.gpus;
    }
    std::vector<std::string> node_text;
    for (const GangItem& r : room) {
      have.memory_mb += r.memory_mb;
      have.vcores += r.vcores;
      have.gpus += r.gpus;
      node_text.push_back(absl::StrCat(r.name, " ", Text(r)));
    }
    const std::string where =
        label.empty() ? "the cluster's nodes" : absl::StrCat("the nodes labelled '", label, "'");
    int64_t steps = 200000;
    bool exhausted = false;
    if (Fits(need, have) && (Place(items, 0, room, steps, &exhausted) || exhausted)) continue;
    return absl::InvalidArgumentError(absl::StrCat(
        "the job's ", items.size(), " containers (the ApplicationMaster's and its tasks', ",
        Text(need), " in all) can never run at once on ", where, " (",
        absl::StrJoin(node_text, ", "),
        "), even with nothing else running: YARN would give it some and it would wait forever "
        "for the rest; lower -m/--task_memory, -c/--task_vcores or -g/--task_gpus, or ask for "
        "fewer tasks"));
  }
  return absl::OkStatus();
}

}  // namespace tony::submit
