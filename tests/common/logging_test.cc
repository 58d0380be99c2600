// Copyright libtony authors.

#include "common/logging.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "absl/time/clock.h"
#include "gtest/gtest.h"

namespace tony {
namespace {

TEST(LoggingTest, HostSinkCapturesLinesAtOrAboveMinSeverity) {
  std::vector<std::string> lines;
  SetLogSink([&](LogSeverity severity, absl::string_view file, int line, absl::string_view msg) {
    lines.push_back(std::string(msg));
  });
  SetMinLogSeverity(LogSeverity::kInfo);
  TONY_LOG(DEBUG) << "hidden";
  TONY_LOG(INFO) << "shown " << 42;
  TONY_LOG(ERROR) << "bad";
  SetLogSink(nullptr);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0], "shown 42");
  EXPECT_EQ(lines[1], "bad");
}

TEST(LoggingTest, SinkGetsSourceRelativePaths) {
  std::string file;
  SetLogSink(
      [&](LogSeverity, absl::string_view f, int, absl::string_view) { file = std::string(f); });
  TONY_LOG(INFO) << "where";
  SetLogSink(nullptr);
  EXPECT_EQ(file, "tests/common/logging_test.cc");
}

TEST(LoggingTest, SinkThatLogsDoesNotDeadlockOrRecurse) {
  int calls = 0;
  SetLogSink([&](LogSeverity, absl::string_view, int, absl::string_view msg) {
    ++calls;
    TONY_LOG(INFO) << "sink saw: " << msg;  // goes to stderr, not back into this sink
  });
  TONY_LOG(INFO) << "outer";
  SetLogSink(nullptr);
  EXPECT_EQ(calls, 1);
}

TEST(LoggingTest, SinkMayReplaceItselfWhileRunning) {
  int first = 0, second = 0;
  LogSink replacement = [&](LogSeverity, absl::string_view, int, absl::string_view) { ++second; };
  SetLogSink([&](LogSeverity, absl::string_view, int, absl::string_view) {
    ++first;
    SetLogSink(replacement);  // destroys this sink's holder only after it returns
  });
  TONY_LOG(INFO) << "one";
  TONY_LOG(INFO) << "two";
  SetLogSink(nullptr);
  EXPECT_EQ(first, 1);
  EXPECT_EQ(second, 1);
}

// Whether the child `pid` exits within `timeout`; killed and reaped if not.
bool ExitsWithin(pid_t pid, absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  int status = 0;
  while (::waitpid(pid, &status, WNOHANG) == 0) {
    if (absl::Now() > deadline) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      return false;
    }
    absl::SleepFor(absl::Milliseconds(1));
  }
  return true;
}

// A fork while another thread holds the sink's lock must not leave the child's copy locked: the
// child's first line would hang (as a Python multiprocessing worker's did, in principle). Each
// fork lands in the logging thread's loop, inside its locked moment often enough that 200 forks
// hung every run without the fork handlers.
TEST(LoggingTest, ChildForkedWhileAnotherThreadLogsCanLog) {
  std::atomic<int64_t> lines{0};
  SetLogSink([&](LogSeverity, absl::string_view, int, absl::string_view) { ++lines; });
  std::atomic<bool> stop{false};
  std::thread logger([&] {
    while (!stop.load()) TONY_LOG(INFO) << "busy";
  });
  int hung = 0;
  for (int i = 0; i < 200 && hung == 0; ++i) {
    const pid_t pid = ::fork();
    if (pid == 0) {
      TONY_LOG(INFO) << "child";
      ::_exit(0);
    }
    ASSERT_GT(pid, 0);
    if (!ExitsWithin(pid, absl::Seconds(10))) ++hung;
  }
  stop = true;
  logger.join();
  SetLogSink(nullptr);
  EXPECT_EQ(hung, 0) << "a child hung on its first log line";
  EXPECT_GT(lines.load(), 0);
}

}  // namespace
}  // namespace tony
