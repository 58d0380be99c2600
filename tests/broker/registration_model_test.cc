// Copyright libtony authors.
//
// RegistrationModel against tables: each step is one call (or a time) and the decision it must
// give, written as one line of text. No threads, no clock, no gRPC: the time is a value the
// table moves, so nothing here depends on how loaded the machine is. The transitions are those
// of docs/broker-state-machine.md (the last tests compare the two).

#include "broker/registration_model.h"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tony::broker {
namespace {

const absl::Time kStart = absl::FromUnixSeconds(1'000'000);

struct RegistrationStep {
  std::string call;  // "register worker:0 h:1", "at +30s", ...
  std::string want;  // the decision as Format() writes it
};

std::string Format(const Decision& d, const RegistrationModel& m) {
  std::vector<std::string> parts;
  switch (d.reply) {
    case Decision::Reply::kNone:
      parts.push_back("none");
      break;
    case Decision::Reply::kNow:
      parts.push_back("now");
      break;
    case Decision::Reply::kPark:
      parts.push_back("park");
      break;
    case Decision::Reply::kRefuse:
      parts.push_back(absl::StrCat("refuse ", absl::StatusCodeToString(d.status.code())));
      break;
  }
  if (d.news) parts.push_back("news");
  if (d.new_version) parts.push_back(absl::StrCat("v", m.spec().version));
  if (d.release) parts.push_back("release");
  return absl::StrJoin(parts, " ");
}

std::string Format(const absl::Status& s) {
  return s.ok() ? "ok" : absl::StatusCodeToString(s.code());
}

std::string FormatSpec(const ClusterSpec& spec) {
  std::vector<std::string> jobs;
  for (const auto& [name, addresses] : spec.jobs) {
    jobs.push_back(absl::StrCat(name, "=", absl::StrJoin(addresses, ",")));
  }
  return absl::StrCat("v", spec.version, " ", absl::StrJoin(jobs, " "));
}

// Runs the steps on one model; the time starts at kStart and moves with "at +Ns".
class Table {
 public:
  explicit Table(const ClusterSpecBrokerOptions& options) : model_(options) { model_.Start(now_); }

  void Run(const std::vector<RegistrationStep>& steps) {
    for (const RegistrationStep& step : steps) {
      EXPECT_EQ(Call(step.call), step.want) << "at step \"" << step.call << "\"";
    }
  }
  RegistrationModel& model() { return model_; }

 private:
  std::string Call(const std::string& line) {
    std::vector<std::string> w = absl::StrSplit(line, ' ');
    std::string job;
    int index = 0;
    if (w.size() > 1) {
      std::pair<std::string, std::string> t = absl::StrSplit(w[1], ':');
      job = t.first;
      if (!absl::SimpleAtoi(t.second, &index)) index = -1;
    }
    const std::string arg = w.size() > 2 ? w[2] : "";
    const std::string& verb = w[0];
    if (verb == "register") return Format(model_.Register(job, index, arg, now_), model_);
    if (verb == "observe") return Format(model_.Observe(), model_);
    if (verb == "excuse") return Format(model_.Excuse(job, index, now_), model_);
    if (verb == "phase") return std::string(TaskPhaseName(*model_.phase(job, index)));
    if (verb == "spec") return FormatSpec(model_.spec());
    if (verb == "unregistered") return absl::StrJoin(model_.Unregistered(), ",");
    if (verb == "registered") return model_.IsRegistered(job, index) ? "yes" : "no";
    if (verb == "exit") return Format(model_.Exit(job, index, arg));
    if (verb == "start") return Format(model_.Started(job, index, now_));
    if (verb == "heartbeat") {
      bool told_over = false;
      std::string preempt;
      absl::Status s = model_.Heartbeat(job, index, arg, now_, &told_over, &preempt);
      return absl::StrCat(Format(s), told_over ? " told over" : "",
                          preempt.empty() ? "" : " preempt " + preempt);
    }
    if (verb == "at") return Tick(w[1]);
    if (verb == "preempt") {  // "preempt worker:0 c1"
      model_.NoticePreemption(job, index, arg);
      return "";
    }
    return Act(verb, w.size() > 1 ? w[1] : "", job, index);
  }
  // Calls that answer nothing.
  std::string Act(const std::string& verb, const std::string& arg, const std::string& job,
                  int index) {
    if (verb == "admit") {
      model_.Admit(absl::StrSplit(arg, ','));
    } else if (verb == "reopen") {
      model_.Reopen(job, index);
    } else if (verb == "rejoin") {
      model_.Rejoin(job, index);

    } else if (verb == "stop") {
      model_.Stop();
    } else if (verb == "abort") {
      std::optional<absl::Status> s = model_.Abort(absl::FailedPreconditionError(arg));
      return s ? absl::StrCat(Format(*s), " ", s->message()) : "already";
    } else {
      return absl::StrCat("unknown call ", verb);
    }
    return "";
  }
  std::string Tick(absl::string_view delay) {
    int seconds = 0;
    if (!absl::SimpleAtoi(absl::StripSuffix(absl::StripPrefix(delay, "+"), "s"), &seconds)) {
      return "bad time";
    }
    now_ += absl::Seconds(seconds);
    TickDecision d = model_.Tick(now_);
    std::vector<std::string> parts;
    if (d.timeout) parts.push_back(absl::StrCat("timeout ", absl::StrJoin(d.missing, ",")));
    for (const auto& [name, i] : d.lost) parts.push_back(absl::StrCat("lost ", name, ":", i));
    return absl::StrJoin(parts, "; ");
  }

  absl::Time now_ = kStart;
  RegistrationModel model_;
};

ClusterSpecBrokerOptions Options(std::map<std::string, int> tasks) {
  ClusterSpecBrokerOptions options;
  options.expected_tasks = std::move(tasks);
  options.registration_timeout = absl::Seconds(30);
  return options;
}

TEST(RegistrationModelTest, TheLastRegistrationPublishesAndReleasesEveryParkedCall) {
  Table t(Options({{"worker", 2}}));
  t.Run({
      {"register worker:0 h:1", "park news"},
      {"phase worker:0", "PARKED"},
      {"register worker:0 h:1", "park"},       // the same executor's call again
      {"register worker:0 h:2", "park news"},  // before publication the address is replaced
      {"observe", "park"},
      {"unregistered", "worker:1"},
      {"register worker:2 h:3", "refuse NOT_FOUND"},
      {"register worker:1 h:3", "park news v1 release"},
      {"phase worker:0", "REGISTERED"},
      {"spec", "v1 worker=h:2,h:3"},
      {"register worker:1 h:3", "now"},
      {"register worker:1 h:4", "refuse ALREADY_EXISTS"},
      {"observe", "now"},
  });
}

// The publication waits for the tasks that hold it back (kept as a count, not found by a pass
// over every task at each registration): a reopened task counts again, an outside task that
// starts or exits early (client mode) neither holds it back nor counts for another.
TEST(RegistrationModelTest, ThePublicationWaitsForExactlyTheTasksThatHoldItBack) {
  ClusterSpecBrokerOptions options = Options({{"ps", 1}, {"worker", 3}});
  options.outside_tasks = {"client:0"};
  Table t(options);
  t.Run({
      {"start client:0", "ok"},
      {"exit client:0", "ok"},
      {"register worker:2 h:3", "park news"},
      {"register worker:0 h:1", "park news"},
      {"reopen worker:0", ""},
      {"register ps:0 h:9", "park news"},
      {"register worker:1 h:2", "park news"},  // worker:0 holds it back again
      {"unregistered", "worker:0"},
      {"register worker:0 h:4", "park news v1 release"},
      {"spec", "v1 ps=h:9 worker=h:4,h:2,h:3"},
  });
}

TEST(RegistrationModelTest, AReopenBeforePublicationForgetsTheRegistration) {
  Table t(Options({{"worker", 2}}));
  t.Run({
      {"register worker:0 h:1", "park news"},
      {"reopen worker:0", ""},
      {"phase worker:0", "REOPENED"},
      {"registered worker:0", "no"},
      {"unregistered", "worker:0,worker:1"},
      {"register worker:1 h:2", "park news"},
      {"register worker:0 h:1", "park news v1 release"},  // news: a new executor
      {"spec", "v1 worker=h:1,h:2"},
  });
}

TEST(RegistrationModelTest, ARelaunchedTaskComesBackAndSupersedesItsOldExecutor) {
  Table t(Options({{"worker", 2}}));
  t.Run({
      {"register worker:0 h:1", "park news"},
      {"register worker:1 h:2", "park news v1 release"},
      {"reopen worker:1", ""},
      {"phase worker:1", "REOPENED"},
      {"heartbeat worker:1 h:2", "FAILED_PRECONDITION"},
      {"exit worker:1 h:2", "FAILED_PRECONDITION"},
      {"phase worker:1", "REOPENED"},
      {"heartbeat worker:0 h:1", "ok"},
      {"register worker:1 h:2", "now news"},  // back at its address: the same spec
      {"reopen worker:1", ""},
      {"register worker:1 h:5", "now news v2"},  // elsewhere: the next version
      {"spec", "v2 worker=h:1,h:5"},
      {"heartbeat worker:1 h:2", "FAILED_PRECONDITION"},
      {"heartbeat worker:1 h:5", "ok"},
      {"register worker:1 h:6", "refuse ALREADY_EXISTS"},  // moving needs a reopen
  });
}

TEST(RegistrationModelTest, AnExcusedSidecarNeitherHoldsBackNorJoinsTheSpec) {
  Table t(Options({{"worker", 1}, {"tensorboard", 1}}));
  t.Run({
      {"register worker:0 h:1", "park news"},
      {"excuse tensorboard:0", "none v1 release"},
      {"phase tensorboard:0", "EXCUSED"},
      {"spec", "v1 worker=h:1"},
      {"unregistered", ""},
      {"excuse worker:0", "none"},  // registered: no effect
      {"register tensorboard:0 h:2", "refuse ALREADY_EXISTS"},
  });
}

TEST(RegistrationModelTest, ADeferredRoleJoinsTheNextVersionOnceAllOfItRegistered) {
  ClusterSpecBrokerOptions options =
      Options({{"prep", 1}, {"ps", 1}, {"worker", 2}, {"evaluator", 1}});
  options.deferred_job_types = {"worker", "evaluator"};
  Table t(options);
  t.Run({
      {"phase worker:0", "DEFERRED"},
      {"register ps:0 h:1", "park news"},
      {"register prep:0 h:2", "park news v1 release"},
      {"spec", "v1 prep=h:2 ps=h:1"},
      {"register worker:0 h:3", "refuse UNAVAILABLE"},  // not admitted yet: retried
      {"exit prep:0", "ok"},
      {"phase prep:0", "EXITED"},
      {"admit worker", ""},
      {"phase worker:0", "JOINING"},
      {"phase evaluator:0", "DEFERRED"},
      {"unregistered", "worker:0,worker:1"},
      {"register worker:0 h:3", "park news"},
      {"phase worker:0", "JOINED"},
      {"register worker:0 h:3", "park"},
      {"register worker:1 h:4", "park news v2 release"},
      {"spec", "v2 ps=h:1 worker=h:3,h:4"},                // prep exited: gone
      {"register evaluator:0 h:5", "refuse UNAVAILABLE"},  // after publication too
      {"phase worker:0", "REGISTERED"},
      {"register worker:1 h:4", "now"},
  });
}

TEST(RegistrationModelTest, ARoleAdmittedBeforeTheFirstPublicationJoinsIt) {
  ClusterSpecBrokerOptions options = Options({{"ps", 1}, {"worker", 1}});
  options.deferred_job_types = {"worker"};
  Table t(options);
  t.Run({
      {"admit worker,nosuch", ""},
      {"phase worker:0", "EXPECTED"},
      {"register ps:0 h:1", "park news"},
      {"register worker:0 h:2", "park news v1 release"},
      {"spec", "v1 ps=h:1 worker=h:2"},
  });
}

TEST(RegistrationModelTest, AnElasticRoleNeverWaitsAndIsNoPartOfTheSpec) {
  ClusterSpecBrokerOptions options = Options({{"rendezvous", 1}, {"worker", 3}});
  options.deferred_job_types = {"worker"};
  options.elastic_job_types = {"worker"};
  options.heartbeat_timeout = absl::Seconds(10);
  Table t(options);
  t.Run({
      {"register rendezvous:0 h:1", "park news v1 release"},
      {"admit worker", ""},
      {"phase worker:0", "STANDBY"},
      {"register worker:0 h:2", "now news"},
      {"register worker:2 h:4", "now news"},
      {"register worker:2 h:5", "now news"},  // comes and goes: any address
      {"spec", "v1 rendezvous=h:1"},
      {"reopen worker:0", ""},
      {"register worker:0 h:2", "now news"},  // relaunched: news at its old address too
      {"exit worker:2 h:5", "ok"},
      {"register worker:2 h:6", "now news"},
      {"at +11s", "lost rendezvous:0; lost worker:0; lost worker:2"},  // worker:1 never came
  });
}

// The ApplicationMaster asks for no task of a role before admitting it (JobState::CheckScale):
// a task of a deferred role is refused, reopened or not, before and after the publication.
TEST(RegistrationModelTest, ADeferredTaskIsRefusedUntilItsRoleIsAdmittedEvenReopened) {
  ClusterSpecBrokerOptions options = Options({{"rendezvous", 1}, {"worker", 2}});
  options.deferred_job_types = {"worker"};
  options.elastic_job_types = {"worker"};
  Table t(options);
  t.Run({
      {"reopen worker:1", ""},
      {"phase worker:1", "DEFERRED"},
      {"register worker:1 h:2", "refuse UNAVAILABLE"},
      {"register rendezvous:0 h:1", "park news v1 release"},
      {"register worker:1 h:2", "refuse UNAVAILABLE"},
      {"admit worker", ""},
      {"register worker:1 h:2", "now news"},
  });
}

TEST(RegistrationModelTest, RejoinedTasksWaitForEachOtherAndGetTheNextVersionTogether) {
  Table t(Options({{"ps", 1}, {"worker", 2}}));
  t.Run({
      {"register ps:0 h:1", "park news"},
      {"register worker:1 h:3", "park news"},
      {"register worker:0 h:2", "park news v1 release"},
      {"exit worker:1", "ok"},  // finished before the suspension
      {"reopen ps:0", ""},
      {"rejoin ps:0", ""},
      {"reopen worker:0", ""},
      {"rejoin worker:0", ""},
      {"phase ps:0", "JOINING"},
      {"registered ps:0", "no"},
      {"register ps:0 h:4", "park news"},
      {"reopen ps:0", ""},  // its executor died again before the round
      {"phase ps:0", "JOINING"},
      {"register ps:0 h:6", "park news"},
      {"register worker:0 h:5", "park news v2 release"},
      {"spec", "v2 ps=h:6 worker=h:5,h:3"},
  });
}

TEST(RegistrationModelTest, TheDeadlineNamesExactlyTheMissingTasksAndEndsRegistration) {
  Table t(Options({{"ps", 1}, {"worker", 3}}));
  t.Run({
      {"register worker:0 h:1", "park news"},
      {"register worker:2 h:3", "park news"},
      {"at +29s", ""},
      {"at +1s", "timeout ps:0,worker:1"},
      {"at +1s", ""},  // once
      {"register ps:0 h:4", "refuse ABORTED"},
      {"observe", "refuse ABORTED"},
  });
}

TEST(RegistrationModelTest, HeartbeatsAreWatchedFromThePublicationOn) {
  ClusterSpecBrokerOptions options = Options({{"worker", 2}});
  options.registration_timeout = absl::Minutes(10);
  options.heartbeat_timeout = absl::Seconds(10);
  options.outside_tasks = {"client:0"};
  Table t(options);
  t.Run({
      {"register worker:0 h:1", "park news"},
      {"at +30s", ""},  // parked: waits on its call, not heartbeating
      {"register worker:1 h:2", "park news v1 release"},
      {"at +9s", ""},
      {"heartbeat worker:1 h:2", "ok"},
      {"at +2s", "lost worker:0"},
      {"at +9s", "lost worker:1"},  // worker:0 once per timeout period
      {"exit worker:0 h:1", "ok"},
      {"at +2s", ""},  // exited: no longer watched
      {"at +11s", "lost worker:1"},
      {"phase client:0", "EXPECTED"},
      {"start client:0", "ok"},
      {"phase client:0", "REGISTERED"},
      {"at +11s", "lost worker:1; lost client:0"},
      {"exit client:0", "ok"},
      {"phase client:0", "EXITED"},
      {"heartbeat client:1", "NOT_FOUND"},
      {"register client:0 h:9", "refuse NOT_FOUND"},
  });
}

TEST(RegistrationModelTest, AfterAnAbortHeartbeatsTellTheJobIsOverButNotOutside) {
  ClusterSpecBrokerOptions options = Options({{"worker", 1}});
  options.outside_tasks = {"client:0"};
  Table t(options);
  t.Run({
      {"register worker:0 h:1", "park news v1 release"},
      {"abort boom", "ABORTED boom"},
      {"abort again", "already"},
      {"heartbeat worker:0 h:1", "FAILED_PRECONDITION told over"},
      {"heartbeat client:0", "ok"},
      {"register worker:0 h:1", "refuse ABORTED"},
      {"stop", ""},
      {"register worker:0 h:1", "refuse ABORTED"},  // the abort's reason first
  });
  Table s(Options({{"worker", 1}}));
  s.Run({
      {"stop", ""},
      {"register worker:0 h:1", "refuse UNAVAILABLE"},
      {"observe", "refuse UNAVAILABLE"},
  });
}

// The table is a function: one target for each phase, event and stage.
// The AM's preemption notice rides on every heartbeat answer of the task (an answer may be
// lost; the executor acts once per container) until the task is relaunched or rejoins.
TEST(RegistrationModelTest, APreemptionNoticeIsAnsweredUntilTheTaskIsReopened) {
  Table t(Options({{"worker", 2}}));
  t.Run({
      {"register worker:0 h:1", "park news"},
      {"register worker:1 h:2", "park news v1 release"},
      {"heartbeat worker:0 h:1", "ok"},
      {"preempt worker:0 c1", ""},
      {"preempt worker:9 c1", ""},  // unknown: ignored
      {"heartbeat worker:0 h:1", "ok preempt c1"},
      {"heartbeat worker:0 h:1", "ok preempt c1"},
      {"heartbeat worker:1 h:2", "ok"},
      {"reopen worker:0", ""},
      {"register worker:0 h:1", "now news"},
      {"heartbeat worker:0 h:1", "ok"},
      {"preempt worker:1 c2", ""},
      {"rejoin worker:1", ""},
      {"heartbeat worker:1 h:2", "ok"},
  });
}

TEST(RegistrationModelTest, TheTableHasOneRowPerPhaseEventAndStageAndNoSelfLoops) {
  std::set<std::string> keys;
  for (const Transition& t : Transitions()) {
    EXPECT_NE(t.from, t.to) << TaskPhaseName(t.from) << " " << TaskEventName(t.event);
    for (Stage s : {Stage::kGathering, Stage::kPublished}) {
      if (t.when != Stage::kAny && t.when != s) continue;
      std::string key =
          absl::StrCat(TaskPhaseName(t.from), " ", TaskEventName(t.event), " ", StageName(s));
      EXPECT_TRUE(keys.insert(key).second) << "two rows for " << key;
    }
  }
}

// docs/broker-state-machine.md's "Transitions" table, row for row.
std::string SourceDir() {
  const char* dir = std::getenv("TONY_SOURCE_DIR");
  return dir != nullptr && *dir != '\0' ? dir : TONY_BROKER_TEST_SOURCE_DIR;
}

std::vector<std::string> DocRows() {
  std::ifstream in(SourceDir() + "/docs/broker-state-machine.md");
  std::vector<std::string> rows;
  std::string line;
  bool in_section = false;
  while (std::getline(in, line)) {
    if (absl::StartsWith(line, "## ")) in_section = line == "## Transitions";
    if (!in_section || !absl::StartsWith(line, "| `")) continue;
    std::vector<std::string> cells = absl::StrSplit(line, '|');
    if (cells.size() < 6) continue;
    for (std::string& c : cells) c = std::string(absl::StripAsciiWhitespace(c));
    rows.push_back(absl::StrJoin({cells[1], cells[2], cells[3], cells[4]}, " | "));
  }
  return rows;
}

TEST(RegistrationModelTest, TheDocumentedTableIsTheCodesTable) {
  std::vector<std::string> code;
  for (const Transition& t : Transitions()) {
    code.push_back(absl::StrCat("`", TaskPhaseName(t.from), "` | ", TaskEventName(t.event), " | ",
                                StageName(t.when), " | `", TaskPhaseName(t.to), "`"));
  }
  std::vector<std::string> doc = DocRows();
  ASSERT_FALSE(doc.empty()) << "no transition rows in " << SourceDir()
                            << "/docs/broker-state-machine.md";
  // Same rows in the same order: the page lists them as the code does.
  for (size_t i = 0; i < std::max(doc.size(), code.size()); ++i) {
    const std::string d = i < doc.size() ? doc[i] : "(none)";
    const std::string c = i < code.size() ? code[i] : "(none)";
    ASSERT_EQ(d, c) << "row " << i + 1 << " of docs/broker-state-machine.md's table differs "
                    << "from kTransitions in src/broker/registration_model.cc";
  }
}

}  // namespace
}  // namespace tony::broker
