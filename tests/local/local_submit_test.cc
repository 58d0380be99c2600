// Copyright libtony authors.
//
// The local Submitter's deadline, cancellation and async twin, with a stand-in tony-am (a
// shell script that exits at once): a submission its deadline or a cancellation ended starts
// nothing and leaves no job directory.

#include <unistd.h>

#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "common/file_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tony/submitter.h"

namespace tony {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;

class LocalSubmitTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = absl::StrCat(::testing::TempDir(), "/tony-local-submit-", ::getpid());
    const std::string bin = root_ + "/bin";
    ASSERT_TRUE(MakeDirectories(bin).ok());
    ASSERT_TRUE(WriteFileAtomically(bin + "/tony-am", "#!/bin/sh\nexit 0\n", 0755).ok());
    ASSERT_TRUE(WriteFileAtomically(bin + "/tony-executor", "#!/bin/sh\nexit 1\n", 0755).ok());
    LocalSubmitterOptions options;
    options.bin_dir = bin;
    options.work_root = root_;
    submitter_ = NewLocalSubmitter(options);
    spec_.job_types.push_back({.name = "worker", .instances = 1});
    spec_.command = "true";
  }
  void TearDown() override {
    submitter_.reset();
    std::error_code ignored;
    std::filesystem::remove_all(root_, ignored);
  }

  // The job directories under the submitter's work root.
  std::vector<std::string> JobDirectories() {
    std::vector<std::string> out;
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator(root_ + "/tony-jobs", ec)) {
      out.push_back(e.path().filename().string());
    }
    return out;
  }

  std::string root_;
  std::unique_ptr<Submitter> submitter_;
  JobSpec spec_;
};

TEST_F(LocalSubmitTest, DeadlinePassedStartsNothing) {
  auto app = submitter_->Submit(spec_, {.deadline = absl::Now() - absl::Seconds(1)}, {});
  EXPECT_EQ(app.status().code(), absl::StatusCode::kDeadlineExceeded) << app.status();
  EXPECT_THAT(app.status().message(), HasSubstr("nothing was submitted"));
  EXPECT_THAT(JobDirectories(), IsEmpty());
}

TEST_F(LocalSubmitTest, CancelledStartsNothing) {
  Cancellation cancel;
  cancel.Cancel();
  auto app = submitter_->Submit(spec_, {}, cancel);
  EXPECT_EQ(app.status().code(), absl::StatusCode::kCancelled) << app.status();
  EXPECT_THAT(JobDirectories(), IsEmpty());
}

TEST_F(LocalSubmitTest, InvalidSpecIsRefusedBeforeTheDeadlineMatters) {
  JobSpec bad;  // no job types
  auto app = submitter_->Submit(bad, {.deadline = absl::Now() - absl::Seconds(1)}, {});
  EXPECT_EQ(app.status().code(), absl::StatusCode::kInvalidArgument) << app.status();
}

TEST_F(LocalSubmitTest, SubmitAsyncAnswersOnAThreadNotTheCallers) {
  absl::Notification done;
  std::thread::id answered_on;
  absl::StatusOr<std::unique_ptr<Application>> result = absl::UnknownError("not answered");
  submitter_->SubmitAsync(spec_, {.timeout = absl::Minutes(1)}, Cancellation(),
                          [&](absl::StatusOr<std::unique_ptr<Application>> app) {
                            answered_on = std::this_thread::get_id();
                            result = std::move(app);
                            done.Notify();
                          });
  done.WaitForNotification();
  EXPECT_NE(answered_on, std::this_thread::get_id());
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_THAT(JobDirectories(), ::testing::ElementsAre((*result)->id()));
  EXPECT_TRUE((*result)->Kill().ok());
}

TEST_F(LocalSubmitTest, SubmitAsyncCancelledAnswersCancelled) {
  Cancellation cancel;
  cancel.Cancel();
  absl::Notification done;
  absl::Status status;
  submitter_->SubmitAsync(spec_, {}, cancel, [&](absl::StatusOr<std::unique_ptr<Application>> app) {
    status = app.status();
    done.Notify();
  });
  done.WaitForNotification();
  EXPECT_EQ(status.code(), absl::StatusCode::kCancelled) << status;
  EXPECT_THAT(JobDirectories(), IsEmpty());
}

// A `done` may destroy the Submitter that runs it.
TEST_F(LocalSubmitTest, SubmitAsyncDoneMayDestroyTheSubmitter) {
  Cancellation cancel;
  cancel.Cancel();
  absl::Notification done;
  std::unique_ptr<Submitter> owned = std::move(submitter_);
  Submitter* submitter = owned.get();
  submitter->SubmitAsync(spec_, {}, cancel, [&](absl::StatusOr<std::unique_ptr<Application>>) {
    owned.reset();
    done.Notify();
  });
  done.WaitForNotification();
  EXPECT_EQ(owned, nullptr);
}

}  // namespace
}  // namespace tony
