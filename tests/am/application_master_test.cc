// Copyright libtony authors.
//
// The job's life cycle, table by table, against the fake ResourceManager; executor events are fed
// to the AM's event sink as the broker would.

#include "am/application_master.h"

#include <atomic>
#include <functional>
#include <future>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "am/fake_resource_manager.h"
#include "am/metrics.h"
#include "broker/broker_client.h"
#include "common/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "http/client.h"
#include "http/json.h"
#include "tests/testing/wait_until.h"

namespace tony::am {
namespace {

using ::testing::Contains;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;
using ::testing::UnorderedElementsAre;
using ::testing::UnorderedElementsAreArray;
using ::tony::testing::WaitUntil;

constexpr char kSecret[] = "am-test-secret-0123456789abcdef";

JobTypeSpec AmJob(const std::string& name, int instances) {
  JobTypeSpec jt;
  jt.name = name;
  jt.instances = instances;
  return jt;
}

std::string Get(const std::string& url) {
  http::Client client;
  auto r = client.Get(url);
  return r.ok() ? r->body : std::string(r.status().message());
}

class AmTest : public ::testing::Test {
 protected:
  void Start(std::vector<JobTypeSpec> jobs, absl::Duration registration = absl::Seconds(30),
             absl::Duration job_timeout = absl::InfiniteDuration()) {
    ApplicationMasterOptions o;
    o.verify_job_counts = true;
    o.spec.command = "true";
    o.spec.job_types = std::move(jobs);
    o.spec.timeouts.registration = registration;
    o.spec.timeouts.job = job_timeout;
    o.spec.timeouts.stop_grace = absl::Seconds(1);
    o.app_id = "test_app";
    o.secret = kSecret;
    o.broker_listen_address = "127.0.0.1:0";
    o.advertised_host = "127.0.0.1";
    o.executor_env = {{"TONY_SPEC_FILE", "/x/job.yaml"}};
    o.stop_margin = absl::Seconds(2);
    o.final_status_linger = absl::ZeroDuration();
    if (tweak_) tweak_(o);
    total_ = static_cast<int>(ResolveTasks(o.spec).size());
    am_ = std::make_unique<ApplicationMaster>(std::move(o), &rm_);
    result_ = std::async(std::launch::async, [this] { return am_->Run(); });
    ASSERT_TRUE(rm_.WaitForRequests(total_));
  }

  // Every task allocated, registered and started.
  void AllRunning() {
    for (const std::string& id : rm_.requested()) {
      rm_.Allocate(id);
      auto colon = id.find(':');
      std::string job = id.substr(0, colon);
      int index = std::stoi(id.substr(colon + 1));
      events()->OnRegistered(job, index, absl::StrCat("127.0.0.1:", 1000 + index));
      events()->OnTaskStarted(job, index);
    }
  }

  // The executor reports the exit, then its container completes with the same code.
  void Exit(const std::string& job, int index, int code, const std::string& tail = "") {
    events()->OnTaskExited(job, index, code, tail);
    rm_.Complete(absl::StrCat(job, ":", index), code);
  }

  ApplicationStatus Final() {
    EXPECT_EQ(result_.wait_for(std::chrono::seconds(20)), std::future_status::ready);
    auto r = result_.get();
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? *r : ApplicationStatus{};
  }

  ClusterSpecBrokerObserver* events() { return am_->executor_events(); }

  // Whether `done` holds within 20 s, polled: a condition, not a fixed sleep, tells that the AM
  // has handled what the test fed it.
  static bool Eventually(const std::function<bool()>& done) {
    for (absl::Time deadline = absl::Now() + absl::Seconds(20); absl::Now() < deadline;) {
      if (done()) return true;
      absl::SleepFor(absl::Milliseconds(5));
    }
    return done();
  }

  std::function<void(ApplicationMasterOptions&)> tweak_;  // applied by Start()
  FakeResourceManager rm_;
  std::unique_ptr<ApplicationMaster> am_;
  std::future<absl::StatusOr<ApplicationStatus>> result_;
  int total_ = 0;
};

// A backend that refuses the AM as soon as the broker listens (YARN's registration refused,
// e.g. a security layer this side refuses): Run() ends with that error and asks for no task.
TEST(AmRunTest, AnErrorFromOnBrokerStartedEndsRunAndAsksForNothing) {
  ApplicationMasterOptions o;
  o.verify_job_counts = true;
  o.spec.command = "true";
  o.spec.job_types = {AmJob("worker", 2)};
  o.app_id = "test_app";
  o.secret = kSecret;
  o.broker_listen_address = "127.0.0.1:0";
  o.advertised_host = "127.0.0.1";
  o.on_broker_started = [](int, const std::string&) {
    return absl::FailedPreconditionError("registering with the ResourceManager: refused");
  };
  FakeResourceManager rm;
  ApplicationMaster am(std::move(o), &rm);
  absl::StatusOr<ApplicationStatus> result = am.Run();
  EXPECT_TRUE(absl::IsFailedPrecondition(result.status())) << result.status();
  EXPECT_THAT(std::string(result.status().message()), HasSubstr("refused"));
  EXPECT_TRUE(rm.requested().empty());
}

TEST_F(AmTest, SucceedsWhenEveryTrackedTaskExitsZeroAndStopsPs) {
  Start({AmJob("ps", 1), AmJob("worker", 2)});
  EXPECT_THAT(rm_.requested(), UnorderedElementsAre("ps:0", "worker:0", "worker:1"));
  EXPECT_EQ(rm_.env()["TONY_AM_ADDRESS"], absl::StrCat("127.0.0.1:", am_->broker_port()));
  EXPECT_EQ(rm_.env()["TONY_SPEC_FILE"], "/x/job.yaml");
  AllRunning();
  Exit("worker", 0, 0);
  ASSERT_TRUE(Eventually([&] { return am_->Status().progress["worker"].succeeded == 1; }));
  EXPECT_THAT(rm_.killed(), IsEmpty());  // worker:1 still runs
  Exit("worker", 1, 0);
  ApplicationStatus s = Final();
  EXPECT_EQ(s.state, AppState::kSucceeded);
  EXPECT_EQ(s.diagnostics, "");
  EXPECT_THAT(rm_.killed(), UnorderedElementsAre("ps:0"));
  EXPECT_TRUE(rm_.stopped());
  EXPECT_EQ(s.progress["worker"].succeeded, 2);
  EXPECT_EQ(s.progress["worker"].registered, 2);
  EXPECT_EQ(s.progress["ps"].failed, 0);  // stopped, not failed
  EXPECT_EQ(s.id, "test_app");
}

// The AM's own status (its page, its answers to clients) says why its pending containers wait,
// as the backend computes it, and nothing once none is pending.
TEST_F(AmTest, StatusSaysWhyPendingContainersWaitFromTheBackend) {
  rm_.set_why_waiting("label-no-active-node", "label gpu has no active node");
  Start({AmJob("worker", 2)});
  ApplicationStatus waiting = am_->Status();
  EXPECT_THAT(waiting.pending, HasSubstr("pending"));
  EXPECT_EQ(waiting.wait_kind, "label-no-active-node");
  EXPECT_EQ(waiting.wait_reason, "label gpu has no active node");
  AllRunning();
  ASSERT_TRUE(Eventually([&] { return am_->Status().pending.empty(); }));
  ApplicationStatus running = am_->Status();
  EXPECT_EQ(running.wait_kind, "");
  EXPECT_EQ(running.wait_reason, "");
  Exit("worker", 0, 0);
  Exit("worker", 1, 0);
  EXPECT_EQ(Final().state, AppState::kSucceeded);
}

// The outcome goes out (to YARN, by the YARN AM) the moment it is decided: the remaining tasks
// have been told to stop, not waited for; once, whatever follows.
TEST_F(AmTest, TheOutcomeIsAnnouncedOnceAsSoonAsItIsDecided) {
  absl::Mutex mu;
  std::vector<AppState> outcomes;
  std::vector<std::string> killed_by_then;
  tweak_ = [&](ApplicationMasterOptions& o) {
    o.on_outcome = [&](AppState state, const std::string& diagnostics) {
      absl::MutexLock lock(&mu);
      outcomes.push_back(state);
      killed_by_then = rm_.killed();
      EXPECT_EQ(diagnostics, "");
    };
  };
  Start({AmJob("ps", 1), AmJob("worker", 1)});
  AllRunning();
  Exit("worker", 0, 0);
  ApplicationStatus s = Final();  // ps:0's container never completes: after the stop deadline
  EXPECT_EQ(s.state, AppState::kSucceeded);
  absl::MutexLock lock(&mu);
  EXPECT_THAT(outcomes, ::testing::ElementsAre(AppState::kSucceeded));
  EXPECT_THAT(killed_by_then, UnorderedElementsAre("ps:0"));
}

// A follower that looks at the status only when told it changed (as tony-am's launch phases
// and task history do) sees every task registered and started, and the final state.
TEST_F(AmTest, StatusChangesAreAnnouncedSoFollowersNeedNotPoll) {
  absl::Mutex mu;
  int notices = 0;
  ApplicationStatus seen;
  tweak_ = [&](ApplicationMasterOptions& o) {
    o.on_status_changed = [&] {
      ApplicationStatus now = am_->Status();  // no AM lock is held here
      absl::MutexLock lock(&mu);
      ++notices;
      seen = std::move(now);
    };
  };
  Start({AmJob("ps", 1), AmJob("worker", 2)});
  AllRunning();
  auto running = [&](const std::string& job) {
    absl::MutexLock lock(&mu);
    return seen.progress[job].total > 0 &&
           seen.progress[job].registered == seen.progress[job].total &&
           seen.progress[job].running == seen.progress[job].total;
  };
  EXPECT_TRUE(Eventually([&] { return running("ps") && running("worker"); }));
  Exit("worker", 0, 0);
  Exit("worker", 1, 0);
  EXPECT_EQ(Final().state, AppState::kSucceeded);
  absl::MutexLock lock(&mu);
  EXPECT_EQ(seen.state, AppState::kSucceeded);  // the last notice shows the outcome
  EXPECT_GE(notices, 2);
}

// The event log (docs/events.md): every line a JSON object with the common fields, numbered in
// order, telling each task's life and the job's end.
TEST_F(AmTest, TheEventLogTellsEachTasksLifeAndTheJobsEnd) {
  absl::Mutex mu;
  std::vector<http::Json> lines;
  tweak_ = [&](ApplicationMasterOptions& o) {
    o.attempt = 2;
    o.max_attempts = 2;
    o.spec.env["API_TOKEN"] = "s3cr3t-value";
    o.on_event_lines = [&](std::vector<std::string> batch) {
      absl::MutexLock lock(&mu);
      for (const std::string& l : batch) {
        // Neither the job's secret nor an environment value (a credential, maybe) is recorded.
        EXPECT_THAT(l, Not(HasSubstr(kSecret)));
        EXPECT_THAT(l, Not(HasSubstr("s3cr3t-value")));
        auto j = http::ParseJson(l, "line");
        lines.push_back(j.ok() ? *j : http::Json());
      }
    };
  };
  Start({AmJob("ps", 1), AmJob("worker", 1)});
  AllRunning();
  Exit("worker", 0, 0);
  EXPECT_EQ(Final().state, AppState::kSucceeded);
  absl::MutexLock lock(&mu);
  std::vector<std::string> job, worker;
  int64_t seq = 0;
  for (const http::Json& l : lines) {
    ASSERT_TRUE(l.is_object());
    EXPECT_EQ(l["v"], 1);
    EXPECT_EQ(l["attempt"], 2);
    EXPECT_EQ(l["seq"].get<int64_t>(), seq + 1);
    seq = l["seq"].get<int64_t>();
    EXPECT_TRUE(absl::EndsWith(l["time"].get<std::string>(), "Z")) << l.dump();
    if (!l.contains("task")) job.push_back(l["event"]);
    if (l.value("task", "") == "worker:0") worker.push_back(l["event"]);
    if (l["event"] == "task_allocated") {
      EXPECT_EQ(l["container"], "c_" + l["task"].get<std::string>());
    }
  }
  // (No cluster_spec_published: the test feeds registrations past the broker.)
  EXPECT_THAT(job, ::testing::ElementsAre("am_started", "job_spec", "job_outcome", "job_finished"));
  EXPECT_THAT(worker, ::testing::ElementsAre("task_requested", "task_allocated", "task_registered",
                                             "task_started", "task_exited", "container_completed"));
  EXPECT_EQ(lines.back()["state"], "SUCCEEDED");
  EXPECT_EQ(lines.back()["progress"]["worker"]["succeeded"], 1);
}

// A failed attempt that the next one follows ends its log with attempt_finished, not
// job_finished.
TEST_F(AmTest, AFailedAttemptBeforeTheLastEndsItsEventLogAsAnAttempt) {
  absl::Mutex mu;
  std::vector<std::string> events;
  tweak_ = [&](ApplicationMasterOptions& o) {
    o.max_attempts = 2;
    o.on_event_lines = [&](std::vector<std::string> batch) {
      absl::MutexLock lock(&mu);
      for (const std::string& l : batch) {
        auto j = http::ParseJson(l, "line");
        events.push_back(j.ok() ? j->value("event", "") : "?");
      }
    };
  };
  Start({AmJob("worker", 1)});
  AllRunning();
  Exit("worker", 0, 1);
  EXPECT_EQ(Final().state, AppState::kFailed);
  EXPECT_TRUE(am_->NextAttemptFollows());
  absl::MutexLock lock(&mu);
  EXPECT_EQ(events.back(), "attempt_finished");
  EXPECT_THAT(events, Not(Contains("job_finished")));
}

TEST_F(AmTest, FailingTrackedTaskFailsTheJobAndStopsTheRest) {
  Start({AmJob("ps", 1), AmJob("worker", 3)});
  AllRunning();
  Exit("worker", 1, 3, "Traceback (most recent call last):\nValueError: bad input");
  ApplicationStatus s = Final();
  EXPECT_EQ(s.state, AppState::kFailed);
  EXPECT_THAT(s.diagnostics, HasSubstr("worker:1 failed with exit code 3"));
  EXPECT_THAT(s.diagnostics, HasSubstr("ValueError: bad input"));
  EXPECT_THAT(rm_.killed(), UnorderedElementsAre("ps:0", "worker:0", "worker:2"));
  EXPECT_EQ(s.progress["worker"].failed, 1);
  EXPECT_EQ(s.progress["worker"].running, 0);
}

TEST_F(AmTest, ADeadTensorBoardNeverFailsTrainingButIsReported) {
  Start({AmJob("worker", 1), AmJob("tensorboard", 1)});
  AllRunning();
  Exit("tensorboard", 0, 127, "/bin/bash: line 1: tensorboard: command not found");
  ASSERT_TRUE(Eventually(
      [&] { return absl::StrContains(am_->Status().diagnostics, "tensorboard:0 died"); }));
  EXPECT_THAT(rm_.killed(), IsEmpty());  // the worker trains on
  Exit("worker", 0, 0);
  ApplicationStatus s = Final();
  EXPECT_EQ(s.state, AppState::kSucceeded);
  EXPECT_THAT(s.diagnostics, HasSubstr("warning: tensorboard:0 died with exit code 127"));
  EXPECT_THAT(s.diagnostics, HasSubstr("command not found"));
}

TEST_F(AmTest, TheStatusPageQuotesNoStderrWhereTheDiagnosticsDo) {
  std::string url;
  tweak_ = [&](ApplicationMasterOptions& o) {
    o.on_broker_started = [&url](int, const std::string& u) {
      url = u;
      return absl::OkStatus();
    };
  };
  Start({AmJob("worker", 1), AmJob("tensorboard", 1)});
  AllRunning();
  Exit("tensorboard", 0, 127, "token=s3cr3t-from-stderr");
  ASSERT_TRUE(Eventually(
      [&] { return absl::StrContains(am_->Status().diagnostics, "s3cr3t-from-stderr"); }));
  const std::string page = Get(url);
  EXPECT_THAT(page, HasSubstr("warning: tensorboard:0 died with exit code 127"));
  EXPECT_THAT(page, HasSubstr("(in the task's stderr log)"));
  EXPECT_THAT(page, Not(HasSubstr("s3cr3t")));
  Exit("worker", 0, 0);
  EXPECT_EQ(Final().state, AppState::kSucceeded);
}

TEST_F(AmTest, TensorBoardRestartsShowInProgressAndDiagnosticsWhileTrainingGoesOn) {
  Start({AmJob("worker", 1), AmJob("tensorboard", 1)});
  AllRunning();
  events()->OnTaskRestarted("tensorboard", 0, 1, 1, "OSError: [Errno 98] Address in use");
  events()->OnTaskRestarted("tensorboard", 0, 2, 1, "OSError: [Errno 98] Address in use");
  ApplicationStatus running;
  Eventually([&] {
    running = am_->Status();
    return running.progress["tensorboard"].restarts == 2;
  });
  EXPECT_EQ(running.state, AppState::kRunning);
  EXPECT_EQ(running.progress["tensorboard"].restarts, 2);
  EXPECT_THAT(running.diagnostics,
              HasSubstr("warning: tensorboard:0 exited with code 1 and was restarted (2 of"));
  EXPECT_THAT(running.diagnostics, Not(HasSubstr("restarted (1 of")));  // one line per sidecar
  Exit("tensorboard", 0, 1, "OSError: [Errno 98] Address in use");
  Exit("worker", 0, 0);
  ApplicationStatus s = Final();
  EXPECT_EQ(s.state, AppState::kSucceeded);
  EXPECT_THAT(s.diagnostics,
              HasSubstr("warning: tensorboard:0 died with exit code 1 after 2 restarts"));
  EXPECT_EQ(s.progress["tensorboard"].restarts, 2);
}

TEST_F(AmTest, ATensorBoardDyingBeforeRegisteringNeitherFailsNorHoldsTheJob) {
  Start({AmJob("worker", 1), AmJob("tensorboard", 1)}, absl::Minutes(10));
  rm_.Allocate("tensorboard:0");
  rm_.Complete("tensorboard:0", 1);  // its executor died before registering
  rm_.Allocate("worker:0");
  events()->OnRegistered("worker", 0, "127.0.0.1:1000");
  events()->OnTaskStarted("worker", 0);
  Exit("worker", 0, 0);
  ApplicationStatus s = Final();
  EXPECT_EQ(s.state, AppState::kSucceeded);
  EXPECT_THAT(s.diagnostics,
              HasSubstr("warning: tensorboard:0 died with exit code 1 before registering"));
}

TEST_F(AmTest, ATensorBoardThatCannotBeLaunchedIsAWarning) {
  Start({AmJob("worker", 1), AmJob("tensorboard", 1)});
  rm_.Emit({ContainerEvent::Kind::kLaunchFailed, "tensorboard:0", "c1", 0, "no such image"});
  rm_.Allocate("worker:0");
  events()->OnRegistered("worker", 0, "127.0.0.1:1000");
  events()->OnTaskStarted("worker", 0);
  Exit("worker", 0, 0);
  ApplicationStatus s = Final();
  EXPECT_EQ(s.state, AppState::kSucceeded);
  EXPECT_THAT(s.diagnostics, HasSubstr("warning: could not launch tensorboard:0: no such image"));
}

TEST_F(AmTest, TaskEndingBeforeRegisteringFailsAtOnce) {
  Start({AmJob("ps", 1), AmJob("worker", 2)}, absl::Minutes(10));
  rm_.Allocate("worker:1");
  events()->OnRegistered("ps", 0, "127.0.0.1:1000");
  absl::Time start = absl::Now();
  rm_.Complete("worker:1", 2);  // its executor died before registering
  ApplicationStatus s = Final();
  EXPECT_LT(absl::Now() - start, absl::Seconds(20));  // not the registration deadline
  EXPECT_EQ(s.state, AppState::kFailed);
  EXPECT_THAT(s.diagnostics, HasSubstr("worker:1 exited with code 2 before registering"));
  EXPECT_THAT(rm_.killed(), UnorderedElementsAre("ps:0", "worker:0"));
}

TEST_F(AmTest, UntrackedTaskDyingEarlyFailsTheJob) {
  Start({AmJob("ps", 1), AmJob("worker", 2)});
  AllRunning();
  Exit("ps", 0, 134, "Aborted (core dumped)");
  ApplicationStatus s = Final();
  EXPECT_EQ(s.state, AppState::kFailed);
  EXPECT_THAT(s.diagnostics, HasSubstr("ps:0 (untracked) died with exit code 134"));
  EXPECT_THAT(s.diagnostics, HasSubstr("Aborted (core dumped)"));
  EXPECT_THAT(rm_.killed(), UnorderedElementsAre("worker:0", "worker:1"));
}

TEST_F(AmTest, EvaluatorExitingZeroDoesNotEndTheJob) {
  Start({AmJob("worker", 1), AmJob("evaluator", 1)});
  AllRunning();
  Exit("evaluator", 0, 0);
  ASSERT_TRUE(Eventually([&] { return am_->Status().progress["evaluator"].succeeded == 1; }));
  EXPECT_EQ(result_.wait_for(std::chrono::milliseconds(0)), std::future_status::timeout);
  Exit("worker", 0, 0);
  ApplicationStatus s = Final();
  EXPECT_EQ(s.state, AppState::kSucceeded);
  EXPECT_THAT(rm_.killed(), IsEmpty());
}

TEST_F(AmTest, WithAChiefOnlyTheChiefDecides) {
  // Default tracking: with a chief job, only the chief is tracked (docs/job-spec.md).
  Start({AmJob("chief", 1), AmJob("worker", 2), AmJob("ps", 1)});
  AllRunning();
  Exit("chief", 0, 0);
  ApplicationStatus s = Final();
  EXPECT_EQ(s.state, AppState::kSucceeded);
  EXPECT_THAT(rm_.killed(), UnorderedElementsAre("worker:0", "worker:1", "ps:0"));
}

TEST_F(AmTest, RegistrationDeadlineNamesTheMissingTasks) {
  // 3 s: the two registrations below must reach the broker within it, even from a process
  // starved for a while (the sanitizer runs at nice 19).
  Start({AmJob("ps", 1), AmJob("worker", 2)}, absl::Seconds(3));
  for (const std::string& id : rm_.requested()) rm_.Allocate(id);
  // Real registrations through the broker, for ps:0 and worker:1 only.
  std::string address = absl::StrCat("127.0.0.1:", am_->broker_port());
  auto reg = [&](const std::string& job, int index) {
    return std::async(std::launch::async, [=] {
      broker::BrokerClient client(address, kSecret);
      return client.Register(job, index, "127.0.0.1", 2000 + index, absl::Seconds(10));
    });
  };
  auto ps = reg("ps", 0);
  auto w1 = reg("worker", 1);
  ApplicationStatus s = Final();
  EXPECT_EQ(s.state, AppState::kFailed);
  EXPECT_THAT(s.diagnostics, HasSubstr("never registered: worker:0"));
  EXPECT_THAT(s.diagnostics, Not(HasSubstr("ps:0")));
  EXPECT_EQ(ps.get().status().code(), absl::StatusCode::kAborted);
  EXPECT_EQ(w1.get().status().code(), absl::StatusCode::kAborted);
  EXPECT_THAT(rm_.killed(), UnorderedElementsAre("ps:0", "worker:0", "worker:1"));
}

TEST_F(AmTest, KillEndsKilled) {
  Start({AmJob("ps", 1), AmJob("worker", 1)});
  AllRunning();
  broker::BrokerClient client(absl::StrCat("127.0.0.1:", am_->broker_port()), kSecret);
  ASSERT_TRUE(client.Kill("user request").ok());
  ApplicationStatus s = Final();
  EXPECT_EQ(s.state, AppState::kKilled);
  EXPECT_THAT(s.diagnostics, HasSubstr("user request"));
  EXPECT_THAT(rm_.killed(), UnorderedElementsAre("ps:0", "worker:0"));
}

TEST_F(AmTest, LaunchFailureFailsTheJob) {
  Start({AmJob("worker", 2)});
  rm_.Emit({ContainerEvent::Kind::kLaunchFailed, "worker:0", "c1", 0, "no such file"});
  ApplicationStatus s = Final();
  EXPECT_EQ(s.state, AppState::kFailed);
  EXPECT_THAT(s.diagnostics, HasSubstr("could not launch worker:0: no such file"));
  EXPECT_THAT(rm_.killed(), UnorderedElementsAre("worker:1"));
}

TEST_F(AmTest, BackendFailureFailsTheJob) {
  Start({AmJob("worker", 1)});
  rm_.Emit({ContainerEvent::Kind::kFatal, "", "", 0, "scheduler unreachable"});
  ApplicationStatus s = Final();
  EXPECT_EQ(s.state, AppState::kFailed);
  EXPECT_THAT(s.diagnostics, HasSubstr("scheduler unreachable"));
}

// Issue 43: YARN ended the attempt (the RM no longer knows it). The job fails at once without
// stopping anything; the AM waits only for the executors to hear it (not orphan_notice, an hour
// here) and not for a client's look at the final status (final_status_linger, an hour here).
TEST_F(AmTest, BackendGoneFailsTheJobWithoutStopsOnceEveryExecutorHeardIt) {
  tweak_ = [](ApplicationMasterOptions& o) {
    o.orphan_notice = absl::Hours(1);
    o.final_status_linger = absl::Hours(1);
  };
  Start({AmJob("worker", 2)});
  AllRunning();
  rm_.Emit({ContainerEvent::Kind::kAllEnded, "", "", 0,
            "the ResourceManager no longer knows this attempt"});
  broker::BrokerClient client(absl::StrCat("127.0.0.1:", am_->broker_port()), kSecret);
  // Each executor's next heartbeat is answered that the job is over.
  for (int index : {0, 1}) {
    absl::Status s;
    ASSERT_TRUE(Eventually([&] {
      return absl::IsFailedPrecondition(s = client.Heartbeat("worker", index));
    })) << s;
    EXPECT_THAT(s.message(), HasSubstr("the job is over"));
  }
  ApplicationStatus s = Final();
  EXPECT_EQ(s.state, AppState::kFailed);
  EXPECT_THAT(s.diagnostics,
              HasSubstr("the resource manager ended this attempt: the ResourceManager no longer "
                        "knows this attempt"));
  EXPECT_THAT(rm_.killed(), IsEmpty());
}

// Issue 43: a node lost (-100) fails the job; the executor there, which no NodeManager stopped,
// hears the end from its next heartbeat before the AM is done.
TEST_F(AmTest, AnExecutorOnALostNodeHearsTheEndBeforeTheAmIsDone) {
  tweak_ = [](ApplicationMasterOptions& o) { o.orphan_notice = absl::Hours(1); };
  Start({AmJob("worker", 2)});
  AllRunning();
  rm_.Complete("worker:0", -100);
  ASSERT_TRUE(Eventually([&] { return rm_.killed().size() == 1; }));
  rm_.Complete("worker:1", 143);  // its NodeManager stopped it
  // Not done yet: worker:0's executor has not heard.
  EXPECT_EQ(result_.wait_for(std::chrono::milliseconds(0)), std::future_status::timeout);
  broker::BrokerClient client(absl::StrCat("127.0.0.1:", am_->broker_port()), kSecret);
  EXPECT_TRUE(absl::IsFailedPrecondition(client.Heartbeat("worker", 0)));
  ApplicationStatus s = Final();
  EXPECT_EQ(s.state, AppState::kFailed);
}

TEST_F(AmTest, SilentTaskFailsTheJob) {
  Start({AmJob("worker", 2)});
  AllRunning();
  events()->OnHeartbeatTimeout("worker", 1);
  ApplicationStatus s = Final();
  EXPECT_EQ(s.state, AppState::kFailed);
  EXPECT_THAT(s.diagnostics, HasSubstr("worker:1 sent no heartbeat"));
}

TEST_F(AmTest, JobTimeoutFailsTheJob) {
  Start({AmJob("worker", 1)}, absl::Seconds(30), absl::Milliseconds(300));
  AllRunning();
  ApplicationStatus s = Final();
  EXPECT_EQ(s.state, AppState::kFailed);
  EXPECT_THAT(s.diagnostics, HasSubstr("job timeout"));
  EXPECT_THAT(rm_.killed(), UnorderedElementsAre("worker:0"));
}

TEST_F(AmTest, WaitsForStoppedTasksBeforeReturning) {
  rm_.set_complete_on_kill(false);
  // ps completes when the test says: no stall of this process may let the AM give up on it first.
  tweak_ = [](ApplicationMasterOptions& o) { o.stop_margin = absl::Hours(1); };
  Start({AmJob("ps", 1), AmJob("worker", 1)});
  AllRunning();
  Exit("worker", 0, 0);
  ASSERT_TRUE(Eventually([&] { return !rm_.killed().empty(); }));
  EXPECT_EQ(result_.wait_for(std::chrono::milliseconds(0)), std::future_status::timeout);
  // While ps is being stopped the outcome is not shown yet.
  EXPECT_EQ(am_->Status().state, AppState::kRunning);
  rm_.Complete("ps:0", 143);
  ApplicationStatus s = Final();
  EXPECT_EQ(s.state, AppState::kSucceeded);
}

TEST_F(AmTest, GivesUpOnTasksThatDoNotStop) {
  rm_.set_complete_on_kill(false);
  Start({AmJob("ps", 1), AmJob("worker", 1)});
  AllRunning();
  absl::Time start = absl::Now();
  Exit("worker", 0, 0);
  ApplicationStatus s = Final();  // stop grace 1s + margin 2s
  EXPECT_EQ(s.state, AppState::kSucceeded);
  EXPECT_GE(absl::Now() - start, absl::Seconds(2));
  EXPECT_TRUE(rm_.stopped());
}

TEST_F(AmTest, ProgressCountsPerJobType) {
  Start({AmJob("ps", 1), AmJob("worker", 2)});
  rm_.Allocate("ps:0");
  rm_.Allocate("worker:0");
  events()->OnRegistered("ps", 0, "127.0.0.1:1");
  events()->OnTaskStarted("ps", 0);
  ASSERT_TRUE(Eventually([&] { return am_->Status().progress["ps"].running == 1; }));
  broker::BrokerClient client(absl::StrCat("127.0.0.1:", am_->broker_port()), kSecret);
  auto s = client.GetStatus();
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->state, AppState::kRunning);
  EXPECT_EQ(s->progress["ps"].total, 1);
  EXPECT_EQ(s->progress["ps"].allocated, 1);
  EXPECT_EQ(s->progress["ps"].registered, 1);
  EXPECT_EQ(s->progress["ps"].running, 1);
  EXPECT_EQ(s->progress["worker"].total, 2);
  EXPECT_EQ(s->progress["worker"].allocated, 1);
  EXPECT_EQ(s->progress["worker"].registered, 0);
  am_->Kill("test over");
  EXPECT_EQ(Final().state, AppState::kKilled);
}

TEST_F(AmTest, StatusPageIsTheTrackingUrlAndTensorBoardTakesOver) {
  absl::Mutex mu;
  std::string tracking_url, tensorboard_url;
  std::atomic<bool> listening_started{false};
  bool announced_while_listening = false;
  tweak_ = [&](ApplicationMasterOptions& o) {
    o.spec.tensorboard = true;
    o.spec.output_path = "/tmp/out";
    o.on_broker_started = [&](int, const std::string& url) {
      absl::MutexLock lock(&mu);
      tracking_url = url;
      return absl::OkStatus();
    };
    o.on_tensorboard_ready = [&](const std::string& url) {
      absl::MutexLock lock(&mu);
      tensorboard_url = url;
      announced_while_listening = listening_started;
    };
  };
  Start({AmJob("worker", 1)});
  EXPECT_THAT(rm_.requested(), UnorderedElementsAre("worker:0", "tensorboard:0"));
  std::string url;
  {
    absl::MutexLock lock(&mu);
    url = tracking_url;
  }
  ASSERT_THAT(url, ::testing::StartsWith("http://127.0.0.1:"));
  EXPECT_EQ(am_->Status().tracking_url, url);
  std::string page = Get(url);
  EXPECT_THAT(page, HasSubstr("test_app"));
  EXPECT_THAT(page, HasSubstr("worker:0"));
  EXPECT_THAT(page, HasSubstr("WAITING"));

  // TensorBoard registers, but is announced only once it answers on its port.
  StatusPage tensorboard({"127.0.0.1", 0}, [] { return std::string("TensorBoard"); });
  ASSERT_TRUE(tensorboard.Start().ok());
  const int tb_port = tensorboard.port();
  tensorboard.Stop();  // its port now refuses connections
  for (const std::string& id : rm_.requested()) rm_.Allocate(id);
  events()->OnRegistered("worker", 0, "127.0.0.1:1000");
  events()->OnTaskStarted("worker", 0);
  events()->OnRegistered("tensorboard", 0, absl::StrCat("127.0.0.1:", tb_port));
  events()->OnTaskStarted("tensorboard", 0);
  EXPECT_EQ(am_->Status().tensorboard_url, "");
  // An AM that announced TensorBoard before it answers would do it before this.
  StatusPage listening({"127.0.0.1", tb_port}, [] { return std::string("TensorBoard"); });
  listening_started = true;
  ASSERT_TRUE(listening.Start().ok());
  const std::string tb_url = absl::StrCat("http://127.0.0.1:", tb_port, "/");
  {
    absl::MutexLock lock(&mu);
    auto known = [&] { return !tensorboard_url.empty(); };
    mu.AwaitWithTimeout(absl::Condition(&known), absl::Seconds(10));
    EXPECT_EQ(tensorboard_url, tb_url);
    EXPECT_TRUE(announced_while_listening);
  }
  EXPECT_EQ(am_->Status().tensorboard_url, tb_url);
  page = Get(url);
  EXPECT_THAT(page, HasSubstr(tb_url));
  EXPECT_THAT(page, HasSubstr("RUNNING"));
  Exit("worker", 0, 0);
  ApplicationStatus s = Final();
  EXPECT_EQ(s.state, AppState::kSucceeded);  // TensorBoard never decides
  EXPECT_THAT(rm_.killed(), UnorderedElementsAre("tensorboard:0"));
}

TEST(StatusPageTest, EscapesAndAnswersOnlyGetAndHead) {
  ApplicationStatus st;
  st.id = "app<1>";
  st.state = AppState::kFailed;
  st.diagnostics = "worker:0 failed: <script>";
  std::string html = RenderStatusPage(st, {"worker:0 -"});
  EXPECT_THAT(html, HasSubstr("app&lt;1&gt;"));
  EXPECT_THAT(html, HasSubstr("&lt;script&gt;"));
  EXPECT_THAT(html, Not(HasSubstr("<script>")));
  EXPECT_THAT(html, Not(HasSubstr("refresh")));  // final: nothing changes any more

  StatusPage page({"127.0.0.1", 0}, [] { return std::string("hi"); });
  ASSERT_TRUE(page.Start().ok());
  const std::string url = absl::StrCat("http://127.0.0.1:", page.port(), "/any/path");
  http::Client client;
  auto get = client.Get(url);
  ASSERT_TRUE(get.ok()) << get.status();
  EXPECT_EQ(get->status, 200);
  EXPECT_EQ(get->body, "hi");
  auto post = client.Post(url, "x");
  ASSERT_TRUE(post.ok()) << post.status();
  EXPECT_EQ(post->status, 405);
  page.Stop();
  page.Stop();
}

TEST(StatusPageTest, ShowsWhatIsPending) {
  ApplicationStatus st;
  st.state = AppState::kRunning;
  EXPECT_THAT(RenderStatusPage(st, {}), Not(HasSubstr("Waiting:")));
  st.pending = "2 \u00d7 <8192 MB, 1 vcore> (worker:0-1) pending; queue headroom <0 MB, 3 vcores>";
  std::string html = RenderStatusPage(st, {});
  EXPECT_THAT(html,
              HasSubstr("<p>Waiting: 2 \u00d7 &lt;8192 MB, 1 vcore&gt; (worker:0-1) pending"));
  EXPECT_THAT(html, Not(HasSubstr("Why:")));
  st.wait_reason = "queue at capacity: root.default uses 100.0 %";
  EXPECT_THAT(RenderStatusPage(st, {}), HasSubstr("<p>Why: queue at capacity: root.default"));
}

TEST(StatusPageTest, RoutesByPathAndServesMetricsAsPrometheusText) {
  ApplicationStatus st;
  st.state = AppState::kRunning;
  st.attempt = 2;
  st.progress["worker"] = {
      .total = 2, .allocated = 2, .registered = 2, .running = 1, .succeeded = 1, .restarts = 3};
  st.progress["odd\"name"].total = 1;
  const std::string text = RenderPrometheusMetrics(st);
  EXPECT_THAT(text, HasSubstr("tony_job_state{state=\"RUNNING\"} 1\n"));
  EXPECT_THAT(text, HasSubstr("tony_job_state{state=\"FAILED\"} 0\n"));
  EXPECT_THAT(text, HasSubstr("tony_job_attempt 2\n"));
  EXPECT_THAT(text, HasSubstr("tony_tasks{job=\"worker\",phase=\"running\"} 1\n"));
  EXPECT_THAT(text, HasSubstr("tony_task_restarts_total{job=\"worker\"} 3\n"));
  EXPECT_THAT(text, HasSubstr("tony_tasks{job=\"odd\\\"name\",phase=\"total\"} 1\n"));
  EXPECT_THAT(text, HasSubstr("# TYPE tony_task_restarts_total counter\n"));
  std::map<std::string, TaskUsagePoint> usage;
  usage["worker:0"] = {absl::Now(), 512 << 20, 12.5, 0.75, 3};
  const std::string with_usage = RenderPrometheusMetrics(st, usage);
  EXPECT_THAT(with_usage, HasSubstr("tony_task_memory_rss_bytes{task=\"worker:0\"} 536870912\n"));
  EXPECT_THAT(with_usage, HasSubstr("tony_task_cpu_seconds_total{task=\"worker:0\"} 12.500\n"));
  EXPECT_THAT(with_usage, HasSubstr("tony_task_cpu_cores{task=\"worker:0\"} 0.750\n"));

  StatusPage page({"127.0.0.1", 0}, [] { return std::string("the page"); });
  page.AddRoute("/metrics", "text/plain; version=0.0.4", [] { return std::string("m 1\n"); });
  ASSERT_TRUE(page.Start().ok());
  http::Client client;
  const std::string base = absl::StrCat("http://127.0.0.1:", page.port());
  auto metrics = client.Get(base + "/metrics");
  ASSERT_TRUE(metrics.ok()) << metrics.status();
  EXPECT_EQ(metrics->body, "m 1\n");
  auto with_query = client.Get(base + "/metrics?name=x");
  ASSERT_TRUE(with_query.ok()) << with_query.status();
  EXPECT_EQ(with_query->body, "m 1\n");
  auto other = client.Get(base + "/anything");
  ASSERT_TRUE(other.ok()) << other.status();
  EXPECT_EQ(other->body, "the page");
}

TEST(StatusPageTest, OnYarnOnlyTheProxyGetsThePage) {
  // The server's own tests (tests/httpd) cover the rule; this is the page passing it on.
  StatusPageOptions o{"127.0.0.1", 0};
  o.allowed_peers = {"192.0.2.7"};  // the proxy; this test connects from 127.0.0.1
  o.redirect_url = "http://rm.example:8088/proxy/application_1_0001/";
  StatusPage page(o, [] { return std::string("secret state"); });
  ASSERT_TRUE(page.Start().ok());
  http::Client client;
  auto get = client.Get(absl::StrCat("http://127.0.0.1:", page.port(), "/"));
  ASSERT_TRUE(get.ok()) << get.status();
  EXPECT_EQ(get->status, 307);
  EXPECT_THAT(get->body, Not(HasSubstr("secret")));
  EXPECT_EQ(page.refused(), 1);
}

// YARN's proxy names the viewer it authenticated in its "proxy-user" cookie but checks no view
// ACL: with a viewer check, the page (every route) answers only those it allows.
TEST(StatusPageTest, WithAViewerCheckOnlyViewersGetThePage) {
  StatusPage page({"127.0.0.1", 0}, [] { return std::string("secret state"); });
  page.AddRoute("/metrics", "text/plain", [] { return std::string("secret metric 1\n"); });
  page.SetViewerCheck([](absl::string_view viewer) { return viewer == "alice"; });
  ASSERT_TRUE(page.Start().ok());
  http::Client client;
  const std::string base = absl::StrCat("http://127.0.0.1:", page.port());
  for (const std::string path : {"/", "/metrics"}) {
    auto alice = client.Get(base + path, {{"Cookie", "proxy-user=alice"}});
    ASSERT_TRUE(alice.ok()) << alice.status();
    EXPECT_EQ(alice->status, 200) << path;
    EXPECT_THAT(alice->body, HasSubstr("secret"));
    for (const http::Headers& who : std::vector<http::Headers>{
             {{"Cookie", "proxy-user=mallory"}}, {}, {{"Cookie", "proxy-user=alice2"}}}) {
      auto other = client.Get(base + path, who);
      ASSERT_TRUE(other.ok()) << other.status();
      EXPECT_EQ(other->status, 403) << path;
      EXPECT_THAT(other->body, Not(HasSubstr("secret")));
    }
  }
}

TEST_F(AmTest, InClientModeTheClientDecides) {
  tweak_ = [](ApplicationMasterOptions& o) { o.spec.client_mode = true; };
  Start({AmJob("ps", 1), AmJob("worker", 2)});
  // The client runs where ytf-submit runs: nothing is requested for it.
  EXPECT_THAT(rm_.requested(), UnorderedElementsAre("ps:0", "worker:0", "worker:1"));
  AllRunning();
  events()->OnTaskStarted("client", 0);
  Exit("worker", 0, 0);
  Exit("worker", 1, 0);
  ASSERT_TRUE(Eventually([&] { return am_->Status().progress["worker"].succeeded == 2; }));
  EXPECT_EQ(result_.wait_for(std::chrono::milliseconds(0)), std::future_status::timeout);
  EXPECT_EQ(am_->Status().progress["client"].running, 1);
  events()->OnTaskExited("client", 0, 0, "");
  ApplicationStatus s = Final();
  EXPECT_EQ(s.state, AppState::kSucceeded);
  EXPECT_THAT(rm_.killed(), UnorderedElementsAre("ps:0"));
}

TEST_F(AmTest, InClientModeAFailingClientFailsTheJob) {
  tweak_ = [](ApplicationMasterOptions& o) { o.spec.client_mode = true; };
  Start({AmJob("ps", 1), AmJob("worker", 1)});
  AllRunning();
  events()->OnTaskStarted("client", 0);
  events()->OnTaskExited("client", 0, 4, "");
  ApplicationStatus s = Final();
  EXPECT_EQ(s.state, AppState::kFailed);
  EXPECT_THAT(s.diagnostics, HasSubstr("client:0 failed with exit code 4"));
  EXPECT_THAT(rm_.killed(), UnorderedElementsAre("ps:0", "worker:0"));
}

TEST_F(AmTest, InClientModeAClientThatNeverStartsFailsTheJob) {
  tweak_ = [](ApplicationMasterOptions& o) { o.spec.client_mode = true; };
  // Also the client's start deadline; the registration below must come within it, even from a
  // starved process.
  Start({AmJob("worker", 1)}, absl::Seconds(4));
  rm_.Allocate("worker:0");
  // A real registration, so that the broker publishes the spec.
  broker::BrokerClient worker(absl::StrCat("127.0.0.1:", am_->broker_port()), kSecret);
  ASSERT_TRUE(worker.Register("worker", 0, "127.0.0.1", 2000, absl::Seconds(5)).ok());
  ApplicationStatus s = Final();
  EXPECT_EQ(s.state, AppState::kFailed);
  EXPECT_THAT(s.diagnostics, HasSubstr("client:0 did not start within"));
  EXPECT_THAT(rm_.killed(), UnorderedElementsAre("worker:0"));
}

TEST_F(AmTest, InClientModeAnExitReportWithoutStartStillCounts) {
  tweak_ = [](ApplicationMasterOptions& o) { o.spec.client_mode = true; };
  Start({AmJob("worker", 1)});
  AllRunning();
  events()->OnClusterSpecPublished(ClusterSpec{});
  events()->OnTaskExited("client", 0, 0, "");  // its start report was lost
  ApplicationStatus s = Final();
  EXPECT_EQ(s.state, AppState::kSucceeded) << s.diagnostics;
}

TEST_F(AmTest, InClientModeASilentClientFailsTheJobNamingItsYtfSubmit) {
  tweak_ = [](ApplicationMasterOptions& o) { o.spec.client_mode = true; };
  Start({AmJob("worker", 1)});
  AllRunning();
  events()->OnTaskStarted("client", 0);
  events()->OnHeartbeatTimeout("client", 0);  // ytf-submit was SIGKILLed
  ApplicationStatus s = Final();
  EXPECT_EQ(s.state, AppState::kFailed);
  EXPECT_THAT(s.diagnostics, HasSubstr("client:0 sent no heartbeat"));
  EXPECT_THAT(s.diagnostics, HasSubstr("its ytf-submit was killed or lost the cluster"));
  EXPECT_THAT(rm_.killed(), UnorderedElementsAre("worker:0"));
}

// Work-preserving AM restart, as the second attempt's core sees it: the backend reports each
// task's (adopted) container allocated and launched, the executors register again and report
// their tasks running; one whose task ended while no AM was up registers and reports its exit
// at once, without a start. The job goes on and their exits decide it.
TEST_F(AmTest, ASecondAttemptRunsOnWithTasksThatRegisterAgain) {
  tweak_ = [](ApplicationMasterOptions& o) { o.attempt = 2; };
  Start({AmJob("ps", 1), AmJob("worker", 2)});
  for (const std::string& id : rm_.requested()) {
    rm_.Allocate(id);
    rm_.Emit({ContainerEvent::Kind::kLaunched, id, "c_" + id});
  }
  events()->OnRegistered("ps", 0, "127.0.0.1:1000");
  events()->OnRegistered("worker", 0, "127.0.0.1:1001");
  events()->OnRegistered("worker", 1, "127.0.0.1:1002");
  events()->OnTaskStarted("ps", 0);
  events()->OnTaskStarted("worker", 0);
  Exit("worker", 1, 0);  // ended while no AM was up: reported once it registered again
  ASSERT_TRUE(Eventually([&] { return am_->Status().progress["worker"].succeeded == 1; }));
  EXPECT_EQ(result_.wait_for(std::chrono::milliseconds(0)), std::future_status::timeout);
  Exit("worker", 0, 0);
  ApplicationStatus s = Final();
  EXPECT_EQ(s.state, AppState::kSucceeded) << s.diagnostics;
  EXPECT_THAT(rm_.killed(), UnorderedElementsAre("ps:0"));
}

TEST(AmStartTest, BackendThatCannotStartIsAnError) {
  FakeResourceManager rm;
  rm.set_start_status(absl::UnavailableError("no backend"));
  ApplicationMasterOptions o;
  o.verify_job_counts = true;
  o.spec.command = "true";
  o.spec.job_types = {AmJob("worker", 1)};
  o.secret = kSecret;
  o.broker_listen_address = "127.0.0.1:0";
  ApplicationMaster am(o, &rm);
  EXPECT_EQ(am.Run().status().code(), absl::StatusCode::kUnavailable);
}

}  // namespace
}  // namespace tony::am

namespace tony::am {
namespace {

// Restart policies (JobTypeSpec::restart).

RestartSpec TaskScope(RestartPolicy policy, int max_restarts = 2) {
  RestartSpec r;
  r.policy = policy;
  r.scope = RestartScope::kTask;
  r.max_restarts = max_restarts;
  r.backoff = absl::Milliseconds(10);
  return r;
}

JobTypeSpec Restarting(JobTypeSpec jt, RestartSpec r) {
  jt.restart = r;
  return jt;
}

TEST_F(AmTest, TaskScopeRelaunchesOnlyTheKilledWorkerAtItsOldAddressAndTheJobSucceeds) {
  Start({AmJob("chief", 1), AmJob("ps", 1),
         Restarting(AmJob("worker", 2), TaskScope(RestartPolicy::kExitCode))});
  AllRunning();
  Exit("worker", 1, 137, "Killed");
  ASSERT_TRUE(rm_.WaitForRequests(total_ + 1));
  EXPECT_THAT(rm_.relaunched(), UnorderedElementsAre("worker:1@127.0.0.1:1001"));
  EXPECT_THAT(rm_.killed(), IsEmpty());  // nothing else stopped
  ApplicationStatus running = am_->Status();
  EXPECT_EQ(running.state, AppState::kRunning);
  EXPECT_THAT(running.diagnostics,
              HasSubstr("worker:1: exit code 137: signal 9 (SIGKILL); task restart 1 of 2"));
  EXPECT_EQ(running.progress["worker"].failed, 0);
  // The relaunched executor comes back at the same address.
  rm_.Allocate("worker:1");
  events()->OnRegistered("worker", 1, "127.0.0.1:1001");
  events()->OnTaskStarted("worker", 1);
  ASSERT_TRUE(Eventually(
      [&] { return absl::StrContains(am_->Status().diagnostics, "back at 127.0.0.1:1001"); }));
  Exit("chief", 0, 0);
  ApplicationStatus s = Final();
  EXPECT_EQ(s.state, AppState::kSucceeded);
  EXPECT_THAT(s.diagnostics, HasSubstr("task restart 1 of 2 after 10ms; back at 127.0.0.1:1001"));
  EXPECT_THAT(rm_.killed(), UnorderedElementsAre("ps:0", "worker:0", "worker:1"));
  EXPECT_TRUE(am_->job_restart_allowed());
}

TEST_F(AmTest, ExitCodePolicyTreatsCodesBelow128AsFinal) {
  Start({AmJob("chief", 1), Restarting(AmJob("worker", 2), TaskScope(RestartPolicy::kExitCode))});
  AllRunning();
  Exit("worker", 0, 3, "ValueError: bad input");
  ApplicationStatus s = Final();
  EXPECT_EQ(s.state, AppState::kFailed);
  EXPECT_THAT(s.diagnostics,
              HasSubstr("worker:0 (untracked) died with exit code 3 before the tracked tasks "
                        "finished (restart policy exit-code/task: exit code 3 is final; no "
                        "restart)"));
  EXPECT_THAT(rm_.relaunched(), IsEmpty());
  EXPECT_FALSE(am_->job_restart_allowed());  // no whole-job attempt either
}

TEST_F(AmTest, LostNodePreemptionAndRmKillAreRetriedUnderExitCode) {
  Start({AmJob("chief", 1), Restarting(AmJob("worker", 3), TaskScope(RestartPolicy::kExitCode))});
  AllRunning();
  // No exit report: the container is gone with its node, preempted, or killed by the RM.
  rm_.Complete("worker:0", -100);
  rm_.Complete("worker:1", -102);
  rm_.Complete("worker:2", -106);
  ASSERT_TRUE(rm_.WaitForRequests(total_ + 3));
  // A lost node is not asked for again; the others' nodes are.
  EXPECT_THAT(rm_.relaunched(), UnorderedElementsAre("worker:0@:1000", "worker:1@127.0.0.1:1001",
                                                     "worker:2@127.0.0.1:1002"));
  ApplicationStatus running = am_->Status();
  EXPECT_THAT(running.diagnostics, HasSubstr("exit status -100: its node was lost"));
  EXPECT_THAT(running.diagnostics, HasSubstr("exit status -102: preempted by the scheduler"));
  EXPECT_THAT(running.diagnostics, HasSubstr("exit status -106: killed by the ResourceManager"));
  am_->Kill("test over");
  EXPECT_EQ(Final().state, AppState::kKilled);
}

// YARN ends a container it preempts with SIGTERM: the executor's report (143) comes before the
// RM's completion (-102); the AM waits for the latter, so the restart names the preemption.
TEST_F(AmTest, ASigtermEndWaitsForTheContainersCompletionToLearnOfAPreemption) {
  Start({AmJob("chief", 1), Restarting(AmJob("worker", 2), TaskScope(RestartPolicy::kOnFailure))});
  AllRunning();
  // Held for the container's completion (JobStateTest.ASigtermEndWaitsForTheContainerToSayWhy
  // shows that nothing happens meanwhile).
  events()->OnTaskExited("worker", 0, 143, "Terminated");
  rm_.Complete("worker:0", -102);
  ASSERT_TRUE(rm_.WaitForRequests(total_ + 1));
  ApplicationStatus running = am_->Status();
  EXPECT_THAT(running.diagnostics,
              HasSubstr("worker:0: exit status -102: preempted by the scheduler; task restart 1"));
  EXPECT_THAT(running.diagnostics, Not(HasSubstr("143")));
  am_->Kill("test over");
  EXPECT_EQ(Final().state, AppState::kKilled);
}

// Without word from YARN within exit_cause_wait, the executor's report stands.
TEST_F(AmTest, ASigtermEndWithoutTheContainersCompletionKeepsTheExecutorsCode) {
  tweak_ = [](ApplicationMasterOptions& o) { o.exit_cause_wait = absl::Milliseconds(50); };
  Start({AmJob("chief", 1), Restarting(AmJob("worker", 2), TaskScope(RestartPolicy::kOnFailure))});
  AllRunning();
  events()->OnTaskExited("worker", 1, 143, "Terminated");
  std::string diagnostics;
  Eventually([&] {
    diagnostics = am_->Status().diagnostics;
    return absl::StrContains(diagnostics, "task restart");
  });
  EXPECT_THAT(diagnostics,
              HasSubstr("worker:1: exit code 143: signal 15 (SIGTERM); task restart 1"));
  rm_.Complete("worker:1", 143);  // relaunched once its container has ended
  ASSERT_TRUE(rm_.WaitForRequests(total_ + 1));
  am_->Kill("test over");
  EXPECT_EQ(Final().state, AppState::kKilled);
}

TEST_F(AmTest, NeverPolicyAndUsedUpRestartsFailTheJob) {
  Start(
      {AmJob("chief", 1), Restarting(AmJob("worker", 1), TaskScope(RestartPolicy::kOnFailure, 1))});
  AllRunning();
  Exit("worker", 0, 1);
  ASSERT_TRUE(rm_.WaitForRequests(total_ + 1));
  rm_.Allocate("worker:0");
  events()->OnRegistered("worker", 0, "127.0.0.1:1000");
  Exit("worker", 0, 1, "again");
  ApplicationStatus s = Final();
  EXPECT_EQ(s.state, AppState::kFailed);
  EXPECT_THAT(s.diagnostics, HasSubstr("restarted 1 times already, max_restarts 1"));
  EXPECT_THAT(s.diagnostics, HasSubstr("task restart 1 of 1"));
  EXPECT_EQ(rm_.relaunched().size(), 1u);
}

TEST_F(AmTest, ARelaunchedTaskAtANewAddressFailsOrEscalatesAsItsPolicySays) {
  for (AddressChange change : {AddressChange::kFail, AddressChange::kRestartJob}) {
    SCOPED_TRACE(AddressChangeName(change));
    FakeResourceManager rm;
    ApplicationMasterOptions o;
    o.verify_job_counts = true;
    o.spec.command = "true";
    RestartSpec r = TaskScope(RestartPolicy::kOnFailure);
    r.on_address_change = change;
    o.spec.job_types = {AmJob("chief", 1), Restarting(AmJob("worker", 1), r)};
    o.spec.timeouts.stop_grace = absl::Seconds(1);
    o.secret = kSecret;
    o.broker_listen_address = "127.0.0.1:0";
    o.advertised_host = "127.0.0.1";
    o.stop_margin = absl::Seconds(2);
    o.final_status_linger = absl::ZeroDuration();
    ApplicationMaster am(o, &rm);
    auto result = std::async(std::launch::async, [&] { return am.Run(); });
    ASSERT_TRUE(rm.WaitForRequests(2));
    for (const char* job : {"chief", "worker"}) {
      rm.Allocate(absl::StrCat(job, ":0"));
      am.executor_events()->OnRegistered(job, 0, absl::StrCat("127.0.0.1:1", job[0] == 'c'));
    }
    am.executor_events()->OnTaskExited("worker", 0, 1, "");
    rm.Complete("worker:0", 1);
    ASSERT_TRUE(rm.WaitForRequests(3));
    rm.Allocate("worker:0");
    am.executor_events()->OnRegistered("worker", 0, "127.0.0.1:2000");
    ASSERT_EQ(result.wait_for(std::chrono::seconds(20)), std::future_status::ready);
    absl::StatusOr<ApplicationStatus> s = result.get();
    ASSERT_TRUE(s.ok());
    EXPECT_EQ(s->state, AppState::kFailed);
    EXPECT_THAT(s->diagnostics, HasSubstr("worker:0 was relaunched but came back at "
                                          "127.0.0.1:2000 instead of 127.0.0.1:10"));
    EXPECT_EQ(am.job_restart_allowed(), change == AddressChange::kRestartJob);
  }
}

TEST_F(AmTest, JobScopeEndsTheAttemptForTheNextOneUntilMaxRestarts) {
  for (int attempt : {1, 2}) {
    SCOPED_TRACE(attempt);
    FakeResourceManager rm;
    ApplicationMasterOptions o;
    o.verify_job_counts = true;
    o.spec.command = "true";
    RestartSpec r;
    r.policy = RestartPolicy::kExitCode;
    r.scope = RestartScope::kJob;
    r.max_restarts = 1;
    o.spec.max_attempts = 2;
    o.spec.job_types = {Restarting(AmJob("worker", 1), r)};
    o.spec.timeouts.stop_grace = absl::Seconds(1);
    o.secret = kSecret;
    o.broker_listen_address = "127.0.0.1:0";
    o.advertised_host = "127.0.0.1";
    o.stop_margin = absl::Seconds(2);
    o.final_status_linger = absl::ZeroDuration();
    o.attempt = attempt;
    ApplicationMaster am(o, &rm);
    auto result = std::async(std::launch::async, [&] { return am.Run(); });
    ASSERT_TRUE(rm.WaitForRequests(1));
    rm.Allocate("worker:0");
    am.executor_events()->OnRegistered("worker", 0, "127.0.0.1:1000");
    am.executor_events()->OnTaskExited("worker", 0, 143, "");
    rm.Complete("worker:0", 143);
    ASSERT_EQ(result.wait_for(std::chrono::seconds(20)), std::future_status::ready);
    absl::StatusOr<ApplicationStatus> s = result.get();
    ASSERT_TRUE(s.ok());
    EXPECT_EQ(s->state, AppState::kFailed);
    EXPECT_THAT(rm.relaunched(), IsEmpty());
    if (attempt == 1) {
      EXPECT_TRUE(am.job_restart_allowed());
      EXPECT_THAT(s->diagnostics, HasSubstr("the whole job restarts as attempt 2"));
      EXPECT_THAT(s->diagnostics, HasSubstr("whole-job restart 1 of 1 (attempt 2)"));
    } else {
      EXPECT_FALSE(am.job_restart_allowed());
      EXPECT_THAT(s->diagnostics, HasSubstr("the job was restarted 1 times already"));
    }
  }
}

TEST_F(AmTest, ARelaunchedTaskThatNeverRegistersFailsTheJobAtTheDeadline) {
  // 4 s: both registrations below must come within it, even from a starved process.
  Start({AmJob("chief", 1), Restarting(AmJob("worker", 1), TaskScope(RestartPolicy::kOnFailure))},
        absl::Seconds(4));
  // Registered with the broker itself, so that its own deadline is over once the spec is out.
  auto chief = std::async(std::launch::async, [this] {
    return broker::BrokerClient(absl::StrCat("127.0.0.1:", am_->broker_port()), kSecret)
        .Register("chief", 0, "127.0.0.1", 1000, absl::Seconds(10));
  });
  auto worker = broker::BrokerClient(absl::StrCat("127.0.0.1:", am_->broker_port()), kSecret)
                    .Register("worker", 0, "127.0.0.1", 1001, absl::Seconds(10));
  ASSERT_TRUE(worker.ok()) << worker.status();
  ASSERT_TRUE(chief.get().ok());
  rm_.Allocate("chief:0");
  rm_.Allocate("worker:0");
  Exit("worker", 0, 1);
  ASSERT_TRUE(rm_.WaitForRequests(total_ + 1));
  ApplicationStatus s = Final();
  EXPECT_EQ(s.state, AppState::kFailed);
  EXPECT_THAT(s.diagnostics, HasSubstr("worker:0 was relaunched but did not register within 4s"));
}

// On a simulated clock: the allocation deadline and the backoff pass when the test says, not
// while a starved process (the sanitizer runs at nice 19) was away.
TEST_F(AmTest, APartialGangIsReleasedAndAskedForAgainThenTheJobRuns) {
  SimulatedClock clock;
  tweak_ = [&](ApplicationMasterOptions& o) {
    o.spec.timeouts.allocation = absl::Milliseconds(300);
    o.allocation_backoff = absl::Milliseconds(300);
    o.gang_jitter = [] { return 1.0; };
    o.clock = &clock;
  };
  Start({AmJob("ps", 1), AmJob("worker", 2)});
  // Only ps:0 and worker:0 get containers; worker:0's executor even registers.
  rm_.Allocate("ps:0");
  rm_.Allocate("worker:0");
  events()->OnRegistered("worker", 0, "127.0.0.1:1000");
  const std::string one_pending = "1 \u00d7 <8192 MB, 1 vcore> (worker:1) pending";
  EXPECT_TRUE(Eventually([&] { return am_->Status().pending == one_pending; }))
      << am_->Status().pending;
  EXPECT_TRUE(rm_.killed().empty());
  // The deadline passes: everything is released, the request withdrawn.
  clock.Advance(absl::Milliseconds(300));
  Eventually([&] { return rm_.killed().size() >= 3; });
  EXPECT_THAT(rm_.killed(), UnorderedElementsAre("ps:0", "worker:0", "worker:1"));
  EXPECT_TRUE(Eventually([&] {
    return absl::StrContains(am_->Status().pending, "released everything after 300ms");
  })) << am_->Status().pending;
  EXPECT_EQ(am_->Status().state, AppState::kRunning);              // no failure
  EXPECT_EQ(rm_.requested().size(), static_cast<size_t>(total_));  // not before the backoff
  // Asked for again after the backoff; this time the whole gang comes.
  clock.Advance(absl::Milliseconds(300));
  ASSERT_TRUE(rm_.WaitForRequests(2 * total_));
  EXPECT_THAT(am_->Status().pending, HasSubstr("asked 2 times"));
  AllRunning();
  Eventually([&] { return am_->Status().pending.empty(); });
  EXPECT_EQ(am_->Status().pending, "");
  Exit("worker", 0, 0);
  Exit("worker", 1, 0);
  ApplicationStatus s = Final();
  EXPECT_EQ(s.state, AppState::kSucceeded) << s.diagnostics;
}

TEST(SummarizeTasksTest, RangesKeepLargeJobsDiagnosticsShort) {
  std::vector<std::string> missing = {"ps:0", "ps:1"};
  for (int i = 0; i < 5000; ++i) missing.push_back(absl::StrCat("worker:", i));
  missing.push_back("evaluator:0");
  EXPECT_EQ(SummarizeTasks(missing), "ps:0-1 (2 tasks), worker:0-4999 (5000 tasks), evaluator:0");
  std::vector<std::string> gaps;
  for (int i = 0; i < 5000; i += 2) gaps.push_back(absl::StrCat("worker:", i));
  std::string s = SummarizeTasks(gaps);
  EXPECT_LE(s.size(), 1100u);
  EXPECT_THAT(s, ::testing::HasSubstr("more"));
  EXPECT_EQ(SummarizeTasks({"worker:3"}), "worker:3");
}

}  // namespace
}  // namespace tony::am
