// Copyright libtony authors.
//
// Goodput: events with times in, the split out. Every case also checks that the parts add up to
// the wall time, the first event to job_finished (or the last).

#include "history/goodput.h"

#include <map>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "history/history_pages.h"
#include "history/job_history.h"

namespace tony::history {
namespace {

absl::Time T(double s) { return absl::FromUnixSeconds(1795600000) + absl::Seconds(s); }

struct Line {
  double at;
  std::string event;
  std::string task = "";
  int64_t attempt = 1;
};

// The lines as a log has them: seq 1, 2, ... within each attempt.
std::vector<GoodputEvent> Events(const std::vector<Line>& lines) {
  std::map<int64_t, int64_t> seq;
  std::vector<GoodputEvent> out;
  for (const Line& l : lines) {
    out.push_back({T(l.at), l.attempt, ++seq[l.attempt], l.event, l.task});
  }
  return out;
}

// The split in seconds: waiting, starting, training, recovering, stopping.
struct Split {
  double waiting, starting, training, recovering, stopping;
};

void ExpectSplit(const std::vector<Line>& lines, Split want, double wall) {
  const Goodput g = ComputeGoodput(Events(lines));
  EXPECT_DOUBLE_EQ(absl::ToDoubleSeconds(g[GoodputPart::kWaiting]), want.waiting);
  EXPECT_DOUBLE_EQ(absl::ToDoubleSeconds(g[GoodputPart::kStarting]), want.starting);
  EXPECT_DOUBLE_EQ(absl::ToDoubleSeconds(g[GoodputPart::kTraining]), want.training);
  EXPECT_DOUBLE_EQ(absl::ToDoubleSeconds(g[GoodputPart::kRecovering]), want.recovering);
  EXPECT_DOUBLE_EQ(absl::ToDoubleSeconds(g[GoodputPart::kStopping]), want.stopping);
  EXPECT_EQ(g.wall(), absl::Seconds(wall));
}

// One task's start: asked at `at`, allocated 2 s later, registered 1 s later, running 1 s later.
std::vector<Line> Start(double at, const std::string& task, int64_t attempt = 1) {
  return {{at, "task_requested", task, attempt},
          {at + 2, "task_allocated", task, attempt},
          {at + 3, "task_registered", task, attempt},
          {at + 4, "task_started", task, attempt}};
}

std::vector<Line> Join(std::vector<std::vector<Line>> parts) {
  std::vector<Line> out;
  for (auto& p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}

TEST(GoodputTest, ACleanJobWaitsStartsTrainsAndStops) {
  ExpectSplit(Join({{{0, "am_started"}},
                    Start(1, "worker:0"),
                    {{15, "task_exited", "worker:0"}, {15, "job_outcome"}, {16, "job_finished"}}}),
              {.waiting = 2, .starting = 1 + 2, .training = 10, .recovering = 0, .stopping = 1},
              16);
}

TEST(GoodputTest, WaitingLastsWhileAnyTaskHasNoContainer) {
  // worker:1's container comes 4 s after worker:0's: the job waits for it, then starts both.
  ExpectSplit({{0, "am_started"},
               {0, "task_requested", "worker:0"},
               {0, "task_requested", "worker:1"},
               {2, "task_allocated", "worker:0"},
               {6, "task_allocated", "worker:1"},
               {7, "task_started", "worker:0"},
               {8, "task_started", "worker:1"},
               {18, "task_exited", "worker:0"},
               {20, "task_exited", "worker:1"},
               {20, "job_outcome"},
               {21, "job_finished"}},
              {.waiting = 6, .starting = 2, .training = 12, .recovering = 0, .stopping = 1}, 21);
}

TEST(GoodputTest, ATaskRestartIsRecoveringUntilItRunsAgain) {
  ExpectSplit(Join({{{0, "am_started"}},
                    Start(0, "worker:0"),
                    {{10, "task_exited", "worker:0"}, {10, "task_restart_scheduled", "worker:0"}},
                    Start(12, "worker:0"),  // backoff 2 s, then its new container
                    {{30, "task_exited", "worker:0"}, {30, "job_outcome"}, {31, "job_finished"}}}),
              {.waiting = 2, .starting = 2, .training = 6 + 14, .recovering = 6, .stopping = 1},
              31);
}

TEST(GoodputTest, AContainerEndedUnderARunningTaskIsRecovering) {
  // Preempted (-102): YARN's report is the only word of it; the relaunch follows.
  ExpectSplit(Join({{{0, "am_started"}},
                    Start(0, "worker:0"),
                    {{10, "container_completed", "worker:0"},
                     {11, "task_relaunch_requested", "worker:0"},
                     {14, "task_allocated", "worker:0"},
                     {15, "task_started", "worker:0"},
                     {25, "task_exited", "worker:0"},
                     {25, "job_outcome"},
                     {26, "job_finished"}}}),
              {.waiting = 2, .starting = 2, .training = 6 + 10, .recovering = 5, .stopping = 1},
              26);
}

TEST(GoodputTest, AContainerEndingAfterItsTaskExitedIsNoFault) {
  ExpectSplit({{0, "am_started"},
               {0, "task_requested", "worker:0"},
               {0, "task_requested", "worker:1"},
               {2, "task_allocated", "worker:0"},
               {2, "task_allocated", "worker:1"},
               {4, "task_started", "worker:0"},
               {4, "task_started", "worker:1"},
               {10, "task_exited", "worker:0"},
               {11, "container_completed", "worker:0"},
               {20, "task_exited", "worker:1"},
               {20, "job_outcome"},
               {22, "job_finished"}},
              {.waiting = 2, .starting = 2, .training = 16, .recovering = 0, .stopping = 2}, 22);
}

TEST(GoodputTest, ALateReportOfAContainerTheTaskNoLongerHoldsChangesNothing) {
  // worker:0 fails and is asked for again; its old container's end comes after the new one is
  // allocated, and once after the ask: neither ends its recovery nor starts another.
  std::vector<GoodputEvent> events = Events(Join({{{0, "am_started"}},
                                                  Start(0, "worker:0"),
                                                  Start(0, "worker:1"),
                                                  {{10, "task_exited", "worker:0"},
                                                   {10, "task_restart_scheduled", "worker:0"},
                                                   {11, "task_requested", "worker:0"},
                                                   {12, "container_completed", "worker:0"},
                                                   {13, "task_allocated", "worker:0"},
                                                   {14, "container_completed", "worker:0"},
                                                   {16, "task_started", "worker:0"},
                                                   {20, "job_outcome"},
                                                   {21, "job_finished"}}}));
  for (GoodputEvent& e : events) {
    if (e.event == "task_allocated" && e.task == "worker:0") {
      e.container = e.time < T(10) ? "c_1" : "c_3";
    }
    if (e.event == "container_completed") e.container = "c_1";
  }
  const Goodput g = ComputeGoodput(events);
  EXPECT_EQ(g[GoodputPart::kRecovering], absl::Seconds(6));
  EXPECT_EQ(g.wall(), absl::Seconds(21));
}

TEST(GoodputTest, StoppingOutranksARecoveryInProgress) {
  // The restart's budget is spent while it waits: the outcome is decided, the rest is stopping.
  ExpectSplit(Join({{{0, "am_started"}},
                    Start(0, "worker:0"),
                    {{10, "task_restart_scheduled", "worker:0"},
                     {12, "task_requested", "worker:0"},
                     {13, "job_outcome"},
                     {16, "job_finished"}}}),
              {.waiting = 2, .starting = 2, .training = 6, .recovering = 3, .stopping = 3}, 16);
}

TEST(GoodputTest, AKillWhileWaitingIsStopping) {
  ExpectSplit({{0, "am_started"},
               {1, "task_requested", "worker:0"},
               {5, "kill_requested"},
               {5, "job_outcome"},
               {6, "job_finished"}},
              {.waiting = 4, .starting = 1, .training = 0, .recovering = 0, .stopping = 1}, 6);
}

TEST(GoodputTest, ANewAttemptAfterAttemptFinishedIsRecoveringFromTheFailure) {
  // Attempt 1 fails (its stopping was the way to attempt 2), attempt 2 starts afresh.
  ExpectSplit(
      Join({{{0, "am_started"}},
            Start(0, "worker:0"),
            {{10, "task_exited", "worker:0"}, {10, "job_outcome"}, {11, "attempt_finished"}},
            {{15, "am_started", "", 2}},
            Start(16, "worker:0", 2),
            {{30, "task_exited", "worker:0", 2},
             {30, "job_outcome", "", 2},
             {31, "job_finished", "", 2}}}),
      {.waiting = 2, .starting = 2, .training = 6 + 10, .recovering = 10, .stopping = 1}, 31);
}

TEST(GoodputTest, AnAmThatDiedWithoutAWordIsRecoveringFromItsLastLine) {
  // Attempt 1's AM was killed: its last line is all the log knows of when.
  ExpectSplit(
      Join({{{0, "am_started"}},
            Start(0, "worker:0"),
            {{9, "task_usage", "worker:0"}},
            {{20, "am_started", "", 2},
             {20, "task_requested", "worker:0", 2},
             {21, "task_allocated", "worker:0", 2},  // adopted: still running
             {22, "task_registered", "worker:0", 2},
             {23, "task_usage", "worker:0", 2},  // its command runs: no task_started
             {40, "task_exited", "worker:0", 2},
             {40, "job_outcome", "", 2},
             {41, "job_finished", "", 2}}}),
      {.waiting = 2, .starting = 2, .training = 5 + 17, .recovering = 11 + 3, .stopping = 1}, 41);
}

TEST(GoodputTest, ATaskAdoptedStillRunningByTheNextAttemptTrainsFromItsAllocation) {
  // Work-preserving AM restart: worker:0's command ran on in container c_1; worker:1 had not
  // started, so its adoption still has to start it.
  std::vector<GoodputEvent> events = Events({{0, "am_started"},
                                             {0, "task_requested", "worker:0"},
                                             {0, "task_requested", "worker:1"},
                                             {2, "task_allocated", "worker:0"},
                                             {2, "task_allocated", "worker:1"},
                                             {4, "task_started", "worker:0"},
                                             {9, "task_usage", "worker:0"},
                                             {20, "am_started", "", 2},
                                             {20, "task_requested", "worker:0", 2},
                                             {20, "task_requested", "worker:1", 2},
                                             {21, "task_allocated", "worker:0", 2},
                                             {21, "task_allocated", "worker:1", 2},
                                             {23, "task_registered", "worker:0", 2},
                                             {24, "task_started", "worker:1", 2},
                                             {40, "job_outcome", "", 2},
                                             {41, "job_finished", "", 2}});
  for (GoodputEvent& e : events) {
    if (e.event == "task_allocated") e.container = e.task == "worker:0" ? "c_1" : "c_2";
  }
  const Goodput g = ComputeGoodput(events);
  // Attempt 1 never had worker:1 running: starting from 2 s to its last line; then recovering
  // until both run (24 s), training to the outcome.
  EXPECT_EQ(g[GoodputPart::kStarting], absl::Seconds(7));
  EXPECT_EQ(g[GoodputPart::kRecovering], absl::Seconds(15));
  EXPECT_EQ(g[GoodputPart::kTraining], absl::Seconds(16));
  // With worker:1 running under attempt 1 too, both are adopted running: recovered at 21 s.
  events.insert(events.begin() + 6, {T(4), 1, 0, "task_started", "worker:1"});
  const Goodput both = ComputeGoodput(events);
  EXPECT_EQ(both[GoodputPart::kRecovering], absl::Seconds(12));
  EXPECT_EQ(both[GoodputPart::kTraining], absl::Seconds(5 + 19));
  EXPECT_EQ(both.wall(), absl::Seconds(41));
  // Attempt 1 left no line (its AM was killed before its first flush): attempt 2 still recovers.
  ExpectSplit(Join({{{20, "am_started", "", 2}},
                    Start(20, "worker:0", 2),
                    {{40, "job_outcome", "", 2}, {41, "job_finished", "", 2}}}),
              {.waiting = 0, .starting = 0, .training = 16, .recovering = 4, .stopping = 1}, 21);
}

TEST(GoodputTest, ASuspensionIsRecoveringUntilTheGangRunsAgain) {
  ExpectSplit(Join({{{0, "am_started"}},
                    Start(0, "worker:0"),
                    {{10, "suspend_requested"},
                     {10, "task_usage", "worker:0"},  // still runs: not the end of a recovery
                     {10, "job_suspending"},
                     {10, "task_stop_requested", "worker:0"},
                     {11, "task_exited", "worker:0"},
                     {12, "job_suspended"},
                     {50, "resume_requested"},
                     {50, "job_resumed"}},
                    Start(50, "worker:0"),
                    {{60, "task_exited", "worker:0"}, {60, "job_outcome"}, {61, "job_finished"}}}),
              {.waiting = 2, .starting = 2, .training = 6 + 6, .recovering = 44, .stopping = 1},
              61);
}

TEST(GoodputTest, AnElasticScaleUpIsRecoveringUntilTheNewTaskRuns) {
  ExpectSplit(Join({{{0, "am_started"}},
                    Start(0, "worker:0"),
                    {{10, "role_scaled"}},
                    Start(10, "worker:1"),
                    {{20, "task_exited", "worker:0"},
                     {20, "task_exited", "worker:1"},
                     {20, "job_outcome"},
                     {21, "job_finished"}}}),
              {.waiting = 2, .starting = 2, .training = 6 + 6, .recovering = 4, .stopping = 1}, 21);
}

TEST(GoodputTest, AnElasticScaleDownRecoversOnceTheRemovedTaskIsStopped) {
  ExpectSplit(Join({{{0, "am_started"}},
                    Start(0, "worker:0"),
                    {{4, "task_requested", "worker:1"},
                     {4, "task_allocated", "worker:1"},
                     {4, "task_started", "worker:1"},
                     {10, "role_scaled"},
                     {11, "task_stop_requested", "worker:1"},
                     {20, "task_exited", "worker:0"},
                     {20, "job_outcome"},
                     {21, "job_finished"}}}),
              {.waiting = 2, .starting = 2, .training = 6 + 9, .recovering = 1, .stopping = 1}, 21);
}

TEST(GoodputTest, AGangGivenBackBeforeTrainingIsStillWaiting) {
  ExpectSplit({{0, "am_started"},
               {0, "task_requested", "worker:0"},
               {0, "task_requested", "worker:1"},
               {2, "task_allocated", "worker:0"},
               {3, "gang_released"},
               {3, "task_requested", "worker:0"},
               {8, "task_allocated", "worker:0"},
               {8, "task_allocated", "worker:1"},
               {9, "task_started", "worker:0"},
               {9, "task_started", "worker:1"},
               {19, "job_outcome"},
               {20, "job_finished"}},
              {.waiting = 8, .starting = 1, .training = 10, .recovering = 0, .stopping = 1}, 20);
}

TEST(GoodputTest, ARunningJobCountsToItsLastEventAndNothingAfterTheEndCounts) {
  ExpectSplit(Join({{{0, "am_started"}}, Start(0, "worker:0"), {{30, "task_usage", "worker:0"}}}),
              {.waiting = 2, .starting = 2, .training = 26, .recovering = 0, .stopping = 0}, 30);
  ExpectSplit(
      Join({{{0, "am_started"}},
            Start(0, "worker:0"),
            {{10, "job_outcome"}, {11, "job_finished"}, {20, "told_job_over", "worker:0"}}}),
      {.waiting = 2, .starting = 2, .training = 6, .recovering = 0, .stopping = 1}, 11);
}

TEST(GoodputTest, ABatchWrittenTwiceAndAClockBehindChangeNothing) {
  std::vector<GoodputEvent> events =
      Events(Join({{{0, "am_started"}},
                   Start(0, "worker:0"),
                   {{10, "task_exited", "worker:0"}, {10, "job_outcome"}, {11, "job_finished"}}}));
  // Lines again (the same attempt and seq), as an append that failed half-way leaves them.
  std::vector<GoodputEvent> twice(events.begin(), events.end() - 2);
  twice.insert(twice.end(), events.begin() + 1, events.end());
  const Goodput once = ComputeGoodput(events), again = ComputeGoodput(twice);
  EXPECT_EQ(once.parts, again.parts);
  // A line whose time is before the last one's counts as the last's.
  std::vector<GoodputEvent> behind = events;
  behind[2].time = T(-100);  // task_allocated, at 2 s
  const Goodput g = ComputeGoodput(behind);
  EXPECT_EQ(g.wall(), absl::Seconds(11));
  EXPECT_EQ(g[GoodputPart::kWaiting], absl::ZeroDuration());
  EXPECT_EQ(g[GoodputPart::kStarting], absl::Seconds(4));
}

TEST(GoodputTest, ALineOfAnEarlierAttemptAfterALaterBeganChangesNothing) {
  std::vector<Line> lines = Join({{{0, "am_started"}},
                                  Start(0, "worker:0"),
                                  {{10, "attempt_finished"}, {12, "am_started", "", 2}},
                                  Start(12, "worker:0", 2),
                                  {{17, "task_restart_scheduled", "worker:0", 1},  // attempt 1's
                                   {20, "job_outcome", "", 2},
                                   {21, "job_finished", "", 2}}});
  ExpectSplit(lines,
              {.waiting = 2, .starting = 2, .training = 6 + 4, .recovering = 2 + 4, .stopping = 1},
              21);
}

TEST(GoodputTest, NoEventsIsNoTimeAndAShareOnlyWithTime) {
  const Goodput none = ComputeGoodput({});
  EXPECT_EQ(none.wall(), absl::ZeroDuration());
  EXPECT_FALSE(none.training_share().has_value());
  Goodput g;
  g[GoodputPart::kTraining] = absl::Seconds(3);
  g[GoodputPart::kRecovering] = absl::Seconds(1);
  EXPECT_DOUBLE_EQ(*g.training_share(), 0.75);
  g.Add(g);
  EXPECT_EQ(g.wall(), absl::Seconds(8));
  EXPECT_STREQ(GoodputPartName(GoodputPart::kRecovering), "recovering");
}

TEST(GoodputTest, TheJobHistoryCarriesTheSplitOfItsLog) {
  const std::string log =
      R"({"v":1,"seq":1,"attempt":1,"time":"2026-11-26T10:00:00.000Z","event":"am_started"}
{"v":1,"seq":2,"attempt":1,"time":"2026-11-26T10:00:01.000Z","event":"task_requested","task":"worker:0"}
{"v":1,"seq":3,"attempt":1,"time":"2026-11-26T10:00:03.000Z","event":"task_allocated","task":"worker:0"}
{"v":1,"seq":4,"attempt":1,"time":"2026-11-26T10:00:04.000Z","event":"task_started","task":"worker:0"}
{"v":1,"seq":5,"attempt":1,"time":"2026-11-26T10:00:09.000Z","event":"task_restart_scheduled","task":"worker:0"}
{"v":1,"seq":6,"attempt":1,"time":"2026-11-26T10:00:10.000Z","event":"task_requested","task":"worker:0"}
{"v":1,"seq":7,"attempt":1,"time":"2026-11-26T10:00:12.000Z","event":"task_allocated","task":"worker:0"}
{"v":1,"seq":8,"attempt":1,"time":"2026-11-26T10:00:13.000Z","event":"task_started","task":"worker:0"}
{"v":1,"seq":9,"attempt":1,"time":"2026-11-26T10:00:20.000Z","event":"job_outcome"}
{"v":1,"seq":10,"attempt":1,"time":"2026-11-26T10:00:21.000Z","event":"job_finished","state":"SUCCEEDED"}
)";
  const JobHistory h = ReadJobHistory("application_1_0001", log);
  const Goodput& g = h.summary.goodput;
  EXPECT_EQ(g.wall(), h.summary.finished - h.summary.started);
  EXPECT_EQ(g[GoodputPart::kRecovering], absl::Seconds(4));
  EXPECT_EQ(g[GoodputPart::kTraining], absl::Seconds(5 + 7));
  // Through the index's JSON and back.
  const JobSummary back = SummaryFromJson(SummaryJson(h.summary));
  EXPECT_EQ(back.goodput.parts, g.parts);
  // The job page: a bar and a row per part.
  const std::string page = RenderJobPage(h);
  EXPECT_THAT(page, ::testing::HasSubstr("<h2>Goodput</h2><p>12.0 s of 21.0 s training;"));
  EXPECT_THAT(page, ::testing::HasSubstr("<svg class=\"goodput\""));
  EXPECT_THAT(page, ::testing::HasSubstr(
                        "<tr class=\"recovering\"><th>recovering</th><td>4.0 s</td><td>19%</td>"));
}

}  // namespace
}  // namespace tony::history
