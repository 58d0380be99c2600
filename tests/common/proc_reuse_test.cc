// Copyright libtony authors.
//
// SignalIfSame: a kill is aimed at a process found by a scan, and between the scan and the
// signal its pid may be reused by an unrelated process. The pid with another start time is
// such a process: it is never signalled.

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <optional>

#include "common/proc.h"
#include "gtest/gtest.h"

namespace tony {
namespace {

// A child that waits to be killed.
pid_t SleepingChild() {
  const pid_t child = ::fork();
  if (child == 0) {
    for (;;) ::pause();
  }
  return child;
}

// Whether `pid` (our child) has ended, reaping it then; its signal in *sig.
bool Ended(pid_t pid, int* sig) {
  int status = 0;
  if (::waitpid(pid, &status, WNOHANG) != pid) return false;
  *sig = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
  return true;
}

TEST(SignalIfSameTest, APidNowNamingAProcessWithAnotherStartTimeIsNotSignalled) {
  const pid_t child = SleepingChild();
  ASSERT_GT(child, 0);
  std::optional<ProcStat> scanned = ReadProcStat(child);
  ASSERT_TRUE(scanned.has_value());
  // What a scan saw earlier, when the pid was another process's.
  ProcStat earlier = *scanned;
  earlier.start_ticks = scanned->start_ticks > 0 ? scanned->start_ticks - 1 : 1;
  EXPECT_FALSE(SignalIfSame(earlier, SIGKILL));
  ::usleep(100 * 1000);
  int sig = 0;
  EXPECT_FALSE(Ended(child, &sig)) << "the process now at the pid was killed";

  // The process the scan did see is signalled.
  EXPECT_TRUE(SignalIfSame(*scanned, SIGKILL));
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
}

}  // namespace
}  // namespace tony
