// Copyright libtony authors.
//
// The event log's entries (docs/events.md): what each event and action of the AM core becomes,
// the decisions' reasons, and the line format.

#include "am/job_record.h"

#include <string>
#include <vector>

#include "am/job_state.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tony::am {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

const absl::Time kRecordsStart = absl::UnixEpoch() + absl::Hours(1000);

TaskId RecordTask(absl::string_view id) { return *TaskId::Parse(id); }

TEST(JobRecordTest, EachEventBecomesOneEntryWithItsFacts) {
  JobEvent restarted = JobEvent::Restarted(RecordTask("tensorboard:0"), 2, 1, "oops");
  JobEvent completed = JobEvent::Completed(RecordTask("worker:1"), -100, "lost node");
  completed.container = "c1";
  struct Row {
    JobEvent event;
    std::string expected;  // event, task and fields as JSON
  };
  const std::vector<Row> rows = {
      {JobEvent::Allocated(RecordTask("worker:0"), "c0", "nm1:8041"),
       R"({"container":"c0","event":"task_allocated","node":"nm1:8041","task":"worker:0"})"},
      {JobEvent::LaunchFailed(RecordTask("worker:0"), "no such file"),
       R"({"event":"task_launch_failed","reason":"no such file","task":"worker:0"})"},
      {completed, R"({"container":"c1","diagnostics":"lost node","event":"container_completed",)"
                  R"("exit_status":-100,"task":"worker:1"})"},
      {JobEvent::BackendFailed("RM gone"), R"({"event":"backend_failed","reason":"RM gone"})"},
      {JobEvent::BackendGone("attempt unknown"),
       R"({"event":"backend_gone","reason":"attempt unknown"})"},
      {JobEvent::ToldJobOver(RecordTask("worker:1")),
       R"({"event":"told_job_over","task":"worker:1"})"},
      {JobEvent::Registered(RecordTask("ps:0"), "h:2222"),
       R"({"address":"h:2222","event":"task_registered","task":"ps:0"})"},
      {JobEvent::Published(), R"({"event":"cluster_spec_published"})"},
      {JobEvent::Started(RecordTask("ps:0")), R"({"event":"task_started","task":"ps:0"})"},
      {restarted,
       R"({"event":"task_restarted_in_place","exit_code":1,"restart":2,"stderr_tail":"oops",)"
       R"("task":"tensorboard:0"})"},
      {JobEvent::Exited(RecordTask("worker:0"), 3, "boom"),
       R"({"event":"task_exited","exit_code":3,"stderr_tail":"boom","task":"worker:0"})"},
      {JobEvent::RegistrationTimeout({"worker:1"}),
       R"({"event":"registration_deadline_passed","missing":["worker:1"]})"},
      {JobEvent::HeartbeatTimeout(RecordTask("worker:0")),
       R"({"event":"heartbeat_timeout","task":"worker:0"})"},
      {JobEvent::Kill("by user"), R"({"event":"kill_requested","reason":"by user"})"},
      {JobEvent::TensorBoardListening("http://h:6006/"),
       R"({"event":"tensorboard_listening","url":"http://h:6006/"})"},
  };
  for (const Row& row : rows) {
    std::optional<JobRecord> r = RecordOf(row.event);
    ASSERT_TRUE(r.has_value()) << row.expected;
    nlohmann::json j = r->fields;
    j["event"] = r->event;
    if (!r->task.empty()) j["task"] = r->task;
    EXPECT_EQ(j.dump(), row.expected);
  }
}

TEST(JobRecordTest, ActionsBecomeRequestsRelaunchesAndStops) {
  JobActions a;
  TaskSpec w;
  w.job_name = "worker";
  w.index = 1;
  w.memory_mb = 2048;
  w.gpus = 1;
  a.requests.push_back(w);
  a.relaunches.push_back({w, "nm2", 4000});
  a.kills.emplace_back(RecordTask("ps:0"), absl::Seconds(10));
  std::vector<std::string> out;
  for (const JobRecord& r : ActionRecords(a)) out.push_back(r.event + " " + r.fields.dump());
  EXPECT_THAT(out, ElementsAre(R"(task_requested {"gpus":1,"memory_mb":2048,"node_label":"",)"
                               R"("vcores":1})",
                               R"(task_relaunch_requested {"port":4000,"preferred_host":"nm2"})",
                               R"(task_stop_requested {"grace_ms":10000})"));
}

TEST(JobRecordTest, DecisionsSayWhy) {
  JobStateOptions o;
  o.spec.command = "true";
  JobTypeSpec jt;
  jt.name = "worker";
  jt.instances = 1;
  RestartSpec restart;
  restart.policy = RestartPolicy::kOnFailure;
  restart.scope = RestartScope::kTask;
  restart.max_restarts = 1;
  restart.backoff = absl::Seconds(10);
  jt.restart = restart;
  o.spec.job_types = {jt};
  JobState state(o);
  state.Start(kRecordsStart);
  state.On(JobEvent::Allocated(RecordTask("worker:0")), kRecordsStart);
  state.On(JobEvent::Registered(RecordTask("worker:0"), "h:1"), kRecordsStart);
  state.On(JobEvent::Started(RecordTask("worker:0")), kRecordsStart);
  JobActions a = state.On(JobEvent::Exited(RecordTask("worker:0"), 2, "disk full"), kRecordsStart);
  ASSERT_EQ(a.records.size(), 1u);
  EXPECT_EQ(a.records[0].event, "task_restart_scheduled");
  EXPECT_EQ(a.records[0].task, "worker:0");
  EXPECT_THAT(a.records[0].fields["reason"].get<std::string>(), HasSubstr("exit code 2"));
  EXPECT_EQ(a.records[0].fields["restart"], 1);
  EXPECT_EQ(a.records[0].fields["backoff_ms"], 10000);
  EXPECT_EQ(a.records[0].fields["stderr_tail"], "disk full");

  JobActions kill = state.On(JobEvent::Kill("stop it"), kRecordsStart + absl::Seconds(1));
  ASSERT_EQ(kill.records.size(), 1u);
  EXPECT_EQ(kill.records[0].event, "job_outcome");
  EXPECT_EQ(kill.records[0].fields["state"], "KILLED");
  EXPECT_THAT(kill.records[0].fields["diagnostics"].get<std::string>(), HasSubstr("stop it"));
}

TEST(JobRecordTest, ALineCarriesVersionSequenceTimeAndAttemptAndSurvivesAnyBytes) {
  JobRecord r{"task_exited", "worker:0", {{"exit_code", 1}, {"stderr_tail", "bad \xff byte"}}};
  const absl::Time t = absl::FromUnixMillis(1795657307751);
  EXPECT_EQ(EventLine(r, t, 2, 7),
            R"({"attempt":2,"event":"task_exited","exit_code":1,"seq":7,)"
            "\"stderr_tail\":\"bad \xEF\xBF\xBD byte\",\"task\":\"worker:0\","
            R"("time":"2026-11-26T01:41:47.751Z","v":1})");
}

}  // namespace
}  // namespace tony::am
