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

// Little-endian bytes, for archives written by hand.
std::string Le(uint64_t v, int bytes) {
  std::string out;
  for (int i = 0; i < bytes; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
  return out;
}

// The reproducer of fuzz/corpus/python_env/zip64-extra-overrun.zip: a central-directory entry
// whose zip64 field claims 0xffff bytes of a 4-byte extra, at the directory's very end. It was
// read past the buffer (ASan: heap-buffer-overflow) and the zip accepted.
TEST_F(PythonEnvTest, AZip64FieldLongerThanItsExtraIsRefused) {
  const std::string name = "bin/python";
  const std::string local = absl::StrCat(Le(0x04034b50, 4), Le(20, 2), std::string(20, '\0'),
                                         Le(name.size(), 2), Le(0, 2), name);
  const std::string central = absl::StrCat(
      Le(0x02014b50, 4), Le(20, 2), Le(20, 2), std::string(12, '\0'), Le(0, 4),  // compressed
      Le(0xffffffff, 4),  // uncompressed: in the zip64 field
      Le(name.size(), 2), Le(4, 2), std::string(8, '\0'), Le(0100644u << 16, 4), Le(0, 4), name,
      Le(1, 2), Le(0xffff, 2));
  const std::string eocd = absl::StrCat(Le(0x06054b50, 4), std::string(4, '\0'), Le(1, 2), Le(1, 2),
                                        Le(central.size(), 4), Le(local.size(), 4), Le(0, 2));
  ASSERT_TRUE(WriteFileAtomically(dir_ + "/overrun.zip", local + central + eocd).ok());
  auto a = InspectPythonEnv(dir_ + "/overrun.zip");
  ASSERT_FALSE(a.ok());
  EXPECT_THAT(a.status().message(), HasSubstr("is not a readable .zip"));
}

// The reproducer of fuzz/corpus/python_env/base256-size-overflow.tar.gz: bin/python with a GNU
// base-256 size of 2^80. Shifted in an int64_t (UB) it wrapped to 0, and the tar was accepted.
TEST_F(PythonEnvTest, ATarSizePastInt64IsRefusedNotWrapped) {
  std::string header(512, '\0');
  header.replace(0, 10, "bin/python");
  header.replace(100, 8, std::string("0000755\0", 8));
  header[124] = static_cast<char>(0x80);
  header[125] = 1;  // then ten zero bytes: 2^80
  header[156] = '0';
  header.replace(257, 6, std::string("ustar\0", 6));
  ASSERT_TRUE(WriteFileAtomically(dir_ + "/huge.tar", header + std::string(1024, '\0')).ok());
  Run(absl::StrCat("gzip -n '", dir_, "/huge.tar'"));
  auto a = InspectPythonEnv(dir_ + "/huge.tar.gz");
  ASSERT_FALSE(a.ok());
  EXPECT_THAT(a.status().message(), HasSubstr("not a tar archive"));

  // A size base-256 can hold and int64_t too is still read (1 byte here).
  header[125] = 0;
  header[135] = 1;
  ASSERT_TRUE(WriteFileAtomically(dir_ + "/small.tar",
                                  header + std::string(512, 'x') + std::string(1024, '\0'))
                  .ok());
  Run(absl::StrCat("gzip -n '", dir_, "/small.tar'"));
  auto b = InspectPythonEnv(dir_ + "/small.tar.gz");
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(b->root, "");
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
