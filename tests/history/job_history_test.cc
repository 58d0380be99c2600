// Copyright libtony authors.
//
// ReadJobHistory: a job rebuilt from its event log's lines, including logs cut short, with bad
// lines, from two attempts, or from an older libtony without the job's name in am_started.

#include "history/job_history.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tony::history {
namespace {

using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

std::string Line(int seq, const std::string& time, const std::string& rest, int attempt = 1) {
  return absl::StrCat(R"({"v":1,"seq":)", seq, R"(,"attempt":)", attempt,
                      R"(,"time":"2026-11-26T10:)", time, R"(Z",)", rest, "}");
}

// A 2-task job: ps:0 succeeds... (ps is untracked and stopped), worker:0 restarts once, then
// succeeds; one usage sample each.
std::string TwoTaskLog() {
  return absl::StrJoin(
      {
          Line(1, "00:00.000",
               R"("event":"am_started","app_id":"application_1_0001","user":"alice",)"
               R"("name":"mnist","queue":"research","tags":["nightly","team-a"],)"
               R"("tracking_url":"http://nm1:1/")"),
          Line(2, "00:00.010", R"("event":"job_spec","yaml":"name: mnist\n")"),
          Line(3, "00:00.100", R"("event":"task_requested","task":"worker:0")"),
          Line(4, "00:00.100", R"("event":"task_requested","task":"ps:0")"),
          Line(5, "00:01.000",
               R"("event":"task_allocated","task":"worker:0","container":"c_2","node":"nm1:1",)"
               R"("node_http":"nm1:8042")"),
          Line(6, "00:01.000",
               R"("event":"task_allocated","task":"ps:0","container":"c_3","node":"nm2:1")"),
          Line(7, "00:02.000",
               R"("event":"task_registered","task":"worker:0","address":"nm1:2222")"),
          Line(8, "00:02.000", R"("event":"task_registered","task":"ps:0","address":"nm2:2222")"),
          Line(9, "00:02.100", R"("event":"task_started","task":"worker:0")"),
          Line(10, "00:02.500",
               R"("event":"task_usage","task":"worker:0","rss_bytes":150000000,)"
               R"("cpu_cores":1.5,"cpu_seconds":1,"processes":2)"),
          Line(11, "00:05.000",
               R"("event":"task_exited","task":"worker:0","exit_code":3,"stderr_tail":"boom")"),
          Line(12, "00:05.000",
               R"("event":"task_restart_scheduled","task":"worker:0",)"
               R"("reason":"exit 3","restart":1,"backoff_ms":1000)"),
          Line(13, "00:06.000", R"("event":"task_relaunch_requested","task":"worker:0")"),
          Line(14, "00:07.000", R"("event":"task_started","task":"worker:0")"),
          Line(15, "00:09.000",
               R"("event":"task_exited","task":"worker:0","exit_code":0,"stderr_tail":"")"),
          Line(16, "00:09.100", R"("event":"task_stop_requested","task":"ps:0","grace_ms":5)"),
          Line(17, "00:09.200",
               R"("event":"container_completed","task":"ps:0",)"
               R"("container":"c_3","exit_status":-105,"diagnostics":"killed")"),
          Line(18, "00:10.000",
               R"("event":"job_finished","state":"SUCCEEDED","diagnostics":"","progress":{})"),
      },
      "\n");
}

TEST(JobHistoryTest, TheLogsOwnerIsItsUserWhateverItsTextClaims) {
  // mallory's log claims to be alice's job: it is listed as mallory's, the claim a problem.
  JobHistory job = ReadJobHistory("application_1_0001", TwoTaskLog(), "mallory");
  EXPECT_EQ(job.summary.user, "mallory");
  EXPECT_THAT(job.problems, Contains(HasSubstr("names its user alice but belongs to mallory")));
  // A principal that maps to the owner's short name is no mismatch.
  std::string log = TwoTaskLog();
  const size_t at = log.find(R"("user":"alice")");
  ASSERT_NE(at, std::string::npos);
  log.replace(at, 14, R"("user":"alice@EXAMPLE.COM")");
  EXPECT_THAT(ReadJobHistory("application_1_0001", log, "alice").problems, IsEmpty());
}

TEST(JobHistoryTest, ATwoTaskJobWithARestart) {
  JobHistory job = ReadJobHistory("application_1_0001", TwoTaskLog(), "alice");
  const JobSummary& s = job.summary;
  EXPECT_EQ(s.user, "alice");
  EXPECT_EQ(s.name, "mnist");
  EXPECT_EQ(s.queue, "research");
  EXPECT_THAT(s.tags, ElementsAre("nightly", "team-a"));
  EXPECT_EQ(s.state, "SUCCEEDED");
  EXPECT_TRUE(s.ended());
  EXPECT_EQ(s.finished - s.started, absl::Seconds(10));
  EXPECT_EQ(s.attempts, 1);
  EXPECT_EQ(s.tasks, 2);
  EXPECT_EQ(s.restarts, 1);
  EXPECT_EQ(s.bad_lines, 0);
  EXPECT_EQ(job.spec_yaml, "name: mnist\n");
  EXPECT_EQ(job.tracking_url, "http://nm1:1/");

  ASSERT_EQ(job.tasks.size(), 2u);
  const TaskHistory& ps = job.tasks[0];  // sorted by role
  EXPECT_EQ(ps.task, "ps:0");
  EXPECT_EQ(ps.state, "CONTAINER_ENDED");
  EXPECT_EQ(ps.stderr_tail, "killed");
  const TaskHistory& w = job.tasks[1];
  EXPECT_EQ(w.container, "c_2");
  EXPECT_EQ(w.node, "nm1:1");
  EXPECT_EQ(w.node_http, "nm1:8042");
  EXPECT_EQ(w.address, "nm1:2222");
  EXPECT_EQ(w.state, "SUCCEEDED");
  EXPECT_EQ(w.exit_code, 0);
  EXPECT_EQ(w.restarts, 1);
  std::vector<std::string> phases;
  for (const TaskMark& m : w.marks) phases.push_back(m.phase);
  EXPECT_THAT(phases, ElementsAre("waiting", "launching", "registered", "running", "exited",
                                  "backoff", "waiting", "running", "exited"));
  ASSERT_EQ(w.usage.size(), 1u);
  EXPECT_EQ(w.usage[0].rss_bytes, 150000000);
  EXPECT_DOUBLE_EQ(w.usage[0].cpu_cores, 1.5);
}

TEST(JobHistoryTest, ALogCutShortKeepsWhatItSaysAndNamesTheBadLine) {
  std::string log = TwoTaskLog();
  log = log.substr(0, log.rfind('\n') + 20);  // job_finished cut mid-line (an AM killed)
  JobHistory job = ReadJobHistory("application_1_0001", log);
  EXPECT_EQ(job.summary.state, "RUNNING");  // no end in the log
  EXPECT_FALSE(job.summary.ended());
  EXPECT_EQ(job.summary.tasks, 2);
  EXPECT_EQ(job.summary.bad_lines, 1);
  ASSERT_EQ(job.problems.size(), 1u);
  EXPECT_THAT(job.problems[0], HasSubstr("line 18: not a JSON object"));
}

TEST(JobHistoryTest, UnknownVersionsAndGarbageAreSkippedNotFatal) {
  const std::string log = absl::StrJoin(
      {std::string("\x01\xff garbage"), std::string(R"({"v":2,"event":"am_started"})"),
       std::string(R"([1,2,3])"), Line(1, "00:00.000", R"("event":"task_requested","task":"w")")},
      "\n");
  JobHistory job = ReadJobHistory("application_1_0002", log, "bob");
  EXPECT_EQ(job.summary.user, "bob");  // the owner, for lack of am_started's
  EXPECT_EQ(job.summary.bad_lines, 3);
  EXPECT_THAT(job.problems[1], HasSubstr("schema version 2"));
  ASSERT_EQ(job.tasks.size(), 1u);
  EXPECT_EQ(job.tasks[0].role, "w");  // no index: 0
}

TEST(JobHistoryTest, ASecondAttemptCountsAndItsEndWins) {
  const std::string log =
      absl::StrJoin({Line(1, "00:00.000", R"("event":"am_started","app_id":"a")"),
                     Line(2, "00:05.000", R"("event":"attempt_finished","state":"FAILED")"),
                     Line(1, "00:06.000", R"("event":"am_started","app_id":"a")", 2),
                     Line(2, "00:09.000",
                          R"("event":"job_finished","state":"FAILED","diagnostics":")" +
                              std::string(400, 'x') + R"(")",
                          2)},
                    "\n");
  JobHistory job = ReadJobHistory("application_1_0003", log);
  EXPECT_EQ(job.summary.attempts, 2);
  EXPECT_EQ(job.summary.state, "FAILED");
  EXPECT_EQ(job.summary.diagnostics.size(), 303u);  // cut for the index
}

TEST(JobHistoryTest, ATaskTheAmStoppedIsStoppedNotFailed) {
  const std::string log = absl::StrJoin(
      {Line(1, "00:00.000", R"("event":"task_started","task":"worker:0")"),
       Line(2, "00:00.000", R"("event":"task_started","task":"worker:1")"),
       Line(3, "00:01.000", R"("event":"task_stop_requested","task":"worker:0","grace_ms":5)"),
       Line(4, "00:01.100", R"("event":"task_exited","task":"worker:0","exit_code":143)"),
       Line(5, "00:01.200", R"("event":"task_exited","task":"worker:1","exit_code":143)")},
      "\n");
  JobHistory job = ReadJobHistory("application_1_0004", log);
  ASSERT_EQ(job.tasks.size(), 2u);
  EXPECT_EQ(job.tasks[0].state, "STOPPED");
  EXPECT_EQ(job.tasks[1].state, "FAILED");  // killed by something else
}

TEST(JobHistoryTest, LogNames) {
  EXPECT_EQ(AppIdOfLogName("application_1_0001.jsonl"), "application_1_0001");
  EXPECT_EQ(AppIdOfLogName("application_1_0001.jsonl.tmp"), std::nullopt);
  EXPECT_EQ(AppIdOfLogName("notes.jsonl"), std::nullopt);
  EXPECT_EQ(AppIdOfLogName(".jsonl"), std::nullopt);
}

}  // namespace
}  // namespace tony::history

namespace tony::history {
namespace {

// A forged log as large as the server reads (64 MiB) must cost no more than a large real job:
// tasks, marks, usage points, texts and problems are bounded, and what was left out is said.
TEST(JobHistoryBoundsTest, AHugeForgedLogIsReadWithinBounds) {
  std::string log;
  const std::string prefix = R"({"v":1,"seq":1,"attempt":1,"time":"2026-11-26T10:00:00.000Z",)";
  for (int i = 0; i < kMaxHistoryTasks + 50; ++i) {
    absl::StrAppend(&log, prefix, R"("event":"task_requested","task":"w:)", i, "\"}\n");
  }
  for (int i = 0; i < kMaxHistoryUsagePoints + 10; ++i) {
    absl::StrAppend(&log, prefix, R"("event":"task_usage","task":"w:0","rss_bytes":1})", "\n");
  }
  for (int i = 0; i < kMaxHistoryMarks; ++i) {
    absl::StrAppend(&log, prefix, R"("event":"task_stop_requested","task":"w:1"})", "\n");
  }
  absl::StrAppend(&log, prefix, R"("event":"task_exited","task":"w:2","exit_code":1,)",
                  R"("stderr_tail":")", std::string(1 << 20, 'x'), "\"}\n");
  for (int i = 0; i < 5000; ++i) log += "not json\n";
  JobHistory job = ReadJobHistory("application_1_0001", log, "mallory");
  EXPECT_EQ(job.tasks.size(), static_cast<size_t>(kMaxHistoryTasks));
  size_t marks = 0, points = 0;
  for (const TaskHistory& t : job.tasks) {
    marks += t.marks.size();
    points += t.usage.size();
    EXPECT_LE(t.stderr_tail.size(), kMaxHistoryTextBytes + 3);
  }
  EXPECT_LE(marks, static_cast<size_t>(kMaxHistoryMarks));
  EXPECT_EQ(points, static_cast<size_t>(kMaxHistoryUsagePoints));
  EXPECT_LE(job.problems.size(), static_cast<size_t>(kMaxHistoryProblems + 4));
  EXPECT_THAT(job.problems, Contains(HasSubstr("more tasks (10000) than shown")));
  EXPECT_THAT(job.problems, Contains(HasSubstr("more usage points")));
  EXPECT_THAT(job.problems, Contains(HasSubstr("more timeline marks")));
  EXPECT_THAT(job.problems, Contains(HasSubstr("and 4900 more bad lines")));
  EXPECT_GE(job.summary.bad_lines, 5000);
}

}  // namespace
}  // namespace tony::history
