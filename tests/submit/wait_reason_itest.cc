// Copyright libtony authors.
//
// Why a job waits, on the real test cluster (docs/troubleshooting.md#why-a-job-waits): a job
// that holds the default partition keeps a second job's ApplicationMaster waiting, and the
// second job's status says the queue is at capacity with its numbers; against the same live
// facts, a gang beyond the queue's maximum and a label no node has are named as such. A task
// asking the label "gpu" whose only NodeManager (3) is lost while it waits (frozen: it falls
// silent as a hung node does) is told the label has no active node; an ApplicationMaster beyond the
// queue's AM resource limit is told it is not launched, with the ResourceManager's own diagnostics.
// Asserts reasons' kinds, never times: each wait ends on a condition (or the test's limit).
// *Exclusive*: it fills partitions and takes a NodeManager away, so it has the cluster to itself.

#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
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

// An AM larger than half the queue's AM share (0.5 of root.default's 70 % of 16384 MB) once
// another such AM runs, yet small enough for one node (8192 MB).
constexpr int64_t kBigAmMb = 5120;

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

// scripts/hadoop-cluster with `args`, under the harness's cluster environment (the same
// TONY_HADOOP_HOME and base port).
absl::StatusOr<harness::CommandResult> ClusterScript(std::vector<std::string> args) {
  args.insert(args.begin(), HadoopCluster::Get().source_dir() + "/scripts/hadoop-cluster");
  return harness::RunCommand(args, absl::Minutes(5));
}

// The AM's status page through the RM's web proxy, polled until it holds `want` (or a minute
// passed): the page the user's tracking URL shows.
std::string AmPageUntil(const std::string& app, const std::string& want) {
  http::Client http;
  const std::string url = HadoopCluster::Get().rm_web_url() + "/proxy/" + app + "/";
  std::string body;
  for (absl::Time end = absl::Now() + absl::Minutes(1); absl::Now() < end;) {
    auto got = http.Get(url);
    body = got.ok() ? got->body : std::string(got.status().message());
    if (absl::StrContains(body, want)) break;
    absl::SleepFor(absl::Seconds(1));  // a poll interval, not a decision
  }
  return body;
}

class WaitReasonExclusiveTest : public ::testing::Test {
 protected:
  void TearDown() override {
    for (auto* app : {&second_, &holder_}) {
      if (*app != nullptr) (void)(*app)->Kill({.timeout = absl::Minutes(1)});
    }
    if (node_frozen_) {  // 'start' thaws NodeManager 3, which registers again, label and all
      auto started = ClusterScript({"start"});
      EXPECT_TRUE(started.ok() && started->exit_code == 0) << "thawing NodeManager 3";
    }
  }

  std::unique_ptr<Application> holder_;
  std::unique_ptr<Application> second_;
  bool node_frozen_ = false;
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

// The label's only node goes away while a task waits for it: the submitter let the job through
// (the label had a RUNNING node), and the reason turns from the partition's capacity to the
// label without an active node once the ResourceManager declares NodeManager 3 lost. The node
// is frozen (SIGSTOP), not killed: to the ResourceManager a silent node is lost either way, and
// 'start' thaws it in seconds where a killed one took a new JVM (~35 s of both cluster slots).
TEST_F(WaitReasonExclusiveTest, LabelWhoseOnlyNodeIsLost) {
  auto submitter = NewYarnSubmitter(Options());
  ASSERT_TRUE(submitter.ok()) << submitter.status();
  // NodeManager 3 alone carries "gpu" (8192 MB): a 7168 MB holder leaves 1024 MB there.
  JobSpec holder_spec = Job("wait-gpu-holder", 1, 7168, 512, "sleep 600");
  holder_spec.job_types[0].node_label = "gpu";
  auto holder = (*submitter)->Submit(holder_spec, {.timeout = absl::Minutes(3)}, Cancellation());
  ASSERT_TRUE(holder.ok()) << holder.status();
  holder_ = *std::move(holder);
  auto held = StatusUntil(
      *holder_,
      [](const ApplicationStatus& s) {
        auto w = s.progress.find("worker");
        return w != s.progress.end() && w->second.running == 1;
      },
      absl::Minutes(4));
  ASSERT_TRUE(held.ok()) << held.status();
  ASSERT_EQ(held->progress.at("worker").running, 1) << held->diagnostics;

  JobSpec second_spec = Job("wait-gpu-second", 1, 2048, 512, "true");
  second_spec.job_types[0].node_label = "gpu";
  auto second = (*submitter)->Submit(second_spec, {.timeout = absl::Minutes(3)}, Cancellation());
  ASSERT_TRUE(second.ok()) << second.status();
  second_ = *std::move(second);
  auto full = StatusUntil(
      *second_, [](const ApplicationStatus& s) { return s.wait_kind == "queue-at-capacity"; },
      absl::Minutes(2));
  ASSERT_TRUE(full.ok()) << full.status();
  ASSERT_EQ(full->wait_kind, "queue-at-capacity") << full->wait_reason;
  EXPECT_THAT(full->wait_reason, HasSubstr("of label gpu"));
  EXPECT_THAT(full->wait_reason, HasSubstr("room <1024 MB"));
  RecordProperty("gpu_full_reason", full->wait_reason);
  // The AM says the same on its own page (its WaitWatch), through YARN's proxy.
  std::string page = AmPageUntil(second_->id(), "Why: queue at capacity: root.default uses");
  EXPECT_THAT(page, HasSubstr("Why: queue at capacity: root.default uses")) << page;

  auto frozen = ClusterScript({"freeze-nm", "3"});
  ASSERT_TRUE(frozen.ok()) << frozen.status();
  ASSERT_EQ(frozen->exit_code, 0);
  node_frozen_ = true;
  // The RM declares the node lost after yarn.nm.liveness-monitor.expiry-interval-ms (15 s).
  auto gone = StatusUntil(
      *second_, [](const ApplicationStatus& s) { return s.wait_kind == "label-no-active-node"; },
      absl::Minutes(3));
  ASSERT_TRUE(gone.ok()) << gone.status();
  EXPECT_EQ(gone->state, AppState::kRunning);  // its AM runs in the default partition
  EXPECT_EQ(gone->wait_kind, "label-no-active-node") << gone->wait_reason;
  EXPECT_THAT(gone->wait_reason, HasSubstr("label gpu has no active node"));
  EXPECT_THAT(gone->wait_reason, HasSubstr("<2048 MB, 1 vcore> asked there"));
  RecordProperty("label_reason", gone->wait_reason);
  page = AmPageUntil(second_->id(), "Why: label gpu has no active node");
  EXPECT_THAT(page, HasSubstr("Why: label gpu has no active node")) << page;
  RecordProperty("am_page_reason", page.substr(page.find("Why: ")).substr(0, 200));
}

// The queue admits ApplicationMasters up to yarn.scheduler.capacity.maximum-am-resource-percent
// (0.5 on the test cluster) of its resources, the first one always: a second large AM stays
// unlaunched although the partition has room, and the reason quotes the RM's diagnostics.
TEST_F(WaitReasonExclusiveTest, AmNotLaunchedBeyondTheQueuesAmLimit) {
  auto submitter = NewYarnSubmitter(Options());
  ASSERT_TRUE(submitter.ok()) << submitter.status();
  auto holder = (*submitter)
                    ->Submit(Job("wait-am-holder", 1, 256, kBigAmMb, "sleep 600"),
                             {.timeout = absl::Minutes(3)}, Cancellation());
  ASSERT_TRUE(holder.ok()) << holder.status();
  holder_ = *std::move(holder);
  auto held = StatusUntil(
      *holder_, [](const ApplicationStatus& s) { return s.state == AppState::kRunning; },
      absl::Minutes(4));
  ASSERT_TRUE(held.ok()) << held.status();
  ASSERT_EQ(held->state, AppState::kRunning) << held->diagnostics;

  auto second = (*submitter)
                    ->Submit(Job("wait-am-second", 1, 256, kBigAmMb, "true"),
                             {.timeout = absl::Minutes(3)}, Cancellation());
  ASSERT_TRUE(second.ok()) << second.status();
  second_ = *std::move(second);
  auto waiting = StatusUntil(
      *second_,
      [](const ApplicationStatus& s) {
        return s.wait_kind == "am-not-launched" &&
               absl::StrContains(s.wait_reason, "AM resource limit");
      },
      absl::Minutes(2));
  ASSERT_TRUE(waiting.ok()) << waiting.status();
  EXPECT_EQ(waiting->state, AppState::kAccepted);
  EXPECT_EQ(waiting->wait_kind, "am-not-launched") << waiting->wait_reason;
  EXPECT_THAT(waiting->wait_reason, HasSubstr("the ResourceManager: "));
  EXPECT_THAT(waiting->wait_reason, HasSubstr("Queue's AM resource limit exceeded"));
  EXPECT_THAT(waiting->wait_reason,
              HasSubstr(absl::StrCat("AM Resource Request = <memory:", kBigAmMb)));
  RecordProperty("am_reason", waiting->wait_reason);
}

}  // namespace
}  // namespace tony
