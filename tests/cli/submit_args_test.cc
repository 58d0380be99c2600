// Copyright libtony authors.

#include "cli/submit_args.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "cli/log_sink.h"
#include "cli/submit_command.h"
#include "cli/ytf_command.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tony/log.h"

namespace tony::cli {
namespace {

using ::testing::HasSubstr;

absl::StatusOr<SubmitArgs> Parse(std::vector<std::string> args) { return ParseSubmitArgs(args); }

std::string ErrorOf(std::vector<std::string> args) {
  auto r = ParseSubmitArgs(args);
  EXPECT_FALSE(r.ok());
  if (r.ok()) return "";
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ExitCodeFor(r.status()), kExitUsage);
  return std::string(r.status().message());
}

std::string WriteTemp(const std::string& name, const std::string& content) {
  std::string path = ::testing::TempDir() + "/" + name;
  std::ofstream(path) << content;
  return path;
}

TEST(SubmitArgsTest, SeedExample) {
  auto r = Parse({"-r", "ps:1,worker:4", "python mnist.py --job_name ${DTF_TASK_JOB_NAME}"});
  ASSERT_TRUE(r.ok()) << r.status();
  const JobSpec& spec = r->spec;
  ASSERT_EQ(spec.job_types.size(), 2u);
  EXPECT_EQ(spec.job_types[1].name, "worker");
  EXPECT_EQ(spec.job_types[1].instances, 4);
  EXPECT_EQ(spec.command, "python mnist.py --job_name ${DTF_TASK_JOB_NAME}");
  EXPECT_EQ(spec.name, "TensorFlow");
  EXPECT_EQ(spec.queue, "default");
  std::vector<TaskSpec> tasks = ResolveTasks(spec);
  EXPECT_EQ(tasks[0].memory_mb, 8192);
  EXPECT_EQ(tasks[0].vcores, 1);
}

TEST(SubmitArgsTest, AllScalarOptionsLongAndShort) {
  std::string script = WriteTemp("train.py", "print(1)\n");
  auto r = Parse({"--cluster_requirement=ps:1,worker:2",
                  "-i",
                  "/in",
                  "--output",
                  "/out",
                  "-s",
                  script,
                  "-t",
                  "--docker_image",
                  "tf:2",
                  "-q",
                  "research",
                  "-n",
                  "mnist",
                  "--framework",
                  "pytorch",
                  "-e",
                  "A=1",
                  "--env=B=x=y",
                  "--tag",
                  "t1",
                  "--max_attempts",
                  "2",
                  "--priority",
                  "7",
                  "--am_memory",
                  "1g",
                  "--am_node_label",
                  "gpu",
                  "--registration_timeout",
                  "2m",
                  "--timeout",
                  "1h",
                  "--local",
                  "--detach",
                  "-D",
                  "yarn.x=1",
                  "--dry-run",
                  "python",
                  "train.py"});
  ASSERT_TRUE(r.ok()) << r.status();
  const JobSpec& s = r->spec;
  EXPECT_EQ(s.input_path, "/in");
  EXPECT_EQ(s.output_path, "/out");
  EXPECT_EQ(s.script_file, script);
  EXPECT_TRUE(s.tensorboard);
  EXPECT_EQ(s.docker_image, "tf:2");
  EXPECT_EQ(s.queue, "research");
  EXPECT_EQ(s.name, "mnist");
  EXPECT_FALSE(s.client_mode);  // --client excludes --max_attempts > 1: tested below
  EXPECT_EQ(s.framework, Framework::kPyTorch);
  EXPECT_EQ(s.env.at("A"), "1");
  EXPECT_EQ(s.env.at("B"), "x=y");
  EXPECT_EQ(s.tags, std::vector<std::string>{"t1"});
  EXPECT_EQ(s.max_attempts, 2);
  EXPECT_EQ(s.priority, 7);
  EXPECT_EQ(s.am_memory_mb, 1024);
  EXPECT_EQ(s.am_node_label, "gpu");
  EXPECT_EQ(s.timeouts.registration, absl::Minutes(2));
  EXPECT_EQ(s.timeouts.job, absl::Hours(1));
  EXPECT_EQ(r->backend, Backend::kLocal);
  EXPECT_TRUE(r->detach);
  EXPECT_TRUE(r->dry_run);
  EXPECT_EQ(r->conf_overrides.at("yarn.x"), "1");
  EXPECT_EQ(s.command, "python train.py");
}

TEST(SubmitArgsTest, ResourceFormsMoreSpecificWinsWhateverTheOrder) {
  // Task level first, general last: specificity, not order, decides.
  auto r =
      Parse({"-r", "ps:1,worker:3", "-c", "worker[1]:8", "-m", "worker[2]:1g", "-c", "worker:2",
             "-m", "ps:4096", "-c", "3", "-m", "512m", "-g", "worker[0]:1", "cmd"});
  ASSERT_TRUE(r.ok()) << r.status();
  std::vector<TaskSpec> t = ResolveTasks(r->spec);
  ASSERT_EQ(t.size(), 4u);
  EXPECT_EQ(t[0].vcores, 3);  // ps: general vcores
  EXPECT_EQ(t[0].memory_mb, 4096);
  EXPECT_EQ(t[1].vcores, 2);  // worker:0 job level
  EXPECT_EQ(t[1].memory_mb, 512);
  EXPECT_EQ(t[1].gpus, 1);
  EXPECT_EQ(t[2].vcores, 8);  // worker:1 task level
  EXPECT_EQ(t[3].vcores, 2);
  EXPECT_EQ(t[3].memory_mb, 1024);
  EXPECT_EQ(t[3].gpus, 0);
}

TEST(SubmitArgsTest, ResourceFlagBeforeRequirementStillKnowsTheJobs) {
  auto r = Parse({"-c", "worker:2", "-r", "worker:2", "cmd"});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(ResolveTasks(r->spec)[0].vcores, 2);
}

TEST(SubmitArgsTest, CommaSeparatedAssignmentsAndAttachedShortValues) {
  auto r = Parse({"-rps:1,worker:2", "-cworker:2,ps:1", "-m2g", "cmd"});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(ResolveTasks(r->spec)[1].vcores, 2);
  EXPECT_EQ(ResolveTasks(r->spec)[1].memory_mb, 2048);
}

TEST(SubmitArgsTest, BadInputNamesTheFlag) {
  EXPECT_THAT(ErrorOf({"-r", "", "cmd"}), HasSubstr("-r/--cluster_requirement: is empty"));
  EXPECT_THAT(ErrorOf({"-r", "ps:1,ps:2", "cmd"}), HasSubstr("appears twice"));
  EXPECT_THAT(ErrorOf({"-r", "worker:0", "cmd"}), HasSubstr("at least 1"));
  EXPECT_THAT(ErrorOf({"-r", "worker:-2", "cmd"}), HasSubstr("negative"));
  EXPECT_THAT(ErrorOf({"-r", "worker:abc", "cmd"}), HasSubstr("-r/--cluster_requirement"));
  EXPECT_THAT(ErrorOf({"-r", "worker:1", "--priority", "-1", "cmd"}), HasSubstr("--priority: "));
  EXPECT_THAT(ErrorOf({"-r", "worker:2", "--anti_affinity", "ps", "cmd"}),
              HasSubstr("--anti_affinity: 'ps' is not a job of -r"));
  auto spread = Parse({"-r", "ps:1,worker:2", "--anti_affinity", "worker", "cmd"});
  ASSERT_TRUE(spread.ok()) << spread.status();
  EXPECT_TRUE(spread->spec.FindJobType("worker")->anti_affinity);
  EXPECT_FALSE(spread->spec.FindJobType("ps")->anti_affinity);
  auto placed = Parse({"-r", "ps:1,worker:2", "--node_attribute", "worker:nm.yarn.io/pool=a", "c"});
  ASSERT_TRUE(placed.ok()) << placed.status();
  EXPECT_EQ(placed->spec.FindJobType("worker")->node_attribute, "nm.yarn.io/pool=a");
  EXPECT_THAT(ErrorOf({"-r", "worker:1", "--node_attribute", "ps:pool=a", "cmd"}),
              HasSubstr("--node_attribute: 'ps:pool=a' is not <job>:<attribute expression>"));
  EXPECT_THAT(ErrorOf({"-r", "worker:1", "--node_attribute", "worker:pool", "cmd"}),
              HasSubstr("'pool' is not a node attribute expression"));
  EXPECT_THAT(ErrorOf({"-r", "worker:1", "--priority", "high", "cmd"}),
              HasSubstr("--priority: 'high' is not a non-negative integer"));
  EXPECT_THAT(ErrorOf({"-r", "worker:2", "-c", "0", "cmd"}), HasSubstr("-c/--task_vcores"));
  EXPECT_THAT(ErrorOf({"-r", "worker:2", "-c", "two", "cmd"}), HasSubstr("-c/--task_vcores"));
  EXPECT_THAT(ErrorOf({"-r", "worker:2", "-m", "-1", "cmd"}), HasSubstr("-m/--task_memory"));
  EXPECT_THAT(ErrorOf({"-r", "worker:2", "-m", "0g", "cmd"}), HasSubstr("-m/--task_memory"));
  EXPECT_THAT(ErrorOf({"-r", "worker:2", "-c", "wrker:2", "cmd"}),
              HasSubstr("-c/--task_vcores: unknown job 'wrker'; the jobs are: worker"));
  EXPECT_THAT(ErrorOf({"-r", "worker:2", "-m", "worker[2]:1g", "cmd"}),
              HasSubstr("-m/--task_memory: task worker[2] does not exist; job 'worker' has "
                        "tasks 0..1"));
  EXPECT_THAT(ErrorOf({"-r", "worker:2", "-t", "cmd"}), HasSubstr("--output"));
  EXPECT_THAT(ErrorOf({"-r", "worker:2"}), HasSubstr("no task command"));
  EXPECT_THAT(ErrorOf({"cmd"}), HasSubstr("-r/--cluster_requirement"));
  EXPECT_THAT(ErrorOf({"-r", "worker:2", "-s", "/nonexistent.py", "cmd"}),
              HasSubstr("(-s/--script): cannot read"));
  EXPECT_THAT(ErrorOf({"--bogus", "cmd"}), HasSubstr("unknown option '--bogus'"));
  EXPECT_THAT(ErrorOf({"-x", "cmd"}), HasSubstr("unknown option '-x'"));
  EXPECT_THAT(ErrorOf({"-r"}), HasSubstr("-r/--cluster_requirement: needs a value"));
  EXPECT_THAT(ErrorOf({"-r", "w:1", "--local", "--yarn", "cmd"}), HasSubstr("conflicts"));
  auto client = Parse({"-r", "w:1", "--client", "cmd"});
  ASSERT_TRUE(client.ok()) << client.status();
  EXPECT_TRUE(client->spec.client_mode);
  EXPECT_THAT(ErrorOf({"-r", "w:1", "--client", "--detach", "cmd"}),
              HasSubstr("--client: runs the client task here"));
  EXPECT_THAT(ErrorOf({"-r", "w:1", "--client", "--max_attempts", "2", "cmd"}),
              HasSubstr("max_attempts (--max_attempts): a restarted job would need a new client"));
  EXPECT_THAT(ErrorOf({"-r", "client:1", "--client", "cmd"}),
              HasSubstr("jobs.client (--client): a job type named 'client' conflicts"));
  EXPECT_THAT(ErrorOf({"-r", "w:1", "-e", "NOVALUE", "cmd"}), HasSubstr("-e/--env"));
  EXPECT_THAT(ErrorOf({"-r", "w:1", "--framework", "mxnet", "cmd"}), HasSubstr("--framework"));
  EXPECT_EQ(ErrorOf({"-r", "w:1", "--framework", "jaxx", "cmd"}),
            "--framework: unknown framework 'jaxx'; use tensorflow, pytorch, jax, mpi, horovod or "
            "custom");
  auto jax = Parse({"-r", "w:2", "--framework", "jax", "cmd"});
  ASSERT_TRUE(jax.ok()) << jax.status();
  EXPECT_EQ(jax->spec.framework, Framework::kJax);
  EXPECT_THAT(ErrorOf({"--spec", "/nonexistent.yaml", "cmd"}), HasSubstr("cannot read job spec"));
}

TEST(SubmitArgsTest, CommandLineOverridesSpecFile) {
  std::string yaml = WriteTemp("job.yaml", R"(
name: from-file
queue: q1
command: python file.py
defaults: {memory: 1g}
jobs:
  ps: {instances: 1}
  worker: {instances: 2, vcores: 2, tasks: {1: {vcores: 5}}}
)");
  auto r =
      Parse({"--spec", yaml, "-n", "from-cli", "-r", "worker:4", "-m", "2g", "-c", "worker[3]:7"});
  ASSERT_TRUE(r.ok()) << r.status();
  const JobSpec& s = r->spec;
  EXPECT_EQ(s.name, "from-cli");
  EXPECT_EQ(s.queue, "q1");
  EXPECT_EQ(s.command, "python file.py");
  ASSERT_EQ(s.job_types.size(), 2u);
  EXPECT_EQ(s.FindJobType("worker")->instances, 4);
  std::vector<TaskSpec> t = ResolveTasks(s);
  EXPECT_EQ(t[0].memory_mb, 2048);
  EXPECT_EQ(t[2].vcores, 5);  // file's task level kept
  EXPECT_EQ(t[4].vcores, 7);
  EXPECT_EQ(t[3].vcores, 2);
}

TEST(SubmitArgsTest, SpecFileErrorsCarryLineAndColumn) {
  std::string yaml = WriteTemp("bad.yaml", "jobs:\n  worker: {instances: 0}\n");
  EXPECT_THAT(ErrorOf({"--spec", yaml}), HasSubstr("bad.yaml:2:23: jobs.worker.instances"));
}

TEST(SubmitArgsTest, HelpAndVersionSkipValidation) {
  auto r = Parse({"--help"});
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->help);
  EXPECT_TRUE(Parse({"-h", "-r", ""})->help);
  EXPECT_TRUE(Parse({"--version"})->version);
  EXPECT_THAT(SubmitUsage(), HasSubstr("-r, --cluster_requirement"));
}

TEST(SubmitArgsTest, DryRunYamlIsAcceptedBackUnchanged) {
  auto r = Parse({"-r", "ps:1,worker:2", "-m", "worker[1]:3g", "-c", "2", "-o", "/out", "-n", "rt",
                  "python train.py --flag 'quoted'"});
  ASSERT_TRUE(r.ok());
  std::ostringstream out, err;
  ASSERT_EQ(RunSubmit(SubmitArgs{.spec = r->spec, .dry_run = true}, out, err), kExitOk);
  std::string path = WriteTemp("dry.yaml", out.str());
  auto back = Parse({"--spec", path});
  ASSERT_TRUE(back.ok()) << back.status() << "\n" << out.str();
  EXPECT_TRUE(back->spec == r->spec);
  std::ostringstream again;
  RunSubmit(SubmitArgs{.spec = back->spec, .dry_run = true}, again, err);
  EXPECT_EQ(again.str(), out.str());
  EXPECT_THAT(out.str(), HasSubstr("DTF_WORKER_HOSTS"));
  EXPECT_THAT(out.str(), HasSubstr("memory: 3072"));
}

// Sets (or, with nullptr, unsets) an environment variable for one test's scope.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    value != nullptr ? setenv(name, value, 1) : unsetenv(name);
  }
  ~ScopedEnv() { old_ ? setenv(name_, old_->c_str(), 1) : unsetenv(name_); }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

// A gateway with only HADOOP_HOME set: the loader reads $HADOOP_HOME/etc/hadoop, so the job
// goes to that cluster, not to local processes on the gateway.
TEST(SubmitArgsTest, TheBackendFollowsTheLoadersSearchHadoopHomeIncluded) {
  const std::string home = ::testing::TempDir() + "/hadoop-home";
  ASSERT_EQ(std::system(("rm -rf '" + home + "' && mkdir -p '" + home + "/etc/hadoop'").c_str()),
            0);
  WriteTemp("hadoop-home/etc/hadoop/yarn-site.xml", "<configuration></configuration>\n");
  ScopedEnv conf_dir("HADOOP_CONF_DIR", nullptr);
  ScopedEnv yarn_conf_dir("YARN_CONF_DIR", nullptr);
  {
    ScopedEnv hadoop_home("HADOOP_HOME", home.c_str());
    EXPECT_EQ(ChooseBackend(SubmitArgs{}), Backend::kYarn);
    EXPECT_EQ(ChooseBackend(SubmitArgs{.backend = Backend::kLocal}), Backend::kLocal);
  }
  {
    ScopedEnv hadoop_home("HADOOP_HOME", (home + "/etc").c_str());  // no etc/hadoop in it
    EXPECT_EQ(ChooseBackend(SubmitArgs{}), Backend::kLocal);
    EXPECT_EQ(ChooseBackend(SubmitArgs{.conf_dir = home}), Backend::kYarn);
  }
  {
    ScopedEnv hadoop_home("HADOOP_HOME", nullptr);
    EXPECT_EQ(ChooseBackend(SubmitArgs{}), Backend::kLocal);
    // A variable naming no directory: YARN, whose loader then says what is wrong.
    ScopedEnv bad("YARN_CONF_DIR", "/nonexistent/tony/conf");
    EXPECT_EQ(ChooseBackend(SubmitArgs{}), Backend::kYarn);
  }
}

// --dry-run --python_env: the archive is inspected as a submission would inspect it, and each
// task's environment shows the env's bin/ first on PATH and VIRTUAL_ENV.
TEST(SubmitArgsTest, DryRunShowsThePythonEnvEachTaskGetsAndRefusesABadArchive) {
  const std::string dir = ::testing::TempDir() + "/dry-run-env";
  ASSERT_EQ(std::system(("rm -rf '" + dir + "' && mkdir -p '" + dir + "/venv/bin' && ln -s " +
                         "/usr/bin/python3 '" + dir + "/venv/bin/python' && tar -C '" + dir +
                         "/venv' -czf '" + dir + "/env.tar.gz' .")
                            .c_str()),
            0);
  auto r = Parse({"--dry-run", "--python_env", dir + "/env.tar.gz", "-r", "worker:2", "-e",
                  "PATH=/usr/bin:/bin", "python train.py"});
  ASSERT_TRUE(r.ok()) << r.status();
  std::ostringstream out, err;
  ASSERT_EQ(RunSubmit(*r, out, err), kExitOk) << err.str();
  EXPECT_THAT(out.str(), HasSubstr("<container dir>/tony-python-env/bin:/usr/bin:/bin"));
  EXPECT_THAT(out.str(), HasSubstr("VIRTUAL_ENV: \"<container dir>/tony-python-env\""));

  WriteTemp("dry-run-env/not-an-env.tar.gz", "plain text\n");
  auto bad = Parse({"--dry-run", "--python_env", dir + "/not-an-env.tar.gz", "-r", "worker:1",
                    "python train.py"});
  ASSERT_TRUE(bad.ok()) << bad.status();
  std::ostringstream out2, err2;
  EXPECT_EQ(RunSubmit(*bad, out2, err2), kExitUsage);
  EXPECT_EQ(out2.str(), "");
  const std::string refusal = err2.str();
  EXPECT_THAT(refusal, HasSubstr("not-an-env.tar.gz"));
  EXPECT_EQ(std::count(refusal.begin(), refusal.end(), '\n'), 1) << refusal;
}

TEST(SubmitArgsTest, WordsAfterDoubleDashReachTheTaskAsGiven) {
  std::vector<std::string> words = {"python3", "-c", "print('a b')", "", "$HOME", "x.py", "a\"b"};
  std::vector<std::string> args = {"-r", "worker:1", "--"};
  args.insert(args.end(), words.begin(), words.end());
  auto r = Parse(args);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->spec.command, R"(python3 -c 'print('\''a b'\'')' '' '$HOME' x.py 'a"b')");
  // bash (as the executor runs it) reads back exactly the words given.
  std::string script = WriteTemp("words.sh", "printf '<%s>\\n' " + r->spec.command + "\n");
  FILE* p = popen(("/bin/bash " + script).c_str(), "r");
  ASSERT_NE(p, nullptr);
  std::string got;
  char buf[256];
  while (size_t n = fread(buf, 1, sizeof(buf), p)) got.append(buf, n);
  pclose(p);
  std::string want;
  for (const std::string& w : words) want += "<" + w + ">\n";
  EXPECT_EQ(got, want);

  // One command line (no "--") stays as is, for the shell in the task to expand.
  auto line = Parse({"-r", "worker:1", "python3 ${DTF_TASK_SCRIPT} --steps 2"});
  ASSERT_TRUE(line.ok());
  EXPECT_EQ(line->spec.command, "python3 ${DTF_TASK_SCRIPT} --steps 2");
}

TEST(LogSinkTest, WarningsAreMessagesNotLogLines) {
  EXPECT_EQ(UserLogLine("ytf-submit", LogSeverity::kWarning, "src/submit/x.cc", 301, "careful"),
            "ytf-submit: warning: careful");
  EXPECT_EQ(UserLogLine("ytf", LogSeverity::kError, "x.cc", 1, "broken"), "ytf: error: broken");
  EXPECT_EQ(UserLogLine("ytf", LogSeverity::kDebug, "src/a/x.cc", 7, "detail"),
            "ytf: [x.cc:7] detail");
}

struct YtfRun {
  int code;
  std::string out, err;
};

YtfRun Ytf(std::vector<std::string> args) {
  std::ostringstream out, err;
  int code = RunYtf(args, out, err);
  return {code, out.str(), err.str()};
}

TEST(YtfCommandTest, VersionAndPerCommandHelp) {
  YtfRun v = Ytf({"--version"});
  EXPECT_EQ(v.code, 0);
  EXPECT_EQ(v.out, std::string("ytf ") + TONY_VERSION + "\n");
  for (const char* c : {"status", "kill", "scale", "suspend", "list", "logs"}) {
    YtfRun h = Ytf({c, "--help"});
    EXPECT_EQ(h.code, 0) << c;
    EXPECT_THAT(h.out, HasSubstr(std::string("Usage: ytf ") + c)) << c;
    EXPECT_EQ(h.out, YtfUsage(c));
  }
  EXPECT_THAT(Ytf({"logs", "-h"}).out, HasSubstr("--follow"));
  EXPECT_THAT(Ytf({"--help"}).out, HasSubstr("ytf <command> --help"));
}

TEST(YtfCommandTest, OptionsTakeEqualsAndBelongToTheirCommands) {
  // Parsed up to the point where ytf explains local jobs (nothing touches a cluster).
  YtfRun r = Ytf({"logs", "--task=worker:1", "--file=stderr", "-f", "local_1_ab"});
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, HasSubstr("local_1_ab is a local job"));
  EXPECT_THAT(r.err, HasSubstr(absl::StrCat("tony-jobs-", ::geteuid(), "/local_1_ab/")));
  EXPECT_THAT(Ytf({"status", "--json=1", "application_1_1"}).err, HasSubstr("takes no value"));
  YtfRun wrong = Ytf({"kill", "--all", "application_1_1"});
  EXPECT_EQ(wrong.code, 2);
  EXPECT_THAT(wrong.err, HasSubstr("--all is not an option of ytf kill; it belongs to ytf list"));
  EXPECT_THAT(Ytf({"kill", "--all_users", "application_1_1"}).err,
              HasSubstr("--all_users is not an option of ytf kill; it belongs to ytf list"));
  EXPECT_THAT(Ytf({"list", "--all_users=1"}).err, HasSubstr("takes no value"));
  EXPECT_THAT(Ytf({"status"}).err, HasSubstr("needs an application id"));
  EXPECT_THAT(Ytf({"frobnicate"}).err, HasSubstr("unknown command 'frobnicate'"));
  EXPECT_THAT(Ytf({"status", "-Dx", "a"}).err, HasSubstr("-D/--define: 'x' is not key=value"));
}

TEST(YtfCommandTest, ScaleTakesOneRoleEqualsACount) {
  // A well-formed request gets as far as the local-job answer (nothing touches a cluster).
  YtfRun ok = Ytf({"scale", "local_1_ab", "worker=3", "--wait", "--timeout", "5m"});
  EXPECT_EQ(ok.code, 2);
  EXPECT_THAT(ok.err, HasSubstr("local_1_ab is a local job"));
  const struct {
    std::vector<std::string> args;
    std::string error;
  } kBad[] = {
      {{"scale", "application_1_1"}, "scale needs the role and its new number of tasks"},
      {{"scale", "application_1_1", "worker"}, "'worker' is not ROLE=N"},
      {{"scale", "application_1_1", "=3"}, "'=3' is not ROLE=N"},
      {{"scale", "application_1_1", "worker=-1"}, "'worker=-1' is not ROLE=N"},
      {{"scale", "application_1_1", "worker=two"}, "'worker=two' is not ROLE=N"},
      {{"scale", "application_1_1", "worker=2", "ps=1"}, "unexpected argument 'ps=1'"},
      {{"scale", "--json", "application_1_1", "worker=2"}, "--json is not an option of ytf scale"},
  };
  for (const auto& bad : kBad) {
    YtfRun r = Ytf(bad.args);
    EXPECT_EQ(r.code, 2) << absl::StrJoin(bad.args, " ");
    EXPECT_THAT(r.err, HasSubstr(bad.error)) << absl::StrJoin(bad.args, " ");
    EXPECT_THAT(r.err, HasSubstr("(see ytf scale --help)")) << absl::StrJoin(bad.args, " ");
  }
}

TEST(YtfCommandTest, SuspendAndResumeTakeAnApplicationAndWait) {
  for (const char* c : {"suspend", "resume"}) {
    YtfRun ok = Ytf({c, "local_1_ab", "--wait", "--timeout", "5m"});
    EXPECT_EQ(ok.code, 2) << c;
    EXPECT_THAT(ok.err, HasSubstr("local_1_ab is a local job")) << c;
    YtfRun none = Ytf({c});
    EXPECT_EQ(none.code, 2) << c;
    EXPECT_THAT(none.err, HasSubstr(absl::StrCat(c, " needs an application id"))) << c;
    YtfRun extra = Ytf({c, "application_1_1", "worker=2"});
    EXPECT_EQ(extra.code, 2) << c;
    EXPECT_THAT(extra.err, HasSubstr("unexpected argument 'worker=2'")) << c;
    EXPECT_THAT(Ytf({c, "--json", "application_1_1"}).err,
                HasSubstr(absl::StrCat("--json is not an option of ytf ", c)));
  }
  EXPECT_EQ(Ytf({"resume", "--help"}).out, YtfUsage("suspend"));
}

TEST(YtfCommandTest, HistoryRefusesBadFiltersAndFlagsBeforeAnythingIsContacted) {
  for (const char* c : {"history", "history-server"}) {
    EXPECT_EQ(Ytf({c, "--help"}).out, YtfUsage(c));
  }
  const struct {
    std::vector<std::string> args;
    std::string error;
  } kBad[] = {
      {{"history", "--from", "yesterday"}, "--from: 'yesterday' is not a date"},
      {{"history", "--limit", "5000"}, "--limit: '5000' is not a number from 0 to 1000"},
      {{"history", "--server", "host:18890"}, "--server: 'host:18890' is not a URL"},
      {{"history", "application_1_1"}, "unexpected argument 'application_1_1'"},
      {{"history-server", "--port", "70000"}, "--port: '70000' is not a port"},
      {{"history-server", "--max_age", "soon"}, "--max_age: 'soon' is not a duration"},
      {{"history-server", "--scan_interval", "0s"}, "--scan_interval: '0s' is not a duration"},
      {{"history-server", "--max_jobs", "-1"}, "--max_jobs: '-1' is not a number"},
      {{"history-server", "--state", "FAILED"}, "--state is not an option of ytf history-server"},
  };
  for (const auto& bad : kBad) {
    YtfRun r = Ytf(bad.args);
    EXPECT_EQ(r.code, 2) << absl::StrJoin(bad.args, " ");
    EXPECT_THAT(r.err, HasSubstr(bad.error)) << absl::StrJoin(bad.args, " ");
  }
}

TEST(SubmitArgsTest, SpecFromStandardInput) {
  std::istringstream yaml("command: echo hi\njobs: {worker: {instances: 2}}\n");
  std::streambuf* old = std::cin.rdbuf(yaml.rdbuf());
  auto r = Parse({"--spec", "-", "-m", "512m"});
  std::cin.rdbuf(old);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->spec.command, "echo hi");
  EXPECT_EQ(r->spec.job_types.at(0).instances, 2);
  EXPECT_EQ(r->spec.task_defaults.memory_mb, 512);
}

TEST(SubmitArgsTest, RestartPolicyPerJobAndItsBadInput) {
  auto r = Parse({"-r", "chief:1,ps:1,worker:2", "--restart",
                  "worker:policy=exit-code,scope=task,max_restarts=5,backoff=2s", "--restart",
                  "worker:on_address_change=restart-job", "cmd"});
  ASSERT_TRUE(r.ok()) << r.status();
  const JobTypeSpec* worker = r->spec.FindJobType("worker");
  ASSERT_TRUE(worker->restart.has_value());
  EXPECT_EQ(worker->restart->policy, RestartPolicy::kExitCode);
  EXPECT_EQ(worker->restart->scope, RestartScope::kTask);
  EXPECT_EQ(worker->restart->max_restarts, 5);
  EXPECT_EQ(worker->restart->backoff, absl::Seconds(2));
  EXPECT_EQ(worker->restart->on_address_change, AddressChange::kRestartJob);  // both flags
  EXPECT_FALSE(r->spec.FindJobType("chief")->restart.has_value());

  EXPECT_THAT(ErrorOf({"-r", "worker:2", "--restart", "worker:policy=always", "cmd"}),
              HasSubstr("--restart: policy: 'always' is not a restart policy; use never, "
                        "on-failure or exit-code"));
  EXPECT_THAT(ErrorOf({"-r", "worker:2", "--restart", "worker:max_restarts=-1", "cmd"}),
              HasSubstr("--restart: max_restarts:"));
  EXPECT_THAT(ErrorOf({"-r", "worker:2", "--restart", "worker:retries=2", "cmd"}),
              HasSubstr("unknown field 'retries'"));
  EXPECT_THAT(ErrorOf({"-r", "worker:2", "--restart", "evaluator:policy=never", "cmd"}),
              HasSubstr("for a job of -r"));
  // A TF1 between-graph ps cannot be relaunched alone.
  EXPECT_THAT(
      ErrorOf({"-r", "ps:1,worker:2", "--restart", "ps:policy=on-failure,scope=task", "cmd"}),
      HasSubstr("jobs.ps.restart.scope (--restart): a TF1"));
  // Scope job needs the attempts.
  EXPECT_THAT(ErrorOf({"-r", "worker:2", "--restart", "worker:policy=on-failure", "cmd"}),
              HasSubstr("set max_attempts to at least 4 (--max_attempts 4)"));
  EXPECT_TRUE(Parse({"-r", "worker:2", "--max_attempts", "4", "--restart",
                     "worker:policy=on-failure", "cmd"})
                  .ok());
}

TEST(SubmitArgsTest, DependenciesLingerAndTheirBadInput) {
  auto r = Parse({"-r", "prep:1,chief:1,evaluator:1", "--depends_on", "chief=prep", "--depends_on",
                  "evaluator=chief:running:5m", "--linger", "evaluator=10m", "cmd"});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->spec.FindJobType("chief")->depends_on[0],
            (RoleDependency{"prep", DependencyCondition::kFinished}));
  EXPECT_EQ(r->spec.FindJobType("evaluator")->depends_on[0],
            (RoleDependency{"chief", DependencyCondition::kRunning, absl::Minutes(5)}));
  EXPECT_EQ(r->spec.FindJobType("evaluator")->linger, absl::Minutes(10));

  EXPECT_THAT(ErrorOf({"-r", "worker:2", "--depends_on", "worker", "cmd"}),
              HasSubstr("--depends_on: 'worker' is not <job>=<role>"));
  EXPECT_THAT(ErrorOf({"-r", "worker:2", "--depends_on", "worker=ps", "cmd"}),
              HasSubstr("jobs.worker.depends_on (--depends_on): names 'ps'"));
  EXPECT_THAT(ErrorOf({"-r", "ps:1,worker:2", "--depends_on", "worker=ps:later", "cmd"}),
              HasSubstr("'later' is not a condition"));
  EXPECT_THAT(ErrorOf({"-r", "ps:1,worker:2", "--depends_on", "worker=ps", "--depends_on",
                       "ps=worker:registered", "cmd"}),
              HasSubstr("dependency cycle"));
  auto elastic =
      Parse({"-r", "worker:2", "--framework", "pytorch", "--elastic", "worker=2:4", "cmd"});
  ASSERT_TRUE(elastic.ok()) << elastic.status();
  EXPECT_EQ(elastic->spec.job_types[0].instances, 4);
  EXPECT_THAT(ErrorOf({"-r", "worker:2", "--elastic", "worker=2:4", "cmd"}),
              HasSubstr("needs --framework pytorch"));
  EXPECT_THAT(
      ErrorOf({"-r", "worker:2", "--framework", "pytorch", "--elastic", "worker=3:2", "cmd"}),
      HasSubstr("min 3 is more than max 2"));
  EXPECT_THAT(
      ErrorOf({"-r", "worker:2", "--framework", "pytorch", "--elastic", "worker=two", "cmd"}),
      HasSubstr("--elastic: 'two' is not <min>:<max>"));
  EXPECT_THAT(ErrorOf({"-r", "worker:2", "--linger", "worker=1m", "cmd"}),
              HasSubstr("applies to untracked roles"));
  EXPECT_THAT(ErrorOf({"-r", "ps:1,worker:2", "--linger", "ps=soon", "cmd"}),
              HasSubstr("--linger: 'soon' is not a duration"));
}

TEST(SubmitArgsTest, TaskScopeOnMultiWorkerMirroredWorkersWarnsButIsAccepted) {
  std::vector<std::string> lines;
  SetLogSink([&](LogSeverity severity, absl::string_view, int, absl::string_view line) {
    if (severity == LogSeverity::kWarning) lines.emplace_back(line);
  });
  auto r = Parse({"-r", "worker:2", "--restart", "worker:policy=on-failure,scope=task", "cmd"});
  SetLogSink(nullptr);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_THAT(lines[0], HasSubstr("jobs.worker.restart.scope: task on a TensorFlow job without "
                                  "ps (MultiWorkerMirroredStrategy?)"));
}

TEST(TerminalSafeTest, OtherUsersStringsCannotDriveTheTerminal) {
  // A job name that would clear the screen and retitle the window; C1's CSI; invalid UTF-8.
  EXPECT_EQ(TerminalSafe("job\x1b[2J\x1b]0;pwned\x07"), "job?[2J?]0;pwned?");
  EXPECT_EQ(TerminalSafe("a\xC2\x9B"
                         "31mb"),
            "a?31mb");
  EXPECT_EQ(TerminalSafe("caf\xC3\xA9 \xFF"), "caf\xC3\xA9 \xEF\xBF\xBD");
  EXPECT_EQ(TerminalSafe("plain name"), "plain name");
}

// --exclude_nodes takes a comma-separated list (repeatable); a port or a space is refused in
// one line naming the flag.
TEST(SubmitArgsTest, ExcludeNodesAndMaxNodeFailures) {
  auto args = Parse({"-r", "worker:1", "--exclude_nodes", "n1,n2.example.com,", "--exclude_nodes",
                     "n3", "--max_node_failures", "3", "cmd"});
  ASSERT_TRUE(args.ok()) << args.status();
  EXPECT_EQ(args->spec.exclude_nodes, (std::vector<std::string>{"n1", "n2.example.com", "n3"}));
  EXPECT_EQ(args->spec.max_node_failures, 3);
  EXPECT_THAT(ErrorOf({"-r", "worker:1", "--exclude_nodes", "n1:8041", "cmd"}),
              HasSubstr("exclude_nodes (--exclude_nodes): \"n1:8041\" is not a host name"));
  EXPECT_THAT(ErrorOf({"-r", "worker:1", "--max_node_failures", "-1", "cmd"}),
              HasSubstr("--max_node_failures"));
}

// --preemption_grace sets the job's grace; a bad one is one line naming the flag.
TEST(SubmitArgsTest, PreemptionGrace) {
  auto args = Parse({"-r", "worker:1", "--preemption_grace", "20s", "cmd"});
  ASSERT_TRUE(args.ok()) << args.status();
  EXPECT_EQ(args->spec.preemption_grace, absl::Seconds(20));
  EXPECT_EQ(Parse({"-r", "worker:1", "cmd"})->spec.preemption_grace, absl::ZeroDuration());
  EXPECT_THAT(ErrorOf({"-r", "worker:1", "--preemption_grace", "-5s", "cmd"}),
              HasSubstr("--preemption_grace: '-5s' must be 0 (none) or more"));
  EXPECT_THAT(ErrorOf({"-r", "worker:1", "--preemption_grace", "soon", "cmd"}),
              HasSubstr("--preemption_grace: 'soon' is not a duration"));
}

}  // namespace
}  // namespace tony::cli
