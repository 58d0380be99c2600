// Copyright libtony authors.
//
// fork() while several threads log and retire objects (Airflow workers and Python's
// multiprocessing fork processes that use libtony): every child, one that logs or not, exits.
// docs/hacking.md, "fork() and absl::Mutex": a lock held across the fork by a prepare handler is
// not enough for an absl::Mutex, so the test forks often, with many threads in the locks.

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/config.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "common/fork_safe_mutex.h"
#include "common/logging.h"
#include "common/retirer.h"
#include "common/unique_fd.h"
#include "gtest/gtest.h"
#include "tony/log.h"

namespace tony {
namespace {

constexpr int kLoggingThreads = 4;
constexpr int kForks = 200;
// A child that does not exit within this has hung (it needs a few milliseconds).
constexpr absl::Duration kChildDeadline = absl::Seconds(20);

// The child's wait status, or nullopt when it had not exited by `deadline` (then it is killed).
std::optional<int> WaitBounded(pid_t child, absl::Duration deadline) {
  UniqueFd pidfd(static_cast<int>(::syscall(SYS_pidfd_open, child, 0)));
  int ready = 0;
  if (pidfd.valid()) {
    const absl::Time until = absl::Now() + deadline;
    pollfd p{pidfd.get(), POLLIN, 0};
    do {
      const int64_t ms = std::max<int64_t>(absl::ToInt64Milliseconds(until - absl::Now()), 0);
      ready = ::poll(&p, 1, static_cast<int>(ms));
    } while (ready < 0 && errno == EINTR);
  }
  if (ready <= 0) ::kill(child, SIGKILL);  // hung (or no pidfd to wait with)
  int status = 0;
  if (::waitpid(child, &status, 0) != child || ready <= 0) return std::nullopt;
  return status;
}

enum class ChildDoes { kNothing, kLogs, kLogsAndRetires };

// Starts `kLoggingThreads` threads that log (and hand objects to the Retirer) until the end,
// forks `kForks` children meanwhile, each doing `does(i)`, and counts those that hung or failed.
// A child that logs checks its lines reached `lines` (when given), the only thread there.
struct ForkOutcome {
  int hung = 0;
  int failed = 0;
};
ForkOutcome ForkWhileThreadsLog(const std::atomic<uint64_t>* lines) {
  std::atomic<bool> stop{false};
  std::vector<std::thread> threads;
  for (int t = 0; t < kLoggingThreads; ++t) {
    threads.emplace_back([&stop, t] {
      for (uint64_t i = 0; !stop.load(std::memory_order_relaxed); ++i) {
        TONY_LOG(INFO) << "thread " << t << " line " << i;
        if (i % 8 == 0) RetireInBackground(std::make_shared<std::string>("retired"));
      }
    });
  }
  ForkOutcome outcome;
  for (int i = 0; i < kForks; ++i) {
    const ChildDoes does = static_cast<ChildDoes>(i % 3);
    const pid_t child = ::fork();
    if (child == 0) {
      const uint64_t before = lines != nullptr ? lines->load() : 0;
      if (does != ChildDoes::kNothing) {
        for (int k = 0; k < 10; ++k) TONY_LOG(INFO) << "child " << i << " line " << k;
      }
#ifndef ABSL_HAVE_THREAD_SANITIZER  // TSan: no thread may start after a multi-threaded fork
      if (does == ChildDoes::kLogsAndRetires) {
        RetireInBackground(std::make_shared<std::string>("the child's"));
      }
#endif
      const bool delivered =
          lines == nullptr || does == ChildDoes::kNothing || lines->load() - before == 10;
      ::_exit(delivered ? 0 : 1);
    }
    if (child < 0) {
      ++outcome.failed;
      break;
    }
    const std::optional<int> status = WaitBounded(child, kChildDeadline);
    if (!status) {
      ++outcome.hung;
    } else if (!WIFEXITED(*status) || WEXITSTATUS(*status) != 0) {
      ++outcome.failed;
    }
  }
  stop = true;
  for (std::thread& t : threads) t.join();
  return outcome;
}

TEST(ForkSafetyTest, ChildrenForkedWhileThreadsLogToASinkExit) {
  std::atomic<uint64_t> lines{0};
  SetLogSink([&lines](LogSeverity, absl::string_view, int, absl::string_view) { ++lines; });
  const ForkOutcome outcome = ForkWhileThreadsLog(&lines);
  SetLogSink(nullptr);
  EXPECT_EQ(outcome.hung, 0) << "children that hung of " << kForks;
  EXPECT_EQ(outcome.failed, 0) << "children whose lines were lost, or that failed, of " << kForks;
  EXPECT_GT(lines.load(), 0u);
}

TEST(ForkSafetyTest, ChildrenForkedWhileThreadsLogToStderrExit) {
  // The default sink (stderr, here /dev/null: the threads write many lines).
  const int saved = ::dup(STDERR_FILENO);
  ASSERT_GE(saved, 0);
  UniqueFd restore(saved);
  {
    UniqueFd null(::open("/dev/null", O_WRONLY | O_CLOEXEC));
    ASSERT_TRUE(null.valid());
    ASSERT_EQ(::dup2(null.get(), STDERR_FILENO), STDERR_FILENO);
  }
  const ForkOutcome outcome = ForkWhileThreadsLog(nullptr);
  ::dup2(restore.get(), STDERR_FILENO);
  EXPECT_EQ(outcome.hung, 0) << "children that hung of " << kForks;
  EXPECT_EQ(outcome.failed, 0) << "children that failed of " << kForks;
}

TEST(ForkSafeMutexTest, AChildGetsAnUnlockedMutexAndAFreshCondVar) {
  // A parent thread waits on the condition variable (holding nothing) and another holds the
  // mutex at times; the child, where neither exists, locks, signals and times out a wait.
  ForkSafeMutex mu;
  ForkSafeCondVar cv;
  bool done = false;  // under mu
  std::thread waiter([&] {
    ForkSafeLock lock(&mu);
    while (!done) cv.Wait(&mu);
  });
  std::atomic<bool> stop{false};
  std::thread locker([&] {
    while (!stop) ForkSafeLock lock(&mu);
  });
  for (int i = 0; i < 50; ++i) {
    mu.BeforeFork();
    const pid_t child = ::fork();
    if (child == 0) {
      cv.AfterForkInChild();
      mu.AfterForkInChild();
      {
        ForkSafeLock lock(&mu);
        cv.SignalAll();
        (void)cv.WaitUntil(&mu, absl::Now() + absl::Milliseconds(1));
      }
      ::_exit(0);
    }
    mu.AfterForkInParent();
    ASSERT_GT(child, 0);
    const std::optional<int> status = WaitBounded(child, kChildDeadline);
    ASSERT_TRUE(status.has_value()) << "child " << i << " hung";
    EXPECT_TRUE(WIFEXITED(*status) && WEXITSTATUS(*status) == 0);
  }
  stop = true;
  locker.join();
  {
    ForkSafeLock lock(&mu);
    done = true;
    cv.SignalAll();
  }
  waiter.join();
}

TEST(ForkSafeMutexTest, WaitUntilReturnsWhetherTheDeadlinePassed) {
  ForkSafeMutex mu;
  ForkSafeCondVar cv;
  ForkSafeLock lock(&mu);
  EXPECT_TRUE(cv.WaitUntil(&mu, absl::Now() - absl::Seconds(1)));
  // Signalled by a thread: woken before the deadline (far off).
  std::thread signaller([&] {
    ForkSafeLock other(&mu);
    cv.Signal();
  });
  // A spurious wake-up also returns false; either way not a timeout.
  EXPECT_FALSE(cv.WaitUntil(&mu, absl::Now() + absl::Hours(1)));
  mu.Unlock();
  signaller.join();
  mu.Lock();
}

}  // namespace
}  // namespace tony
