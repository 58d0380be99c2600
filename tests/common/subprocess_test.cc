// Copyright libtony authors.

#include "common/subprocess.h"

#include <signal.h>

#include <fstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
// common_test has neither tests/ nor the source root on its include path.
#include "tests/testing/wait_until.h"

namespace tony {
namespace {

// The state letter of /proc/<pid>/stat ('Z' for a zombie), or '\0' once the process is gone.
char ProcState(pid_t pid) {
  std::ifstream in(absl::StrCat("/proc/", pid, "/stat"));
  std::string stat;
  if (!std::getline(in, stat)) return '\0';
  const size_t paren = stat.rfind(')');
  return paren == std::string::npos || paren + 2 >= stat.size() ? '\0' : stat[paren + 2];
}

absl::StatusOr<std::unique_ptr<Subprocess>> SpawnShell(const std::string& script) {
  SubprocessOptions o;
  o.argv = {"/bin/sh", "-c", script};
  return Subprocess::Spawn(o);
}

// Waits (within a deadline) until `pid` no longer exists, not even as a zombie.
bool GoneWithin(pid_t pid, absl::Duration timeout) {
  return testing::WaitUntil([pid] { return ProcState(pid) == '\0'; }, timeout);
}

TEST(SubprocessTest, AChildHandedToTheReaperLeavesNoZombieWhenItExits) {
  auto child = SpawnShell("exec sleep 600");
  ASSERT_TRUE(child.ok()) << child.status();
  const pid_t pid = (*child)->pid();
  ReapInBackground(std::move(*child));
  ASSERT_NE(ProcState(pid), '\0');
  ASSERT_EQ(::kill(pid, SIGKILL), 0);
  EXPECT_TRUE(GoneWithin(pid, absl::Seconds(30))) << "state " << ProcState(pid);
}

TEST(SubprocessTest, TheReaperFollowsSeveralChildrenAndTakesFinishedOnes) {
  auto done = SpawnShell("exit 3");
  ASSERT_TRUE(done.ok()) << done.status();
  ASSERT_TRUE((*done)->Wait(absl::Seconds(30)).ok());
  ReapInBackground(std::move(*done));  // already reaped: dropped

  std::vector<pid_t> pids;
  for (int i = 0; i < 3; ++i) {
    auto c = SpawnShell("exec sleep 600");
    ASSERT_TRUE(c.ok()) << c.status();
    pids.push_back((*c)->pid());
    ReapInBackground(std::move(*c));
  }
  // In reverse order: the reaper does not wait for the oldest child first.
  for (auto it = pids.rbegin(); it != pids.rend(); ++it) {
    ASSERT_EQ(::kill(*it, SIGTERM), 0);
    EXPECT_TRUE(GoneWithin(*it, absl::Seconds(30))) << "state " << ProcState(*it);
  }
  ReapInBackground(nullptr);
}

// An owned reaper: Stop() joins its thread and keeps the children still running; Start() again
// reaps them once they exit.
TEST(ChildReaperTest, StopJoinsAndKeepsRunningChildrenForTheNextStart) {
  ChildReaper reaper;
  ASSERT_TRUE(reaper.Start().ok());
  ASSERT_TRUE(reaper.Start().ok());  // already running
  auto child = SpawnShell("exec sleep 600");
  ASSERT_TRUE(child.ok()) << child.status();
  const pid_t pid = (*child)->pid();
  reaper.Adopt(std::move(*child));
  reaper.Stop();
  reaper.Stop();  // harmless
  EXPECT_EQ(reaper.pending(), 1u);
  ASSERT_EQ(::kill(pid, SIGKILL), 0);
  // Not reaped while stopped: the child stays a zombie.
  testing::WaitUntil([pid] { return ProcState(pid) == 'Z'; }, absl::Seconds(30));
  EXPECT_EQ(ProcState(pid), 'Z');
  ASSERT_TRUE(reaper.Start().ok());
  EXPECT_TRUE(GoneWithin(pid, absl::Seconds(30))) << "state " << ProcState(pid);
  reaper.Stop();
  EXPECT_EQ(reaper.pending(), 0u);
}

TEST(ChildReaperTest, DestroyingAStartedReaperJoinsItsThread) {
  auto child = SpawnShell("exit 0");
  ASSERT_TRUE(child.ok()) << child.status();
  {
    ChildReaper reaper;
    ASSERT_TRUE(reaper.Start().ok());
    reaper.Adopt(std::move(*child));
    reaper.Adopt(nullptr);
  }
}

}  // namespace
}  // namespace tony
