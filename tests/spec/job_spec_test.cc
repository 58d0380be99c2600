// Copyright libtony authors.

#include "tony/job_spec.h"

#include <cstdio>
#include <cstdlib>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "spec/parse_util.h"
#include "spec/task_env.h"

namespace tony {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

JobSpec PsWorker() {
  JobSpec spec;
  spec.command = "python train.py";
  spec.job_types.push_back({.name = "ps", .instances = 1});
  spec.job_types.push_back({.name = "worker", .instances = 3});
  return spec;
}

// Each case changes a copy of `base`; validation must refuse it naming `expected`.
struct Rejection {
  const char* what;
  void (*mutate)(JobSpec*);
  const char* expected;
};
void ExpectEachRejected(const JobSpec& base, std::initializer_list<Rejection> cases) {
  for (const Rejection& c : cases) {
    JobSpec spec = base;
    c.mutate(&spec);
    absl::Status s = ValidateJobSpec(spec);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << c.what;
    EXPECT_THAT(std::string(s.message()), HasSubstr(c.expected)) << c.what;
  }
}

TEST(ResolveTasksTest, TaskOverridesJobOverridesGeneralOverridesDefault) {
  JobSpec spec = PsWorker();
  spec.task_defaults.memory_mb = 2048;
  spec.FindJobType("worker")->resources.vcores = 2;
  spec.FindJobType("worker")->task_resources[1].vcores = 4;
  spec.FindJobType("worker")->task_resources[2].memory_mb = 1024;
  std::vector<TaskSpec> tasks = ResolveTasks(spec);
  ASSERT_EQ(tasks.size(), 4u);
  EXPECT_EQ(tasks[0].id(), "ps:0");
  EXPECT_EQ(tasks[0].vcores, kDefaultVcores);
  EXPECT_EQ(tasks[0].memory_mb, 2048);
  EXPECT_FALSE(tasks[0].tracked);
  EXPECT_EQ(tasks[1].id(), "worker:0");
  EXPECT_EQ(tasks[1].vcores, 2);
  EXPECT_TRUE(tasks[1].tracked);
  EXPECT_EQ(tasks[2].vcores, 4);
  EXPECT_EQ(tasks[2].memory_mb, 2048);
  EXPECT_EQ(tasks[3].vcores, 2);
  EXPECT_EQ(tasks[3].memory_mb, 1024);
  EXPECT_EQ(tasks[3].gpus, 0);
}

TEST(ResolveTasksTest, BuiltInDefaultsAndEnvMerge) {
  JobSpec spec = PsWorker();
  spec.env = {{"A", "1"}, {"B", "2"}};
  spec.FindJobType("worker")->env = {{"B", "3"}};
  spec.FindJobType("worker")->command = "python worker.py";
  std::vector<TaskSpec> tasks = ResolveTasks(spec);
  EXPECT_EQ(tasks[0].memory_mb, kDefaultMemoryMb);
  EXPECT_EQ(tasks[0].command, "python train.py");
  EXPECT_EQ(tasks[1].command, "python worker.py");
  EXPECT_EQ(tasks[1].env.at("A"), "1");
  EXPECT_EQ(tasks[1].env.at("B"), "3");
  EXPECT_EQ(tasks[0].env.at("B"), "2");
}

TEST(ResolveTasksTest, TensorBoardAddsAnUntrackedTask) {
  JobSpec spec = PsWorker();
  spec.tensorboard = true;
  spec.output_path = "/tmp/out";
  std::vector<TaskSpec> tasks = ResolveTasks(spec);
  ASSERT_EQ(tasks.size(), 5u);
  EXPECT_EQ(spec.TotalTasks(), 5);
  EXPECT_EQ(tasks.back().id(), "tensorboard:0");
  EXPECT_FALSE(tasks.back().tracked);
  EXPECT_THAT(tasks.back().command, HasSubstr("tensorboard --logdir"));
}

TEST(ResolveTasksTest, TrackedDefaultsAndOverride) {
  JobSpec spec = PsWorker();
  EXPECT_FALSE(IsTrackedByDefault(spec, "ps"));
  EXPECT_FALSE(IsTrackedByDefault(spec, "evaluator"));
  EXPECT_TRUE(IsTrackedByDefault(spec, "worker"));
  JobSpec with_chief = PsWorker();
  with_chief.job_types.push_back({.name = "chief", .instances = 1});
  EXPECT_TRUE(IsTrackedByDefault(with_chief, "chief"));
  EXPECT_FALSE(IsTrackedByDefault(with_chief, "worker"));
  spec.FindJobType("ps")->tracked = true;
  EXPECT_TRUE(ResolveTasks(spec)[0].tracked);
}

TEST(ValidateJobSpecTest, AcceptsMinimalSpec) { EXPECT_TRUE(ValidateJobSpec(PsWorker()).ok()); }

TEST(ValidateJobSpecTest, RejectsEachProblemNamingTheField) {
  ExpectEachRejected(
      PsWorker(),
      {
          {"no jobs", [](JobSpec* s) { s->job_types.clear(); }, "-r/--cluster_requirement"},
          {"zero instances", [](JobSpec* s) { s->job_types[1].instances = 0; },
           "jobs.worker.instances"},
          {"duplicate", [](JobSpec* s) { s->job_types[1].name = "ps"; }, "appears twice"},
          {"bad name", [](JobSpec* s) { s->job_types[1].name = "Work er"; }, "not a job name"},
          {"zero vcores", [](JobSpec* s) { s->job_types[1].resources.vcores = 0; },
           "jobs.worker.vcores (-c/--task_vcores)"},
          {"negative memory", [](JobSpec* s) { s->task_defaults.memory_mb = -5; },
           "defaults.memory (-m/--task_memory)"},
          {"index out of range", [](JobSpec* s) { s->job_types[1].task_resources[3].vcores = 2; },
           "task index 3 is out of range"},
          {"no command", [](JobSpec* s) { s->command.clear(); }, "no task command"},
          {"tensorboard without output", [](JobSpec* s) { s->tensorboard = true; },
           "-t/--tensorboard"},
          {"unreadable script", [](JobSpec* s) { s->script_file = "/nonexistent/train.py"; },
           "script (-s/--script): cannot read '/nonexistent/train.py'"},
          {"bad env name", [](JobSpec* s) { s->env["A-B"] = "x"; }, "env: 'A-B'"},
          {"empty queue", [](JobSpec* s) { s->queue.clear(); }, "-q/--queue"},
          {"zero timeout", [](JobSpec* s) { s->timeouts.registration = absl::ZeroDuration(); },
           "timeouts.registration"},
      });
}

TEST(YamlTest, ParsesFullExample) {
  auto spec = ParseJobSpecYaml(R"(
name: mnist
queue: research
tags: [nightly, team-a]
framework: tensorflow
command: python train.py --steps 100
env: {LOG_LEVEL: "1"}
input: hdfs:///data/mnist
output: /tmp/out
tensorboard: true
am: {memory: 512m, node_label: gpu, work_preserving_restart: false}
timeouts: {registration: 5m, job: 2h}
defaults: {memory: 2g, vcores: 1}
jobs:
  ps: {instances: 2, memory: 1g}
  worker:
    instances: 4
    vcores: 2
    env: {ROLE: w}
    tasks:
      0: {vcores: 4, memory: 8g}
  chief: {instances: 1, node_label: gpu, gpus: 1}
)",
                               "job.yaml");
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->name, "mnist");
  EXPECT_EQ(spec->queue, "research");
  EXPECT_EQ(spec->tags, (std::vector<std::string>{"nightly", "team-a"}));
  EXPECT_EQ(spec->am_memory_mb, 512);
  EXPECT_EQ(spec->am_node_label, "gpu");
  EXPECT_FALSE(spec->work_preserving_restart);
  EXPECT_EQ(spec->timeouts.job, absl::Hours(2));
  ASSERT_EQ(spec->job_types.size(), 3u);
  EXPECT_EQ(spec->job_types[0].name, "ps");  // document order is kept
  EXPECT_EQ(spec->job_types[1].name, "worker");
  EXPECT_EQ(*spec->job_types[0].resources.memory_mb, 1024);
  EXPECT_EQ(*spec->job_types[1].task_resources.at(0).memory_mb, 8192);
  EXPECT_EQ(spec->job_types[2].node_label, "gpu");
  EXPECT_EQ(*spec->job_types[2].resources.gpus, 1);
  EXPECT_TRUE(ValidateJobSpec(*spec).ok());
}

TEST(YamlTest, ErrorsNameKeyLineAndColumn) {
  struct Case {
    const char* yaml;
    const char* expected;
  } cases[] = {
      {"jobs:\n  worker: {instances: two}\n", "job.yaml:2:23: jobs.worker.instances"},
      {"jobs:\n  worker: {instancs: 2}\n", "job.yaml:2:12: jobs.worker.instancs: unknown key"},
      {"nmae: x\n", "job.yaml:1:1: nmae: unknown key"},
      {"tensorboard: maybe\n", "tensorboard: expected true or false"},
      {"tags: nightly\n", "tags: expected a list"},
      {"env: [a, b]\n", "env: expected a map"},
      {"jobs: [ps, worker]\n", "jobs: expected a map"},
      {"jobs:\n  worker:\n    memory: lots\n", "job.yaml:3:13: jobs.worker.memory"},
      {"jobs:\n  worker:\n    tasks: {x: {vcores: 2}}\n", "jobs.worker.tasks"},
      {"jobs: {a: {}, a: {}}\n", "appears twice"},
      {"framework: caffe\n", "unknown framework 'caffe'"},
      {"jobs: {worker: {instances: 2\n", "job.yaml:2:1"},
      {"", "is empty"},
  };
  for (const Case& c : cases) {
    auto spec = ParseJobSpecYaml(c.yaml, "job.yaml");
    ASSERT_FALSE(spec.ok()) << c.yaml;
    EXPECT_EQ(spec.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(spec.status().message()), HasSubstr(c.expected)) << c.yaml;
  }
}

TEST(YamlTest, RoundTripIsExact) {
  JobSpec spec = PsWorker();
  spec.name = "round: trip";
  spec.tags = {"a", "b c"};
  spec.env = {{"X", "1"}, {"QUOTE", "say \"hi\""}};
  spec.framework = Framework::kPyTorch;
  spec.input_path = "hdfs://nn:8020/in";
  spec.task_defaults.memory_mb = 512;
  spec.timeouts.job = absl::Minutes(90);
  JobTypeSpec chief;  // before `worker` below: a push_back may move the job types
  chief.name = "chief";
  chief.node_attribute = "nm.yarn.io/pool!=small";
  spec.job_types.push_back(chief);
  JobTypeSpec& worker = *spec.FindJobType("worker");
  worker.resources.vcores = 2;
  worker.task_resources[2] = {.vcores = 3, .memory_mb = 700, .gpus = 1};
  worker.tracked = true;
  worker.command = "python w.py '$X'";
  worker.node_label = "fast";
  spec.FindJobType("ps")->anti_affinity = true;
  worker.restart = RestartSpec{.policy = RestartPolicy::kExitCode,
                               .max_restarts = 0,
                               .backoff = absl::Seconds(90),
                               .scope = RestartScope::kTask,
                               .on_address_change = AddressChange::kRestartJob};
  spec.am_node_label = "am nodes";
  spec.work_preserving_restart = false;
  spec.python_env = "envs/tf.tar.gz";
  spec.tensorboard_command = "python -m tensorboard.main";
  spec.priority = 0;  // given, unlike unset (the queue's default)
  std::string yaml = JobSpecToYaml(spec);
  auto back = ParseJobSpecYaml(yaml, "roundtrip");
  ASSERT_TRUE(back.ok()) << back.status() << "\n" << yaml;
  EXPECT_TRUE(*back == spec) << yaml;
  EXPECT_EQ(JobSpecToYaml(*back), yaml);
  auto negative = ParseJobSpecYaml("priority: -1\ncommand: x\njobs: {worker: 1}\n", "p.yaml");
  EXPECT_THAT(negative.status().message(), HasSubstr("priority"));
  EXPECT_TRUE(ResolveTasks(*back)[0].anti_affinity);  // ps:0
  JobSpec labelled = *back;
  labelled.FindJobType("ps")->node_label = "gpu";
  EXPECT_THAT(ValidateJobSpec(labelled).message(),
              HasSubstr("jobs.ps.anti_affinity (--anti_affinity): not with a node label yet"));
  JobSpec both = *back;
  both.FindJobType("ps")->node_attribute = "rm.yarn.io/os=debian";
  EXPECT_THAT(ValidateJobSpec(both).message(),
              HasSubstr("jobs.ps.node_attribute (--node_attribute): not with anti_affinity"));
  for (const char* bad : {"pool", "=a", "pool=", "a/b/c=x", "pool=a b", "pool==a"}) {
    JobSpec wrong = *back;
    wrong.FindJobType("chief")->node_attribute = bad;
    EXPECT_THAT(ValidateJobSpec(wrong).message(),
                HasSubstr("is not a node attribute expression; use <name>=<value>"))
        << bad;
  }
  auto ne = tony::spec::ParseNodeAttribute("nm.yarn.io/pool!=small");
  ASSERT_TRUE(ne.ok());
  EXPECT_EQ(ne->name, "nm.yarn.io/pool");
  EXPECT_EQ(ne->value, "small");
  EXPECT_FALSE(ne->equal);
  EXPECT_TRUE(tony::spec::ParseNodeAttribute("os=debian")->equal);
}

// Found by fuzz/spec_yaml: bytes that are not UTF-8 (a Latin-1 spec file, a command line in a
// Latin-1 locale) passed validation, and the YAML shipped to the ApplicationMaster carried U+FFFD
// in their place: the tasks ran another command than the one given.
TEST(YamlTest, TextThatIsNotUtf8IsRefusedAndUtf8RoundTrips) {
  auto latin1 = ParseJobSpecYaml("command: python caf\xe9.py\njobs: {worker: {instances: 1}}\n",
                                 "latin1.yaml");
  ASSERT_TRUE(latin1.ok()) << latin1.status();
  absl::Status invalid = ValidateJobSpec(*latin1);
  EXPECT_EQ(invalid.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(invalid.message()), HasSubstr("command"));
  EXPECT_THAT(std::string(invalid.message()), HasSubstr("UTF-8"));

  JobSpec spec = PsWorker();
  spec.env["GREETING"] = "gr\xc3\xbc\xc3\x9f \xf0\x9f\x91\x8b";
  ASSERT_TRUE(ValidateJobSpec(spec).ok());
  auto back = ParseJobSpecYaml(JobSpecToYaml(spec), "utf8");
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_TRUE(*back == spec);
  spec.FindJobType("worker")->env["BAD"] = "\xc0\x80";  // overlong NUL
  EXPECT_THAT(std::string(ValidateJobSpec(spec).message()), HasSubstr("jobs.worker.env.BAD"));
}

// Seen while writing fuzz/spec_yaml, confirmed by its UBSan build: instances of several job types
// could sum past INT_MAX, and TotalTasks() overflowed on a spec that validated.
TEST(ValidateJobSpecTest, TotalTaskCountIsBounded) {
  auto huge = ParseJobSpecYaml(
      "command: x\njobs: {a: {instances: 2147483647}, b: {instances: 2}}\n", "huge.yaml");
  ASSERT_TRUE(huge.ok()) << huge.status();
  absl::Status s = ValidateJobSpec(*huge);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()), HasSubstr("jobs.a.instances"));
  JobSpec spec = PsWorker();
  spec.FindJobType("worker")->instances = 10000 - spec.FindJobType("ps")->instances;
  EXPECT_TRUE(ValidateJobSpec(spec).ok());
  spec.FindJobType("worker")->instances += 1;
  EXPECT_THAT(std::string(ValidateJobSpec(spec).message()), HasSubstr("more than 10000 tasks"));
}

TEST(YamlTest, ResolvedSectionIsIgnoredOnInputSoDryRunOutputRoundTrips) {
  JobSpec spec = PsWorker();
  std::string yaml = JobSpecToYaml(spec, YamlDetail::kEveryTask);
  EXPECT_THAT(yaml, HasSubstr("resolved:"));
  EXPECT_THAT(yaml, HasSubstr("task: worker:2"));
  auto back = ParseJobSpecYaml(yaml, "dry-run");
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_TRUE(*back == spec);
  EXPECT_EQ(JobSpecToYaml(*back, YamlDetail::kEveryTask), yaml);
}

TEST(YamlTest, RoleSummaryRoundTripsAndStaysLinearInTheTaskCount) {
  JobSpec spec = PsWorker();
  spec.FindJobType("worker")->task_resources[2].memory_mb = 700;
  std::string yaml = JobSpecToYaml(spec, YamlDetail::kRoleSummary);
  EXPECT_THAT(yaml, HasSubstr("summary:"));
  EXPECT_THAT(yaml, HasSubstr("job: worker"));
  EXPECT_THAT(yaml, HasSubstr("worker:2: vcores 1, memory 700"));
  EXPECT_THAT(yaml, HasSubstr("env of worker:0"));
  auto back = ParseJobSpecYaml(yaml, "dry-run");
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_TRUE(*back == spec);

  // 4,000 tasks: each environment would list them all; the summary shortens the lists, so ten
  // times the tasks gives about the same output, not a hundred times.
  auto size_for = [](int workers) {
    JobSpec s;
    s.command = "python train.py";
    s.job_types.push_back({.name = "ps", .instances = 2});
    s.job_types.push_back({.name = "worker", .instances = workers});
    return JobSpecToYaml(s, YamlDetail::kRoleSummary).size();
  };
  size_t small = size_for(400), large = size_for(4000);
  EXPECT_LT(large, 2 * small) << small << " -> " << large;
}

TEST(YamlTest, LoadFileErrors) {
  auto missing = LoadJobSpecFile("/nonexistent/job.yaml");
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(std::string(missing.status().message()), HasSubstr("cannot read job spec file"));
}

TEST(JobSpecYamlTest, RelativePathsInAFileAreRelativeToItsDirectory) {
  const std::string dir = ::testing::TempDir() + "/spec_dir_test";
  ASSERT_EQ(std::system(("mkdir -p " + dir).c_str()), 0);
  std::ofstream(dir + "/job.yaml") << "command: python3 train.py\n"
                                      "script: train.py\n"
                                      "files: [data/a.txt, /abs/b.txt, hdfs:///c.txt]\n"
                                      "archives: [../env.tar.gz]\n"
                                      "source_dir: src\n"
                                      "jobs: {worker: {instances: 1}}\n";
  auto spec = LoadJobSpecFile(dir + "/job.yaml");
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->script_file, dir + "/train.py");
  EXPECT_EQ(spec->files,
            (std::vector<std::string>{dir + "/data/a.txt", "/abs/b.txt", "hdfs:///c.txt"}));
  EXPECT_EQ(spec->archives, std::vector<std::string>{dir + "/../env.tar.gz"});
  EXPECT_EQ(spec->source_dir, dir + "/src");
  // Written out only when set, and read back the same.
  auto again = ParseJobSpecYaml(JobSpecToYaml(*spec), "again");
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->source_dir, dir + "/src");
  spec->source_dir.clear();
  EXPECT_THAT(JobSpecToYaml(*spec), Not(HasSubstr("source_dir")));
}

TEST(YamlTest, RestartPolicyParsesAndBadFieldsNameTheKey) {
  auto spec = ParseJobSpecYaml(R"(
command: python train.py
jobs:
  chief: {}
  ps: {}
  worker:
    instances: 2
    restart: {policy: exit-code, scope: task, max_restarts: 4, backoff: 5s}
)",
                               "job.yaml");
  ASSERT_TRUE(spec.ok()) << spec.status();
  const JobTypeSpec* worker = spec->FindJobType("worker");
  ASSERT_TRUE(worker->restart.has_value());
  EXPECT_EQ(worker->restart->policy, RestartPolicy::kExitCode);
  EXPECT_EQ(worker->restart->scope, RestartScope::kTask);
  EXPECT_EQ(worker->restart->max_restarts, 4);
  EXPECT_EQ(worker->restart->backoff, absl::Seconds(5));
  EXPECT_EQ(worker->restart->on_address_change, AddressChange::kFail);
  EXPECT_TRUE(ValidateJobSpec(*spec).ok());
  EXPECT_TRUE(JobSpecWarnings(*spec).empty());

  struct Case {
    const char* restart;
    const char* expected;
  } cases[] = {
      {"{policy: sometimes}", "job.yaml:4:23: jobs.worker.restart.policy: 'sometimes' is not a"},
      {"{max_restarts: -1}", "jobs.worker.restart.max_restarts: "},
      {"{scope: node}", "jobs.worker.restart.scope: 'node' is not a restart scope"},
      {"{tries: 3}", "jobs.worker.restart"},
  };
  for (const Case& c : cases) {
    auto r = ParseJobSpecYaml(
        absl::StrCat("command: x\njobs:\n  worker:\n    restart: ", c.restart, "\n"), "job.yaml");
    ASSERT_FALSE(r.ok()) << c.restart;
    EXPECT_THAT(std::string(r.status().message()), HasSubstr(c.expected)) << c.restart;
  }
}

TEST(YamlTest, DependenciesAndLingerParseRoundTripAndNameTheirKey) {
  auto spec = ParseJobSpecYaml(R"(
command: python train.py
jobs:
  prep: {}
  chief:
    depends_on: prep
  ps:
    depends_on: ["prep:finished"]
  worker:
    instances: 2
    depends_on:
      - ps:registered
      - {role: prep, timeout: 1h}
  evaluator:
    depends_on: chief:running:5m
    linger: 10m
)",
                               "job.yaml");
  ASSERT_TRUE(spec.ok()) << spec.status();
  ASSERT_TRUE(ValidateJobSpec(*spec).ok()) << ValidateJobSpec(*spec);
  const JobTypeSpec* worker = spec->FindJobType("worker");
  ASSERT_EQ(worker->depends_on.size(), 2u);
  EXPECT_EQ(worker->depends_on[0], (RoleDependency{"ps", DependencyCondition::kRegistered}));
  EXPECT_EQ(worker->depends_on[1],
            (RoleDependency{"prep", DependencyCondition::kFinished, absl::Hours(1)}));
  const JobTypeSpec* evaluator = spec->FindJobType("evaluator");
  EXPECT_EQ(evaluator->depends_on[0],
            (RoleDependency{"chief", DependencyCondition::kRunning, absl::Minutes(5)}));
  EXPECT_EQ(evaluator->linger, absl::Minutes(10));
  EXPECT_EQ(spec->FindJobType("chief")->depends_on[0].when, DependencyCondition::kFinished);

  auto again = ParseJobSpecYaml(JobSpecToYaml(*spec), "again.yaml");
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(JobSpecToYaml(*again), JobSpecToYaml(*spec));
  EXPECT_EQ(again->FindJobType("worker")->depends_on, worker->depends_on);
  EXPECT_EQ(again->FindJobType("evaluator")->linger, absl::Minutes(10));

  struct Case {
    const char* jobs;
    const char* expected;
  } cases[] = {
      {"  a: {depends_on: 'b:soon'}\n  b: {}\n", "jobs.a.depends_on: 'soon' is not a condition"},
      {"  a: {depends_on: {when: running}}\n", "jobs.a.depends_on: names no role"},
      {"  a: {depends_on: {role: b, after: 1}}\n  b: {}\n", "jobs.a.depends_on"},
      {"  a: {linger: soon}\n", "jobs.a.linger: 'soon' is not a duration"},
  };
  for (const Case& c : cases) {
    auto r = ParseJobSpecYaml(absl::StrCat("command: x\njobs:\n", c.jobs), "job.yaml");
    ASSERT_FALSE(r.ok()) << c.jobs;
    EXPECT_THAT(std::string(r.status().message()), HasSubstr(c.expected)) << c.jobs;
  }
}

// preemption: {grace: ...} at the top and per role; a role's wins, 0 turns it off; the spec
// round-trips. Bad values are one line naming the key.
TEST(JobSpecYamlTest, PreemptionGraceAtTheTopAndPerRole) {
  auto spec = ParseJobSpecYaml(R"(command: x
preemption: {grace: 20s}
jobs:
  ps: {}
  worker: {preemption: {grace: 5s}}
  chief: {preemption: {grace: 0}}
)",
                               "job.yaml");
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->preemption_grace, absl::Seconds(20));
  EXPECT_EQ(spec->FindJobType("ps")->preemption_grace, std::nullopt);
  EXPECT_EQ(spec->FindJobType("worker")->preemption_grace, absl::Seconds(5));
  EXPECT_EQ(spec->FindJobType("chief")->preemption_grace, absl::ZeroDuration());
  EXPECT_TRUE(ValidateJobSpec(*spec).ok());
  auto again = ParseJobSpecYaml(JobSpecToYaml(*spec), "again.yaml");
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(*again, *spec);
  // Absent: no grace, and none written.
  auto plain = ParseJobSpecYaml("command: x\njobs: {worker: {}}\n", "job.yaml");
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_EQ(plain->preemption_grace, absl::ZeroDuration());
  EXPECT_THAT(JobSpecToYaml(*plain), Not(HasSubstr("preemption")));

  struct Case {
    const char* yaml;
    const char* expected;
  } cases[] = {
      {"preemption: {grace: -5s}\n", "preemption.grace: '-5s' must be 0 (none) or more"},
      {"preemption: {grace: soon}\n", "preemption.grace: 'soon' is not a duration"},
      {"preemption: {grace: inf}\n", "preemption.grace: 'inf' is not a duration"},
      {"preemption: {}\n", "preemption: needs grace"},
      {"preemption: {wait: 5s}\n", "preemption"},
      {"jobs: {worker: {preemption: {grace: -1m}}}\n",
       "jobs.worker.preemption.grace: '-1m' must be 0 (none) or more"},
  };
  for (const Case& c : cases) {
    auto r = ParseJobSpecYaml(absl::StrCat("command: x\n", c.yaml), "job.yaml");
    ASSERT_FALSE(r.ok()) << c.yaml;
    EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument) << c.yaml;
    EXPECT_THAT(std::string(r.status().message()), HasSubstr(c.expected)) << c.yaml;
    EXPECT_THAT(std::string(r.status().message()), Not(HasSubstr("\n"))) << c.yaml;
  }
}

TEST(ValidateJobSpecTest, APreemptionGraceIsFiniteAndNotNegative) {
  ExpectEachRejected(
      PsWorker(),
      {
          {"negative", [](JobSpec* s) { s->preemption_grace = -absl::Seconds(1); },
           "preemption.grace: must be 0 (none) or a finite duration"},
          {"infinite", [](JobSpec* s) { s->preemption_grace = absl::InfiniteDuration(); },
           "preemption.grace: must be 0 (none) or a finite duration"},
          {"a role's", [](JobSpec* s) { s->job_types[1].preemption_grace = -absl::Seconds(1); },
           "jobs.worker.preemption.grace: must be 0"},
      });
}

TEST(ValidateJobSpecTest, DependenciesNeedKnownRolesNoCycleAndLingerAnUntrackedRole) {
  ExpectEachRejected(
      PsWorker(),
      {
          {"unknown", [](JobSpec* s) { s->job_types[1].depends_on = {{"prep"}}; },
           "jobs.worker.depends_on (--depends_on): names 'prep', which is no job type"},
          {"itself", [](JobSpec* s) { s->job_types[1].depends_on = {{"worker"}}; },
           "a role cannot depend on itself"},
          {"cycle",
           [](JobSpec* s) {
             s->job_types[0].depends_on = {{"worker", DependencyCondition::kRegistered}};
             s->job_types[1].depends_on = {{"ps", DependencyCondition::kRunning}};
           },
           "dependency cycle ps -> worker -> ps"},
          {"zero timeout",
           [](JobSpec* s) {
             s->job_types[1].depends_on = {
                 {"ps", DependencyCondition::kRunning, absl::ZeroDuration()}};
           },
           "the timeout must be more than 0"},
          {"tracked linger", [](JobSpec* s) { s->job_types[1].linger = absl::Minutes(1); },
           "jobs.worker.linger (--linger): applies to untracked roles"},
      });
  JobSpec ok = PsWorker();
  ok.job_types[0].linger = absl::Minutes(3);  // ps is untracked
  ok.job_types[1].depends_on = {{"ps", DependencyCondition::kRegistered}};
  EXPECT_TRUE(ValidateJobSpec(ok).ok()) << ValidateJobSpec(ok);
}

TEST(ElasticTest, YamlRoundTripsAndValidationNamesEachProblem) {
  auto spec = ParseJobSpecYaml(R"(
command: torchrun train.py
framework: pytorch
jobs:
  worker:
    elastic: {min: 2, max: 4}
)",
                               "job.yaml");
  ASSERT_TRUE(spec.ok()) << spec.status();
  const JobTypeSpec* worker = spec->FindJobType("worker");
  EXPECT_EQ(worker->instances, 4);  // max
  EXPECT_EQ(worker->elastic, (ElasticRange{2, 4}));
  ASSERT_TRUE(ValidateJobSpec(*spec).ok()) << ValidateJobSpec(*spec);
  auto again = ParseJobSpecYaml(JobSpecToYaml(*spec), "again.yaml");
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(*again, *spec);

  ExpectEachRejected(
      *spec,
      {
          {"tensorflow", [](JobSpec* s) { s->framework = Framework::kTensorFlow; },
           "jobs.worker.elastic (--elastic): needs --framework pytorch"},
          {"min > max",
           [](JobSpec* s) {
             s->job_types[0].elastic = ElasticRange{5, 4};
           },
           "min 5 is more than max 4"},
          {"instances", [](JobSpec* s) { s->job_types[0].instances = 3; },
           "jobs.worker.instances (--elastic): an elastic role has elastic.max tasks (4), not 3"},
          {"two roles",
           [](JobSpec* s) {
             s->job_types.push_back(s->job_types[0]);
             s->job_types[1].name = "trainer";
           },
           "one elastic role per job"},
          {"scope job",
           [](JobSpec* s) {
             s->max_attempts = 5;
             s->job_types[0].restart = RestartSpec{RestartPolicy::kOnFailure};
           },
           "an elastic role relaunches lost tasks itself; use scope task"},
      });
}

TEST(MpiTest, FrameworkParsesTheLauncherAloneIsTrackedAndBadShapesAreNamed) {
  EXPECT_EQ(ParseFramework("mpi").value(), Framework::kMpi);
  EXPECT_EQ(FrameworkName(Framework::kMpi), "mpi");
  auto spec = ParseJobSpecYaml(
      "framework: mpi\ncommand: mpirun python t.py\njobs:\n  launcher: {instances: 1}\n"
      "  worker: {instances: 2}\n",
      "j.yaml");
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->framework, Framework::kMpi);
  ASSERT_TRUE(ValidateJobSpec(*spec).ok()) << ValidateJobSpec(*spec);
  EXPECT_TRUE(IsTrackedByDefault(*spec, "launcher"));
  EXPECT_FALSE(IsTrackedByDefault(*spec, "worker"));

  ExpectEachRejected(
      *spec, {
                 {"no launcher", [](JobSpec* s) { s->job_types.erase(s->job_types.begin()); },
                  "jobs (-r/--cluster_requirement): an MPI job needs a 'launcher' role of 1 task"},
                 {"two launchers", [](JobSpec* s) { s->job_types[0].instances = 2; },
                  "jobs.launcher.instances (-r/--cluster_requirement): an MPI job has one launcher "
                  "(mpirun), not 2; use launcher:1"},
                 {"no ranks", [](JobSpec* s) { s->job_types.pop_back(); },
                  "an MPI job needs a role whose tasks host the ranks besides the launcher"},
                 {"client mode", [](JobSpec* s) { s->client_mode = true; }, "drop --client"},
             });
}

TEST(JaxTest, FrameworkNameRoundTripsAndUnknownNamesTheChoices) {
  EXPECT_EQ(ParseFramework("jax").value(), Framework::kJax);
  EXPECT_EQ(FrameworkName(Framework::kJax), "jax");
  auto bad = ParseFramework("jaxx");
  EXPECT_EQ(bad.status().message(),
            "unknown framework 'jaxx'; use tensorflow, pytorch, jax, mpi, horovod or custom");
  auto spec = ParseJobSpecYaml(
      "framework: jax\ncommand: python t.py\njobs:\n  worker: {instances: 2}\n", "j.yaml");
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->framework, Framework::kJax);
}

TEST(JaxTest, RolesRestartAsAWholeGangWhileAttemptsAllow) {
  JobSpec spec;
  spec.command = "python train.py";
  spec.framework = Framework::kJax;
  spec.max_attempts = 3;
  spec.job_types.push_back({.name = "worker", .instances = 2});
  spec.job_types.push_back({.name = "evaluator", .instances = 1});
  spec.job_types.push_back({.name = "trainer", .instances = 1});
  // The user's wins.
  spec.job_types[2].restart = RestartSpec{.policy = RestartPolicy::kExitCode, .max_restarts = 1};
  JobSpec expanded = ExpandElastic(spec);
  ASSERT_TRUE(ValidateJobSpec(expanded).ok()) << ValidateJobSpec(expanded);
  EXPECT_EQ(ExpandElastic(expanded), expanded);
  const JobTypeSpec* worker = expanded.FindJobType("worker");
  ASSERT_TRUE(worker->restart.has_value());
  EXPECT_EQ(worker->restart->policy, RestartPolicy::kOnFailure);
  EXPECT_EQ(worker->restart->scope, RestartScope::kJob);
  EXPECT_EQ(worker->restart->max_restarts, 2);
  EXPECT_FALSE(expanded.FindJobType("evaluator")->restart.has_value());
  EXPECT_EQ(expanded.FindJobType("trainer")->restart->policy, RestartPolicy::kExitCode);

  // One attempt: nothing to restart with, the spec stays as it was.
  spec.max_attempts = 1;
  EXPECT_EQ(ExpandElastic(spec), spec);
  // Other frameworks keep today's default.
  spec.max_attempts = 3;
  spec.framework = Framework::kTensorFlow;
  EXPECT_EQ(ExpandElastic(spec), spec);
}

TEST(ElasticTest, ExpandAddsTheRendezvousAndTorchrunsOptionsOnce) {
  JobSpec spec;
  spec.command = "torchrun train.py";
  spec.framework = Framework::kPyTorch;
  spec.job_types.push_back({.name = "worker", .instances = 3});
  spec.job_types[0].elastic = ElasticRange{2, 3};
  spec.job_types[0].env["PET_NPROC_PER_NODE"] = "2";  // the user's win
  JobSpec expanded = ExpandElastic(spec);
  ASSERT_TRUE(ValidateJobSpec(expanded).ok()) << ValidateJobSpec(expanded);
  EXPECT_EQ(ExpandElastic(expanded), expanded);
  ASSERT_EQ(expanded.job_types.size(), 2u);
  const JobTypeSpec& rendezvous = expanded.job_types[0];
  EXPECT_EQ(rendezvous.name, kRendezvousJobName);
  EXPECT_EQ(rendezvous.tracked, false);
  EXPECT_THAT(rendezvous.command, HasSubstr("TCPStore"));
  const JobTypeSpec* worker = expanded.FindJobType("worker");
  EXPECT_EQ(worker->depends_on.at(0),
            (RoleDependency{kRendezvousJobName, DependencyCondition::kRunning, absl::Minutes(10)}));
  EXPECT_EQ(worker->restart->scope, RestartScope::kTask);
  EXPECT_EQ(worker->restart->on_address_change, AddressChange::kAccept);
  EXPECT_EQ(worker->env.at("PET_NNODES"), "2:3");
  EXPECT_EQ(worker->env.at("PET_NPROC_PER_NODE"), "2");
  EXPECT_EQ(worker->env.at("PET_RDZV_BACKEND"), "c10d");
  EXPECT_EQ(worker->env.at("TORCH_DISABLE_SHARE_RDZV_TCP_STORE"), "1");

  // In a task's environment: the rendezvous endpoint, no static ranks.
  ClusterSpec cluster;
  cluster.jobs[kRendezvousJobName] = {"h0:29400"};
  TaskSpec task = ResolveTasks(expanded)[2];
  ASSERT_EQ(task.id(), "worker:1");
  auto env = BuildTaskEnvironment(expanded, task, &cluster);
  EXPECT_EQ(env.at("PET_RDZV_ENDPOINT"), "h0:29400");
  EXPECT_EQ(env.count("RANK"), 0u);
  EXPECT_EQ(env.count("MASTER_ADDR"), 0u);
}

TEST(RestartPolicyTest, ExitCodeSemanticsFollowKubeflowAndYarn) {
  for (int code : {1, 2, 127, -1, -103, -104, -105}) {
    EXPECT_FALSE(IsRetryableExit(RestartPolicy::kExitCode, code)) << code;
    EXPECT_TRUE(IsRetryableExit(RestartPolicy::kOnFailure, code)) << code;
  }
  for (int code : {128, 137, 143, 255, -100, -101, -102, -106, -108}) {
    EXPECT_TRUE(IsRetryableExit(RestartPolicy::kExitCode, code)) << code;
    EXPECT_FALSE(IsRetryableExit(RestartPolicy::kNever, code)) << code;
  }
  EXPECT_FALSE(IsRetryableExit(RestartPolicy::kOnFailure, 0));
}

}  // namespace
}  // namespace tony

namespace tony {
namespace {

// Bad nodes: the spec's keys parse, round-trip and are validated with a one-line error.
TEST(BadNodesSpecTest, ExcludeNodesAndMaxNodeFailures) {
  auto spec = ParseJobSpecYaml(
      "command: x\njobs: {worker: {instances: 1}}\nexclude_nodes: [n1.example.com, "
      "n2]\nmax_node_failures: 0\n",
      "job.yaml");
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->exclude_nodes, (std::vector<std::string>{"n1.example.com", "n2"}));
  EXPECT_EQ(spec->max_node_failures, 0);
  ASSERT_TRUE(ValidateJobSpec(*spec).ok()) << ValidateJobSpec(*spec);
  auto again = ParseJobSpecYaml(JobSpecToYaml(*spec), "again.yaml");
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(*again, *spec);

  auto defaults = ParseJobSpecYaml("command: x\njobs: {worker: {instances: 1}}\n", "job.yaml");
  ASSERT_TRUE(defaults.ok()) << defaults.status();
  EXPECT_EQ(defaults->max_node_failures, 2);
  EXPECT_TRUE(defaults->exclude_nodes.empty());

  auto negative = ParseJobSpecYaml(
      "command: x\njobs: {worker: {instances: 1}}\nmax_node_failures: -1\n", "job.yaml");
  EXPECT_FALSE(negative.ok());
  EXPECT_THAT(std::string(negative.status().message()), HasSubstr("max_node_failures"));

  JobSpec bad = *spec;
  bad.exclude_nodes = {"n1:8041"};
  absl::Status s = ValidateJobSpec(bad);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()),
              HasSubstr("exclude_nodes (--exclude_nodes): \"n1:8041\" is not a host name; give "
                        "host names without ports"));
  EXPECT_EQ(std::string(s.message()).find('\n'), std::string::npos);  // one line
  bad.exclude_nodes = {"a b"};
  EXPECT_FALSE(ValidateJobSpec(bad).ok());
}

}  // namespace
}  // namespace tony
