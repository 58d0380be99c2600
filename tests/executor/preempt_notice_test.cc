// Copyright libtony authors.
//
// The executor's side of a preemption notice: TONY_PREEMPT_SIGNAL / TONY_PREEMPT_NOTICE from the
// task's environment, and the notifier acting once per container.

#include "executor/preempt_notice.h"

#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "common/file_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tony/log.h"

namespace tony::executor {
namespace {

using ::testing::HasSubstr;

TEST(PreemptNoticeTest, SignalsByNameNumberOrNone) {
  EXPECT_EQ(ParsePreemptSignal("SIGUSR1").value(), SIGUSR1);
  EXPECT_EQ(ParsePreemptSignal("usr2").value(), SIGUSR2);
  EXPECT_EQ(ParsePreemptSignal(" SIGINT ").value(), SIGINT);
  EXPECT_EQ(ParsePreemptSignal("12").value(), 12);
  EXPECT_EQ(ParsePreemptSignal("none").value(), 0);
  EXPECT_EQ(ParsePreemptSignal("0").value(), 0);
  EXPECT_EQ(ParsePreemptSignal("40").value(), 40);  // real-time: no name
}

TEST(PreemptNoticeTest, BadSignalsAreRefusedNamingTheVariable) {
  for (const char* bad : {"SIGFOO", "", "-3", "65", "SIGKILL", "9", "STOP", "1.5"}) {
    absl::StatusOr<int> sig = ParsePreemptSignal(bad);
    ASSERT_FALSE(sig.ok()) << bad;
    EXPECT_EQ(sig.status().code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_THAT(sig.status().message(), HasSubstr("TONY_PREEMPT_SIGNAL: '"));
    EXPECT_THAT(sig.status().message(), HasSubstr("by name (SIGUSR1"));
  }
}

TEST(PreemptNoticeTest, SettingsDefaultAndAreSetForTheTask) {
  std::map<std::string, std::string> env;
  absl::StatusOr<PreemptSettings> s = ApplyPreemptSettings("/yarn/container_1", &env);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->signal, SIGUSR1);
  EXPECT_EQ(s->notice_path, "/yarn/container_1/tony-preempt-notice");
  EXPECT_EQ(env["TONY_PREEMPT_SIGNAL"], "SIGUSR1");
  EXPECT_EQ(env["TONY_PREEMPT_NOTICE"], "/yarn/container_1/tony-preempt-notice");

  env = {{"TONY_PREEMPT_SIGNAL", "usr2"}, {"TONY_PREEMPT_NOTICE", "ckpt/notice"}};
  s = ApplyPreemptSettings("/yarn/container_1", &env);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->signal, SIGUSR2);
  EXPECT_EQ(s->notice_path, "/yarn/container_1/ckpt/notice");
  EXPECT_EQ(env["TONY_PREEMPT_SIGNAL"], "SIGUSR2");
  EXPECT_EQ(env["TONY_PREEMPT_NOTICE"], "/yarn/container_1/ckpt/notice");

  env = {{"TONY_PREEMPT_SIGNAL", "none"}, {"TONY_PREEMPT_NOTICE", "/data/notice"}};
  s = ApplyPreemptSettings("/yarn/container_1", &env);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->signal, 0);
  EXPECT_EQ(s->notice_path, "/data/notice");
  EXPECT_EQ(env["TONY_PREEMPT_SIGNAL"], "none");

  env = {{"TONY_PREEMPT_SIGNAL", "40"}};
  ASSERT_TRUE(ApplyPreemptSettings("/w", &env).ok());
  EXPECT_EQ(env["TONY_PREEMPT_SIGNAL"], "40");

  env = {{"TONY_PREEMPT_SIGNAL", "SIGWHAT"}};
  EXPECT_EQ(ApplyPreemptSettings("/w", &env).status().code(), absl::StatusCode::kInvalidArgument);
}

class PreemptNotifierTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = ::testing::TempDir() + "/preempt_notice_test.XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
  }
  PreemptNotifier Notifier(std::string path, int signal = SIGUSR1) {
    return PreemptNotifier("worker:0", {signal, std::move(path)}, [this](int sig) {
      sent_.push_back(sig);
      return 1;
    });
  }
  std::string dir_;
  std::vector<int> sent_;
};

TEST_F(PreemptNotifierTest, ActsOncePerContainerFileFirst) {
  const std::string path = dir_ + "/notice";
  PreemptNotifier n = Notifier(path);
  const absl::Time t = absl::FromUnixMillis(1700000000123);
  EXPECT_FALSE(n.OnNotice("", t));
  EXPECT_TRUE(sent_.empty());
  EXPECT_TRUE(n.OnNotice("container_1_0001_01_000002", t));
  EXPECT_EQ(sent_, std::vector<int>{SIGUSR1});
  absl::StatusOr<std::string> text = ReadRegularFile(path, 4096);
  ASSERT_TRUE(text.ok()) << text.status();
  nlohmann::json j = nlohmann::json::parse(*text);
  EXPECT_EQ(j["container"], "container_1_0001_01_000002");
  EXPECT_EQ(j["signal"], "SIGUSR1");
  EXPECT_EQ(j["noticed_at_ms"], 1700000000123);
  // Repeated in every answer: nothing more.
  EXPECT_FALSE(n.OnNotice("container_1_0001_01_000002", t + absl::Seconds(1)));
  EXPECT_EQ(sent_.size(), 1u);
}

TEST_F(PreemptNotifierTest, NoSignalWhenNoneAskedFor) {
  PreemptNotifier n = Notifier(dir_ + "/notice", 0);
  EXPECT_TRUE(n.OnNotice("c1", absl::Now()));
  EXPECT_TRUE(sent_.empty());
  EXPECT_TRUE(ReadRegularFile(dir_ + "/notice", 4096).ok());
}

// A notice path that cannot be written (its directory missing) costs the task nothing: the
// signal still goes, and the failure is logged, not fatal.
TEST_F(PreemptNotifierTest, AnUnwritablePathStillSignalsAndIsLoggedOnce) {
  absl::Mutex mu;
  std::vector<std::string> warnings;
  SetLogSink([&](LogSeverity severity, absl::string_view, int, absl::string_view line) {
    absl::MutexLock lock(&mu);
    if (severity == LogSeverity::kWarning) warnings.emplace_back(line);
  });
  PreemptNotifier n = Notifier(dir_ + "/missing/dir/notice");
  EXPECT_TRUE(n.OnNotice("c1", absl::Now()));
  EXPECT_TRUE(n.OnNotice("c2", absl::Now()));  // a later container: acted on again
  SetLogSink(nullptr);
  EXPECT_EQ(sent_, (std::vector<int>{SIGUSR1, SIGUSR1}));
  absl::MutexLock lock(&mu);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_THAT(warnings[0], HasSubstr("cannot write the preemption notice file"));
}

}  // namespace
}  // namespace tony::executor
