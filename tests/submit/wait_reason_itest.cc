// Copyright libtony authors.
//
// Why a job waits, on the real test cluster (docs/troubleshooting.md#why-a-job-waits): a job
// that holds the default partition keeps a second job's ApplicationMaster waiting, and the
// second job's status says the queue is at capacity with its numbers; against the same live
// facts, asks for a label no node has and a gang beyond the queue's maximum are named as such.
// Asserts reasons' kinds, never times: each wait ends on a condition (or the test's limit).
// *Exclusive*: it fills the default partition, so it has the cluster to itself.

#include <cstdlib>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "conf/hadoop_addresses.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "http/client.h"
#include "submit/wait_facts.h"
#include "submit/wait_reason.h"
#include "submit/yarn_submitter.h"
#include "tests/harness/hadoop_cluster.h"
#include "tony/submitter.h"

namespace tony {
namespace {

using ::testing::HasSubstr;
using ::tony::harness::HadoopCluster;

YarnSubmitterOptions Options() {
  YarnSubmitterOptions o;
  o.conf_dir = HadoopCluster::Get().conf_dir();
  const char* bin = std::getenv("TONY_BIN_DIR");
  o.bin_dir = bin != nullptr ? bin : "build/bin";
  return o;
}

// A job of `workers` tasks of `memory_mb` each in root.default, its AM of `am_mb`.
JobSpec Job(const std::string& name, int workers, int64_t memory_mb, int64_t am_mb,
            const std::string& command) {
  JobSpec spec;
  spec.name = name;
  spec.queue = "default";
  spec.command = command;
  spec.am_memory_mb = am_mb;
  JobTypeSpec worker{.name = "worker", .instances = workers};
  worker.resources.memory_mb = memory_mb;
  worker.resources.vcores = 1;
  spec.job_types.push_back(worker);
  spec.tags = {absl::StrCat("wait-reason-itest-", absl::ToUnixNanos(absl::Now()))};
  return spec;
}

// Polls `app`'s status until `done` holds or `limit` passes; the last status (or error).
template <typename Pred>
absl::StatusOr<ApplicationStatus> StatusUntil(Application& app, Pred done, absl::Duration limit) {
  const absl::Time give_up = absl::Now() + limit;
  absl::StatusOr<ApplicationStatus> s = app.Status({.timeout = absl::Seconds(30)});
  while (!(s.ok() && done(*s)) && absl::Now() < give_up) {
    if (s.ok() && IsFinal(s->state)) break;
    absl::SleepFor(absl::Milliseconds(500));  // a poll interval, not a decision
    s = app.Status({.timeout = absl::Seconds(30)});
  }
  return s;
}

class WaitReasonExclusiveTest : public ::testing::Test {
 protected:
  void TearDown() override {
    for (auto* app : {&second_, &holder_}) {
      if (*app != nullptr) (void)(*app)->Kill({.timeout = absl::Minutes(1)});
    }
  }

  std::unique_ptr<Application> holder_;
  std::unique_ptr<Application> second_;
};

TEST_F(WaitReasonExclusiveTest, QueueAtCapacityThenLabelAndGangOnTheLiveNumbers) {
  auto submitter = NewYarnSubmitter(Options());
  ASSERT_TRUE(submitter.ok()) << submitter.status();
  // The default partition has two <8192 MB> nodes: a 1024 MB AM and two 7168 MB workers leave
  // 1024 MB free, less than the second job's 2048 MB AM.
  auto holder = (*submitter)
                    ->Submit(Job("wait-holder", 2, 7168, 1024, "sleep 600"),
                             {.timeout = absl::Minutes(3)}, Cancellation());
  ASSERT_TRUE(holder.ok()) << holder.status();
  holder_ = *std::move(holder);
  auto held = StatusUntil(
      *holder_,
      [](const ApplicationStatus& s) {
        auto w = s.progress.find("worker");
        return w != s.progress.end() && w->second.running == 2;
      },
      absl::Minutes(4));
  ASSERT_TRUE(held.ok()) << held.status();
  ASSERT_EQ(held->progress.at("worker").running, 2) << held->diagnostics;

  auto second = (*submitter)
                    ->Submit(Job("wait-second", 1, 256, 2048, "true"),
                             {.timeout = absl::Minutes(3)}, Cancellation());
  ASSERT_TRUE(second.ok()) << second.status();
  second_ = *std::move(second);
  auto waiting = StatusUntil(
      *second_, [](const ApplicationStatus& s) { return s.wait_kind == "queue-at-capacity"; },
      absl::Minutes(2));
  ASSERT_TRUE(waiting.ok()) << waiting.status();
  EXPECT_EQ(waiting->state, AppState::kAccepted);
  EXPECT_EQ(waiting->wait_kind, "queue-at-capacity") << waiting->wait_reason;
  EXPECT_THAT(waiting->wait_reason, HasSubstr("root.default uses"));
  EXPECT_THAT(waiting->wait_reason, HasSubstr("the next container <2048 MB, 1 vcore>"));
  RecordProperty("queue_reason", waiting->wait_reason);

  // The same live facts with asks the submitter would refuse up front.
  auto cluster = submit::ConnectYarnCluster(Options());
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  auto id = yarn::ParseApplicationId(second_->id());
  ASSERT_TRUE(id.ok()) << id.status();
  auto report = cluster->yarn->GetApplicationReport(*id, absl::Now() + absl::Seconds(30));
  ASSERT_TRUE(report.ok()) << report.status();
  http::Client http;
  submit::WaitSources sources;
  sources.yarn = cluster->yarn.get();
  sources.http = &http;
  auto urls = conf::RmWebUrls(cluster->conf);
  ASSERT_TRUE(urls.ok()) << urls.status();
  sources.rm_web_urls = *urls;
  const absl::Time deadline = absl::Now() + absl::Seconds(30);

  submit::WaitFacts no_label =
      submit::GatherWaitFacts(sources, *report, {{{256, 1, 0}, 1, "no-such-label"}}, deadline);
  ASSERT_TRUE(no_label.nodes_known);
  submit::WaitReason label = submit::ClassifyWait(no_label);
  EXPECT_EQ(label.kind, submit::WaitKind::kLabelNoActiveNode) << label.text;
  RecordProperty("label_reason", label.text);

  // Three 8192 MB containers: more than root.default's 100 % of two 8192 MB nodes.
  submit::WaitFacts big =
      submit::GatherWaitFacts(sources, *report, {{{8192, 1, 0}, 3, ""}}, deadline);
  ASSERT_EQ(big.queue.count(""), 1u) << "the scheduler's numbers of root.default";
  EXPECT_EQ(big.queue.at("").max.memory_mb, 16384);
  submit::WaitReason gang = submit::ClassifyWait(big);
  EXPECT_EQ(gang.kind, submit::WaitKind::kGangNeverFits) << gang.text;
  EXPECT_THAT(gang.text, HasSubstr("<16384 MB"));
  RecordProperty("gang_reason", gang.text);
}

}  // namespace
}  // namespace tony
