// Copyright libtony authors.
//
// MpiBoard: the broker's record of the Open MPI daemons an MPI job's mpirun starts through its
// rsh agent (--framework mpi, docs/mpi.md). Each task that may run a daemon is in one state:
//
//   kIdle --Launch(command)--> kAssigned --Fetch--> kRunning --Exit(code)--> kExited
//   kIdle/kAssigned --Exit(code)--> kExited (the task ended before running its daemon)
//
// The agent's Launch hands a command over once; calling it again with the same command tells
// the state (the agent polls until kExited, then exits with the daemon's code). The task's
// executor polls Fetch until it gets the command, then runs it as its task.
//
// Thread-compatible: the broker calls it under its lock.

#ifndef TONY_BROKER_MPI_BOARD_H_
#define TONY_BROKER_MPI_BOARD_H_

#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace tony::broker {

// Longest daemon command accepted (an orted command line is about 1 KB).
inline constexpr size_t kMaxMpiCommandBytes = 64 * 1024;

class MpiBoard {
 public:
  enum class State { kIdle, kAssigned, kRunning, kExited };
  struct View {
    State state = State::kIdle;
    int exit_code = 0;  // kExited only
  };

  // `tasks`: "job:index" of every task that may run a daemon (none: not an MPI job).
  explicit MpiBoard(const std::vector<std::string>& tasks);

  // The agent's call. NotFound for a task not on the board, FailedPrecondition when there is no
  // board or the task ended without a command, AlreadyExists when it has another command,
  // InvalidArgument for an empty or oversized command.
  absl::StatusOr<View> Launch(absl::string_view job, int index, absl::string_view command);
  // The task's executor: its command once handed over (moving it to kRunning), "" before.
  absl::StatusOr<std::string> Fetch(absl::string_view job, int index);
  // The task's exit report; tasks not on the board are ignored.
  void Exit(absl::string_view job, int index, int exit_code);

 private:
  struct Slot {
    View view;
    std::string command;
  };
  // The task's slot, or NotFound/FailedPrecondition as Launch says.
  absl::StatusOr<Slot*> Find(absl::string_view job, int index);

  absl::flat_hash_map<std::string, Slot> slots_;
};

}  // namespace tony::broker

#endif  // TONY_BROKER_MPI_BOARD_H_
