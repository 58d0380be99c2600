// Copyright libtony authors.

#include "spec/task_env.h"

#include "spec/mpi_env.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace tony {
namespace {

using ::testing::Contains;
using ::testing::Key;
using ::testing::Not;

JobTypeSpec Job(const std::string& name, int instances) {
  JobTypeSpec jt;
  jt.name = name;
  jt.instances = instances;
  return jt;
}

TaskSpec FindTask(const JobSpec& spec, const std::string& job, int index) {
  for (const TaskSpec& t : ResolveTasks(spec)) {
    if (t.job_name == job && t.index == index) return t;
  }
  ADD_FAILURE() << "no task " << job << ":" << index;
  return {};
}

// ps:1, worker:2, evaluator:1 with the addresses tests expect.
struct PsWorkerFixture {
  JobSpec spec;
  ClusterSpec cluster;
  PsWorkerFixture() {
    spec.command = "python train.py";
    spec.job_types = {Job("ps", 1), Job("worker", 2), Job("evaluator", 1)};
    cluster.jobs["ps"] = {"h0:1000"};
    cluster.jobs["worker"] = {"h1:1001", "h2:1002"};
    cluster.jobs["evaluator"] = {"h3:1003"};
  }
};

TEST(TaskEnvTest, SeedVariables) {
  PsWorkerFixture f;
  f.spec.input_path = "hdfs:///in";
  f.spec.output_path = "/tmp/out";
  f.spec.script_file = "/home/u/mnist/train.py";
  f.spec.docker_image = "tf:2";
  auto env = BuildTaskEnvironment(f.spec, FindTask(f.spec, "worker", 1), &f.cluster);
  EXPECT_EQ(env["DTF_TASK_JOB_NAME"], "worker");
  EXPECT_EQ(env["DTF_TASK_INDEX"], "1");
  EXPECT_EQ(env["DTF_PS_HOSTS"], "h0:1000");
  EXPECT_EQ(env["DTF_WORKER_HOSTS"], "h1:1001,h2:1002");
  EXPECT_EQ(env["DTF_EVALUATOR_HOSTS"], "h3:1003");
  EXPECT_EQ(env["DTF_TASK_SCRIPT"], "train.py");
  EXPECT_EQ(env["DTF_INPUT_PATH"], "hdfs:///in");
  EXPECT_EQ(env["DTF_OUTPUT_PATH"], "/tmp/out");
  EXPECT_EQ(env["DTF_DOCKER_IMAGE"], "tf:2");
  EXPECT_EQ(env["TONY_TASK_PORT"], "1002");
}

TEST(TaskEnvTest, OptionalVariablesAbsentWhenUnset) {
  PsWorkerFixture f;
  auto env = BuildTaskEnvironment(f.spec, FindTask(f.spec, "ps", 0), &f.cluster);
  EXPECT_THAT(env, Not(Contains(Key("DTF_TASK_SCRIPT"))));
  EXPECT_THAT(env, Not(Contains(Key("DTF_INPUT_PATH"))));
  EXPECT_THAT(env, Not(Contains(Key("DTF_OUTPUT_PATH"))));
  EXPECT_THAT(env, Not(Contains(Key("DTF_DOCKER_IMAGE"))));
  EXPECT_THAT(env, Not(Contains(Key("MASTER_ADDR"))));  // TensorFlow job: no PyTorch variables
}

TEST(TaskEnvTest, TfConfigLeavesEvaluatorOutOfOthersCluster) {
  PsWorkerFixture f;
  auto worker = BuildTaskEnvironment(f.spec, FindTask(f.spec, "worker", 0), &f.cluster);
  auto tf = nlohmann::json::parse(worker["TF_CONFIG"]);
  EXPECT_EQ(tf["task"]["type"], "worker");
  EXPECT_EQ(tf["task"]["index"], 0);
  EXPECT_EQ(tf["cluster"]["ps"], nlohmann::json({"h0:1000"}));
  EXPECT_EQ(tf["cluster"]["worker"], nlohmann::json({"h1:1001", "h2:1002"}));
  EXPECT_FALSE(tf["cluster"].contains("evaluator"));

  auto eval = BuildTaskEnvironment(f.spec, FindTask(f.spec, "evaluator", 0), &f.cluster);
  auto tf_eval = nlohmann::json::parse(eval["TF_CONFIG"]);
  EXPECT_EQ(tf_eval["cluster"]["evaluator"], nlohmann::json({"h3:1003"}));
  EXPECT_EQ(tf_eval["task"]["type"], "evaluator");
}

TEST(TaskEnvTest, RolesOutsideThePublishedSpecAreNoPartOfTheTasksCluster) {
  PsWorkerFixture f;
  f.spec.job_types.insert(f.spec.job_types.begin(), Job("prep", 1));
  f.spec.job_types[2].depends_on = {{"prep"}};  // the workers start once prep finished
  auto worker = BuildTaskEnvironment(f.spec, FindTask(f.spec, "worker", 1), &f.cluster);
  EXPECT_FALSE(nlohmann::json::parse(worker["TF_CONFIG"])["cluster"].contains("prep"));
  EXPECT_FALSE(nlohmann::json::parse(worker["CLUSTER_SPEC"]).contains("prep"));
  EXPECT_EQ(worker.count("DTF_PREP_HOSTS"), 0u);
  EXPECT_EQ(worker["TASK_NUM"], "4");
}

TEST(TaskEnvTest, TensorBoardIsNoTaskOfTheCluster) {
  PsWorkerFixture f;
  f.spec.tensorboard = true;
  f.spec.output_path = "/tmp/out";
  f.cluster.jobs["tensorboard"] = {"h4:6006"};
  auto worker = BuildTaskEnvironment(f.spec, FindTask(f.spec, "worker", 0), &f.cluster);
  EXPECT_FALSE(nlohmann::json::parse(worker["TF_CONFIG"])["cluster"].contains("tensorboard"));
  EXPECT_FALSE(nlohmann::json::parse(worker["CLUSTER_SPEC"]).contains("tensorboard"));
  EXPECT_EQ(worker["DTF_TENSORBOARD_HOSTS"], "h4:6006");
  auto tb = BuildTaskEnvironment(f.spec, FindTask(f.spec, "tensorboard", 0), &f.cluster);
  EXPECT_EQ(tb["TONY_TASK_PORT"], "6006");
  EXPECT_THAT(tb, Not(Contains(Key("TF_CONFIG"))));
}

TEST(TaskEnvTest, TonyVariables) {
  PsWorkerFixture f;
  auto env = BuildTaskEnvironment(f.spec, FindTask(f.spec, "worker", 0), &f.cluster);
  auto cluster = nlohmann::json::parse(env["CLUSTER_SPEC"]);
  EXPECT_EQ(cluster["worker"], nlohmann::json({"h1:1001", "h2:1002"}));
  EXPECT_EQ(cluster["evaluator"], nlohmann::json({"h3:1003"}));
  EXPECT_EQ(env["JOB_NAME"], "worker");
  EXPECT_EQ(env["TASK_INDEX"], "0");
  EXPECT_EQ(env["TASK_NUM"], "4");
  EXPECT_EQ(env["IS_CHIEF"], "true");  // no chief: worker 0 is
  auto w1 = BuildTaskEnvironment(f.spec, FindTask(f.spec, "worker", 1), &f.cluster);
  EXPECT_EQ(w1["IS_CHIEF"], "false");
  auto ps = BuildTaskEnvironment(f.spec, FindTask(f.spec, "ps", 0), &f.cluster);
  EXPECT_EQ(ps["IS_CHIEF"], "false");
}

TEST(TaskEnvTest, ChiefIsChiefWhenPresent) {
  JobSpec spec;
  spec.command = "x";
  spec.job_types = {Job("chief", 1), Job("worker", 2), Job("ps", 1)};
  ClusterSpec cluster;
  cluster.jobs = {{"chief", {"c:1"}}, {"worker", {"w:1", "w:2"}}, {"ps", {"p:1"}}};
  EXPECT_EQ(BuildTaskEnvironment(spec, FindTask(spec, "chief", 0), &cluster)["IS_CHIEF"], "true");
  EXPECT_EQ(BuildTaskEnvironment(spec, FindTask(spec, "worker", 0), &cluster)["IS_CHIEF"], "false");
}

TEST(TaskEnvTest, PyTorchRendezvousFromWorkerZero) {
  JobSpec spec;
  spec.framework = Framework::kPyTorch;
  spec.command = "python ddp.py";
  spec.job_types = {Job("worker", 3)};
  ClusterSpec cluster;
  cluster.jobs["worker"] = {"a:10", "b:11", "c:12"};
  for (int i = 0; i < 3; ++i) {
    auto env = BuildTaskEnvironment(spec, FindTask(spec, "worker", i), &cluster);
    EXPECT_EQ(env["MASTER_ADDR"], "a");
    EXPECT_EQ(env["MASTER_PORT"], "10");
    EXPECT_EQ(env["INIT_METHOD"], "tcp://a:10");
    EXPECT_EQ(env["WORLD_SIZE"], "3");
    EXPECT_EQ(env["RANK"], std::to_string(i));
    EXPECT_EQ(env["LOCAL_RANK"], "0");
    EXPECT_EQ(env["LOCAL_WORLD_SIZE"], "1");
  }
}

TEST(TaskEnvTest, PyTorchChiefIsRankZeroAndPsIsNoMember) {
  JobSpec spec;
  spec.framework = Framework::kPyTorch;
  spec.command = "python ddp.py";
  spec.job_types = {Job("worker", 2), Job("chief", 1), Job("ps", 1)};
  ClusterSpec cluster;
  cluster.jobs = {{"worker", {"w0:1", "w1:2"}}, {"chief", {"c0:3"}}, {"ps", {"p0:4"}}};
  auto chief = BuildTaskEnvironment(spec, FindTask(spec, "chief", 0), &cluster);
  EXPECT_EQ(chief["RANK"], "0");
  EXPECT_EQ(chief["WORLD_SIZE"], "3");
  EXPECT_EQ(chief["MASTER_ADDR"], "c0");
  EXPECT_EQ(chief["MASTER_PORT"], "3");
  auto w1 = BuildTaskEnvironment(spec, FindTask(spec, "worker", 1), &cluster);
  EXPECT_EQ(w1["RANK"], "2");
  EXPECT_EQ(w1["MASTER_ADDR"], "c0");
  auto ps = BuildTaskEnvironment(spec, FindTask(spec, "ps", 0), &cluster);
  EXPECT_THAT(ps, Not(Contains(Key("RANK"))));
  EXPECT_THAT(ps, Not(Contains(Key("LOCAL_RANK"))));
  EXPECT_EQ(ps["WORLD_SIZE"], "3");
}

TEST(TaskEnvTest, MpiLauncherGetsTheRankTasksAsHostsAndTheOthersNothing) {
  JobSpec spec;
  spec.framework = Framework::kMpi;
  spec.command = "mpirun python t.py";
  spec.job_types = {Job("launcher", 1), Job("worker", 2), Job("server", 1)};
  spec.tensorboard = true;
  spec.output_path = "/out";
  ClusterSpec cluster;
  cluster.jobs = {{"launcher", {"l:1"}},
                  {"worker", {"w0:2", "w1:3"}},
                  {"server", {"s:4"}},
                  {"tensorboard", {"t:5"}}};
  auto launcher = BuildTaskEnvironment(spec, FindTask(spec, "launcher", 0), &cluster);
  const std::string hosts = "tony-worker-0:1,tony-worker-1:1,tony-server-0:1";
  EXPECT_EQ(launcher["TONY_MPI_HOSTS"], hosts);
  EXPECT_EQ(launcher["OMPI_MCA_orte_default_dash_host"], hosts);
  EXPECT_EQ(launcher["OMPI_ALLOW_RUN_AS_ROOT"], "1");
  EXPECT_EQ(launcher["OMPI_ALLOW_RUN_AS_ROOT_CONFIRM"], "1");
  // The executor adds its own path as the agent; a dry run shows a placeholder.
  EXPECT_THAT(launcher, Not(Contains(Key("OMPI_MCA_plm_rsh_agent"))));
  auto dry = BuildTaskEnvironment(spec, FindTask(spec, "launcher", 0), nullptr);
  EXPECT_EQ(dry["OMPI_MCA_plm_rsh_agent"], "<the executor> mpi-rsh");
  for (const auto& [job, index] :
       std::vector<std::pair<std::string, int>>{{"worker", 1}, {"server", 0}}) {
    auto env = BuildTaskEnvironment(spec, FindTask(spec, job, index), &cluster);
    EXPECT_THAT(env, Not(Contains(Key("TONY_MPI_HOSTS")))) << job;
    EXPECT_THAT(env, Not(Contains(Key("OMPI_MCA_orte_default_dash_host")))) << job;
  }
  // Other frameworks get none of it.
  spec.framework = Framework::kCustom;
  EXPECT_THAT(BuildTaskEnvironment(spec, FindTask(spec, "launcher", 0), &cluster),
              Not(Contains(Key("TONY_MPI_HOSTS"))));
}

TEST(TaskEnvTest, MpiHostNamesRoundTripAndOthersAreNoTask) {
  EXPECT_EQ(MpiHostName("worker", 12), "tony-worker-12");
  EXPECT_EQ(ParseMpiHostName("tony-worker-12"), std::make_pair(std::string("worker"), 12));
  EXPECT_EQ(ParseMpiHostName("tony-my_role-0"), std::make_pair(std::string("my_role"), 0));
  for (const char* bad : {"worker-0", "tony-worker", "tony--1", "tony-worker-x", "tony-a-b-1",
                          "tony-worker--1", "node1.example.com", ""}) {
    EXPECT_EQ(ParseMpiHostName(bad), std::nullopt) << bad;
  }
}

TEST(TaskEnvTest, JaxProcessesOverEveryRoleChiefFirst) {
  JobSpec spec;
  spec.framework = Framework::kJax;
  spec.command = "python train.py";
  spec.job_types = {Job("worker", 2), Job("chief", 1), Job("tensorboard", 1)};
  ClusterSpec cluster;
  cluster.jobs = {{"worker", {"w0:1", "w1:2"}}, {"chief", {"c0:3"}}, {"tensorboard", {"t:4"}}};
  const std::vector<std::pair<std::string, int>> order = {
      {"chief", 0}, {"worker", 0}, {"worker", 1}};
  for (size_t id = 0; id < order.size(); ++id) {
    auto env =
        BuildTaskEnvironment(spec, FindTask(spec, order[id].first, order[id].second), &cluster);
    EXPECT_EQ(env["JAX_COORDINATOR_ADDRESS"], "c0:3");
    EXPECT_EQ(env["JAX_NUM_PROCESSES"], "3");
    EXPECT_EQ(env["JAX_PROCESS_ID"], std::to_string(id));
    EXPECT_EQ(env["KERAS_DISTRIBUTION_JOB_ADDRESSES"], "c0:3,w0:1,w1:2");
    EXPECT_EQ(env["KERAS_DISTRIBUTION_NUM_PROCESSES"], "3");
    EXPECT_EQ(env["KERAS_DISTRIBUTION_PROCESS_ID"], std::to_string(id));
    // No PyTorch variables, and no PYTHONPATH here: the executor adds the detector's.
    EXPECT_THAT(env, Not(Contains(Key("RANK"))));
    EXPECT_THAT(env, Not(Contains(Key("PYTHONPATH"))));
  }
  auto tb = BuildTaskEnvironment(spec, FindTask(spec, "tensorboard", 0), &cluster);
  EXPECT_THAT(tb, Not(Contains(Key("JAX_PROCESS_ID"))));
}

TEST(TaskEnvTest, JaxWithoutChiefStartsAtWorkerZero) {
  JobSpec spec;
  spec.framework = Framework::kJax;
  spec.command = "python train.py";
  spec.job_types = {Job("worker", 2)};
  ClusterSpec cluster;
  cluster.jobs = {{"worker", {"a:10", "b:11"}}};
  auto w1 = BuildTaskEnvironment(spec, FindTask(spec, "worker", 1), &cluster);
  EXPECT_EQ(w1["JAX_COORDINATOR_ADDRESS"], "a:10");
  EXPECT_EQ(w1["JAX_PROCESS_ID"], "1");
  EXPECT_EQ(w1["JAX_NUM_PROCESSES"], "2");
}

TEST(TaskEnvTest, JaxDryRunShowsPlaceholdersAndTheDetector) {
  JobSpec spec;
  spec.framework = Framework::kJax;
  spec.command = "python train.py";
  spec.job_types = {Job("worker", 2)};
  auto env = BuildTaskEnvironment(spec, FindTask(spec, "worker", 1), nullptr);
  EXPECT_EQ(env["JAX_COORDINATOR_ADDRESS"], "<assigned at run time>");
  EXPECT_EQ(env["JAX_PROCESS_ID"], "1");
  EXPECT_EQ(env["PYTHONPATH"], "<container dir>/tony-jax");
}

TEST(TaskEnvTest, DryRunShowsPlaceholders) {
  PsWorkerFixture f;
  f.spec.framework = Framework::kPyTorch;
  auto env = BuildTaskEnvironment(f.spec, FindTask(f.spec, "worker", 1), nullptr);
  EXPECT_EQ(env["DTF_WORKER_HOSTS"], "<assigned at run time>,<assigned at run time>");
  EXPECT_EQ(env["TONY_TASK_PORT"], "<assigned at run time>");
  EXPECT_EQ(env["MASTER_ADDR"], "<assigned at run time>");
  auto tf = nlohmann::json::parse(env["TF_CONFIG"]);
  EXPECT_EQ(tf["cluster"]["ps"], nlohmann::json({"<assigned at run time>"}));
  EXPECT_EQ(env["RANK"], "1");
}

TEST(TaskEnvTest, UserEnvJobTypeWinsButCannotOverrideContract) {
  PsWorkerFixture f;
  f.spec.env = {{"A", "spec"}, {"B", "spec"}, {"DTF_TASK_INDEX", "99"}};
  f.spec.job_types[1].env = {{"B", "worker"}};
  auto env = BuildTaskEnvironment(f.spec, FindTask(f.spec, "worker", 0), &f.cluster);
  EXPECT_EQ(env["A"], "spec");
  EXPECT_EQ(env["B"], "worker");
  EXPECT_EQ(env["DTF_TASK_INDEX"], "0");
  auto ps = BuildTaskEnvironment(f.spec, FindTask(f.spec, "ps", 0), &f.cluster);
  EXPECT_EQ(ps["B"], "spec");
}

TEST(TaskEnvTest, DashInJobNameMakesAValidVariableName) {
  JobSpec spec;
  spec.command = "x";
  spec.job_types = {Job("data-reader", 1), Job("worker", 1)};
  ClusterSpec cluster;
  cluster.jobs = {{"data-reader", {"d:1"}}, {"worker", {"w:1"}}};
  auto env = BuildTaskEnvironment(spec, FindTask(spec, "worker", 0), &cluster);
  EXPECT_EQ(env["DTF_DATA_READER_HOSTS"], "d:1");
}

TEST(TaskEnvTest, ClientSeesTheClusterButIsNoMemberOfIt) {
  PsWorkerFixture f;
  f.spec.client_mode = true;
  TaskSpec client = ResolveClientTask(f.spec);
  EXPECT_EQ(client.id(), "client:0");
  EXPECT_EQ(client.command, "python train.py");
  EXPECT_TRUE(client.tracked);
  for (const TaskSpec& t : ResolveTasks(f.spec)) {
    EXPECT_NE(t.job_name, "client");
    EXPECT_FALSE(t.tracked) << t.id() << ": in client mode the client alone decides";
  }
  auto env = BuildTaskEnvironment(f.spec, client, &f.cluster);
  EXPECT_EQ(env["DTF_TASK_JOB_NAME"], "client");
  EXPECT_EQ(env["DTF_TASK_INDEX"], "0");
  EXPECT_EQ(env["DTF_WORKER_HOSTS"], "h1:1001,h2:1002");
  EXPECT_THAT(env, Not(Contains(Key("TONY_TASK_PORT"))));
  EXPECT_EQ(env["IS_CHIEF"], "false");
  auto tf_config = nlohmann::json::parse(env["TF_CONFIG"]);
  EXPECT_FALSE(tf_config.contains("task"));
  EXPECT_EQ(tf_config["cluster"]["worker"].size(), 2u);
  EXPECT_FALSE(tf_config["cluster"].contains("client"));
}

}  // namespace
}  // namespace tony
