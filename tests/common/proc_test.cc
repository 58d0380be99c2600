// Copyright libtony authors.

#include "common/proc.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/file_util.h"
#include "common/unique_fd.h"
#include "gtest/gtest.h"
#include "tests/testing/wait_until.h"

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
  // Polls a condition of another process, with a deadline: a long one, as the sanitizer runs
  // at nice 19 beside a busy machine give the child about 1% of a core.
  TaskUsage now;
  const absl::Time deadline = absl::Now() + absl::Seconds(90);
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

TEST(ProcTest, KillingATaskWaitsForAProcessCaughtMidExec) {
  // A task's process that left the tree and the group (double fork, setsid) and is exec'ing has
  // an empty environment for a moment: the scan that saw it must not be the last. The moment is
  // stretched here: a shell with an empty environment that takes the mark 300 ms later.
  const std::string mark = absl::StrCat("TONY_PROC_TEST_MARK=", ::getpid());
  int fds[2];
  ASSERT_EQ(::pipe2(fds, O_CLOEXEC), 0);  // EOF once the process exec'd
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    if (::fork() != 0) ::_exit(0);
    ::setsid();
    const pid_t self = ::getpid();
    (void)!::write(fds[1], &self, sizeof(self));
    // Straight from the empty environment to the marked one: dash exports PWD to what it runs,
    // so an `env` in between would read unmarked, not empty.
    const std::string script = absl::StrCat("/bin/sleep 0.3; ", mark, " exec /bin/sleep 300");
    const char* argv[] = {"/bin/sh", "-c", script.c_str(), nullptr};
    const char* envp[] = {nullptr};
    ::execve(argv[0], const_cast<char**>(argv), const_cast<char**>(envp));
    ::_exit(127);
  }
  ::waitpid(child, nullptr, 0);
  ::close(fds[1]);
  pid_t left = 0;
  ASSERT_EQ(::read(fds[0], &left, sizeof(left)), static_cast<ssize_t>(sizeof(left)));
  char eof;
  ASSERT_EQ(::read(fds[0], &eof, 1), 0);
  ::close(fds[0]);

  KillTaskProcesses({.env_marker = mark}, /*max_scans=*/1000, absl::Seconds(30));

  // Gone (init reaps it), or at least dead.
  auto alive = [&] {
    std::optional<ProcStat> s = ReadProcStat(left);
    return s.has_value() && s->state != 'Z';
  };
  testing::WaitUntil([&] { return !alive(); }, absl::Seconds(5));
  EXPECT_FALSE(alive()) << "pid " << left << " outlived the kill";
  if (alive()) ::kill(left, SIGKILL);
}

TEST(ProcTest, AnEnvironmentReadShortOfItsBlockIsNotProofOfAbsence) {
  const std::string mark = "TONY_TASK_INSTANCE=0123456789abcdef";
  const std::string whole = absl::StrCat("A=1", std::string(1, '\0'), "B=2", std::string(1, '\0'),
                                         mark, std::string(1, '\0'));
  EXPECT_EQ(EnvironmentCarries(whole, whole.size(), mark), MarkerSeen::kYes);
  // Even when the block's size changed meanwhile: the mark was read.
  EXPECT_EQ(EnvironmentCarries(whole, 0, mark), MarkerSeen::kYes);
  // Mid-execve or exiting: nothing to read.
  EXPECT_EQ(EnvironmentCarries("", 0, mark), MarkerSeen::kUnsure);
  EXPECT_EQ(EnvironmentCarries("", whole.size(), mark), MarkerSeen::kUnsure);
  // The first page of a large environment, then an execve took the rest away.
  const std::string first_page = whole.substr(0, 8);
  EXPECT_EQ(EnvironmentCarries(first_page, whole.size(), mark), MarkerSeen::kUnsure);
  // A mark cut short is not the mark.
  const std::string cut = whole.substr(0, whole.size() - 3);
  EXPECT_EQ(EnvironmentCarries(cut, whole.size(), mark), MarkerSeen::kUnsure);
  // A whole block without it: certainly not the task's.
  const std::string other = absl::StrCat("A=1", std::string(1, '\0'));
  EXPECT_EQ(EnvironmentCarries(other, other.size(), mark), MarkerSeen::kNo);
  // Another mark that begins like it.
  const std::string longer = absl::StrCat(mark, "0", std::string(1, '\0'));
  EXPECT_EQ(EnvironmentCarries(longer, longer.size(), mark), MarkerSeen::kNo);
}

TEST(ProcTest, TheEnvironmentBlockSizeMatchesAWholeRead) {
  // What EnvironmentCarries compares: /proc/<pid>/stat's block and a whole read of environ.
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    const std::string big(20000, 'x');  // several pages: read in more than one chunk
    const std::string var = absl::StrCat("TONY_PROC_TEST_BIG=", big);
    const char* argv[] = {"/bin/sleep", "300", nullptr};
    const char* envp[] = {"A=1", var.c_str(), "TONY_PROC_TEST_LAST=1", nullptr};
    ::execve(argv[0], const_cast<char**>(argv), const_cast<char**>(envp));
    ::_exit(127);
  }
  // Polls another process's state, with a deadline.
  auto read_environment = [&] {
    absl::StatusOr<std::string> read = ReadFileToString(absl::StrCat("/proc/", child, "/environ"));
    return read.ok() ? *read : std::string();
  };
  testing::WaitUntil(
      [&] { return read_environment().find("TONY_PROC_TEST_LAST=1") != std::string::npos; },
      absl::Seconds(10));
  // Exec'd: from here on its block stays.
  const std::optional<ProcStat> stat = ReadProcStat(child);
  const std::string env = read_environment();
  ::kill(child, SIGKILL);
  ::waitpid(child, nullptr, 0);
  ASSERT_TRUE(stat.has_value());
  EXPECT_GT(env.size(), 20000u);
  EXPECT_EQ(stat->env_bytes, env.size());
  EXPECT_EQ(EnvironmentCarries(env, stat->env_bytes, "TONY_PROC_TEST_LAST=1"), MarkerSeen::kYes);
  EXPECT_EQ(EnvironmentCarries(env, stat->env_bytes, "TONY_PROC_TEST_NONE=1"), MarkerSeen::kNo);
}

TEST(ProcTest, KillingStopsAtItsTimeBoundAsAtItsScanBound) {
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::pause();
    ::_exit(0);
  }
  // No time left: not one scan, whatever the scan bound.
  KillTaskProcesses({}, /*max_scans=*/1000, absl::ZeroDuration());
  int status = 0;
  EXPECT_EQ(::waitpid(child, &status, WNOHANG), 0) << "killed without a scan's time";
  // Time enough: the child is found and killed.
  KillTaskProcesses({}, /*max_scans=*/1000, absl::Seconds(30));
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFSIGNALED(status));
  EXPECT_EQ(WTERMSIG(status), SIGKILL);
}

TEST(ProcTest, CaughtSignalsReadsTheSigCgtMask) {
  EXPECT_EQ(CaughtSignals("Name:\tpython3\nSigIgn:\t0000000001001000\n"
                          "SigCgt:\t0000000180000200\nCapInh:\t0\n"),
            uint64_t{0x180000200});
  EXPECT_EQ(CaughtSignals("Name:\tx\n"), std::nullopt);
  EXPECT_EQ(CaughtSignals("SigCgt:\tzz\n"), std::nullopt);
}

// The preemption notice's signal reaches only the task's processes that catch it: SIGUSR1's
// default action would end one that did not ask for it.
TEST(ProcTest, OnlyProcessesThatCatchASignalAreSentIt) {
  int ready[2], caught[2];
  ASSERT_EQ(::pipe(ready), 0);
  ASSERT_EQ(::pipe(caught), 0);
  const UniqueFd owned[] = {UniqueFd(ready[0]), UniqueFd(ready[1]), UniqueFd(caught[0]),
                            UniqueFd(caught[1])};
  static int caught_fd = -1;
  caught_fd = caught[1];
  const pid_t catcher = ::fork();
  ASSERT_GE(catcher, 0);
  if (catcher == 0) {
    struct sigaction sa {};
    sa.sa_handler = [](int) { (void)!::write(caught_fd, "c", 1); };
    ::sigaction(SIGUSR1, &sa, nullptr);
    (void)!::write(ready[1], "r", 1);
    while (true) ::pause();
  }
  const pid_t bystander = ::fork();
  ASSERT_GE(bystander, 0);
  if (bystander == 0) {
    (void)!::write(ready[1], "r", 1);
    while (true) ::pause();
  }
  char buf[2];
  ASSERT_EQ(::read(ready[0], buf, 1), 1);
  ASSERT_EQ(::read(ready[0], buf, 1), 1);
  EXPECT_EQ(SignalTaskProcessesThatCatch(SIGUSR1, {}), 1);
  ASSERT_EQ(::read(caught[0], buf, 1), 1);  // the catcher's handler ran
  EXPECT_EQ(buf[0], 'c');
  int status = 0;
  EXPECT_EQ(::waitpid(bystander, &status, WNOHANG), 0);  // alive: never sent it
  ::kill(catcher, SIGKILL);
  ::kill(bystander, SIGKILL);
  ::waitpid(catcher, &status, 0);
  ::waitpid(bystander, &status, 0);
}

TEST(ProcTest, KernelThreadsAreToldApart) {
  std::optional<ProcStat> kthreadd = ReadProcStat(2);
  ASSERT_TRUE(kthreadd.has_value());
  EXPECT_TRUE(kthreadd->kernel_thread);
  EXPECT_FALSE(ReadProcStat(::getpid())->kernel_thread);
}

}  // namespace
}  // namespace tony
