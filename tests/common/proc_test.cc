// Copyright libtony authors.

#include "common/proc.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <vector>

#include "absl/time/clock.h"
#include "gtest/gtest.h"

namespace tony {
namespace {

TEST(ProcTest, TaskUsageCountsAChildsMemoryAndCpu) {
  const TaskUsage before = SampleTaskUsage({});
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // 64 MB touched, then a busy loop until killed.
    std::vector<char> memory(64 << 20);
    std::memset(memory.data(), 1, memory.size());
    volatile uint64_t x = 0;
    for (;;) x = x + memory[x % memory.size()];
  }
  // Polls a condition of another process, with a deadline.
  TaskUsage now;
  const absl::Time deadline = absl::Now() + absl::Seconds(20);
  while (absl::Now() < deadline) {
    now = SampleTaskUsage({});
    if (now.rss_bytes >= before.rss_bytes + (60 << 20) && now.cpu_seconds >= 0.2) break;
    absl::SleepFor(absl::Milliseconds(50));
  }
  ::kill(child, SIGKILL);
  ::waitpid(child, nullptr, 0);
  EXPECT_EQ(now.processes, before.processes + 1);
  EXPECT_GE(now.rss_bytes, before.rss_bytes + (60 << 20));
  EXPECT_GE(now.cpu_seconds, 0.2);
  EXPECT_EQ(SampleTaskUsage({}).processes, before.processes);
}

TEST(ProcTest, ProcStatReadsCpuAndResidentPagesOfThisProcess) {
  std::optional<ProcStat> self = ReadProcStat(::getpid());
  ASSERT_TRUE(self.has_value());
  EXPECT_GT(self->rss_pages, 0);
  EXPECT_EQ(self->state, 'R');
}

}  // namespace
}  // namespace tony
