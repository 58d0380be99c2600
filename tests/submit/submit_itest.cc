// Copyright libtony authors.
//
// Submitter::Submit's deadline on the real test cluster: a generous one changes nothing, one of
// a millisecond fails with DEADLINE_EXCEEDED and leaves neither an application nor a staging
// directory behind.

#include <cstdlib>
#include <memory>
#include <set>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "hdfs/webhdfs_client.h"
#include "submit/yarn_submitter.h"
#include "tests/harness/hadoop_cluster.h"
#include "tony/submitter.h"

namespace tony {
namespace {

using ::tony::harness::HadoopCluster;

std::unique_ptr<Submitter> YarnSubmitter() {
  YarnSubmitterOptions o;
  o.conf_dir = HadoopCluster::Get().conf_dir();
  const char* bin = std::getenv("TONY_BIN_DIR");
  o.bin_dir = bin != nullptr ? bin : "build/bin";
  auto s = NewYarnSubmitter(o);
  EXPECT_TRUE(s.ok()) << s.status();
  return s.ok() ? *std::move(s) : nullptr;
}

// A job no other test submits: found again by its tag.
JobSpec TaggedJob(const std::string& tag) {
  JobSpec spec;
  spec.name = "submit-deadline-itest";
  spec.command = "true";
  spec.job_types.push_back({.name = "worker", .instances = 1});
  spec.tags = {tag};
  return spec;
}

// The names in the test user's staging directory of this cluster.
std::set<std::string> StagingEntries() {
  const HadoopCluster& c = HadoopCluster::Get();
  auto options = hdfs::WebHdfsClient::OptionsFromConfiguration(c.conf());
  EXPECT_TRUE(options.ok()) << options.status();
  options->user = c.user();
  auto fs = hdfs::WebHdfsClient::Create(*options);
  EXPECT_TRUE(fs.ok()) << fs.status();
  std::set<std::string> out;
  auto entries = (*fs)->List(submit::StagingRoot(c.user(), submit::ClusterKey(c.conf())));
  if (entries.ok()) {
    for (const hdfs::FileStatus& e : *entries) out.insert(e.name);
  }
  return out;
}

std::string UniqueTag(absl::string_view what) {
  return absl::StrCat("submit-itest-", what, "-", absl::ToUnixNanos(absl::Now()));
}

TEST(SubmitDeadlineTest, AGenerousDeadlineSubmits) {
  std::unique_ptr<Submitter> submitter = YarnSubmitter();
  ASSERT_NE(submitter, nullptr);
  auto app = submitter->Submit(TaggedJob(UniqueTag("generous")), {.timeout = absl::Minutes(5)},
                               Cancellation());
  ASSERT_TRUE(app.ok()) << app.status();
  auto final = (*app)->Wait(absl::Minutes(5));
  ASSERT_TRUE(final.ok()) << final.status();
  EXPECT_EQ(final->state, AppState::kSucceeded) << final->diagnostics;
}

TEST(SubmitDeadlineTest, AMillisecondDeadlineFailsAndLeavesNothing) {
  std::unique_ptr<Submitter> submitter = YarnSubmitter();
  ASSERT_NE(submitter, nullptr);
  const std::string tag = UniqueTag("millisecond");
  const std::set<std::string> before = StagingEntries();
  auto app = submitter->Submit(TaggedJob(tag), {.timeout = absl::Milliseconds(1)}, Cancellation());
  ASSERT_EQ(app.status().code(), absl::StatusCode::kDeadlineExceeded) << app.status();

  auto apps = submitter->List({.include_finished = true, .tags = {tag}});
  ASSERT_TRUE(apps.ok()) << apps.status();
  EXPECT_TRUE(apps->empty()) << (*apps)[0].id;
  // Another job's staging may appear meanwhile (the cluster is shared): any new directory
  // must belong to an application YARN has, which ours never became.
  for (const std::string& name : StagingEntries()) {
    if (before.count(name)) continue;
    auto other = submitter->Open(name, {.timeout = absl::Seconds(30)});
    EXPECT_TRUE(other.ok()) << "staging directory " << name << " of no application was left";
  }
}

}  // namespace
}  // namespace tony
