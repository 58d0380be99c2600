// Copyright libtony authors.
//
// InspectPythonEnv on archives made here with tar and zip (as venv-pack, conda-pack and TonY
// users make them), and what an env changes in a task's environment.

#include "spec/python_env.h"

#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "absl/strings/str_cat.h"
#include "common/file_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "spec/task_env.h"
#include "tony/job_spec.h"

namespace tony {
namespace {

using ::testing::HasSubstr;

class PythonEnvTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = ::testing::TempDir() + "/python_env_test.XXXXXX";
    dir_ = mkdtemp(tmpl.data());
  }
  void TearDown() override {
    EXPECT_EQ(std::system(absl::StrCat("rm -rf '", dir_, "'").c_str()), 0);
  }

  // A venv as venv-pack leaves it: bin/python a symlink to the base interpreter, scripts with
  // relocatable shebangs. `root` is its directory below dir_.
  std::string MakeEnv(const std::string& root, const std::string& tensorboard_head) {
    const std::string env = absl::StrCat(dir_, "/", root);
    EXPECT_TRUE(MakeDirectories(env + "/bin").ok());
    EXPECT_TRUE(MakeDirectories(env + "/lib/python3.11/site-packages/tensorboard").ok());
    EXPECT_EQ(::symlink("/usr/bin/python3", (env + "/bin/python").c_str()), 0);
    EXPECT_TRUE(WriteFileAtomically(env + "/bin/pip", "#!/usr/bin/env python\nimport pip\n").ok());
    EXPECT_TRUE(
        WriteFileAtomically(env + "/bin/tensorboard", tensorboard_head + "\nimport tb\n").ok());
    EXPECT_TRUE(WriteFileAtomically(env + "/bin/activate", "# sourced\nexport X=1\n").ok());
    return env;
  }
  std::string Run(const std::string& command) {
    EXPECT_EQ(std::system(command.c_str()), 0) << command;
    return command;
  }
  std::string TarGz(const std::string& env, const std::string& name) {
    const std::string out = absl::StrCat(dir_, "/", name);
    Run(absl::StrCat("tar -C '", env, "' -czf '", out, "' ."));
    return out;
  }

  std::string dir_;
};

TEST_F(PythonEnvTest, AVenvPackTarGzIsAccepted) {
  const std::string env = MakeEnv("venv", "#!/usr/bin/env python");
  auto a = InspectPythonEnv(TarGz(env, "env.tar.gz"));
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(a->format, PythonEnvArchive::Format::kTarGz);
  EXPECT_EQ(a->root, "");
  EXPECT_FALSE(a->conda);
  EXPECT_EQ(a->content_key.size(), 16u);
}

TEST_F(PythonEnvTest, AZipOfTheVenvDirectoryIsAcceptedWithItsRoot) {
  MakeEnv("myenv", "#!/usr/bin/env python3");
  const std::string zip = dir_ + "/env.zip";
  Run(absl::StrCat("cd '", dir_, "' && zip -qry '", zip, "' myenv"));
  auto a = InspectPythonEnv(zip);
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(a->format, PythonEnvArchive::Format::kZip);
  EXPECT_EQ(a->root, "myenv/");
}

TEST_F(PythonEnvTest, ACondaEnvIsRecognised) {
  const std::string env = MakeEnv("conda", "#!/usr/bin/env python");
  ASSERT_TRUE(MakeDirectories(env + "/conda-meta").ok());
  ASSERT_TRUE(WriteFileAtomically(env + "/conda-meta/history", "x").ok());
  auto a = InspectPythonEnv(TarGz(env, "conda.tar.gz"));
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_TRUE(a->conda);
}

TEST_F(PythonEnvTest, AbsoluteShebangsAreNotRelocatable) {
  const std::string env = MakeEnv("plain", "#!/home/me/venvs/tf/bin/python3");
  auto a = InspectPythonEnv(TarGz(env, "plain.tar.gz"));
  ASSERT_FALSE(a.ok());
  EXPECT_EQ(a.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(a.status().message(), HasSubstr("python_env (--python_env)"));
  EXPECT_THAT(a.status().message(),
              HasSubstr("is not relocatable: bin/tensorboard runs /home/me/venvs/tf/bin/python3"));
  EXPECT_THAT(a.status().message(), HasSubstr("venv-pack"));
  EXPECT_EQ(a.status().message().find('\n'), std::string::npos);  // one line

  // pip's form for paths longer than a shebang allows.
  const std::string long_env =
      MakeEnv("long", "#!/bin/sh\n'''exec' /very/long/path/venv/bin/python3 \"$0\" \"$@\"\n' '''");
  auto b = InspectPythonEnv(TarGz(long_env, "long.tar.gz"));
  ASSERT_FALSE(b.ok());
  EXPECT_THAT(b.status().message(), HasSubstr("runs /very/long/path/venv/bin/python3"));
}

TEST_F(PythonEnvTest, BadInputIsRefusedNamingTheFix) {
  auto missing = InspectPythonEnv(dir_ + "/nope.tar.gz");
  EXPECT_THAT(missing.status().message(), HasSubstr("cannot be read"));
  auto directory = InspectPythonEnv(dir_);
  EXPECT_THAT(directory.status().message(), HasSubstr("is a directory; pack the env first"));
  ASSERT_TRUE(WriteFileAtomically(dir_ + "/env.txt", "just text").ok());
  auto text = InspectPythonEnv(dir_ + "/env.txt");
  EXPECT_THAT(text.status().message(), HasSubstr("is neither a .tar.gz nor a .zip"));
  Run(absl::StrCat("gzip -c '", dir_, "/env.txt' > '", dir_, "/env.txt.gz'"));
  auto gz = InspectPythonEnv(dir_ + "/env.txt.gz");
  EXPECT_THAT(gz.status().message(), HasSubstr("not a tar archive"));
  ASSERT_TRUE(MakeDirectories(dir_ + "/nopython/lib").ok());
  ASSERT_TRUE(WriteFileAtomically(dir_ + "/nopython/lib/x.py", "").ok());
  auto no_python = InspectPythonEnv(TarGz(dir_ + "/nopython", "nopython.tar.gz"));
  EXPECT_THAT(no_python.status().message(), HasSubstr("has no bin/python"));
  for (const auto& s :
       {missing.status(), directory.status(), text.status(), gz.status(), no_python.status()}) {
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  }
}

TEST_F(PythonEnvTest, TheEnvGoesFirstOnPathAndPythonHomeIsUnset) {
  std::map<std::string, std::string> env = {{"PATH", "/usr/bin:/bin"}, {"PYTHONHOME", "/opt/py"}};
  ApplyPythonEnv("/c/tony-python-env", false, &env);
  EXPECT_EQ(env["PATH"], "/c/tony-python-env/bin:/usr/bin:/bin");
  EXPECT_EQ(env["VIRTUAL_ENV"], "/c/tony-python-env");
  EXPECT_EQ(env.count("PYTHONHOME"), 0u);
  EXPECT_EQ(env.count("CONDA_PREFIX"), 0u);
  ApplyPythonEnv("/c/e", true, &env);
  EXPECT_EQ(env["CONDA_PREFIX"], "/c/e");
}

TEST_F(PythonEnvTest, TheUnpackedEnvIsFoundAtTheTopOrInItsSingleDirectory) {
  MakeEnv("top", "#!/usr/bin/env python");
  EXPECT_EQ(FindPythonEnvDir(dir_ + "/top").value_or(""), dir_ + "/top");
  ASSERT_TRUE(MakeDirectories(dir_ + "/unzipped").ok());
  MakeEnv("unzipped/venv", "#!/usr/bin/env python");
  EXPECT_EQ(FindPythonEnvDir(dir_ + "/unzipped").value_or(""), dir_ + "/unzipped/venv");
  EXPECT_FALSE(FindPythonEnvDir(dir_ + "/nothing").ok());
}

TEST_F(PythonEnvTest, DryRunShowsWhatEachTaskGets) {
  JobSpec spec;
  spec.command = "python train.py";
  spec.python_env = "/tmp/env.tar.gz";
  spec.job_types.push_back({.name = "worker"});
  spec.env["PATH"] = "/usr/bin:/bin";
  TaskSpec task = ResolveTasks(spec)[0];
  auto env = BuildTaskEnvironment(spec, task, nullptr);
  EXPECT_EQ(env["PATH"], "<container dir>/tony-python-env/bin:/usr/bin:/bin");
  EXPECT_EQ(env["VIRTUAL_ENV"], "<container dir>/tony-python-env");
  EXPECT_EQ(env["PYTHONHOME"], "<unset>");
  spec.env.clear();
  env = BuildTaskEnvironment(spec, ResolveTasks(spec)[0], nullptr);
  EXPECT_EQ(env["PATH"], "<container dir>/tony-python-env/bin:<the node's PATH>");
}

TEST(TensorBoardCommandTest, ReplacesTheProgramAndKeepsTheArguments) {
  JobSpec spec;
  spec.command = "true";
  spec.output_path = "/out";
  spec.tensorboard = true;
  spec.job_types.push_back({.name = "worker"});
  EXPECT_THAT(ResolveTasks(spec).back().command, ::testing::StartsWith("tensorboard --logdir"));
  spec.tensorboard_command = "python -m tensorboard.main";
  EXPECT_THAT(ResolveTasks(spec).back().command,
              ::testing::StartsWith("python -m tensorboard.main --logdir \"$DTF_OUTPUT_PATH\""));
}

}  // namespace
}  // namespace tony
