// Copyright libtony authors.

#include "am/task_phase.h"

#include <algorithm>

namespace tony::am {
namespace {

constexpr TaskPhase kAllPhases[] = {
    TaskPhase::kBlocked, TaskPhase::kWaiting,        TaskPhase::kAllocated, TaskPhase::kRegistered,
    TaskPhase::kRunning, TaskPhase::kExitHeld,       TaskPhase::kStopping,  TaskPhase::kStopped,
    TaskPhase::kEnded,   TaskPhase::kRestartPending, TaskPhase::kReleased,
};

std::vector<PhaseChanges> BuildTable() {
  using P = TaskPhase;
  // An incarnation's phases, once it is asked for: each may end, be stopped or be released.
  const std::vector<P> live_ends = {P::kExitHeld, P::kEnded, P::kStopping, P::kStopped,
                                    P::kReleased};
  auto live = [&live_ends](std::vector<P> ahead) {
    ahead.insert(ahead.end(), live_ends.begin(), live_ends.end());
    return ahead;
  };
  return {
      {std::nullopt, {P::kWaiting, P::kBlocked, P::kAllocated, P::kStopped}},
      {P::kBlocked, {P::kWaiting, P::kStopped}},
      {P::kWaiting, live({P::kAllocated, P::kRegistered, P::kRunning})},
      {P::kAllocated, live({P::kRegistered, P::kRunning})},
      {P::kRegistered, live({P::kRunning})},
      {P::kRunning, live({})},
      {P::kExitHeld, {P::kEnded, P::kStopping, P::kStopped, P::kReleased}},
      {P::kStopping, {P::kStopped, P::kReleased}},
      {P::kStopped, {P::kWaiting, P::kBlocked}},
      {P::kEnded, {P::kRestartPending}},
      {P::kRestartPending, {P::kWaiting, P::kStopping, P::kStopped, P::kReleased}},
      {P::kReleased, {P::kWaiting, P::kBlocked, P::kStopping, P::kStopped}},
  };
}

}  // namespace

absl::string_view TaskPhaseName(TaskPhase phase) {
  switch (phase) {
    case TaskPhase::kBlocked:
      return "BLOCKED";
    case TaskPhase::kWaiting:
      return "WAITING";
    case TaskPhase::kAllocated:
      return "ALLOCATED";
    case TaskPhase::kRegistered:
      return "REGISTERED";
    case TaskPhase::kRunning:
      return "RUNNING";
    case TaskPhase::kExitHeld:
      return "EXIT_HELD";
    case TaskPhase::kStopping:
      return "STOPPING";
    case TaskPhase::kStopped:
      return "STOPPED";
    case TaskPhase::kEnded:
      return "EXITED";
    case TaskPhase::kRestartPending:
      return "RESTARTING";
    case TaskPhase::kReleased:
      return "RELEASED";
  }
  return "?";
}

std::optional<TaskPhase> ParseTaskPhase(absl::string_view name) {
  for (TaskPhase p : kAllPhases) {
    if (TaskPhaseName(p) == name) return p;
  }
  return std::nullopt;
}

const std::vector<PhaseChanges>& AllowedPhaseChanges() {
  static const std::vector<PhaseChanges>* const table = new auto(BuildTable());
  return *table;
}

bool PhaseChangeAllowed(std::optional<TaskPhase> from, TaskPhase to) {
  if (from == to) return true;
  for (const PhaseChanges& row : AllowedPhaseChanges()) {
    if (row.from != from) continue;
    return std::find(row.to.begin(), row.to.end(), to) != row.to.end();
  }
  return false;
}

}  // namespace tony::am
