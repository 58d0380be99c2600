// Copyright libtony authors.
//
// The local Application's per-call deadline (tony::CallOptions), without the real binaries: a
// stand-in tony-am publishes the port of a loopback socket that never answers, so Status() and
// Kill() meet an ApplicationMaster that is running and silent.

#include <sys/stat.h>

#include <csignal>

#include <memory>
#include <string>

#include <thread>

#include "absl/strings/str_cat.h"
#include "common/file_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "local/process_sweep.h"
#include "testing/silent_peer.h"
#include "tests/testing/wait_until.h"
#include "tony/submitter.h"

namespace tony {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::tony::testing::SilentPeer;

class LocalApplicationDeadlineTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_GT(am_.port(), 0);
    root_ = absl::StrCat(::testing::TempDir(), "/tony-local-deadline-", ::getpid());
    const std::string bin = root_ + "/bin";
    ASSERT_TRUE(MakeDirectories(bin).ok());
    // The AM's port file is all the Application needs of an AM; sleep stands for its work. It
    // ignores SIGTERM: a kill that signals it when its call runs out must then meet its deadline,
    // not find the AM already gone (which, on a loaded host, was a race).
    ASSERT_TRUE(WriteFileAtomically(bin + "/tony-am",
                                    "#!/bin/sh\n"
                                    "cd \"$TONY_JOB_DIR\" && echo \"$SILENT_AM_PORT\" > p.tmp "
                                    "&& mv p.tmp am.port\n"
                                    "trap '' TERM\n"
                                    "exec sleep 600\n",
                                    0755)
                    .ok());
    ASSERT_TRUE(WriteFileAtomically(bin + "/tony-executor", "#!/bin/sh\nexit 1\n", 0755).ok());
    ASSERT_EQ(::setenv("SILENT_AM_PORT", std::to_string(am_.port()).c_str(), 1), 0);
    LocalSubmitterOptions options;
    options.bin_dir = bin;
    options.work_root = root_;
    options.pass_environment = {"SILENT_AM_PORT"};
    JobSpec spec;
    spec.job_types.push_back({.name = "worker", .instances = 1});
    spec.command = "true";
    spec.timeouts.stop_grace = absl::Seconds(1);
    auto app = NewLocalSubmitter(options)->Submit(spec);
    ASSERT_TRUE(app.ok()) << app.status();
    app_ = *std::move(app);
    // Until the stand-in has written its port the AM counts as starting (no peer asked yet).
    testing::WaitUntil(
        [&] {
          return ReadFileToString(absl::StrCat(root_, "/tony-jobs/", app_->id(), "/am.port")).ok();
        },
        absl::Seconds(30));
  }

  void TearDown() override {
    if (app_ == nullptr) return;
    // The stand-in ignores SIGTERM: stop it for good, and once the Application has seen it go
    // (no call to the silent AM then), the Kill reaps it.
    for (pid_t pid : local::FindJobProcesses(app_->id(), /*match_cmdline=*/true)) {
      ::kill(pid, SIGKILL);
    }
    const absl::Time until = absl::Now() + absl::Seconds(30);
    absl::StatusOr<ApplicationStatus> seen;
    do {
      seen = app_->Status({.timeout = absl::Milliseconds(100)});
    } while (!(seen.ok() && IsFinal(seen->state)) && absl::Now() < until);
    EXPECT_TRUE(app_->Kill().ok());
    EXPECT_THAT(local::FindJobProcesses(app_->id(), /*match_cmdline=*/true), IsEmpty());
  }

  SilentPeer am_;
  std::string root_;
  std::unique_ptr<Application> app_;
};

TEST_F(LocalApplicationDeadlineTest, StatusOfASilentAmEndsWithDeadlineExceeded) {
  auto status = app_->Status({.timeout = absl::Milliseconds(300)});
  EXPECT_EQ(status.status().code(), absl::StatusCode::kDeadlineExceeded) << status.status();
  EXPECT_THAT(status.status().message(), HasSubstr(am_.address()));
}

TEST_F(LocalApplicationDeadlineTest, KillOfASilentAmEndsWithDeadlineExceeded) {
  absl::Status kill = app_->Kill({.timeout = absl::Milliseconds(300)});
  EXPECT_EQ(kill.code(), absl::StatusCode::kDeadlineExceeded) << kill;
  EXPECT_THAT(kill.message(), HasSubstr(am_.address()));
}

// A wait shorter than the AM's silence ends at its deadline (it once spun past it), and a
// cancellation ends it sooner.
TEST_F(LocalApplicationDeadlineTest, WaitOnASilentAmEndsAtItsDeadlineOrWhenCancelled) {
  auto waited = app_->Wait(absl::Milliseconds(300));
  EXPECT_EQ(waited.status().code(), absl::StatusCode::kDeadlineExceeded) << waited.status();
  Cancellation cancel;
  // Before or during the wait: either way it ends Cancelled, never after its hour.
  std::thread canceller([cancel]() mutable { cancel.Cancel(); });
  waited = app_->Wait(absl::Hours(1), nullptr, cancel);
  canceller.join();
  EXPECT_EQ(waited.status().code(), absl::StatusCode::kCancelled) << waited.status();
}

}  // namespace
}  // namespace tony
