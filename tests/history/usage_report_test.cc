// Copyright libtony authors.
//
// The usage report: jobs of known sizes and durations in, their figures out; and what a log's
// events say each container held.

#include "history/usage_report.h"

#include <utility>

#include <string>
#include <vector>

#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "history/history_index.h"
#include "history/job_history.h"

namespace tony::history {
namespace {

using ::testing::HasSubstr;

absl::Time At(int hour) { return absl::FromUnixSeconds(1795600000) + absl::Hours(hour); }

HeldContainer Held(int64_t memory_mb, int vcores, int gpus, absl::Duration held) {
  return {memory_mb, vcores, gpus, held};
}

HeldContainer Sampled(int64_t memory_mb, int vcores, absl::Duration held, double cpu_cores,
                      double rss_gb) {
  HeldContainer c = Held(memory_mb, vcores, 0, held);
  c.sampled = true;
  c.cpu_cores = cpu_cores;
  c.rss_bytes = rss_gb * 1024 * 1024 * 1024;
  return c;
}

JobSummary Job(std::string app_id, std::string user, std::string queue, absl::Time started,
               const std::vector<HeldContainer>& containers, int idle_gpus) {
  JobSummary s;
  s.app_id = std::move(app_id);
  s.user = std::move(user);
  s.queue = std::move(queue);
  s.started = started;
  for (const HeldContainer& c : containers) s.usage.Add(c);
  s.usage.idle_gpus = idle_gpus;
  return s;
}

std::vector<JobSummary> Jobs() {
  return {
      // alice: 2 workers of 4 vcores, 8 GB, 1 GPU for 2 hours; one GPU idle.
      Job("app_1", "alice", "gpu", At(0),
          {Held(8192, 4, 1, absl::Hours(2)), Held(8192, 4, 1, absl::Hours(2))}, 1),
      // alice: 1 task of 2 vcores, 4 GB for 30 minutes, using 1 core and 1 GB.
      Job("app_2", "alice", "default", At(5), {Sampled(4096, 2, absl::Minutes(30), 1.0, 1.0)}, 0),
      // bob: a task restarted: two containers of 1 vcore, 2 GB, an hour each.
      Job("app_3", "bob", "default", At(10),
          {Held(2048, 1, 0, absl::Hours(1)), Held(2048, 1, 0, absl::Hours(1))}, 0),
  };
}

TEST(UsageReportTest, ByUserSumsEachContainersSizeTimesItsTime) {
  UsageReport r = SummarizeUsage(Jobs(), {.by = UsageBy::kUser});
  ASSERT_EQ(r.groups.size(), 2u);
  const UsageGroup& alice = r.groups[0];  // the most vcore-hours first
  EXPECT_EQ(alice.key, "alice");
  EXPECT_EQ(alice.jobs, 2);
  EXPECT_DOUBLE_EQ(alice.vcore_hours, 2 * 4 * 2 + 2 * 0.5);
  EXPECT_DOUBLE_EQ(alice.gb_hours, 2 * 8 * 2 + 4 * 0.5);
  EXPECT_DOUBLE_EQ(alice.gpu_hours, 2 * 1 * 2);
  EXPECT_EQ(alice.idle_gpus, 1);
  const UsageGroup& bob = r.groups[1];
  EXPECT_EQ(bob.key, "bob");
  EXPECT_EQ(bob.jobs, 1);
  EXPECT_DOUBLE_EQ(bob.vcore_hours, 2);
  EXPECT_DOUBLE_EQ(bob.gb_hours, 4);
  EXPECT_DOUBLE_EQ(bob.gpu_hours, 0);
  EXPECT_EQ(r.total.jobs, 3);
  EXPECT_DOUBLE_EQ(r.total.vcore_hours, 19);
  EXPECT_DOUBLE_EQ(r.total.gb_hours, 38);
}

TEST(UsageReportTest, EfficiencyCountsOnlyTheSampledContainers) {
  UsageReport r = SummarizeUsage(Jobs(), {.by = UsageBy::kUser});
  const UsageGroup& alice = r.groups[0];
  // Only app_2 sent samples: 1 core of 2 held, 1 GB of 4.
  ASSERT_TRUE(alice.cpu_efficiency().has_value());
  EXPECT_DOUBLE_EQ(*alice.cpu_efficiency(), 0.5);
  EXPECT_DOUBLE_EQ(*alice.memory_efficiency(), 0.25);
  EXPECT_DOUBLE_EQ(alice.used_core_hours, 0.5);
  EXPECT_DOUBLE_EQ(alice.used_gb_hours, 0.5);
  EXPECT_FALSE(r.groups[1].cpu_efficiency().has_value());  // bob sent none
  EXPECT_FALSE(r.groups[1].memory_efficiency().has_value());
}

TEST(UsageReportTest, ByQueueAndByJob) {
  UsageReport q = SummarizeUsage(Jobs(), {.by = UsageBy::kQueue});
  ASSERT_EQ(q.groups.size(), 2u);
  EXPECT_EQ(q.groups[0].key, "gpu");
  EXPECT_DOUBLE_EQ(q.groups[0].vcore_hours, 16);
  EXPECT_EQ(q.groups[1].key, "default");
  EXPECT_EQ(q.groups[1].jobs, 2);
  EXPECT_DOUBLE_EQ(q.groups[1].vcore_hours, 3);
  UsageReport j = SummarizeUsage(Jobs(), {.by = UsageBy::kJob});
  ASSERT_EQ(j.groups.size(), 3u);
  EXPECT_EQ(j.groups[0].key, "app_1");
  EXPECT_EQ(j.groups[1].key, "app_3");
  EXPECT_EQ(j.groups[2].key, "app_2");
}

TEST(UsageReportTest, FromAndToKeepTheJobsStartedBetween) {
  // [5h, 10h): app_2 only; a job started at `to` is out, one at `from` in.
  UsageReport r = SummarizeUsage(Jobs(), {.by = UsageBy::kJob, .from = At(5), .to = At(10)});
  ASSERT_EQ(r.groups.size(), 1u);
  EXPECT_EQ(r.groups[0].key, "app_2");
  EXPECT_EQ(r.total.jobs, 1);
}

TEST(UsageReportTest, NoJobsIsAnEmptyReport) {
  UsageReport r = SummarizeUsage({}, {});
  EXPECT_TRUE(r.groups.empty());
  EXPECT_EQ(r.total.jobs, 0);
  EXPECT_FALSE(r.total.cpu_efficiency().has_value());
  EXPECT_THAT(UsageJson(r, UsageBy::kUser), HasSubstr("\"cpu_efficiency\": null"));
}

TEST(UsageReportTest, FormatsQuoteAndNeutraliseKeys) {
  std::vector<JobSummary> jobs = {
      Job("app_1", "a,\"b\"", "q\x1b[31m", At(0), {Held(1024, 1, 0, absl::Hours(1))}, 0)};
  const std::string csv = UsageCsv(SummarizeUsage(jobs, {}), UsageBy::kUser);
  EXPECT_THAT(csv, HasSubstr("user,jobs,vcore_hours,gb_hours,gpu_hours,"));
  EXPECT_THAT(csv, HasSubstr("\"a,\"\"b\"\"\",1,1.0000,1.0000,0.0000,"));
  EXPECT_THAT(csv, HasSubstr("\ntotal,1,1.0000,"));
  const std::string table =
      UsageTable(SummarizeUsage(jobs, {.by = UsageBy::kQueue}), UsageBy::kQueue);
  EXPECT_THAT(table, HasSubstr("QUEUE"));
  EXPECT_THAT(table, HasSubstr("q?[31m"));
  EXPECT_EQ(table.find('\x1b'), std::string::npos);
}

TEST(UsageReportTest, ParseUsageByNamesTheFlag) {
  EXPECT_EQ(*ParseUsageBy("queue"), UsageBy::kQueue);
  absl::StatusOr<UsageBy> bad = ParseUsageBy("team");
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr("--by: 'team' is not user, queue or job"));
}

TEST(UsageReportTest, GoodputIsSummedPerGroupAndItsShareIsOverTheWallTime) {
  std::vector<JobSummary> jobs = Jobs();
  // alice's jobs: 3 h training of 4 h, and 1 h of 2 h (1 h recovering); bob's has no time.
  jobs[0].goodput[GoodputPart::kTraining] = absl::Hours(3);
  jobs[0].goodput[GoodputPart::kWaiting] = absl::Hours(1);
  jobs[1].goodput[GoodputPart::kTraining] = absl::Hours(1);
  jobs[1].goodput[GoodputPart::kRecovering] = absl::Hours(1);
  UsageReport r = SummarizeUsage(jobs, {.by = UsageBy::kUser});
  const UsageGroup* alice = nullptr;
  const UsageGroup* bob = nullptr;
  for (const UsageGroup& g : r.groups) (g.key == "alice" ? alice : bob) = &g;
  ASSERT_NE(alice, nullptr);
  ASSERT_NE(bob, nullptr);
  EXPECT_EQ(alice->goodput.wall(), absl::Hours(6));
  EXPECT_DOUBLE_EQ(*alice->goodput.training_share(), 4.0 / 6);
  EXPECT_FALSE(bob->goodput.training_share().has_value());
  EXPECT_EQ(r.total.goodput[GoodputPart::kRecovering], absl::Hours(1));

  const std::string table = UsageTable(r, UsageBy::kUser);
  EXPECT_THAT(table, HasSubstr("GOODPUT%  RECOVER%"));
  EXPECT_THAT(table, HasSubstr("67%       17%"));  // alice: 4 of 6 h, 1 of 6 h
  const std::string csv = UsageCsv(r, UsageBy::kUser);
  EXPECT_THAT(csv, HasSubstr(",wall_hours,waiting_hours,starting_hours,training_hours,"
                             "recovering_hours,stopping_hours,training_share\n"));
  EXPECT_THAT(csv, HasSubstr(",6.0000,1.0000,0.0000,4.0000,1.0000,0.0000,0.6667\n"));
  const std::string json = UsageJson(r, UsageBy::kUser);
  EXPECT_THAT(json, HasSubstr("\"recovering_hours\": 1.0"));
  EXPECT_THAT(json, HasSubstr("\"training_share\": null"));  // bob
}

// A log: worker:0 held a container for 2 minutes, restarted and held another for a minute
// (adopted by attempt 2: still one container), ps:0 held one until the job's end, sampled.
constexpr char kLog[] =
    R"({"v":1,"seq":1,"attempt":1,"time":"2026-11-26T10:00:00.000Z","event":"am_started","user":"alice","queue":"research"}
{"v":1,"seq":2,"attempt":1,"time":"2026-11-26T10:00:00.000Z","event":"task_requested","task":"worker:0","memory_mb":2048,"vcores":2,"gpus":1}
{"v":1,"seq":3,"attempt":1,"time":"2026-11-26T10:00:00.000Z","event":"task_requested","task":"ps:0","memory_mb":1024,"vcores":1,"gpus":0}
{"v":1,"seq":4,"attempt":1,"time":"2026-11-26T10:01:00.000Z","event":"task_allocated","task":"worker:0","container":"c_1"}
{"v":1,"seq":5,"attempt":1,"time":"2026-11-26T10:01:00.000Z","event":"task_allocated","task":"ps:0","container":"c_2"}
{"v":1,"seq":6,"attempt":1,"time":"2026-11-26T10:02:00.000Z","event":"task_usage","task":"ps:0","cpu_cores":0.5,"rss_bytes":268435456}
{"v":1,"seq":7,"attempt":1,"time":"2026-11-26T10:03:00.000Z","event":"task_usage","task":"ps:0","cpu_cores":0.25,"rss_bytes":268435456}
{"v":1,"seq":8,"attempt":1,"time":"2026-11-26T10:03:00.000Z","event":"task_exited","task":"worker:0","exit_code":1}
{"v":1,"seq":9,"attempt":1,"time":"2026-11-26T10:03:00.000Z","event":"container_completed","task":"worker:0","container":"c_1"}
{"v":1,"seq":10,"attempt":1,"time":"2026-11-26T10:03:00.000Z","event":"task_relaunch_requested","task":"worker:0"}
{"v":1,"seq":11,"attempt":1,"time":"2026-11-26T10:04:00.000Z","event":"task_allocated","task":"worker:0","container":"c_3"}
{"v":1,"seq":12,"attempt":1,"time":"2026-11-26T10:04:30.000Z","event":"task_gpu_idle","task":"worker:0","gpu":0}
{"v":1,"seq":13,"attempt":1,"time":"2026-11-26T10:04:40.000Z","event":"task_gpu_idle","task":"worker:0","gpu":0}
{"v":1,"seq":1,"attempt":2,"time":"2026-11-26T10:04:50.000Z","event":"task_allocated","task":"worker:0","container":"c_3"}
{"v":1,"seq":2,"attempt":2,"time":"2026-11-26T10:05:00.000Z","event":"container_completed","task":"worker:0","container":"c_3"}
{"v":1,"seq":3,"attempt":2,"time":"2026-11-26T10:06:00.000Z","event":"job_finished","state":"SUCCEEDED"}
)";

TEST(UsageOfJobTest, EachContainerFromAllocationToCompletionOrTheJobsEnd) {
  JobHistory job = ReadJobHistory("application_1_0001", kLog);
  EXPECT_EQ(job.summary.user, "alice");
  EXPECT_EQ(job.summary.queue, "research");
  ASSERT_EQ(job.tasks.size(), 2u);
  // ps:0 first (tasks by role): c_2 from 10:01 to the job's end at 10:06.
  ASSERT_EQ(job.tasks[0].containers.size(), 1u);
  const ContainerSpan& c2 = job.tasks[0].containers[0];
  EXPECT_EQ(c2.container, "c_2");
  EXPECT_EQ(c2.end - c2.start, absl::Minutes(5));
  EXPECT_EQ(c2.memory_mb, 1024);
  // worker:0: c_1 for 2 minutes, c_3 for 1 (adopted by attempt 2: still one container), its
  // size the task's last ask.
  ASSERT_EQ(job.tasks[1].containers.size(), 2u);
  const ContainerSpan& c1 = job.tasks[1].containers[0];
  const ContainerSpan& c3 = job.tasks[1].containers[1];
  EXPECT_EQ(c1.end - c1.start, absl::Minutes(2));
  EXPECT_EQ(c3.container, "c_3");
  EXPECT_EQ(c3.end - c3.start, absl::Minutes(1));
  EXPECT_EQ(c3.vcores, 2);
  EXPECT_EQ(c3.gpus, 1);
  EXPECT_EQ(job.tasks[1].idle_gpus, 1);  // the same GPU twice

  const UsageTotals& u = job.summary.usage;
  EXPECT_DOUBLE_EQ(u.vcore_seconds, (5 + 2 * 3) * 60.0);
  EXPECT_DOUBLE_EQ(u.mb_seconds, (1024 * 5 + 2048 * 3) * 60.0);
  EXPECT_DOUBLE_EQ(u.gpu_seconds, 3 * 60.0);
  EXPECT_DOUBLE_EQ(u.sampled_vcore_seconds, 5 * 60.0);  // ps:0 only
  EXPECT_DOUBLE_EQ(u.used_core_seconds, 0.375 * 5 * 60);
  EXPECT_DOUBLE_EQ(u.used_mb_seconds, 256.0 * 5 * 60);
  EXPECT_EQ(u.idle_gpus, 1);

  UsageReport r = SummarizeUsage({job.summary}, {.by = UsageBy::kQueue});
  EXPECT_DOUBLE_EQ(r.total.vcore_hours, (5 + 2 * 3) / 60.0);
  EXPECT_DOUBLE_EQ(r.total.gpu_hours, 3 / 60.0);
  EXPECT_DOUBLE_EQ(*r.total.cpu_efficiency(), 0.375);
  EXPECT_DOUBLE_EQ(*r.total.memory_efficiency(), 0.25);
}

TEST(UsageOfJobTest, ARunningJobsContainersAreHeldUntilItsLastEvent) {
  constexpr char kRunning[] =
      R"({"v":1,"seq":1,"attempt":1,"time":"2026-11-26T10:00:00.000Z","event":"task_requested","task":"worker:0","memory_mb":1024,"vcores":1}
{"v":1,"seq":2,"attempt":1,"time":"2026-11-26T10:00:00.000Z","event":"task_allocated","task":"worker:0","container":"c_1"}
{"v":1,"seq":3,"attempt":1,"time":"2026-11-26T10:10:00.000Z","event":"task_started","task":"worker:0"}
)";
  JobSummary s = ReadJobHistory("application_1_0002", kRunning, "bob").summary;
  EXPECT_DOUBLE_EQ(s.usage.vcore_seconds, 600);
  EXPECT_EQ(s.user, "bob");
}

TEST(UsageOfJobTest, TheSummarysJsonAndTheIndexKeepTheUsage) {
  JobSummary s = ReadJobHistory("application_1_0001", kLog).summary;
  JobSummary back = SummaryFromJson(SummaryJson(s));
  EXPECT_DOUBLE_EQ(back.usage.vcore_seconds, s.usage.vcore_seconds);
  EXPECT_DOUBLE_EQ(back.usage.used_mb_seconds, s.usage.used_mb_seconds);
  EXPECT_EQ(back.usage.idle_gpus, 1);

  HistoryIndex index;
  index.Put({"application_1_0001.jsonl", 10, 20, "alice"}, s);
  HistoryIndex restarted;
  ASSERT_EQ(restarted.Load(index.Save()), 1);
  EXPECT_DOUBLE_EQ(restarted.Find("application_1_0001")->usage.vcore_seconds,
                   s.usage.vcore_seconds);
  // An index kept before summaries had usage: its jobs are read again, not counted as 0.
  HistoryIndex old;
  EXPECT_EQ(old.Load(R"({"name":"application_1_0001.jsonl","length":10,"mtime":20,)"
                     R"("owner":"alice","summary":{"app_id":"application_1_0001"}})"),
            0);
}

}  // namespace
}  // namespace tony::history
