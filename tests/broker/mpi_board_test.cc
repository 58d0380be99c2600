// Copyright libtony authors.
//
// MpiBoard (broker/mpi_board.h) as a table: each row is one call and the state or error it
// must leave.

#include "broker/mpi_board.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace tony::broker {
namespace {

using State = MpiBoard::State;

struct Step {
  enum class Call { kLaunch, kFetch, kExit } call;
  const char* job;
  int index;
  std::string arg;  // Launch: the command; Exit: the exit code
  absl::StatusCode code;
  State state = State::kIdle;  // Launch: the state it answers
  std::string fetched = "";    // Fetch: the command it answers
  int exit_code = 0;           // Launch of an exited daemon
};

void Play(MpiBoard& board, const std::vector<Step>& steps) {
  int row = 0;
  for (const Step& s : steps) {
    ++row;
    switch (s.call) {
      case Step::Call::kLaunch: {
        absl::StatusOr<MpiBoard::View> v = board.Launch(s.job, s.index, s.arg);
        ASSERT_EQ(v.status().code(), s.code) << "row " << row << ": " << v.status();
        if (v.ok()) {
          EXPECT_EQ(v->state, s.state) << "row " << row;
          EXPECT_EQ(v->exit_code, s.exit_code) << "row " << row;
        }
        break;
      }
      case Step::Call::kFetch: {
        absl::StatusOr<std::string> c = board.Fetch(s.job, s.index);
        ASSERT_EQ(c.status().code(), s.code) << "row " << row << ": " << c.status();
        if (c.ok()) {
          EXPECT_EQ(*c, s.fetched) << "row " << row;
        }
        break;
      }
      case Step::Call::kExit:
        board.Exit(s.job, s.index, std::stoi(s.arg));
        break;
    }
  }
}

constexpr auto kLaunch = Step::Call::kLaunch;
constexpr auto kFetch = Step::Call::kFetch;
constexpr auto kExit = Step::Call::kExit;
constexpr auto kOk = absl::StatusCode::kOk;

TEST(MpiBoardTest, ADaemonIsHandedOverOnceRunsAndItsExitReachesTheAgent) {
  MpiBoard board({"worker:0", "worker:1"});
  Play(board, {
                  {kFetch, "worker", 0, "", kOk, State::kIdle, ""},  // nothing yet
                  {kLaunch, "worker", 0, "orted -a", kOk, State::kAssigned},
                  {kLaunch, "worker", 0, "orted -a", kOk, State::kAssigned},  // polled again
                  {kFetch, "worker", 0, "", kOk, State::kIdle, "orted -a"},
                  {kFetch, "worker", 0, "", kOk, State::kIdle, "orted -a"},  // a retried fetch
                  {kLaunch, "worker", 0, "orted -a", kOk, State::kRunning},
                  {kExit, "worker", 0, "0"},
                  {kLaunch, "worker", 0, "orted -a", kOk, State::kExited, "", 0},
                  // The other task is untouched; its daemon dies by a signal.
                  {kLaunch, "worker", 1, "orted -b", kOk, State::kAssigned},
                  {kFetch, "worker", 1, "", kOk, State::kIdle, "orted -b"},
                  {kExit, "worker", 1, "137"},
                  {kLaunch, "worker", 1, "orted -b", kOk, State::kExited, "", 137},
              });
}

TEST(MpiBoardTest, WrongCallsAreRefusedNamingTheTask) {
  MpiBoard board({"worker:0", "worker:1"});
  Play(board, {
                  {kLaunch, "worker", 2, "orted", absl::StatusCode::kNotFound},
                  {kLaunch, "launcher", 0, "orted", absl::StatusCode::kNotFound},
                  {kFetch, "ps", 0, "", absl::StatusCode::kNotFound},
                  {kLaunch, "worker", 0, "", absl::StatusCode::kInvalidArgument},
                  {kLaunch, "worker", 0, std::string(kMaxMpiCommandBytes + 1, 'x'),
                   absl::StatusCode::kInvalidArgument},
                  {kLaunch, "worker", 0, "orted -a", kOk, State::kAssigned},
                  // A second daemon for the same task.
                  {kLaunch, "worker", 0, "orted -other", absl::StatusCode::kAlreadyExists},
                  // A task that ended (stopped, or its container lost) before mpirun reached it.
                  {kExit, "worker", 1, "143"},
                  {kLaunch, "worker", 1, "orted -b", absl::StatusCode::kFailedPrecondition},
                  {kFetch, "worker", 1, "", kOk, State::kIdle, ""},
                  // Exits of tasks not on the board change nothing.
                  {kExit, "launcher", 0, "1"},
              });
  absl::StatusOr<MpiBoard::View> exited = board.Launch("worker", 1, "orted -b");
  EXPECT_EQ(exited.status().message(),
            "task worker:1 exited with code 143 before mpirun started its daemon");
}

TEST(MpiBoardTest, WithoutTasksItIsNoMpiJob) {
  MpiBoard board({});
  Play(board, {
                  {kLaunch, "worker", 0, "orted", absl::StatusCode::kFailedPrecondition},
                  {kFetch, "worker", 0, "", absl::StatusCode::kFailedPrecondition},
              });
}

}  // namespace
}  // namespace tony::broker
