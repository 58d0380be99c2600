// Copyright libtony authors.
//
// JobState as tables: events and times in, actions out, nothing sleeps. Each row feeds one event
// (or, without one, a tick) at a time since the start and compares what JobState asks for, as
// one line of text, and optionally the phases of some tasks afterwards. The transitions are
// those of docs/am-state-machine.md.

#include "am/job_state.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tony::am {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

const absl::Time kStart = absl::UnixEpoch() + absl::Hours(1000);

// The actions as one line: "request worker:0 worker:1; kill ps:0; outcome SUCCEEDED; done".
std::string Describe(const JobActions& a) {
  std::vector<std::string> parts;
  auto ids = [](const auto& list, auto&& name) {
    std::vector<std::string> out;
    for (const auto& x : list) out.push_back(name(x));
    return absl::StrJoin(out, " ");
  };
  if (!a.reopen.empty()) {
    parts.push_back("reopen " + ids(a.reopen, [](const TaskId& t) { return t.ToString(); }));
  }
  if (!a.rejoin.empty()) {
    parts.push_back("rejoin " + ids(a.rejoin, [](const TaskId& t) { return t.ToString(); }));
  }
  if (!a.exclude_nodes.empty()) parts.push_back("exclude " + absl::StrJoin(a.exclude_nodes, " "));
  if (!a.include_nodes.empty()) parts.push_back("include " + absl::StrJoin(a.include_nodes, " "));
  if (!a.admit.empty()) parts.push_back("admit " + absl::StrJoin(a.admit, " "));
  if (!a.requests.empty()) {
    parts.push_back("request " + ids(a.requests, [](const TaskSpec& t) { return t.id(); }));
  }
  if (!a.relaunches.empty()) {
    parts.push_back("relaunch " + ids(a.relaunches, [](const JobActions::Relaunch& r) {
                      return absl::StrCat(r.spec.id(), "@", r.host, ":", r.port);
                    }));
  }
  if (!a.kills.empty()) {
    parts.push_back("kill " + ids(a.kills, [](const auto& k) { return k.first.ToString(); }));
  }
  if (!a.preempt_notices.empty()) {
    parts.push_back("preempt " + ids(a.preempt_notices, [](const auto& p) {
                      return absl::StrCat(p.first.ToString(), "=", p.second);
                    }));
  }
  if (!a.excuses.empty()) {
    parts.push_back("excuse " + ids(a.excuses, [](const TaskId& t) { return t.ToString(); }));
  }
  if (!a.probe_tensorboard.empty()) parts.push_back("probe " + a.probe_tensorboard);
  if (a.tensorboard_url) parts.push_back("tensorboard_url '" + *a.tensorboard_url + "'");
  if (a.outcome) parts.push_back(absl::StrCat("outcome ", AppStateName(*a.outcome)));
  if (a.done) parts.push_back("done");
  return absl::StrJoin(parts, "; ");
}

TaskId T(absl::string_view id) { return *TaskId::Parse(id); }

struct Row {
  absl::Duration at;              // since the start
  std::optional<JobEvent> event;  // none: a tick
  std::string actions;            // Describe() of what comes out
  std::string phases = "";        // "worker:0=RUNNING ps:0=STOPPING", checked after the row
};

JobTypeSpec Job(const std::string& name, int instances) {
  JobTypeSpec jt;
  jt.name = name;
  jt.instances = instances;
  return jt;
}

JobStateOptions Options(std::vector<JobTypeSpec> jobs) {
  JobStateOptions o;
  o.spec.command = "true";
  o.spec.job_types = std::move(jobs);
  o.spec.timeouts.registration = absl::Minutes(10);
  o.spec.timeouts.stop_grace = absl::Seconds(10);
  o.spec.timeouts.allocation = absl::Minutes(2);
  o.stop_margin = absl::Seconds(10);
  o.exit_cause_wait = absl::Seconds(5);
  o.jitter = [] { return 1.0; };
  o.verify_counts = true;  // every step checks the counts against every task
  return o;
}

// Runs the table against `state`, already started at kStart; reports the row that differs.
void RunTable(JobState& state, const std::vector<Row>& rows) {
  for (size_t i = 0; i < rows.size(); ++i) {
    const Row& r = rows[i];
    const absl::Time now = kStart + r.at;
    JobActions a = r.event ? state.On(*r.event, now) : state.Tick(now);
    EXPECT_EQ(Describe(a), r.actions) << "row " << i << " at +" << absl::FormatDuration(r.at);
    EXPECT_EQ(state.refused_phase_changes(), 0) << "row " << i << ": an illegal phase change";
    for (absl::string_view p : absl::StrSplit(r.phases, ' ', absl::SkipEmpty())) {
      std::vector<std::string> kv = absl::StrSplit(p, '=');
      const TaskPhase* phase = state.PhaseOf(T(kv[0]));
      ASSERT_NE(phase, nullptr) << kv[0];
      EXPECT_EQ(TaskPhaseName(*phase), kv[1]) << "row " << i << ", " << kv[0];
    }
  }
}

// Every task allocated, registered and started, at `at`.
std::vector<Row> AllRunning(const std::vector<std::string>& ids, absl::Duration at) {
  std::vector<Row> rows;
  for (const std::string& id : ids) {
    rows.push_back({at, JobEvent::Allocated(T(id)), ""});
    rows.push_back(
        {at, JobEvent::Registered(T(id), "h:" + std::to_string(1000 + rows.size())), ""});
  }
  rows.push_back({at, JobEvent::Published(), ""});
  for (const std::string& id : ids) {
    rows.push_back({at, JobEvent::Started(T(id)), "", id + "=RUNNING"});
  }
  return rows;
}

std::vector<Row> Then(std::vector<Row> a, const std::vector<Row>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

TEST(JobStateTest, StartAsksForEveryContainerAndTheJobIsRunningFromThen) {
  JobState state(Options({Job("ps", 1), Job("worker", 2)}));
  EXPECT_EQ(state.Status(kStart).state, AppState::kAccepted);
  EXPECT_EQ(Describe(state.Start(kStart)), "request ps:0 worker:0 worker:1");
  ApplicationStatus s = state.Status(kStart);
  EXPECT_EQ(s.state, AppState::kRunning);
  EXPECT_EQ(s.pending, "3 \u00d7 <8192 MB, 1 vcore> (ps:0, worker:0-1 (2 tasks)) pending");
  EXPECT_EQ(state.NextWake(), kStart + absl::Minutes(2));  // the gang's deadline
}

// A step looks only at the tasks its events touched (a large launch has as many steps as tasks):
// the progress and the pending line follow every step, as a recount of every task would
// (verify_counts checks that at each call), and an unchanged pending line is not made again.
TEST(JobStateTest, ALaunchsCountsAndPendingLineFollowEveryStep) {
  JobState state(Options({Job("ps", 1), Job("worker", 1000)}));
  state.Start(kStart);
  for (int i = 0; i < 1000; ++i) {
    const absl::Time now = kStart + absl::Milliseconds(i);
    state.On(JobEvent::Allocated(TaskId{"worker", i}), now);
    if (i == 499) {
      EXPECT_EQ(state.Status(now).pending,
                "501 \u00d7 <8192 MB, 1 vcore> (ps:0, worker:500-999 (500 tasks)) pending");
    }
    state.On(JobEvent::Registered(TaskId{"worker", i}, absl::StrCat("h:", 2000 + i)), now);
  }
  const absl::Time now = kStart + absl::Seconds(1);
  ApplicationStatus s = state.Status(now);
  EXPECT_EQ(s.pending, "1 \u00d7 <8192 MB, 1 vcore> (ps:0) pending");
  EXPECT_EQ(s.progress["worker"].allocated, 1000);
  EXPECT_EQ(s.progress["worker"].registered, 1000);
  EXPECT_EQ(s.progress["ps"].allocated, 0);
  EXPECT_EQ(state.Status(now).pending, s.pending);  // from the kept line
  state.On(JobEvent::Allocated(T("ps:0")), now);
  state.On(JobEvent::Registered(T("ps:0"), "h:1"), now);
  state.On(JobEvent::Published(), now);
  EXPECT_EQ(state.Status(now).pending, "");
  for (int i = 0; i < 1000; ++i) state.On(JobEvent::Started(TaskId{"worker", i}), now);
  for (int i = 0; i < 1000; i += 2) state.On(JobEvent::Exited(TaskId{"worker", i}, 0), now);
  s = state.Status(now);
  EXPECT_EQ(s.progress["worker"].running, 500);
  EXPECT_EQ(s.progress["worker"].succeeded, 500);
  EXPECT_FALSE(state.outcome());
  for (int i = 1; i < 1000; i += 2) state.On(JobEvent::Exited(TaskId{"worker", i}, 0), now);
  EXPECT_EQ(state.outcome(), AppState::kSucceeded);
  EXPECT_EQ(state.refused_phase_changes(), 0);
}

// The pending line from runs of neighbours: allocations in any order split and join them (each
// step checked against the line made from every task, verify_counts), and a line too long says
// how many ranges it leaves out.
TEST(JobStateTest, ThePendingLineFollowsAllocationsInAnyOrder) {
  JobTypeSpec small = Job("ps", 3);
  small.resources.memory_mb = 2048;
  JobTypeSpec workers = Job("worker", 300);
  workers.task_resources[7].memory_mb = 16384;  // one task of the role asks for more
  JobState state(Options({small, workers, Job("evaluator", 2)}));
  state.Start(kStart);
  for (int i = 0; i < 300; i += 2) state.On(JobEvent::Allocated(TaskId{"worker", i}), kStart);
  state.On(JobEvent::Allocated(T("ps:1")), kStart);
  const std::string line = state.Status(kStart).pending;
  EXPECT_THAT(line, ::testing::StartsWith(
                        "2 \u00d7 <2048 MB, 1 vcore> (ps:0, ps:2), 151 \u00d7 <8192 MB, 1 vcore> "
                        "(worker:1, worker:3, worker:5, worker:9, "));
  EXPECT_THAT(line, ::testing::HasSubstr(", 1 \u00d7 <16384 MB, 1 vcore> (worker:7) pending"));
  EXPECT_THAT(line, ::testing::HasSubstr(", and 132 more), 1 \u00d7 <16384"));
  for (int i = 1; i < 300; i += 4) state.On(JobEvent::Allocated(TaskId{"worker", i}), kStart);
  for (int i = 3; i < 300; i += 4) state.On(JobEvent::Allocated(TaskId{"worker", i}), kStart);
  EXPECT_EQ(state.Status(kStart).pending,
            "2 \u00d7 <2048 MB, 1 vcore> (ps:0, ps:2), 2 \u00d7 <8192 MB, 1 vcore> "
            "(evaluator:0-1 (2 tasks)) pending");
  EXPECT_EQ(state.refused_phase_changes(), 0);
}

TEST(JobStateTest, TrackedTasksSucceedingEndTheJobAndStopTheUntrackedOnes) {
  JobState state(Options({Job("ps", 1), Job("worker", 2)}));
  state.Start(kStart);
  RunTable(state,
           Then(AllRunning({"ps:0", "worker:0", "worker:1"}, absl::Seconds(1)),
                {
                    {absl::Seconds(5), JobEvent::Exited(T("worker:0"), 0), "", "worker:0=EXITED"},
                    {absl::Seconds(5), JobEvent::Completed(T("worker:0"), 0), ""},
                    {absl::Seconds(6), JobEvent::Exited(T("worker:1"), 0),
                     "kill ps:0; outcome SUCCEEDED", "ps:0=STOPPING worker:1=EXITED"},
                    // The outcome shows once every container has ended.
                    {absl::Seconds(6), JobEvent::Completed(T("worker:1"), 0), ""},
                    {absl::Seconds(7), JobEvent::Completed(T("ps:0"), 143), "done", "ps:0=STOPPED"},
                }));
  ApplicationStatus s = state.Status(kStart + absl::Seconds(7));
  EXPECT_EQ(s.state, AppState::kSucceeded);
  EXPECT_EQ(s.progress["worker"].succeeded, 2);
  EXPECT_EQ(s.progress["ps"].failed, 0);  // stopped, not failed
  EXPECT_EQ(s.progress["ps"].registered, 1);
}

// The AM handles the events queued in a step with Handle() each and one Tick() after them: the
// job goes as it does with a Tick after every event (On), and Handle() leaves the deadlines'
// work (here: stopping the untracked task once the outcome is decided) to that Tick.
TEST(JobStateTest, AStepsEventsHandledWithOneTickEndAsOneByOne) {
  JobState one_by_one(Options({Job("ps", 1), Job("worker", 2)}));
  JobState batched(Options({Job("ps", 1), Job("worker", 2)}));
  one_by_one.Start(kStart);
  batched.Start(kStart);
  std::vector<JobEvent> running;
  for (const char* id : {"ps:0", "worker:0", "worker:1"}) {
    running.push_back(JobEvent::Allocated(T(id)));
    running.push_back(JobEvent::Registered(T(id), "h:" + std::to_string(running.size())));
  }
  running.push_back(JobEvent::Published());
  for (const char* id : {"ps:0", "worker:0", "worker:1"}) {
    running.push_back(JobEvent::Started(T(id)));
  }
  const std::vector<std::vector<JobEvent>> steps = {
      running,
      {JobEvent::Exited(T("worker:0"), 0), JobEvent::Completed(T("worker:0"), 0),
       JobEvent::Exited(T("worker:1"), 0), JobEvent::Completed(T("worker:1"), 0)},
      {JobEvent::Completed(T("ps:0"), 143)},
  };
  const std::vector<std::string> want = {"", "kill ps:0; outcome SUCCEEDED", "done"};
  for (size_t i = 0; i < steps.size(); ++i) {
    const absl::Time now = kStart + absl::Seconds(static_cast<int>(i) + 1);
    JobActions a, b;
    for (const JobEvent& e : steps[i]) {
      a.Append(one_by_one.On(e, now));
      b.Append(batched.Handle(e, now));
    }
    if (i == 1) {
      EXPECT_EQ(Describe(b), "outcome SUCCEEDED");  // no stop before the Tick
    }
    b.Append(batched.Tick(now));
    EXPECT_EQ(Describe(a), want[i]) << "step " << i;
    EXPECT_EQ(Describe(b), want[i]) << "step " << i;
  }
  const absl::Time end = kStart + absl::Seconds(3);
  EXPECT_EQ(batched.Status(end).state, one_by_one.Status(end).state);
  EXPECT_EQ(batched.Status(end).progress["worker"].succeeded, 2);
  EXPECT_EQ(batched.refused_phase_changes(), 0);
}

TEST(JobStateTest, TheOutcomeShowsOnlyOnceEveryContainerEnded) {
  JobState state(Options({Job("ps", 1), Job("worker", 1)}));
  state.Start(kStart);
  RunTable(state, Then(AllRunning({"ps:0", "worker:0"}, absl::Seconds(1)),
                       {{absl::Seconds(2), JobEvent::Exited(T("worker:0"), 0),
                         "kill ps:0; outcome SUCCEEDED"}}));
  EXPECT_EQ(state.Status(kStart + absl::Seconds(2)).state, AppState::kRunning);
  EXPECT_EQ(state.NextWake(), kStart + absl::Seconds(22));  // stop grace + margin
  // ps:0 never stops: the job is over without it at the stop deadline.
  RunTable(state,
           {{absl::Seconds(21), std::nullopt, ""}, {absl::Seconds(22), std::nullopt, "done"}});
  state.BackendStopped();
  EXPECT_EQ(state.Status(kStart + absl::Seconds(22)).state, AppState::kSucceeded);
}

TEST(JobStateTest, FailuresThatEndTheJob) {
  struct Case {
    std::string name;
    std::vector<Row> rows;
    std::string diagnostics;
  };
  const std::vector<Row> running = AllRunning({"ps:0", "worker:0"}, absl::Seconds(1));
  const std::vector<Case> cases = {
      {"a tracked task fails",
       Then(running, {{absl::Seconds(3), JobEvent::Exited(T("worker:0"), 3, "Traceback\nboom"),
                       "kill ps:0; outcome FAILED", "worker:0=EXITED ps:0=STOPPING"}}),
       "worker:0 failed with exit code 3; last lines of its stderr:\nTraceback\nboom"},
      {"an untracked task dies first",
       Then(running,
            {{absl::Seconds(3), JobEvent::Exited(T("ps:0"), 1), "kill worker:0; outcome FAILED"}}),
       "ps:0 (untracked) died with exit code 1 before the tracked tasks finished"},
      {"a task ends before registering",
       {{absl::Seconds(1), JobEvent::Allocated(T("worker:0")), ""},
        {absl::Seconds(2), JobEvent::Exited(T("worker:0"), 0), "kill ps:0; outcome FAILED"}},
       "worker:0 exited with code 0 before registering"},
      {"a container ends without an exit report",
       Then(running, {{absl::Seconds(3), JobEvent::Completed(T("worker:0"), 137, "OOM"),
                       "kill ps:0; outcome FAILED"}}),
       "worker:0 failed with exit code 137 (its container ended without an exit report); the "
       "resource manager says:\nOOM"},
      {"a container cannot be launched",
       {{absl::Seconds(1), JobEvent::LaunchFailed(T("worker:0"), "no such image"),
         "kill ps:0; outcome FAILED"}},
       "could not launch worker:0: no such image"},
      {"the backend fails",
       {{absl::Seconds(1), JobEvent::BackendFailed("scheduler unreachable"),
         "kill ps:0 worker:0; outcome FAILED"}},
       "the resource manager failed: scheduler unreachable"},
      {"the registration deadline passes",
       {{absl::Seconds(1), JobEvent::Allocated(T("ps:0")), ""},
        {absl::Minutes(10), JobEvent::RegistrationTimeout({"ps:0", "worker:0"}),
         "kill ps:0 worker:0; outcome FAILED"}},
       "registration deadline of 10m passed; never registered: ps:0, worker:0; containers never "
       "allocated: 1 \u00d7 <8192 MB, 1 vcore> (worker:0) pending"},
      {"a task falls silent",
       Then(running, {{absl::Seconds(70), JobEvent::HeartbeatTimeout(T("worker:0")),
                       "kill ps:0 worker:0; outcome FAILED"}}),
       "worker:0 sent no heartbeat for 1m"},
      {"the client kills it",
       Then(running, {{absl::Seconds(3), JobEvent::Kill("killed by the client: enough"),
                       "kill ps:0 worker:0; outcome KILLED"}}),
       "killed by the client: enough"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    JobState state(Options({Job("ps", 1), Job("worker", 1)}));
    state.Start(kStart);
    RunTable(state, c.rows);
    EXPECT_EQ(state.final_diagnostics(), c.diagnostics);
    EXPECT_TRUE(state.job_restart_allowed());
  }
}

TEST(JobStateTest, TheJobTimeoutFailsTheJob) {
  JobStateOptions o = Options({Job("worker", 1)});
  o.spec.timeouts.job = absl::Minutes(30);
  JobState state(o);
  state.Start(kStart);
  EXPECT_EQ(state.NextWake(), kStart + absl::Minutes(2));
  RunTable(state, Then(AllRunning({"worker:0"}, absl::Seconds(1)),
                       {{absl::Minutes(29), std::nullopt, ""},
                        {absl::Minutes(30), std::nullopt, "kill worker:0; outcome FAILED"}}));
  EXPECT_EQ(state.final_diagnostics(), "the job timeout of 30m passed");
}

TEST(JobStateTest, AnEvaluatorExitingZeroDoesNotEndTheJob) {
  JobState state(Options({Job("worker", 1), Job("evaluator", 1)}));
  state.Start(kStart);
  RunTable(
      state,
      Then(AllRunning({"worker:0", "evaluator:0"}, absl::Seconds(1)),
           {{absl::Seconds(3), JobEvent::Exited(T("evaluator:0"), 0), "", "evaluator:0=EXITED"},
            {absl::Seconds(4), JobEvent::Exited(T("worker:0"), 0), "outcome SUCCEEDED"}}));
}

TEST(JobStateTest, ASigtermEndWaitsForTheContainerToSayWhy) {
  struct Case {
    std::string name;
    Row then;
    std::string diagnostics_part;
  };
  const std::vector<Case> cases = {
      {"preempted",
       {absl::Seconds(6), JobEvent::Completed(T("worker:0"), -102), "outcome FAILED; done"},
       "worker:0 failed with exit code -102"},
      {"the container says nothing new",
       {absl::Seconds(6), JobEvent::Completed(T("worker:0"), 143), "outcome FAILED; done"},
       "worker:0 failed with exit code 143; last lines"},
      {"no word within exit_cause_wait",
       {absl::Seconds(7), std::nullopt, "outcome FAILED"},
       "worker:0 failed with exit code 143; last lines"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    JobState state(Options({Job("worker", 1)}));
    state.Start(kStart);
    RunTable(state, Then(AllRunning({"worker:0"}, absl::Seconds(1)),
                         {{absl::Seconds(2), JobEvent::Exited(T("worker:0"), 143, "Terminated"), "",
                           "worker:0=EXIT_HELD"},
                          {absl::Seconds(6), std::nullopt, "", "worker:0=EXIT_HELD"},
                          c.then}));
    EXPECT_THAT(state.final_diagnostics(), HasSubstr(c.diagnostics_part));
  }
}

TEST(JobStateTest, TensorBoardIsASidecarThatNeverDecides) {
  JobStateOptions o = Options({Job("worker", 1)});
  o.spec.tensorboard = true;
  o.spec.output_path = "/out";
  JobState state(o);
  EXPECT_EQ(Describe(state.Start(kStart)), "request worker:0 tensorboard:0");
  RunTable(state,
           {
               {absl::Seconds(1), JobEvent::Registered(T("tensorboard:0"), "nm1:6006"),
                "probe nm1:6006"},
               {absl::Seconds(1), JobEvent::Started(T("tensorboard:0")), ""},
               {absl::Seconds(2), JobEvent::TensorBoardListening("http://nm1:6006/"),
                "tensorboard_url 'http://nm1:6006/'"},
               {absl::Seconds(3), JobEvent::Restarted(T("tensorboard:0"), 1, 1, "Errno 98"), ""},
               {absl::Seconds(4), JobEvent::Exited(T("tensorboard:0"), 1, "Errno 98"),
                "tensorboard_url ''", "tensorboard:0=EXITED"},
               // A late probe result changes nothing: the tracking URL stays the AM's page.
               {absl::Seconds(5), JobEvent::TensorBoardListening("http://nm1:6006/"), ""},
               {absl::Seconds(5), JobEvent::Registered(T("worker:0"), "nm2:1"), ""},
               {absl::Seconds(5), JobEvent::Started(T("worker:0")), ""},
               {absl::Seconds(9), JobEvent::Exited(T("worker:0"), 0), "outcome SUCCEEDED"},
           });
  EXPECT_THAT(state.final_diagnostics(),
              HasSubstr("warning: tensorboard:0 died with exit code 1 after 1 restarts"));
  ApplicationStatus s = state.Status(kStart + absl::Seconds(9));
  EXPECT_EQ(s.progress["tensorboard"].restarts, 1);
  EXPECT_EQ(s.tensorboard_url, "");
}

TEST(JobStateTest, ATensorBoardThatDiesUnregisteredOrCannotLaunchIsExcused) {
  JobStateOptions o = Options({Job("worker", 1)});
  o.spec.tensorboard = true;
  o.spec.output_path = "/out";
  for (const JobEvent& death :
       {JobEvent::Exited(T("tensorboard:0"), 127, "tensorboard: command not found"),
        JobEvent::LaunchFailed(T("tensorboard:0"), "no container")}) {
    JobState state(o);
    state.Start(kStart);
    RunTable(state, {{absl::Seconds(1), death, "excuse tensorboard:0", "tensorboard:0=EXITED"}});
    EXPECT_EQ(state.outcome(), std::nullopt);
    EXPECT_THAT(state.Status(kStart).diagnostics, HasSubstr("training goes on without it"));
  }
}

JobTypeSpec WithRestart(JobTypeSpec jt, RestartPolicy policy, RestartScope scope, int max,
                        AddressChange on_change = AddressChange::kFail) {
  RestartSpec r;
  r.policy = policy;
  r.scope = scope;
  r.max_restarts = max;
  r.backoff = absl::Seconds(10);
  r.on_address_change = on_change;
  jt.restart = r;
  return jt;
}

TEST(JobStateTest, ATaskScopeRestartRelaunchesTheTaskAtItsOldAddressAfterItsBackoff) {
  JobState state(
      Options({WithRestart(Job("worker", 2), RestartPolicy::kOnFailure, RestartScope::kTask, 2)}));
  state.Start(kStart);
  RunTable(
      state,
      Then(AllRunning({"worker:0", "worker:1"}, absl::Seconds(1)),
           {
               {absl::Seconds(10), JobEvent::Exited(T("worker:1"), 1), "", "worker:1=RESTARTING"},
               // The relaunch waits for the old container's end, then for the backoff.
               {absl::Seconds(15), JobEvent::Completed(T("worker:1"), 1), ""},
               {absl::Seconds(19), std::nullopt, ""},
               {absl::Seconds(20), std::nullopt, "reopen worker:1; relaunch worker:1@h:1003",
                "worker:1=WAITING"},
               {absl::Seconds(21), JobEvent::Allocated(T("worker:1")), ""},
               {absl::Seconds(22), JobEvent::Registered(T("worker:1"), "h:1003"), "",
                "worker:1=REGISTERED"},
               {absl::Seconds(22), JobEvent::Started(T("worker:1")), ""},
               {absl::Seconds(30), JobEvent::Exited(T("worker:0"), 0), ""},
               {absl::Seconds(31), JobEvent::Exited(T("worker:1"), 0), "outcome SUCCEEDED"},
           }));
  EXPECT_THAT(state.final_diagnostics(),
              HasSubstr("worker:1: exit code 1; task restart 1 of 2 after 10s; back at h:1003"));
}

TEST(JobStateTest, ARelaunchedTaskBackAtANewAddressDoesWhatItsPolicySays) {
  struct Case {
    AddressChange on_change;
    std::string actions;
    bool restart_allowed;
  };
  for (const Case& c : std::vector<Case>{
           {AddressChange::kAccept, "", true},
           {AddressChange::kFail, "kill worker:0 worker:1; outcome FAILED", false},
           {AddressChange::kRestartJob, "kill worker:0 worker:1; outcome FAILED", true}}) {
    SCOPED_TRACE(AddressChangeName(c.on_change));
    JobState state(Options({WithRestart(Job("worker", 2), RestartPolicy::kOnFailure,
                                        RestartScope::kTask, 2, c.on_change)}));
    state.Start(kStart);
    RunTable(
        state,
        Then(AllRunning({"worker:0", "worker:1"}, absl::Seconds(1)),
             {
                 {absl::Seconds(2), JobEvent::Exited(T("worker:1"), 1), ""},
                 {absl::Seconds(2), JobEvent::Completed(T("worker:1"), 1), ""},
                 {absl::Seconds(12), std::nullopt, "reopen worker:1; relaunch worker:1@h:1003"},
                 {absl::Seconds(13), JobEvent::Allocated(T("worker:1")), ""},
                 {absl::Seconds(14), JobEvent::Registered(T("worker:1"), "h2:77"), c.actions},
             }));
    EXPECT_EQ(state.job_restart_allowed(), c.restart_allowed);
  }
}

TEST(JobStateTest, ARelaunchedTaskThatNeverRegistersFailsAtTheDeadline) {
  JobState state(
      Options({WithRestart(Job("worker", 1), RestartPolicy::kOnFailure, RestartScope::kTask, 2)}));
  state.Start(kStart);
  RunTable(state,
           Then(AllRunning({"worker:0"}, absl::Seconds(1)),
                {
                    {absl::Seconds(2), JobEvent::Exited(T("worker:0"), 1), ""},
                    {absl::Seconds(2), JobEvent::Completed(T("worker:0"), 1), ""},
                    {absl::Seconds(12), std::nullopt, "reopen worker:0; relaunch worker:0@h:1001"},
                    {absl::Minutes(10) + absl::Seconds(11), std::nullopt, ""},
                    {absl::Minutes(10) + absl::Seconds(12), std::nullopt,
                     "kill worker:0; outcome FAILED"},
                }));
  EXPECT_THAT(state.final_diagnostics(),
              HasSubstr("worker:0 was relaunched but did not register within 10m"));
}

TEST(JobStateTest, RestartPoliciesDecideWhatAFailureMeans) {
  struct Case {
    std::string name;
    JobTypeSpec job;
    int attempt;
    int code;
    std::string actions;
    std::string diagnostics_part;
    bool restart_allowed;
  };
  const std::vector<Case> cases = {
      {"exit-code: a code below 128 is final",
       WithRestart(Job("worker", 1), RestartPolicy::kExitCode, RestartScope::kTask, 3), 1, 1,
       "outcome FAILED; done", "exit code 1 is final; no restart", false},
      {"exit-code: a lost node is retried",
       WithRestart(Job("worker", 1), RestartPolicy::kExitCode, RestartScope::kTask, 3), 1, -100, "",
       "", true},
      {"never", WithRestart(Job("worker", 1), RestartPolicy::kNever, RestartScope::kTask, 3), 1, 1,
       "outcome FAILED; done", "is final; no restart", false},
      {"job scope: a new attempt",
       WithRestart(Job("worker", 1), RestartPolicy::kOnFailure, RestartScope::kJob, 2), 1, 1,
       "outcome FAILED; done", "the whole job restarts as attempt 2", true},
      {"job scope: attempts used up",
       WithRestart(Job("worker", 1), RestartPolicy::kOnFailure, RestartScope::kJob, 2), 3, 1,
       "outcome FAILED; done", "the job was restarted 2 times already, max_restarts 2", false},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    JobStateOptions o = Options({c.job});
    o.attempt = c.attempt;
    JobState state(o);
    state.Start(kStart);
    RunTable(state,
             Then(AllRunning({"worker:0"}, absl::Seconds(1)),
                  {{absl::Seconds(2), JobEvent::Completed(T("worker:0"), c.code), c.actions}}));
    EXPECT_THAT(state.final_diagnostics(), HasSubstr(c.diagnostics_part));
    EXPECT_EQ(state.job_restart_allowed(), c.restart_allowed);
  }
}

TEST(JobStateTest, TaskRestartsUsedUpFailTheJob) {
  JobState state(
      Options({WithRestart(Job("worker", 1), RestartPolicy::kOnFailure, RestartScope::kTask, 1)}));
  state.Start(kStart);
  RunTable(state,
           Then(AllRunning({"worker:0"}, absl::Seconds(1)),
                {
                    {absl::Seconds(2), JobEvent::Completed(T("worker:0"), 1), ""},
                    {absl::Seconds(12), std::nullopt, "reopen worker:0; relaunch worker:0@h:1001"},
                    {absl::Seconds(13), JobEvent::Registered(T("worker:0"), "h:1001"), ""},
                    {absl::Seconds(14), JobEvent::Exited(T("worker:0"), 1), "outcome FAILED"},
                }));
  EXPECT_THAT(state.final_diagnostics(), HasSubstr("restarted 1 times already, max_restarts 1"));
}

TEST(JobStateTest, APartialGangIsReleasedAndAskedForAgain) {
  JobState state(Options({Job("worker", 2)}));
  state.Start(kStart);
  RunTable(state,
           {
               {absl::Seconds(1), JobEvent::Allocated(T("worker:0")), "", "worker:0=ALLOCATED"},
               {absl::Seconds(2), JobEvent::Registered(T("worker:0"), "h:1"), ""},
               {absl::Minutes(2), std::nullopt, "kill worker:0 worker:1",
                "worker:0=RELEASED worker:1=RELEASED"},
               // Events of released tasks change nothing.
               {absl::Minutes(2), JobEvent::Exited(T("worker:0"), 143), "", "worker:0=RELEASED"},
               {absl::Minutes(2), JobEvent::Completed(T("worker:0"), 143), ""},
               // The backoff (5 s) passed, but worker:1's request is not withdrawn yet.
               {absl::Minutes(2) + absl::Seconds(5), std::nullopt, ""},
               {absl::Minutes(2) + absl::Seconds(6), JobEvent::Completed(T("worker:1"), 0),
                "reopen worker:0 worker:1; request worker:0 worker:1",
                "worker:0=WAITING worker:1=WAITING"},
               {absl::Minutes(2) + absl::Seconds(7), JobEvent::Allocated(T("worker:0")), ""},
               {absl::Minutes(2) + absl::Seconds(7), JobEvent::Allocated(T("worker:1")), ""},
               // Whole this time: no more releases.
               {absl::Minutes(5), std::nullopt, ""},
           });
  EXPECT_EQ(state.Status(kStart + absl::Minutes(5)).pending, "");
}

TEST(JobStateTest, TheGangsPendingLineSaysWhatWasReleasedAndWhen) {
  JobStateOptions o = Options({Job("worker", 2)});
  o.headroom = [] { return std::string("<1024 MB, 1 vcore>"); };
  JobState state(o);
  state.Start(kStart);
  RunTable(state, {{absl::Seconds(1), JobEvent::Allocated(T("worker:0")), ""},
                   {absl::Minutes(2), std::nullopt, "kill worker:0 worker:1"}});
  EXPECT_EQ(state.Status(kStart + absl::Minutes(2) + absl::Seconds(1)).pending,
            "1 \u00d7 <8192 MB, 1 vcore> (worker:1) pending; queue headroom <1024 MB, 1 vcore>; "
            "released everything after 2m without a whole gang (all-or-nothing), asking again "
            "in 4s");
}

TEST(JobStateTest, InClientModeTheClientDecidesAndMustStart) {
  JobStateOptions o = Options({Job("worker", 1)});
  o.spec.client_mode = true;
  {
    JobState state(o);
    EXPECT_EQ(Describe(state.Start(kStart)), "request worker:0");
    RunTable(state,
             Then(AllRunning({"worker:0"}, absl::Seconds(1)),
                  {{absl::Seconds(2), JobEvent::Started(T("client:0")), ""},
                   {absl::Seconds(3), JobEvent::Exited(T("worker:0"), 0), ""},
                   {absl::Seconds(4), JobEvent::Exited(T("client:0"), 0), "outcome SUCCEEDED"}}));
  }
  {
    JobState state(o);
    state.Start(kStart);
    RunTable(state, Then(AllRunning({"worker:0"}, absl::Seconds(1)),
                         {{absl::Minutes(10), std::nullopt, ""},
                          {absl::Minutes(10) + absl::Seconds(1), std::nullopt,
                           "kill worker:0; outcome FAILED"}}));
    EXPECT_THAT(state.final_diagnostics(), HasSubstr("is `ytf-submit --client` still running?"));
  }
}

TEST(JobStateTest, StoppedTasksAndLaunchFailuresAfterTheOutcomeAreNoNews) {
  JobState state(Options({Job("ps", 1), Job("worker", 1), Job("evaluator", 1)}));
  state.Start(kStart);
  RunTable(
      state,
      {
          {absl::Seconds(1), JobEvent::Kill("killed"),
           "kill ps:0 worker:0 evaluator:0; outcome KILLED", "ps:0=STOPPING worker:0=STOPPING"},
          {absl::Seconds(2), JobEvent::LaunchFailed(T("ps:0"), "x"), "", "ps:0=STOPPED"},
          {absl::Seconds(2), JobEvent::Exited(T("worker:0"), 1), "", "worker:0=STOPPED"},
          {absl::Seconds(2), JobEvent::Completed(T("worker:0"), 1), ""},
          {absl::Seconds(3), JobEvent::Kill("again"), ""},
          {absl::Seconds(3), JobEvent::Completed(T("evaluator:0"), 0), "done"},
      });
  EXPECT_EQ(state.final_diagnostics(), "killed");
}

TEST(JobStateTest, TheStatusPageLinesAndPublicDiagnosticsQuoteNoStderr) {
  JobState state(Options({Job("worker", 1)}));
  state.Start(kStart);
  RunTable(state, Then(AllRunning({"worker:0"}, absl::Seconds(1)),
                       {{absl::Seconds(2), JobEvent::Exited(T("worker:0"), 2, "token=abc"),
                         "outcome FAILED"}}));
  ApplicationStatus s = state.Status(kStart);
  EXPECT_THAT(s.diagnostics, HasSubstr("token=abc"));
  EXPECT_THAT(state.PublicDiagnostics(s.diagnostics), Not(HasSubstr("token=abc")));
  EXPECT_THAT(state.TaskLines(), ::testing::ElementsAre(HasSubstr("EXITED 2")));
}

TEST(JobStateTest, LogLinesAreHandedOutNotWritten) {
  JobState state(Options({Job("worker", 1)}));
  state.Start(kStart);
  JobActions a = state.On(JobEvent::Registered(T("worker:0"), "h:1"), kStart);
  EXPECT_THAT(a.log.Texts(), ::testing::ElementsAre("worker:0 registered at h:1"));
}

TEST(TaskIdTest, ParsesOnlyJobColonIndex) {
  EXPECT_EQ(TaskId::Parse("worker:12"), (TaskId{"worker", 12}));
  EXPECT_EQ(TaskId::Parse("a:b:3"), (TaskId{"a:b", 3}));
  for (absl::string_view bad : {"worker", ":1", "worker:", "worker:-1", "worker:x"}) {
    EXPECT_EQ(TaskId::Parse(bad), std::nullopt) << bad;
  }
  EXPECT_LT((TaskId{"ps", 9}), (TaskId{"worker", 0}));
}

JobTypeSpec After(JobTypeSpec jt, std::string role, DependencyCondition when,
                  absl::Duration timeout = absl::Minutes(30)) {
  jt.depends_on.push_back({std::move(role), when, timeout});
  return jt;
}

TEST(JobStateDependenciesTest, ARoleAfterAFinishedOneIsAskedForAndAdmittedOnlyThen) {
  JobState state(
      Options({Job("prep", 1), After(Job("worker", 2), "prep", DependencyCondition::kFinished)}));
  EXPECT_EQ(Describe(state.Start(kStart)), "request prep:0");
  EXPECT_EQ(state.Status(kStart).pending,
            "1 \u00d7 <8192 MB, 1 vcore> (prep:0) pending; worker waits for prep to be finished");
  RunTable(state,
           Then(AllRunning({"prep:0"}, absl::Seconds(1)),
                {
                    {absl::Seconds(2), std::nullopt, "", "worker:0=BLOCKED worker:1=BLOCKED"},
                    // prep succeeding is no success of the job: the worker has yet to run.
                    {absl::Seconds(9), JobEvent::Exited(T("prep:0"), 0),
                     "admit worker; request worker:0 worker:1", "prep:0=EXITED worker:0=WAITING"},
                    {absl::Seconds(10), JobEvent::Completed(T("prep:0"), 0), ""},
                }));
  EXPECT_EQ(state.Status(kStart + absl::Seconds(10)).pending,
            "2 \u00d7 <8192 MB, 1 vcore> (worker:0-1 (2 tasks)) pending");
  RunTable(state,
           Then(AllRunning({"worker:0", "worker:1"}, absl::Seconds(20)),
                {
                    {absl::Seconds(30), JobEvent::Exited(T("worker:0"), 0), ""},
                    {absl::Seconds(31), JobEvent::Exited(T("worker:1"), 0), "outcome SUCCEEDED"},
                }));
}

// A blocked task has no incarnation: nothing about one (a stale report) moves it, as the doc's
// table of allowed phase changes says (no BLOCKED -> REGISTERED, RUNNING, EXITED, ...).
TEST(JobStateDependenciesTest, EventsAboutABlockedTaskLeaveItBlocked) {
  JobState state(
      Options({Job("prep", 1), After(Job("worker", 1), "prep", DependencyCondition::kFinished)}));
  EXPECT_EQ(Describe(state.Start(kStart)), "request prep:0");
  RunTable(
      state,
      {
          {absl::Seconds(1), JobEvent::Allocated(T("worker:0")), "", "worker:0=BLOCKED"},
          {absl::Seconds(1), JobEvent::Registered(T("worker:0"), "h:1"), "", "worker:0=BLOCKED"},
          {absl::Seconds(1), JobEvent::Started(T("worker:0")), "", "worker:0=BLOCKED"},
          {absl::Seconds(1), JobEvent::Exited(T("worker:0"), 143), "", "worker:0=BLOCKED"},
          {absl::Seconds(1), JobEvent::LaunchFailed(T("worker:0"), "gone"), "", "worker:0=BLOCKED"},
          {absl::Seconds(1), JobEvent::Completed(T("worker:0"), 1), "",
           "worker:0=BLOCKED prep:0=WAITING"},
      });
}

TEST(JobStateDependenciesTest, ALaterRoundMustRegisterInTime) {
  JobState state(
      Options({Job("prep", 1), After(Job("worker", 1), "prep", DependencyCondition::kFinished)}));
  state.Start(kStart);
  RunTable(state, Then(AllRunning({"prep:0"}, absl::Seconds(1)),
                       {
                           {absl::Seconds(9), JobEvent::Exited(T("prep:0"), 0),
                            "admit worker; request worker:0"},
                           {absl::Seconds(10), JobEvent::Completed(T("prep:0"), 0), ""},
                           {absl::Seconds(9) + absl::Minutes(10), std::nullopt,
                            "kill worker:0; outcome FAILED"},
                       }));
  EXPECT_EQ(state.final_diagnostics(),
            "worker:0 joined later (depends_on) but did not register within 10m");
}

TEST(JobStateDependenciesTest, WaitingPastTheTimeoutFailsTheJobNamingBothRoles) {
  JobState state(
      Options({Job("prep", 2),
               After(Job("worker", 1), "prep", DependencyCondition::kFinished, absl::Minutes(5))}));
  state.Start(kStart);
  EXPECT_EQ(state.NextWake(), kStart + absl::Minutes(2));  // the gang's deadline first
  RunTable(state, Then(AllRunning({"prep:0", "prep:1"}, absl::Seconds(1)),
                       {
                           {absl::Seconds(30), JobEvent::Exited(T("prep:0"), 0), ""},
                       }));
  EXPECT_EQ(state.NextWake(), kStart + absl::Minutes(5));
  RunTable(state, {{absl::Minutes(5), std::nullopt, "kill prep:1; outcome FAILED"}});
  EXPECT_EQ(state.final_diagnostics(),
            "worker waited longer than 5m for prep to be finished (jobs.worker.depends_on); 1 of "
            "2 prep tasks are not");
}

TEST(JobStateDependenciesTest, ARegisteredDependencyOrdersTheRequestsOfOneRound) {
  JobState state(
      Options({Job("ps", 1), After(Job("worker", 1), "ps", DependencyCondition::kRegistered)}));
  EXPECT_EQ(Describe(state.Start(kStart)), "request ps:0");
  RunTable(state, {
                      {absl::Seconds(1), JobEvent::Allocated(T("ps:0")), ""},
                      {absl::Seconds(2), JobEvent::Registered(T("ps:0"), "h:1"), "request worker:0",
                       "worker:0=WAITING"},
                      {absl::Seconds(3), JobEvent::Allocated(T("worker:0")), ""},
                      {absl::Seconds(4), JobEvent::Registered(T("worker:0"), "h:2"), ""},
                      {absl::Seconds(4), JobEvent::Published(), ""},
                  });
}

TEST(JobStateDependenciesTest, ARunningDependencyAdmitsTheNextRoundOnceEveryTaskRuns) {
  JobState state(Options(
      {Job("server", 2), After(Job("worker", 1), "server", DependencyCondition::kRunning)}));
  state.Start(kStart);
  std::vector<Row> rows = AllRunning({"server:0", "server:1"}, absl::Seconds(1));
  rows.back().actions = "admit worker; request worker:0";  // the second server's start
  RunTable(state, rows);
}

TEST(JobStateLingerTest, AnEvaluatorMayFinishAfterTheChiefAndIsStoppedAfterItsLinger) {
  JobTypeSpec evaluator = Job("evaluator", 1);
  evaluator.linger = absl::Minutes(10);
  JobState state(Options({Job("chief", 1), Job("ps", 1), evaluator}));
  state.Start(kStart);
  RunTable(
      state,
      Then(AllRunning({"chief:0", "ps:0", "evaluator:0"}, absl::Seconds(1)),
           {
               // ps stops at once; the evaluator may run on.
               {absl::Minutes(1), JobEvent::Exited(T("chief:0"), 0), "kill ps:0",
                "ps:0=STOPPING evaluator:0=RUNNING"},
               {absl::Minutes(1), JobEvent::Exited(T("ps:0"), 143), "", "ps:0=STOPPED"},
               {absl::Minutes(5), std::nullopt, ""},
               {absl::Minutes(11), std::nullopt, "kill evaluator:0", "evaluator:0=STOPPING"},
               {absl::Minutes(11), JobEvent::Exited(T("evaluator:0"), 143), "outcome SUCCEEDED"},
           }));
  EXPECT_THAT(state.final_diagnostics(),
              HasSubstr("evaluator:0 still ran 10m after the tracked tasks finished; stopped "
                        "(jobs.evaluator.linger)"));
}

TEST(JobStateLingerTest, ALingeringTaskEndingByItselfEndsTheJobAndFailingFailsIt) {
  for (int code : {0, 1}) {
    JobTypeSpec evaluator = Job("evaluator", 1);
    evaluator.linger = absl::Minutes(10);
    JobState state(Options({Job("chief", 1), evaluator}));
    state.Start(kStart);
    RunTable(state, Then(AllRunning({"chief:0", "evaluator:0"}, absl::Seconds(1)),
                         {
                             {absl::Minutes(1), JobEvent::Exited(T("chief:0"), 0), ""},
                             {absl::Minutes(2), JobEvent::Exited(T("evaluator:0"), code),
                              code == 0 ? "outcome SUCCEEDED" : "outcome FAILED"},
                         }));
    if (code != 0) {
      EXPECT_THAT(state.final_diagnostics(),
                  HasSubstr("evaluator:0 (untracked) died with exit code 1 while lingering"));
    }
  }
}

// The rendezvous task runs: the elastic role (three tasks) is admitted and asked for.
std::vector<Row> RendezvousRuns() {
  std::vector<Row> rows = AllRunning({"rendezvous:0"}, absl::Seconds(1));
  rows.back().actions = "admit worker; request worker:0 worker:1 worker:2";
  return rows;
}

// worker:0 and worker:1 get containers, register and start; worker:2 waits.
std::vector<Row> TwoAgentsRun() {
  std::vector<Row> rows;
  for (const char* id : {"worker:0", "worker:1"}) {
    rows.push_back({absl::Seconds(5), JobEvent::Allocated(T(id)), ""});
    rows.push_back({absl::Seconds(6),
                    JobEvent::Registered(T(id), absl::StrCat("h", std::string(1, id[7]), ":100")),
                    ""});
    rows.push_back({absl::Seconds(7), JobEvent::Started(T(id)), ""});
  }
  return rows;
}

JobStateOptions ElasticOptions(int min, int max) {
  JobTypeSpec worker = Job("worker", max);
  worker.elastic = ElasticRange{min, max};
  JobStateOptions o = Options({worker});
  o.spec.framework = Framework::kPyTorch;
  o.spec = ExpandElastic(o.spec);
  return o;
}

TEST(JobStateElasticTest, AnElasticRoleStartsAfterItsRendezvousAndAbsorbsALoss) {
  JobState state(ElasticOptions(2, 3));
  EXPECT_EQ(Describe(state.Start(kStart)), "request rendezvous:0");
  RunTable(state, RendezvousRuns());
  // Two agents come up; the third container never does (the queue is full).
  RunTable(state, TwoAgentsRun());
  RunTable(
      state,
      {
          // No registration deadline holds them: the job trains with two.
          {absl::Minutes(20), std::nullopt, "", "worker:2=WAITING"},
          // A lost agent is asked for again, preferably where it ran.
          {absl::Minutes(21), JobEvent::Exited(T("worker:1"), 137), "", "worker:1=EXIT_HELD"},
          {absl::Minutes(21), JobEvent::Completed(T("worker:1"), -100), "", "worker:1=RESTARTING"},
          {absl::Minutes(21) + absl::Seconds(2), std::nullopt,
           "reopen worker:1; relaunch worker:1@:100", "worker:1=WAITING"},
          // Training ends with the agents running: the rest are no longer needed.
          {absl::Minutes(30), JobEvent::Exited(T("worker:0"), 0),
           "kill rendezvous:0 worker:1 worker:2; outcome SUCCEEDED"},
      });
  EXPECT_THAT(state.final_diagnostics(), HasSubstr("worker:1: exit status -100"));
}

TEST(JobStateElasticTest, FewerThanMinRegisteredInTimeFailsTheJob) {
  JobState state(ElasticOptions(2, 3));
  state.Start(kStart);
  RunTable(state, RendezvousRuns());
  RunTable(state, {
                      {absl::Seconds(5), JobEvent::Allocated(T("worker:0")), ""},
                      {absl::Seconds(6), JobEvent::Registered(T("worker:0"), "h0:100"), ""},
                      {absl::Seconds(1) + absl::Minutes(10), std::nullopt,
                       "kill rendezvous:0 worker:0 worker:1 worker:2; outcome FAILED"},
                  });
  EXPECT_THAT(state.final_diagnostics(),
              HasSubstr("only 1 of at least 2 worker tasks (elastic 2-3) registered within 10m"));
}

TEST(JobStateElasticTest, ScaleStopsTasksBeyondTheTargetAndAsksForThemAgainWithinIt) {
  JobState state(ElasticOptions(1, 3));
  state.Start(kStart);
  RunTable(state, RendezvousRuns());
  EXPECT_EQ(state.CheckScaleRequest("worker", 4).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(state.CheckScaleRequest("rendezvous", 1).code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(state.CheckScaleRequest("worker", 1).ok());
  RunTable(state, TwoAgentsRun());
  RunTable(state, {
                      // Down to 1: the running worker:1 is stopped, the pending worker:2 withdrawn.
                      {absl::Seconds(10), JobEvent::Scale("worker", 1), "kill worker:1 worker:2",
                       "worker:1=STOPPING worker:2=STOPPED"},
                  });
  // Counted until it has stopped (ytf scale --wait follows the role until then).
  EXPECT_EQ(state.Status(kStart).progress.at("worker").total, 2);
  RunTable(
      state,
      {
          {absl::Seconds(11), JobEvent::Exited(T("worker:1"), 143), "", "worker:1=STOPPED"},
          {absl::Seconds(11), JobEvent::Completed(T("worker:1"), -105), "", "worker:1=STOPPED"},
      });
  EXPECT_EQ(state.Status(kStart).progress.at("worker").total, 1);
  RunTable(state, {
                      // Up to 3: both are asked for afresh.
                      {absl::Seconds(20), JobEvent::Scale("worker", 3),
                       "reopen worker:1 worker:2; request worker:1 worker:2",
                       "worker:1=WAITING worker:2=WAITING"},
                      {absl::Seconds(30), JobEvent::Exited(T("worker:0"), 0),
                       "kill rendezvous:0 worker:1 worker:2; outcome SUCCEEDED"},
                  });
  EXPECT_EQ(state.Status(kStart).progress.at("worker").total, 3);
}

// Scaled down and up again before its rendezvous runs: the role is not admitted at the broker,
// which refuses a registration of its tasks (DEFERRED), so none of them is asked for early; the
// tasks scaled up again wait with their role.
TEST(JobStateElasticTest, AScaleUpBeforeTheRoleIsAskedForWaitsForTheRole) {
  JobState state(ElasticOptions(1, 3));
  EXPECT_EQ(Describe(state.Start(kStart)), "request rendezvous:0");
  RunTable(state,
           {
               {absl::Milliseconds(100), JobEvent::Scale("worker", 1), "kill worker:1 worker:2",
                "worker:0=BLOCKED worker:1=STOPPED worker:2=STOPPED"},
               {absl::Milliseconds(200), JobEvent::Scale("worker", 3), "",
                "worker:0=BLOCKED worker:1=BLOCKED worker:2=BLOCKED"},
           });
  RunTable(state, RendezvousRuns());
  EXPECT_EQ(state.Status(kStart).progress.at("worker").total, 3);

  // The same in a later attempt that starts scaled down.
  JobStateOptions o = ElasticOptions(1, 3);
  o.attempt = 2;
  o.scale_targets = {{"worker", 2}};
  JobState later(o);
  EXPECT_EQ(Describe(later.Start(kStart)), "request rendezvous:0");
  RunTable(later,
           {
               {absl::Milliseconds(100), JobEvent::Scale("worker", 3), "", "worker:2=BLOCKED"},
           });
  RunTable(later, RendezvousRuns());
}

// A later attempt of a job scaled down before its AM died: it never asks for the tasks beyond
// the target (they would grow the job back to its maximum), and a scale up still reaches them.
TEST(JobStateElasticTest, ALaterAttemptKeepsTheSizeTheJobWasScaledTo) {
  JobStateOptions o = ElasticOptions(1, 3);
  o.attempt = 2;
  o.scale_targets = {{"worker", 2}, {"rendezvous", 1}, {"nosuchrole", 1}};
  JobState state(o);
  EXPECT_EQ(Describe(state.Start(kStart)), "request rendezvous:0");
  std::vector<Row> rows = AllRunning({"rendezvous:0"}, absl::Seconds(1));
  rows.back().actions = "admit worker; request worker:0 worker:1";
  RunTable(state, rows);
  EXPECT_EQ(state.Status(kStart).progress.at("worker").total, 2);
  RunTable(state, TwoAgentsRun());
  RunTable(state, {
                      {absl::Seconds(20), JobEvent::Scale("worker", 3),
                       "reopen worker:2; request worker:2", "worker:2=WAITING"},
                  });
  EXPECT_EQ(state.Status(kStart).progress.at("worker").total, 3);

  // Out of range: ignored, the role at its full size.
  JobStateOptions bad = ElasticOptions(2, 3);
  bad.scale_targets = {{"worker", 1}};
  JobState full(bad);
  full.Start(kStart);
  std::vector<Row> all = AllRunning({"rendezvous:0"}, absl::Seconds(1));
  all.back().actions = "admit worker; request worker:0 worker:1 worker:2";
  RunTable(full, all);
}

TEST(JobStateSuspendTest, SuspendStopsUnfinishedTasksAndResumeAsksForThemAsOneGang) {
  JobStateOptions o = Options({Job("ps", 1), Job("worker", 2)});
  o.spec.timeouts.job = absl::Hours(1);
  JobState state(o);
  state.Start(kStart);
  EXPECT_EQ(state.CheckSuspendRequest(true).code(), absl::StatusCode::kFailedPrecondition);
  RunTable(state, Then(AllRunning({"ps:0", "worker:0", "worker:1"}, absl::Seconds(1)),
                       {{absl::Seconds(10), JobEvent::Exited(T("worker:1"), 0), ""},
                        {absl::Seconds(11), JobEvent::Completed(T("worker:1"), 0), ""}}));
  EXPECT_TRUE(state.CheckSuspendRequest(true).ok());
  RunTable(state,
           {
               // What has finished stays finished; the rest stops, without failure.
               {absl::Seconds(20), JobEvent::Suspend(), "reopen ps:0 worker:0; kill ps:0 worker:0",
                "ps:0=STOPPING worker:0=STOPPING worker:1=EXITED"},
               {absl::Seconds(21), JobEvent::Exited(T("ps:0"), 143), "", "ps:0=STOPPED"},
               {absl::Seconds(21), JobEvent::Completed(T("ps:0"), -105), ""},
               {absl::Seconds(22), JobEvent::Exited(T("worker:0"), 143), "", "worker:0=STOPPED"},
           });
  EXPECT_EQ(state.Status(kStart + absl::Seconds(22)).state, AppState::kRunning);  // stopping
  RunTable(state, {{absl::Seconds(23), JobEvent::Completed(T("worker:0"), -105), ""}});
  ApplicationStatus suspended = state.Status(kStart + absl::Minutes(5));
  EXPECT_EQ(suspended.state, AppState::kSuspended);
  EXPECT_EQ(suspended.suspended_since, kStart + absl::Seconds(23));
  EXPECT_EQ(suspended.progress.at("worker").total, 2);
  EXPECT_EQ(suspended.progress.at("worker").running, 0);
  EXPECT_EQ(suspended.progress.at("worker").succeeded, 1);
  // Suspended, the job timeout does not run: nothing wakes the job but an event.
  EXPECT_EQ(state.NextWake(), absl::InfiniteFuture());
  EXPECT_EQ(Describe(state.Tick(kStart + absl::Hours(2))), "");
  RunTable(state,
           {
               {absl::Hours(2), JobEvent::Resume(), "rejoin ps:0 worker:0; request ps:0 worker:0",
                "ps:0=WAITING worker:0=WAITING worker:1=EXITED"},
           });
  EXPECT_EQ(state.Status(kStart + absl::Hours(2)).state, AppState::kRunning);
  // The time suspended (2h - 20s) is added to the job's deadline.
  const absl::Duration deadline = absl::Hours(3) - absl::Seconds(20);
  RunTable(state, Then(AllRunning({"ps:0", "worker:0"}, absl::Hours(2) + absl::Seconds(30)),
                       {
                           {deadline - absl::Seconds(1), std::nullopt, ""},
                           {deadline, std::nullopt, "kill ps:0 worker:0; outcome FAILED"},
                       }));
  EXPECT_THAT(state.final_diagnostics(), HasSubstr("the job timeout of 1h passed"));
}

TEST(JobStateSuspendTest, AResumeDuringTheStopFollowsItAndAPartialGangReleasesOnlyItsOwn) {
  JobState state(Options({Job("ps", 1), Job("worker", 2)}));
  state.Start(kStart);
  RunTable(
      state,
      Then(AllRunning({"ps:0", "worker:0", "worker:1"}, absl::Seconds(1)),
           {
               {absl::Seconds(10), JobEvent::Exited(T("worker:1"), 0), ""},
               {absl::Seconds(11), JobEvent::Completed(T("worker:1"), 0), ""},
               {absl::Seconds(20), JobEvent::Suspend(), "reopen ps:0 worker:0; kill ps:0 worker:0"},
               // Asked for while the tasks stop: it waits for the last one.
               {absl::Seconds(21), JobEvent::Resume(), ""},
               {absl::Seconds(21), JobEvent::Suspend(), ""},  // again: stays suspending
               {absl::Seconds(21), JobEvent::Resume(), ""},
               {absl::Seconds(22), JobEvent::Completed(T("ps:0"), -105), ""},
               {absl::Seconds(23), JobEvent::Completed(T("worker:0"), -105),
                "rejoin ps:0 worker:0; request ps:0 worker:0"},
               {absl::Seconds(24), JobEvent::Allocated(T("ps:0")), ""},
               // All or nothing: the gang is released (worker:0's request withdrawn),
               // the finished worker:1 stays as it is.
               {absl::Seconds(23) + absl::Minutes(2), std::nullopt, "kill ps:0 worker:0",
                "ps:0=RELEASED worker:0=RELEASED worker:1=EXITED"},
           }));
}

// Scaled down while a resumed job's gang is incomplete: the stopping worker:1 is released with
// the gang, and asked for again it would undo the scale. It stays stopped.
TEST(JobStateSuspendTest, AGangReleaseDoesNotReviveATaskScaledDown) {
  JobState state(ElasticOptions(1, 3));
  state.Start(kStart);
  RunTable(state, RendezvousRuns());
  RunTable(state, TwoAgentsRun());
  auto at = [](absl::Duration d) { return kStart + d; };
  state.On(JobEvent::Suspend(), at(absl::Seconds(20)));
  for (const char* id : {"rendezvous:0", "worker:0", "worker:1"}) {
    state.On(JobEvent::Completed(T(id), -105), at(absl::Seconds(21)));
  }
  state.On(JobEvent::Resume(), at(absl::Seconds(30)));
  state.On(JobEvent::Allocated(T("worker:1")), at(absl::Seconds(31)));
  RunTable(state, {
                      {absl::Seconds(32), JobEvent::Scale("worker", 1), "kill worker:1 worker:2",
                       "worker:1=STOPPING worker:2=STOPPED"},
                  });
  // The gang's deadline: rendezvous:0 has no container; all is released.
  state.Tick(at(absl::Seconds(30) + absl::Minutes(2)));
  EXPECT_EQ(TaskPhaseName(*state.PhaseOf(T("worker:1"))), "RELEASED");
  // Its container, and the requests withdrawn.
  for (const char* id : {"rendezvous:0", "worker:0", "worker:1"}) {
    state.On(JobEvent::Completed(T(id), -105), at(absl::Seconds(31) + absl::Minutes(2)));
  }
  state.Tick(at(absl::Seconds(40) + absl::Minutes(2)));  // asked for again
  EXPECT_EQ(TaskPhaseName(*state.PhaseOf(T("worker:1"))), "STOPPED");
  std::vector<Row> rows = AllRunning({"rendezvous:0"}, absl::Minutes(3));
  rows.back().actions = "request worker:0";
  RunTable(state, rows);
  EXPECT_EQ(state.Status(kStart + absl::Minutes(3)).progress.at("worker").total, 1);
}

TEST(JobStateSuspendTest, SuspendIsRefusedWhenItCannotStopTheJob) {
  JobStateOptions client = Options({Job("worker", 1)});
  client.spec.client_mode = true;
  JobState client_state(client);
  client_state.Start(kStart);
  RunTable(client_state, AllRunning({"worker:0"}, absl::Seconds(1)));
  EXPECT_THAT(client_state.CheckSuspendRequest(true).message(), HasSubstr("client-mode"));

  JobState over(Options({Job("worker", 1)}));
  over.Start(kStart);
  RunTable(over, {{absl::Seconds(1), JobEvent::Kill("bye"), "kill worker:0; outcome KILLED"}});
  EXPECT_EQ(over.CheckSuspendRequest(true).code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(over.CheckSuspendRequest(false).code(), absl::StatusCode::kFailedPrecondition);
  // Refused as an event too (the AM checks first; the job may have moved on meanwhile).
  EXPECT_EQ(Describe(over.On(JobEvent::Suspend(), kStart + absl::Seconds(2))), "");
}

// The preemption grace (preemption: {grace: ...}): a job whose worker runs in container c1 on
// n1, restartable, told of c1's preemption at +2 s. `grace` is the job's; `worker_grace`, when
// set, the role's.
std::unique_ptr<JobState> NoticedAt2s(absl::Duration grace,
                                      std::optional<absl::Duration> worker_grace = std::nullopt) {
  JobTypeSpec worker =
      WithRestart(Job("worker", 1), RestartPolicy::kExitCode, RestartScope::kTask, 2);
  worker.preemption_grace = worker_grace;
  JobStateOptions o = Options({worker});
  o.spec.preemption_grace = grace;
  auto state = std::make_unique<JobState>(o);
  state->Start(kStart);
  const TaskId w = T("worker:0");
  RunTable(*state, {
                       {absl::Seconds(1), JobEvent::Allocated(w, "c1", "n1:8041"), ""},
                       {absl::Seconds(1), JobEvent::Registered(w, "h:1000"), ""},
                       {absl::Seconds(1), JobEvent::Published(), ""},
                       {absl::Seconds(1), JobEvent::Started(w), "", "worker:0=RUNNING"},
                       {absl::Seconds(2), JobEvent::PreemptNotice(w, "c1", "strict"),
                        "preempt worker:0=c1"},
                   });
  return state;
}

// Notice at t, grace g: the AM stops the task at t+g (its stop path, the job's stop_grace) with
// an event saying so; the task's end, whatever its exit code, is the preemption's: its restart
// policy relaunches it once the container is gone, and the job goes on.
TEST(JobStatePreemptGraceTest, TheAmStopsTheTaskWhenItsGraceIsOver) {
  std::unique_ptr<JobState> state = NoticedAt2s(absl::Seconds(5));
  EXPECT_EQ(state->NextWake(), kStart + absl::Seconds(7));
  JobActions early = state->Tick(kStart + absl::Seconds(7) - absl::Milliseconds(1));
  EXPECT_EQ(Describe(early), "");
  JobActions stop = state->Tick(kStart + absl::Seconds(7));
  EXPECT_EQ(Describe(stop), "kill worker:0");
  ASSERT_EQ(stop.kills.size(), 1u);
  EXPECT_EQ(stop.kills[0].second, absl::Seconds(10));  // timeouts.stop_grace
  EXPECT_THAT(stop.records,
              ::testing::ElementsAre(JobRecord{
                  "task_preempt_stop", "worker:0", {{"container", "c1"}, {"grace_ms", 5000}}}));
  EXPECT_THAT(stop.log.Texts(), ::testing::ElementsAre(
                                    HasSubstr("worker:0: preemption grace over; the AM stops it")));
  EXPECT_EQ(state->NextWake(), absl::InfiniteFuture());
  const TaskId w = T("worker:0");
  RunTable(
      *state,
      {
          // Checkpointed on SIGTERM and exited 0: still the preemption, not a success.
          {absl::Seconds(8), JobEvent::Exited(w, 0), "", "worker:0=RESTARTING"},
          {absl::Seconds(8), JobEvent::Completed(w, -105, "Container killed by the AM"), ""},
          {absl::Seconds(18), std::nullopt, "reopen worker:0; relaunch worker:0@h:1000",
           "worker:0=WAITING"},
          // The new container's notice is news again; no stop is pending from the old one.
          {absl::Seconds(19), JobEvent::Allocated(w, "c2", "n2:8041"), ""},
          {absl::Seconds(19), JobEvent::PreemptNotice(w, "c2", "contract"), "preempt worker:0=c2"},
          {absl::Seconds(23), std::nullopt, ""},
          {absl::Seconds(24), std::nullopt, "kill worker:0"},
      });
  EXPECT_EQ(state->outcome(), std::nullopt);
  EXPECT_THAT(state->Status(kStart + absl::Seconds(24)).diagnostics,
              HasSubstr("exit status -102: preempted by the scheduler; task restart 1 of 2"));
}

// The container's end may come before the executor's report (or without one): the same.
TEST(JobStatePreemptGraceTest, AStoppedTasksContainerEndIsThePreemption) {
  std::unique_ptr<JobState> state = NoticedAt2s(absl::Seconds(5));
  const TaskId w = T("worker:0");
  RunTable(*state, {
                       {absl::Seconds(7), std::nullopt, "kill worker:0"},
                       {absl::Seconds(8), JobEvent::Completed(w, -105, "killed by the AM"), "",
                        "worker:0=RESTARTING"},
                       {absl::Seconds(8), JobEvent::Exited(w, 143), "", "worker:0=RESTARTING"},
                   });
  EXPECT_EQ(state->outcome(), std::nullopt);
}

// A role's grace overrides the job's.
TEST(JobStatePreemptGraceTest, ARolesGraceOverridesTheJobs) {
  std::unique_ptr<JobState> state = NoticedAt2s(absl::Seconds(30), absl::Seconds(3));
  EXPECT_EQ(state->NextWake(), kStart + absl::Seconds(5));
  EXPECT_EQ(Describe(state->Tick(kStart + absl::Seconds(5))), "kill worker:0");
  // A role may turn the job's grace off.
  state = NoticedAt2s(absl::Seconds(30), absl::ZeroDuration());
  EXPECT_EQ(state->NextWake(), absl::InfiniteFuture());
  EXPECT_EQ(Describe(state->Tick(kStart + absl::Hours(1))), "");
}

// What happens before the grace is over leaves nothing for the AM to stop.
TEST(JobStatePreemptGraceTest, NoStopWhenTheGraceCannotApply) {
  const TaskId w = T("worker:0");
  struct Case {
    std::string name;
    absl::Duration grace;
    std::vector<Row> rows;  // after the notice at +2 s
  };
  const std::vector<Case> cases = {
      {"no grace: today's behaviour, YARN alone ends it",
       absl::ZeroDuration(),
       {{absl::Seconds(7), std::nullopt, ""},
        {absl::Minutes(10), std::nullopt, ""},
        {absl::Minutes(10), JobEvent::Completed(w, -102, "preempted"), "", "worker:0=RESTARTING"}}},
      {"YARN took the container first",
       absl::Seconds(5),
       {{absl::Seconds(4), JobEvent::Completed(w, -102, "preempted"), "", "worker:0=RESTARTING"},
        {absl::Seconds(7), std::nullopt, "", "worker:0=RESTARTING"}}},
      {"the task exited first (held for its container's word)",
       absl::Seconds(5),
       {{absl::Seconds(3), JobEvent::Exited(w, 143), "", "worker:0=EXIT_HELD"},
        {absl::Seconds(7), std::nullopt, "", "worker:0=EXIT_HELD"},
        {absl::Seconds(8), JobEvent::Completed(w, -102, "preempted"), "", "worker:0=RESTARTING"}}},
      {"the task finished first",
       absl::Seconds(5),
       {{absl::Seconds(3), JobEvent::Exited(w, 0), "outcome SUCCEEDED", "worker:0=EXITED"},
        {absl::Seconds(7), std::nullopt, ""}}},
      {"the job was killed first: stopped with the rest, once",
       absl::Seconds(5),
       {{absl::Seconds(3), JobEvent::Kill("killed"), "kill worker:0; outcome KILLED",
         "worker:0=STOPPING"},
        {absl::Seconds(7), std::nullopt, ""}}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    std::unique_ptr<JobState> state = NoticedAt2s(c.grace);
    RunTable(*state, c.rows);
  }
}

// A notice for a container no task runs sets no grace: nothing to stop, nothing to wake for;
// logged once however often YARN repeats it.
TEST(JobStatePreemptGraceTest, ANoticeForAnUnknownContainerStopsNothing) {
  std::unique_ptr<JobState> state = NoticedAt2s(absl::Seconds(5));
  JobState& s = *state;
  // The known one's stop is due at +7 s; the unknown ones add nothing to it.
  JobActions unknown = s.On(JobEvent::PreemptNotice({}, "c9", "strict"), kStart + absl::Seconds(3));
  EXPECT_EQ(Describe(unknown), "");
  EXPECT_THAT(unknown.log.Texts(),
              ::testing::ElementsAre(HasSubstr("names container c9, which runs no task")));
  JobActions again = s.On(JobEvent::PreemptNotice({}, "c9", "strict"), kStart + absl::Seconds(4));
  EXPECT_EQ(Describe(again), "");
  EXPECT_TRUE(again.log.empty());
  EXPECT_EQ(Describe(s.On(JobEvent::PreemptNotice(T("worker:0"), "c8", "strict"),
                          kStart + absl::Seconds(3))),
            "");
  EXPECT_EQ(
      Describe(s.On(JobEvent::PreemptNotice(T("ps:0"), "c7", "strict"), kStart + absl::Seconds(3))),
      "");
  EXPECT_EQ(s.NextWake(), kStart + absl::Seconds(7));
  EXPECT_EQ(Describe(s.Tick(kStart + absl::Seconds(7))), "kill worker:0");
  EXPECT_EQ(Describe(s.Tick(kStart + absl::Seconds(30))), "");
}

}  // namespace
}  // namespace tony::am

namespace tony::am {
namespace {

// Issue 43: the ResourceManager ended the attempt (it no longer knows it): every container is
// gone with it, so the job fails at once and nothing is stopped; the AM stays up only until the
// executors YARN may not have stopped (their node is lost) heard that the job is over.
TEST(JobStateTest, BackendGoneEndsTheJobAtOnceWithoutStops) {
  struct Case {
    std::string name;
    std::vector<Row> rows;
  };
  const std::vector<Row> running = AllRunning({"ps:0", "worker:0"}, absl::Seconds(1));
  const JobEvent gone = JobEvent::BackendGone("ApplicationAttemptNotFoundException");
  const std::vector<Case> cases = {
      {"nothing registered: over at once",
       {{absl::Seconds(1), JobEvent::Allocated(T("worker:0")), ""},
        {absl::Seconds(2), gone, "outcome FAILED; done", "worker:0=STOPPED ps:0=STOPPED"}}},
      {"every executor heard it",
       Then(running, {{absl::Seconds(3), gone, "outcome FAILED", "worker:0=STOPPED ps:0=STOPPED"},
                      {absl::Seconds(4), JobEvent::ToldJobOver(T("worker:0")), ""},
                      {absl::Seconds(5), JobEvent::ToldJobOver(T("ps:0")), "done"}})},
      {"one reported its exit (its NodeManager stopped it), one heard it",
       Then(running, {{absl::Seconds(3), gone, "outcome FAILED"},
                      {absl::Seconds(4), JobEvent::Exited(T("worker:0"), 143), ""},
                      {absl::Seconds(5), JobEvent::ToldJobOver(T("ps:0")), "done"}})},
      {"an executor that never heard it: over after orphan_notice",
       Then(running, {{absl::Seconds(3), gone, "outcome FAILED"},
                      {absl::Seconds(4), JobEvent::ToldJobOver(T("ps:0")), ""},
                      {absl::Seconds(9), std::nullopt, ""},
                      {absl::Seconds(10), std::nullopt, "done"}})},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    JobState state(Options({Job("ps", 1), Job("worker", 1)}));
    state.Start(kStart);
    RunTable(state, c.rows);
    EXPECT_THAT(state.final_diagnostics(), HasSubstr("the resource manager ended this attempt: "
                                                     "ApplicationAttemptNotFoundException"));
  }
}

TEST(JobStateTest, BackendGoneWaitsAtMostOrphanNotice) {
  JobState state(Options({Job("ps", 1), Job("worker", 1)}));
  state.Start(kStart);
  RunTable(state, Then(AllRunning({"ps:0", "worker:0"}, absl::Seconds(1)),
                       {{absl::Seconds(3), JobEvent::BackendGone("gone"), "outcome FAILED"}}));
  EXPECT_EQ(state.NextWake(), kStart + absl::Seconds(3 + 7));  // orphan_notice's default
  // The outcome shows at once: every container is over.
  EXPECT_EQ(state.Status(kStart + absl::Seconds(3)).state, AppState::kFailed);
  // Later container reports change nothing.
  RunTable(state, {{absl::Seconds(4), JobEvent::Completed(T("worker:0"), -100), ""},
                   {absl::Seconds(10), std::nullopt, "done"}});
}

// A node lost (its NodeManager killed): YARN reports the container ABORTED (-100) but nobody
// stopped the executor there; it hears the job's end from its next heartbeat.
TEST(JobStateTest, ALostNodesExecutorHearsTheEndBeforeTheJobIsOver) {
  struct Case {
    std::string name;
    std::vector<Row> rows;
  };
  const std::vector<Row> running = AllRunning({"ps:0", "worker:0"}, absl::Seconds(1));
  const std::vector<Case> cases = {
      {"the orphan heard it",
       Then(running, {{absl::Seconds(3), JobEvent::Completed(T("worker:0"), -100, "lost node"),
                       "kill ps:0; outcome FAILED"},
                      {absl::Seconds(4), JobEvent::Completed(T("ps:0"), 143), ""},
                      {absl::Seconds(6), JobEvent::ToldJobOver(T("worker:0")), "done"}})},
      {"the orphan never answered: over after orphan_notice",
       Then(running, {{absl::Seconds(3), JobEvent::Completed(T("worker:0"), -100, "lost node"),
                       "kill ps:0; outcome FAILED"},
                      {absl::Seconds(4), JobEvent::Completed(T("ps:0"), 143), ""},
                      {absl::Seconds(9), std::nullopt, ""},
                      {absl::Seconds(10), std::nullopt, "done"}})},
      {"a container its NodeManager ended: no wait",
       Then(running, {{absl::Seconds(3), JobEvent::Completed(T("worker:0"), 137, "OOM"),
                       "kill ps:0; outcome FAILED"},
                      {absl::Seconds(4), JobEvent::Completed(T("ps:0"), 143), "done"}})},
      {"the lost task reported its exit first: no wait",
       Then(running,
            {{absl::Seconds(3), JobEvent::Exited(T("worker:0"), 1), "kill ps:0; outcome FAILED"},
             {absl::Seconds(3), JobEvent::Completed(T("worker:0"), -100), ""},
             {absl::Seconds(4), JobEvent::Completed(T("ps:0"), 143), "done"}})},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    JobState state(Options({Job("ps", 1), Job("worker", 1)}));
    state.Start(kStart);
    RunTable(state, c.rows);
  }
}

// A relaunched task's executor is a new one: its predecessor's reported exit must not excuse it
// from hearing the job's end when its own node is lost (it was: the orphan lived on until
// timeouts.am_unreachable).
TEST(JobStateTest, ARelaunchedTasksOrphanHearsTheEndThoughItsPredecessorReportedItsExit) {
  JobState state(Options({Job("ps", 1), WithRestart(Job("worker", 1), RestartPolicy::kOnFailure,
                                                    RestartScope::kTask, 2)}));
  state.Start(kStart);
  RunTable(
      state,
      Then(AllRunning({"ps:0", "worker:0"}, absl::Seconds(1)),
           {
               {absl::Seconds(2), JobEvent::Exited(T("worker:0"), 1), ""},
               {absl::Seconds(2), JobEvent::Completed(T("worker:0"), 1), ""},
               {absl::Seconds(12), std::nullopt, "reopen worker:0; relaunch worker:0@h:1003"},
               {absl::Seconds(13), JobEvent::Allocated(T("worker:0")), ""},
               {absl::Seconds(14), JobEvent::Registered(T("worker:0"), "h:1003"), ""},
               {absl::Seconds(14), JobEvent::Started(T("worker:0")), ""},
               {absl::Seconds(20), JobEvent::Exited(T("ps:0"), 1), "kill worker:0; outcome FAILED"},
               {absl::Seconds(20), JobEvent::Completed(T("ps:0"), 1), ""},
               // Its node is lost: YARN's word only, the executor may run on.
               {absl::Seconds(21), JobEvent::Completed(T("worker:0"), -100, "lost node"), ""},
               {absl::Seconds(22), JobEvent::ToldJobOver(T("worker:0")), "done"},
           }));
}

// Bad nodes (node_exclusion.h): the spec's list and earlier attempts' go out before the first
// requests.
TEST(JobStateTest, ExcludedNodesGoOutBeforeTheFirstRequests) {
  JobStateOptions o = Options({Job("worker", 1)});
  o.spec.exclude_nodes = {"bad1"};
  o.excluded_nodes = {"bad2", "bad1"};
  JobState state(o);
  JobActions a = state.Start(kStart);
  EXPECT_EQ(Describe(a), "exclude bad1 bad2; request worker:0");
  ASSERT_EQ(a.records.size(), 2u);
  EXPECT_EQ(a.records[0].event, "node_excluded");
  EXPECT_EQ(a.records[0].fields["node"], "bad1");
}

// A NodeManager restarted: YARN lost its node, then runs it again; the job uses it again, and a
// task relaunched after that may go there.
TEST(JobStateTest, ANodeLostAndRunningAgainIsBackInUse) {
  JobState state(Options({WithRestart(Job("worker", 1), RestartPolicy::kOnFailure,
                                      RestartScope::kTask, 3, AddressChange::kAccept)}));
  state.Start(kStart);
  RunTable(state, {
                      {absl::Seconds(1), JobEvent::ClusterNodes(3), ""},
                      {absl::Seconds(1), JobEvent::Allocated(T("worker:0"), "c1", "n2:8041"), ""},
                      {absl::Seconds(2), JobEvent::NodeState("n1:8041", "LOST"), "exclude n1"},
                      {absl::Seconds(2), JobEvent::ClusterNodes(2), ""},
                      {absl::Seconds(30), JobEvent::NodeState("n1:8042", "RUNNING"), "include n1"},
                      {absl::Seconds(30), JobEvent::ClusterNodes(3), ""},
                      {absl::Seconds(31), JobEvent::NodeState("n1:8042", "RUNNING"), ""},
                  });
}

// A task failing twice on one node: the node is excluded and the relaunch goes elsewhere.
TEST(JobStateTest, ATaskFailingTwiceOnANodeExcludesItAndIsRelaunchedAnywhere) {
  JobState state(Options({WithRestart(Job("worker", 1), RestartPolicy::kOnFailure,
                                      RestartScope::kTask, 3, AddressChange::kAccept)}));
  state.Start(kStart);
  RunTable(state,
           {
               {absl::Seconds(1), JobEvent::ClusterNodes(3), ""},
               {absl::Seconds(1), JobEvent::Allocated(T("worker:0"), "c1", "n1:8041"), ""},
               {absl::Seconds(1), JobEvent::Registered(T("worker:0"), "n1:1000"), ""},
               {absl::Seconds(1), JobEvent::Published(), ""},
               {absl::Seconds(2), JobEvent::Exited(T("worker:0"), 1), "", "worker:0=RESTARTING"},
               {absl::Seconds(2), JobEvent::Completed(T("worker:0"), 1), ""},
               {absl::Seconds(12), std::nullopt, "reopen worker:0; relaunch worker:0@n1:1000"},
               {absl::Seconds(13), JobEvent::Allocated(T("worker:0"), "c2", "n1:8041"), ""},
               {absl::Seconds(13), JobEvent::Registered(T("worker:0"), "n1:1000"), ""},
               {absl::Seconds(14), JobEvent::Exited(T("worker:0"), 1), "exclude n1",
                "worker:0=RESTARTING"},
               {absl::Seconds(14), JobEvent::Completed(T("worker:0"), 1), ""},
               // Anywhere but n1: YARN's blacklist keeps it off; no preference for it.
               {absl::Seconds(34), std::nullopt, "reopen worker:0; relaunch worker:0@:1000"},
               {absl::Seconds(35), JobEvent::Allocated(T("worker:0"), "c3", "n2:8041"), ""},
               {absl::Seconds(35), JobEvent::Registered(T("worker:0"), "n2:1000"), ""},
               {absl::Seconds(36), JobEvent::Exited(T("worker:0"), 0), "outcome SUCCEEDED"},
           });
  EXPECT_THAT(state.final_diagnostics(),
              HasSubstr("warning: node n1 excluded: 2 task failures on it (max_node_failures 2)"));
}

// Excluding the last node the job could use fails it, naming the excluded nodes.
TEST(JobStateTest, ExcludingEveryNodeFailsTheJobNamingThem) {
  JobStateOptions o =
      Options({WithRestart(Job("worker", 1), RestartPolicy::kOnFailure, RestartScope::kTask, 5)});
  o.spec.max_node_failures = 1;
  o.spec.exclude_nodes = {"n2"};
  JobState state(o);
  EXPECT_EQ(Describe(state.Start(kStart)), "exclude n2; request worker:0");
  RunTable(state, {
                      {absl::Seconds(1), JobEvent::ClusterNodes(2), ""},
                      {absl::Seconds(1), JobEvent::Allocated(T("worker:0"), "c1", "n1:8041"), ""},
                      {absl::Seconds(1), JobEvent::Registered(T("worker:0"), "n1:1000"), ""},
                      {absl::Seconds(2), JobEvent::Exited(T("worker:0"), 1),
                       "exclude n1; outcome FAILED", "worker:0=EXITED"},
                  });
  EXPECT_THAT(state.final_diagnostics(),
              HasSubstr("worker:0 failed with exit code 1; every node the job may use is "
                        "excluded (2: n1, n2)"));
}

// YARN reporting a node unhealthy excludes it at once; a preemption never counts against a
// node.
TEST(JobStateTest, AnUnhealthyNodeIsExcludedAtOnceAndAPreemptionNeverCounts) {
  JobStateOptions o =
      Options({WithRestart(Job("worker", 1), RestartPolicy::kOnFailure, RestartScope::kTask, 5)});
  o.spec.max_node_failures = 1;
  JobState state(o);
  state.Start(kStart);
  RunTable(state, {
                      {absl::Seconds(1), JobEvent::ClusterNodes(3), ""},
                      {absl::Seconds(1), JobEvent::NodeState("n3:8041", "UNHEALTHY"), "exclude n3"},
                      {absl::Seconds(1), JobEvent::NodeState("n3:8041", "UNHEALTHY"), ""},
                      {absl::Seconds(1), JobEvent::Allocated(T("worker:0"), "c1", "n1:8041"), ""},
                      {absl::Seconds(1), JobEvent::Registered(T("worker:0"), "n1:1000"), ""},
                      {absl::Seconds(2), JobEvent::Completed(T("worker:0"), -102, "preempted"), "",
                       "worker:0=RESTARTING"},
                  });
  EXPECT_THAT(state.Status(kStart + absl::Seconds(2)).diagnostics,
              HasSubstr("warning: node n3 excluded: YARN reports it UNHEALTHY"));
}

// A preemption notice (YARN's PreemptionMessage) for a running task's container tells its
// executor once, however often the scheduler repeats it, with an event in the history; one for
// a container the task no longer has, or no task has, is logged once and changes nothing. The
// task's own end after the notice waits for the container to say it was preempted.
TEST(JobStatePreemptTest, ANoticeTellsTheTasksExecutorOncePerContainer) {
  JobState state(
      Options({WithRestart(Job("worker", 1), RestartPolicy::kOnFailure, RestartScope::kTask, 2)}));
  state.Start(kStart);
  const TaskId w = T("worker:0");
  RunTable(state, {
                      {absl::Seconds(1), JobEvent::Allocated(w, "c1", "n1:8041"), ""},
                      {absl::Seconds(1), JobEvent::Registered(w, "h:1000"), ""},
                      {absl::Seconds(1), JobEvent::Published(), ""},
                      {absl::Seconds(1), JobEvent::Started(w), "", "worker:0=RUNNING"},
                  });
  JobActions first =
      state.On(JobEvent::PreemptNotice(w, "c1", "strict"), kStart + absl::Seconds(2));
  EXPECT_EQ(Describe(first), "preempt worker:0=c1");
  EXPECT_THAT(
      first.records,
      ::testing::ElementsAre(JobRecord{
          "task_preempt_notice", "worker:0", {{"container", "c1"}, {"contract", "strict"}}}));
  EXPECT_THAT(first.log.Texts(),
              ::testing::ElementsAre(HasSubstr("worker:0: YARN is about to preempt container c1")));
  JobActions again =
      state.On(JobEvent::PreemptNotice(w, "c1", "strict"), kStart + absl::Seconds(3));
  EXPECT_EQ(Describe(again), "");
  EXPECT_TRUE(again.records.empty());
  EXPECT_TRUE(again.log.empty());

  // Unknown: a container of no task (twice: one line), another task's stale container.
  JobActions unknown =
      state.On(JobEvent::PreemptNotice({}, "c9", "contract"), kStart + absl::Seconds(3));
  EXPECT_EQ(Describe(unknown), "");
  EXPECT_THAT(unknown.log.Texts(),
              ::testing::ElementsAre(HasSubstr("names container c9, which runs no task")));
  EXPECT_TRUE(unknown.records.empty());
  EXPECT_TRUE(state.On(JobEvent::PreemptNotice({}, "c9", "contract"), kStart + absl::Seconds(3))
                  .log.empty());
  EXPECT_EQ(Describe(state.On(JobEvent::PreemptNotice(T("worker:7"), "c8", "strict"),
                              kStart + absl::Seconds(3))),
            "");

  // The task dies of the notice's signal (uncaught): held until the container says why; the
  // preemption relaunches it, and the notice still naming the old container is no news.
  RunTable(
      state,
      {
          {absl::Seconds(4), JobEvent::Exited(w, 128 + 10, "User defined signal 1"), "",
           "worker:0=EXIT_HELD"},
          {absl::Seconds(5), JobEvent::Completed(w, -102, "preempted"), "", "worker:0=RESTARTING"},
          {absl::Seconds(5), JobEvent::PreemptNotice(w, "c1", "strict"), ""},
          {absl::Seconds(15), std::nullopt, "reopen worker:0; relaunch worker:0@h:1000",
           "worker:0=WAITING"},
          {absl::Seconds(16), JobEvent::PreemptNotice(w, "c1", "strict"), ""},
          {absl::Seconds(16), JobEvent::Allocated(w, "c2", "n2:8041"), ""},
          {absl::Seconds(16), JobEvent::PreemptNotice(w, "c1", "strict"), ""},
          {absl::Seconds(17), JobEvent::PreemptNotice(w, "c2", "contract"), "preempt worker:0=c2"},
      });
  EXPECT_EQ(state.outcome(), std::nullopt);
}

// After the notice, an exit that the container's end does not explain as a preemption is the
// task's own: its policy decides as for any exit.
TEST(JobStatePreemptTest, AnExitAfterTheNoticeThatWasNotAPreemptionFails) {
  JobState state(Options({Job("worker", 1)}));
  state.Start(kStart);
  const TaskId w = T("worker:0");
  RunTable(state, {
                      {absl::Seconds(1), JobEvent::Allocated(w, "c1", "n1:8041"), ""},
                      {absl::Seconds(1), JobEvent::Registered(w, "h:1000"), ""},
                      {absl::Seconds(1), JobEvent::Published(), ""},
                      {absl::Seconds(1), JobEvent::Started(w), ""},
                      {absl::Seconds(2), JobEvent::PreemptNotice(w, "c1", "contract"),
                       "preempt worker:0=c1"},
                      {absl::Seconds(3), JobEvent::Exited(w, 1, "boom"), "", "worker:0=EXIT_HELD"},
                      {absl::Seconds(3), JobEvent::Completed(w, 1), "outcome FAILED; done"},
                  });
  EXPECT_THAT(state.final_diagnostics(), HasSubstr("worker:0 failed with exit code 1"));
}

}  // namespace
}  // namespace tony::am
