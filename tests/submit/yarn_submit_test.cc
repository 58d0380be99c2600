// Copyright libtony authors.
//
// Submitter::Submit's deadline, cancellation and async twin on YARN, against the fake
// ResourceManager (yarn/fake_yarn.h) and an in-memory HDFS on loopback: what is left on the
// cluster when the deadline or a cancellation ends a submission.

#include <unistd.h>

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "common/file_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "submit/yarn_submitter.h"
#include "tests/submit/in_memory_hdfs.h"
#include "tony/submitter.h"
#include "yarn/fake_yarn.h"

namespace tony::submit {
namespace {

using ::testing::HasSubstr;
using ::tony::submit::test_hdfs::InMemoryHdfs;
using ::tony::submit::test_hdfs::Reply;

// The fake RM, whose SubmitApplication may take the application and still answer
// DeadlineExceeded: the ResourceManager saved it, but the client's wait for that ran out.
class LateYarnClient : public yarn::FakeYarnClient {
 public:
  using FakeYarnClient::FakeYarnClient;
  using YarnClient::SubmitApplication;
  absl::Status SubmitApplication(const yarn::ApplicationSubmissionContext& context,
                                 absl::Time deadline) override {
    absl::Status s = FakeYarnClient::SubmitApplication(context, deadline);
    if (!s.ok() || !answer_late) return s;
    return absl::DeadlineExceededError("the ResourceManager at rm:8032 did not answer in time");
  }
  bool answer_late = false;  // set before Submit
};

class YarnSubmitTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = absl::StrCat(::testing::TempDir(), "/yarn_submit_test-", getpid());
    ASSERT_TRUE(MakeDirectories(root_ + "/bin", 0700).ok());
    ASSERT_TRUE(MakeDirectories(root_ + "/share/tony", 0700).ok());
    ASSERT_TRUE(MakeDirectories(root_ + "/home", 0700).ok());
    ASSERT_TRUE(
        WriteFileAtomically(root_ + "/share/tony/tony-runtime.tar.gz", "runtime", 0644).ok());
    // The submitter keeps each job's secret under $HOME/.tony/apps.
    if (const char* old = std::getenv("HOME")) old_home_ = old;
    ::setenv("HOME", (root_ + "/home").c_str(), 1);

    rm_->AddNode({"n1", 1}, {65536, 32, {}});
    auto cluster = std::make_shared<YarnCluster>();
    cluster->user = "u";
    cluster->cluster_key = "test";
    auto yarn = std::make_unique<LateYarnClient>(rm_, "u");
    yarn_ = yarn.get();
    cluster->yarn = std::move(yarn);
    hdfs::WebHdfsClient::Options o;
    o.namenodes = {hdfs_.namenode()};
    o.user = "u";
    o.default_fs = "hdfs://nn:8020/";
    auto fs = hdfs::WebHdfsClient::Create(o);
    ASSERT_TRUE(fs.ok()) << fs.status();
    cluster->hdfs = *std::move(fs);
    submitter_ = NewYarnSubmitterFor(std::move(cluster), root_ + "/bin", false);

    spec_.name = "deadlines";
    spec_.command = "true";
    spec_.job_types.push_back({.name = "worker", .instances = 1});
  }
  void TearDown() override {
    submitter_.reset();  // joins its threads before HOME changes back
    if (old_home_) ::setenv("HOME", old_home_->c_str(), 1);
    std::filesystem::remove_all(root_);
  }

  // The applications the fake ResourceManager has, any state.
  std::vector<yarn::ApplicationReport> Applications() {
    // A client of its own: the submitter's goes with it.
    auto apps = yarn::FakeYarnClient(rm_, "u").ListApplications(yarn::ApplicationFilter());
    EXPECT_TRUE(apps.ok()) << apps.status();
    return apps.ok() ? *apps : std::vector<yarn::ApplicationReport>();
  }

  // Staging directories of this cluster's jobs.
  std::vector<std::string> Staged() { return hdfs_.Under(StagingRoot("u", "test")); }

  std::string root_;
  std::optional<std::string> old_home_;
  InMemoryHdfs hdfs_;
  std::shared_ptr<yarn::FakeYarnCluster> rm_ = std::make_shared<yarn::FakeYarnCluster>();
  LateYarnClient* yarn_ = nullptr;
  std::unique_ptr<Submitter> submitter_;
  JobSpec spec_;
};

TEST_F(YarnSubmitTest, SucceedsWithinAGenerousDeadline) {
  auto app = submitter_->Submit(spec_, {.timeout = absl::Minutes(5)}, Cancellation());
  ASSERT_TRUE(app.ok()) << app.status();
  ASSERT_EQ(Applications().size(), 1u);
  EXPECT_EQ((*app)->id(), Applications()[0].id.ToString());
  EXPECT_TRUE(hdfs_.Exists(absl::StrCat(StagingRoot("u", "test"), "/", (*app)->id())));
}

TEST_F(YarnSubmitTest, DeadlineWhileStagingSubmitsNothingAndRemovesTheStaging) {
  // The first upload is never answered: the deadline passes while staging.
  absl::Notification staging_made;
  hdfs_.intercept = [&](const std::string& op, const std::string& path) -> std::optional<Reply> {
    if (op == "MKDIRS" && absl::StartsWith(path, StagingRoot("u", "test") + "/")) {
      if (!staging_made.HasBeenNotified()) staging_made.Notify();
    }
    if (op != "CREATE") return std::nullopt;
    Reply hold;
    hold.delay = absl::Hours(1);  // until the server stops
    return hold;
  };
  auto app = submitter_->Submit(spec_, {.timeout = absl::Seconds(2)}, Cancellation());
  ASSERT_EQ(app.status().code(), absl::StatusCode::kDeadlineExceeded) << app.status();
  EXPECT_TRUE(staging_made.HasBeenNotified());
  EXPECT_TRUE(Applications().empty());
  EXPECT_THAT(Staged(), ::testing::IsEmpty());
}

TEST_F(YarnSubmitTest, DeadlineAlreadyPassedAsksTheClusterNothing) {
  auto app = submitter_->Submit(spec_, {.deadline = absl::Now() - absl::Seconds(1)}, {});
  ASSERT_EQ(app.status().code(), absl::StatusCode::kDeadlineExceeded) << app.status();
  EXPECT_THAT(app.status().message(), HasSubstr("nothing was submitted"));
  EXPECT_TRUE(Applications().empty());
  EXPECT_THAT(Staged(), ::testing::IsEmpty());
}

TEST_F(YarnSubmitTest, CancelWhileStagingSubmitsNothingAndRemovesTheStaging) {
  Cancellation cancel;
  // Cancelled while the staging directory is made: the next upload is not started.
  hdfs_.intercept = [&](const std::string& op, const std::string& path) -> std::optional<Reply> {
    if (op == "MKDIRS" && absl::StartsWith(path, StagingRoot("u", "test") + "/")) cancel.Cancel();
    return std::nullopt;
  };
  auto app = submitter_->Submit(spec_, {}, cancel);
  ASSERT_EQ(app.status().code(), absl::StatusCode::kCancelled) << app.status();
  EXPECT_TRUE(Applications().empty());
  EXPECT_THAT(Staged(), ::testing::IsEmpty());
}

TEST_F(YarnSubmitTest, DeadlineWhileYarnTakesItKillsTheApplicationAndNamesIt) {
  yarn_->answer_late = true;
  auto app = submitter_->Submit(spec_, {.timeout = absl::Minutes(5)}, Cancellation());
  ASSERT_EQ(app.status().code(), absl::StatusCode::kDeadlineExceeded) << app.status();
  std::vector<yarn::ApplicationReport> apps = Applications();
  ASSERT_EQ(apps.size(), 1u);
  EXPECT_EQ(apps[0].state, yarn::YarnApplicationState::kKilled);
  EXPECT_THAT(app.status().message(),
              HasSubstr(absl::StrCat(apps[0].id.ToString(), " was killed")));
  EXPECT_THAT(Staged(), ::testing::IsEmpty());
}

TEST_F(YarnSubmitTest, SubmitAsyncAnswersOnAThreadNotTheCallers) {
  absl::Notification done;
  std::thread::id answered_on;
  absl::StatusOr<std::unique_ptr<Application>> result = absl::UnknownError("not answered");
  submitter_->SubmitAsync(spec_, {.timeout = absl::Minutes(5)}, Cancellation(),
                          [&](absl::StatusOr<std::unique_ptr<Application>> app) {
                            answered_on = std::this_thread::get_id();
                            result = std::move(app);
                            done.Notify();
                          });
  done.WaitForNotification();
  EXPECT_NE(answered_on, std::this_thread::get_id());
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(Applications().size(), 1u);
}

TEST_F(YarnSubmitTest, SubmitAsyncCancelledEndsWithCancelledAndNothingSubmitted) {
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
  EXPECT_TRUE(Applications().empty());
}

// Destroying the Submitter cancels a submission in flight and waits for it: its `done` has run
// (once) when the destructor returns, with Cancelled and nothing left on the cluster, or, if
// YARN had taken the application first, with it.
TEST_F(YarnSubmitTest, DestroyingTheSubmitterEndsTheSubmissionsInFlight) {
  absl::Notification in_flight, destroying;
  hdfs_.intercept = [&](const std::string& op, const std::string& path) -> std::optional<Reply> {
    if (op == "MKDIRS" && absl::StartsWith(path, StagingRoot("u", "test") + "/")) {
      in_flight.Notify();
      destroying.WaitForNotificationWithTimeout(absl::Minutes(1));
    }
    return std::nullopt;
  };
  int answers = 0;
  absl::StatusOr<std::unique_ptr<Application>> result = absl::UnknownError("not answered");
  submitter_->SubmitAsync(spec_, {}, Cancellation(),
                          [&](absl::StatusOr<std::unique_ptr<Application>> app) {
                            ++answers;
                            result = std::move(app);
                          });
  ASSERT_TRUE(in_flight.WaitForNotificationWithTimeout(absl::Minutes(1)));
  std::thread destroyer([&] {
    destroying.Notify();
    submitter_.reset();
  });
  destroyer.join();
  EXPECT_EQ(answers, 1);
  if (result.ok()) {
    EXPECT_EQ(Applications().size(), 1u);
  } else {
    EXPECT_EQ(result.status().code(), absl::StatusCode::kCancelled) << result.status();
    EXPECT_TRUE(Applications().empty());
    EXPECT_THAT(Staged(), ::testing::IsEmpty());
  }
}

}  // namespace
}  // namespace tony::submit
