// Copyright libtony authors.
//
// TonY's configuration and client flags as a JobSpec (cli/tony_conf.h): tables of settings in,
// spec fields and warnings out.

#include "cli/tony_conf.h"

#include <fstream>
#include <string>

#include "absl/time/time.h"
#include "cli/submit_args.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tony::cli {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

absl::StatusOr<std::vector<std::string>> Apply(
    std::vector<std::pair<std::string, std::string>> settings, JobSpec* spec) {
  TonyInput in;
  in.settings = std::move(settings);
  return ApplyTonyConf(in, spec);
}

TEST(TonyConfTest, RolesWithTonysDefaultsAndOrder) {
  JobSpec spec;
  auto warnings = Apply({{"tony.worker.instances", "2"},
                         {"tony.worker.memory", "4g"},
                         {"tony.ps.instances", "1"},
                         {"tony.chief.instances", "1"},
                         {"tony.chief.vcores", "4"},
                         {"tony.evaluator.instances", "0"},  // not run, as in TonY
                         {"tony.worker.gpus", "1"},
                         {"tony.worker.command", "python w.py"},
                         {"tony.worker.node-label", "gpu"}},
                        &spec);
  ASSERT_TRUE(warnings.ok()) << warnings.status();
  EXPECT_THAT(*warnings, IsEmpty());
  ASSERT_EQ(spec.job_types.size(), 3u);
  EXPECT_EQ(spec.job_types[0].name, "chief");
  EXPECT_EQ(spec.job_types[1].name, "ps");
  EXPECT_EQ(spec.job_types[2].name, "worker");
  EXPECT_EQ(spec.job_types[0].resources.vcores, 4);
  EXPECT_EQ(spec.job_types[1].resources.memory_mb, 2048);  // TonY's default, not libtony's
  const JobTypeSpec& w = spec.job_types[2];
  EXPECT_EQ(w.instances, 2);
  EXPECT_EQ(w.resources.memory_mb, 4096);
  EXPECT_EQ(w.resources.gpus, 1);
  EXPECT_EQ(w.command, "python w.py");
  EXPECT_EQ(w.node_label, "gpu");
  EXPECT_EQ(spec.name, "TensorFlowApplication");
}

TEST(TonyConfTest, ApplicationKeys) {
  JobSpec spec;
  auto warnings = Apply({{"tony.worker.instances", "1"},
                         {"tony.application.name", "mnist"},
                         {"tony.application.framework", "pytorch"},
                         {"tony.application.tags", "a, b"},
                         {"tony.application.node-label", "x"},
                         {"tony.application.timeout", "60000"},
                         {"tony.yarn.queue", "ml"},
                         {"tony.am.memory", "1g"},
                         {"tony.am.vcores", "2"},
                         {"tony.am.retry-count", "2"},
                         {"tony.container.allocation.timeout", "300000"},
                         {"tony.application.security.enabled", "true"}},
                        &spec);
  ASSERT_TRUE(warnings.ok()) << warnings.status();
  EXPECT_THAT(*warnings, IsEmpty());
  EXPECT_EQ(spec.name, "mnist");
  EXPECT_EQ(spec.framework, Framework::kPyTorch);
  EXPECT_THAT(spec.tags, ElementsAre("a", "b"));
  EXPECT_EQ(spec.am_node_label, "x");
  EXPECT_EQ(spec.job_types[0].node_label, "x");  // the application's label is the default
  EXPECT_EQ(spec.timeouts.job, absl::Minutes(1));
  EXPECT_EQ(spec.timeouts.registration, absl::Minutes(5));
  EXPECT_EQ(spec.queue, "ml");
  EXPECT_EQ(spec.am_memory_mb, 1024);
  EXPECT_EQ(spec.am_vcores, 2);
  EXPECT_EQ(spec.max_attempts, 3);
}

TEST(TonyConfTest, TrackingFollowsTonysLists) {
  struct Case {
    std::vector<std::pair<std::string, std::string>> extra;
    std::map<std::string, bool> tracked;
  };
  const Case cases[] = {
      // TonY's defaults: ps untracked, tensorboard a sidecar, the evaluator tracked.
      {{}, {{"ps", false}, {"worker", true}, {"evaluator", true}, {"tensorboard", false}}},
      {{{"tony.application.untracked.jobtypes", "ps,evaluator"}},
       {{"ps", false}, {"worker", true}, {"evaluator", false}, {"tensorboard", false}}},
  };
  for (const Case& c : cases) {
    std::vector<std::pair<std::string, std::string>> settings = {
        {"tony.ps.instances", "1"},
        {"tony.worker.instances", "1"},
        {"tony.evaluator.instances", "1"},
        {"tony.tensorboard.instances", "1"}};
    settings.insert(settings.end(), c.extra.begin(), c.extra.end());
    JobSpec spec;
    ASSERT_TRUE(Apply(settings, &spec).ok());
    for (const auto& [role, tracked] : c.tracked) {
      ASSERT_NE(spec.FindJobType(role), nullptr) << role;
      EXPECT_EQ(spec.FindJobType(role)->tracked, tracked) << role;
    }
  }
}

TEST(TonyConfTest, ContainersEnvResourcesAndDocker) {
  JobSpec spec;
  auto warnings = Apply({{"tony.worker.instances", "1"},
                         {"tony.containers.envs", "A=1,B=x=y"},
                         {"tony.execution.envs", "C=3"},
                         {"tony.containers.resources", "data.txt,libs.zip#archive"},
                         {"tony.docker.enabled", "true"},
                         {"tony.docker.containers.image", "tf:2"},
                         {"tony.docker.worker.image", "tf-worker:2"}},
                        &spec);
  ASSERT_TRUE(warnings.ok()) << warnings.status();
  EXPECT_EQ(spec.env, (std::map<std::string, std::string>{{"A", "1"}, {"B", "x=y"}, {"C", "3"}}));
  EXPECT_THAT(spec.files, ElementsAre("data.txt"));
  EXPECT_THAT(spec.archives, ElementsAre("libs.zip"));
  EXPECT_EQ(spec.docker_image, "tf:2");
  EXPECT_EQ(spec.job_types[0].docker_image, "tf-worker:2");
}

TEST(TonyConfTest, UnsupportedKeysAreNamedOncePerKey) {
  JobSpec spec;
  auto warnings = Apply({{"tony.worker.instances", "1"},
                         {"tony.task.executor.jvm.opts", "-Xmx1g"},
                         {"tony.history.location", "/h"},
                         {"tony.application.distributed-mode", "FCFS"},
                         {"tony.made.up", "1"}},
                        &spec);
  ASSERT_TRUE(warnings.ok()) << warnings.status();
  ASSERT_EQ(warnings->size(), 4u) << ::testing::PrintToString(*warnings);
  std::string all = ::testing::PrintToString(*warnings);
  for (const char* key : {"tony.task.executor.jvm.opts", "tony.history.location",
                          "distributed-mode", "tony.made.up"}) {
    EXPECT_THAT(all, HasSubstr(key));
  }
}

TEST(TonyConfTest, DependsOnBecomesRoleDependenciesOnFinishedRoles) {
  JobSpec spec;
  auto warnings = Apply({{"tony.prep.instances", "1"},
                         {"tony.ps.instances", "1"},
                         {"tony.worker.instances", "2"},
                         {"tony.worker.depends-on", "prep, ps:running"}},
                        &spec);
  ASSERT_TRUE(warnings.ok()) << warnings.status();
  EXPECT_TRUE(warnings->empty()) << ::testing::PrintToString(*warnings);
  const JobTypeSpec* worker = spec.FindJobType("worker");
  ASSERT_NE(worker, nullptr);
  ASSERT_EQ(worker->depends_on.size(), 2u);
  EXPECT_EQ(worker->depends_on[0], (RoleDependency{"prep", DependencyCondition::kFinished}));
  EXPECT_EQ(worker->depends_on[1], (RoleDependency{"ps", DependencyCondition::kRunning}));
  auto bad = Apply({{"tony.worker.instances", "1"}, {"tony.worker.depends-on", "ps:soon"}}, &spec);
  EXPECT_THAT(bad.status().message(), HasSubstr("tony.worker.depends-on"));
}

TEST(TonyConfTest, SettingsThatWouldChangeTheJobAreRefused) {
  const std::vector<std::pair<std::string, std::string>> refused[] = {
      {{"tony.application.framework", "mxnet"}},
      {{"tony.application.enable-preprocess", "true"}},
      {{"tony.containers.resources", "hdfs:///user/me/data.zip#archive"}},
      {{"tony.worker.memory", "lots"}},
      {{"tony.worker.instances", "-1"}},
      {{"tony.containers.envs", "NOEQUALS"}},
  };
  for (const auto& settings : refused) {
    JobSpec spec;
    auto all = settings;
    all.emplace_back("tony.worker.instances", "1");
    std::swap(all.front(), all.back());
    auto r = Apply(all, &spec);
    ASSERT_FALSE(r.ok()) << settings[0].first;
    EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(r.status().message(), HasSubstr(settings[0].first));
  }
}

TEST(TonyConfTest, ClientFlagsMakeTheCommand) {
  const std::string dir = ::testing::TempDir();
  const std::string xml = dir + "/tony.xml";
  std::ofstream(xml) << "<configuration><property><name>tony.worker.instances</name>"
                        "<value>2</value></property></configuration>";
  const std::string venv = dir + "/venv.zip";
  std::ofstream(venv) << "PK";
  auto args =
      ParseSubmitArgs({"--local", "-conf_file", xml, "-executes", "/abs/train.py", "-task_params",
                       "--steps 5", "-python_venv", venv, "-python_binary_path",
                       "Python/bin/python", "-shell_env", "K=V", "--conf", "tony.ps.instances=1"});
  ASSERT_TRUE(args.ok()) << args.status();
  const JobSpec& spec = args->spec;
  EXPECT_EQ(spec.command, "tony-python-env/Python/bin/python /abs/train.py --steps 5");
  EXPECT_EQ(spec.python_env, venv);
  EXPECT_EQ(spec.env.at("K"), "V");
  ASSERT_EQ(spec.job_types.size(), 2u);
  EXPECT_EQ(spec.job_types[0].name, "ps");

  auto both = ParseSubmitArgs({"--spec", xml, "--tony_conf", xml});
  EXPECT_THAT(both.status().message(), HasSubstr("either --spec or TonY's configuration"));
  // --src_dir: the sources go with the job; the entry point is one of them, not shipped apart.
  auto src = ParseSubmitArgs({"-conf_file", xml, "-src_dir", dir, "-executes", "train.py"});
  ASSERT_TRUE(src.ok()) << src.status();
  EXPECT_EQ(src->spec.source_dir, dir);
  EXPECT_EQ(src->spec.command, "python train.py");
  EXPECT_THAT(src->spec.files, IsEmpty());
  auto classpath = ParseSubmitArgs({"-conf_file", xml, "-hdfs_classpath", "/jars"});
  EXPECT_THAT(classpath.status().message(), HasSubstr("--hdfs_classpath: not supported"));
  // TonY's sidecar TensorBoard: libtony's TensorBoard task, reading that directory.
  auto tb = ParseSubmitArgs({"-conf_file", xml, "-sidecar_tensorboard_log_dir", "hdfs:///tb",
                             "-executes", "/abs/train.py"});
  ASSERT_TRUE(tb.ok()) << tb.status();
  EXPECT_TRUE(tb->spec.tensorboard);
  EXPECT_EQ(tb->spec.output_path, "hdfs:///tb");
  auto missing = ParseSubmitArgs({"--tony_conf", dir + "/nope.xml", "true"});
  EXPECT_THAT(missing.status().message(), HasSubstr("--tony_conf"));
}

}  // namespace
}  // namespace tony::cli
