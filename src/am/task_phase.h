// Copyright libtony authors.
//
// TaskPhase: where one task of a job is, and the one table of the phase changes JobState may
// make (docs/am-state-machine.md, "Allowed phase changes"; a test holds the two equal). JobState
// changes a phase only through this table, so an illegal change is refused and logged rather
// than silently taken.
//
// Thread-safe: constant data and pure functions.

#ifndef TONY_AM_TASK_PHASE_H_
#define TONY_AM_TASK_PHASE_H_

#include <optional>
#include <vector>

#include "absl/strings/string_view.h"

namespace tony::am {

// Where one task is. The facts of its current incarnation (allocated, registered, started) are
// kept beside it: a stopped task may or may not have started.
enum class TaskPhase {
  kBlocked,         // not asked for yet: its role waits for the roles it depends on
  kWaiting,         // asked for; no container yet
  kAllocated,       // has a container; its executor has not registered
  kRegistered,      // registered its address; its command has not started
  kRunning,         // its command runs
  kExitHeld,        // ended by a SIGTERM/SIGKILL the AM did not send: waits for the container's
                    // completion to say why (preemption, lost node) or for exit_cause_wait
  kStopping,        // told to stop (the job is over)
  kStopped,         // ended after being told to stop
  kEnded,           // ended (exit_code), for good
  kRestartPending,  // failed; relaunched once its container ended and its backoff passed
  kReleased,        // released for all-or-nothing allocation; asked for again later
};

// The name docs and the status page use ("EXITED" for kEnded, "RESTARTING" for
// kRestartPending).
absl::string_view TaskPhaseName(TaskPhase phase);
// The phase named `name` (as TaskPhaseName spells it); nullopt for anything else.
std::optional<TaskPhase> ParseTaskPhase(absl::string_view name);

// One row of the table: from `from` (nullopt: a task's first phase) a task may go to any of `to`.
struct PhaseChanges {
  std::optional<TaskPhase> from;
  std::vector<TaskPhase> to;
};
// The table, one row per `from` (the start first, then in the enum's order).
const std::vector<PhaseChanges>& AllowedPhaseChanges();
// Whether the table allows `from` -> `to`. Staying in a phase is no change and always allowed.
bool PhaseChangeAllowed(std::optional<TaskPhase> from, TaskPhase to);

}  // namespace tony::am

#endif  // TONY_AM_TASK_PHASE_H_
