// Copyright libtony authors.
//
// ytf-submit over the cluster's site file (tony-site.yaml): templates and defaults show in a
// dry run, and every refusal is one line with exit code 2, before anything is sent.

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "cli/submit_args.h"
#include "cli/submit_command.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "spec/site_config.h"

namespace tony::cli {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

constexpr char kSite[] = R"(defaults:
  env: {SITE_PROXY: "http://proxy:3128"}
templates:
  small:
    queue: research
    env: {FROM_TEMPLATE: "yes"}
limits:
  max_gpus_per_task: 2
)";

class SiteCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    setenv(spec::kSiteFileEnv, "", 1);  // no fallback file: only the test's directory
    dir_ = absl::StrCat(::testing::TempDir(), "/site-cli-", getpid(), "-",
                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    mkdir(dir_.c_str(), 0700);
    Write(kSite);
  }
  void TearDown() override { unsetenv(spec::kSiteFileEnv); }

  void Write(const std::string& text) { std::ofstream(dir_ + "/tony-site.yaml") << text; }

  // Runs `ytf-submit --conf_dir <dir> --dry-run <args>`; the exit code.
  int DryRun(std::vector<std::string> args) {
    args.insert(args.begin(), {"--conf_dir", dir_, "--dry-run"});
    absl::StatusOr<SubmitArgs> parsed = ParseSubmitArgs(args);
    EXPECT_TRUE(parsed.ok()) << parsed.status();
    if (!parsed.ok()) return -1;
    return RunSubmit(*parsed, out_, err_);
  }

  std::string dir_;
  std::ostringstream out_, err_;
};

TEST_F(SiteCliTest, TemplateAndDefaultsShowInTheDryRun) {
  ASSERT_EQ(DryRun({"--template", "small", "-r", "worker:1", "true"}), kExitOk) << err_.str();
  EXPECT_THAT(out_.str(), HasSubstr("template: \"small\""));
  EXPECT_THAT(out_.str(), HasSubstr("queue: \"research\""));
  EXPECT_THAT(out_.str(), HasSubstr("FROM_TEMPLATE"));
  EXPECT_THAT(out_.str(), HasSubstr("SITE_PROXY"));
}

TEST_F(SiteCliTest, ATemplatesRolesStandInForClusterRequirement) {
  Write(
      "templates:\n  tf-ps:\n    jobs:\n      ps: {instances: 1}\n      worker: {instances: 2}\n");
  ASSERT_EQ(DryRun({"--template", "tf-ps", "python train.py"}), kExitOk) << err_.str();
  EXPECT_THAT(out_.str(), HasSubstr("ps:\n"));
  EXPECT_THAT(out_.str(), HasSubstr("instances: 2"));
  // Without the template the same line is still refused, naming -r.
  absl::StatusOr<SubmitArgs> bare = ParseSubmitArgs({"--dry-run", "python train.py"});
  ASSERT_FALSE(bare.ok());
  EXPECT_THAT(bare.status().message(), HasSubstr("-r/--cluster_requirement"));
}

TEST_F(SiteCliTest, ABrokenLimitIsOneLineExitTwo) {
  EXPECT_EQ(DryRun({"-r", "worker:1", "-g", "3", "true"}), kExitUsage);
  EXPECT_EQ(out_.str(), "");
  EXPECT_EQ(err_.str(), absl::StrCat("ytf-submit: limits.max_gpus_per_task is 2 (", dir_,
                                     "/tony-site.yaml:8): task worker:0 asks for 3 GPUs; ask for "
                                     "less or ask the cluster's admins\n"));
}

TEST_F(SiteCliTest, AnUnknownTemplateListsTheKnownOnes) {
  EXPECT_EQ(DryRun({"--template", "huge", "-r", "worker:1", "true"}), kExitUsage);
  EXPECT_EQ(err_.str(), absl::StrCat("ytf-submit: --template/template: 'huge' is unknown; ", dir_,
                                     "/tony-site.yaml defines: small\n"));
}

TEST_F(SiteCliTest, ABrokenSiteFileNamesFileAndLineAndRefuses) {
  Write("limits:\n  max_gpus_per_tsk: 2\n");
  EXPECT_EQ(DryRun({"-r", "worker:1", "true"}), kExitUsage);
  EXPECT_THAT(err_.str(), StartsWith(absl::StrCat("ytf-submit: ", dir_,
                                                  "/tony-site.yaml:2:3: limits.max_gpus_per_tsk: "
                                                  "unknown key")));
  const std::string err = err_.str();
  EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1);
  EXPECT_EQ(out_.str(), "");
}

TEST_F(SiteCliTest, ShowSitePrintsEachSettingWithItsLine) {
  absl::StatusOr<SubmitArgs> parsed = ParseSubmitArgs({"--show_site", "--conf_dir", dir_});
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_TRUE(parsed->show_site);
  ASSERT_EQ(RunShowSite(*parsed, out_, err_), kExitOk) << err_.str();
  EXPECT_THAT(out_.str(), HasSubstr(absl::StrCat("looked for: ", dir_, "/tony-site.yaml")));
  EXPECT_THAT(out_.str(), HasSubstr(absl::StrCat("site file: ", dir_, "/tony-site.yaml\n")));
  EXPECT_THAT(out_.str(), HasSubstr("  templates.small.queue: research  (line 5)\n"));
  EXPECT_THAT(out_.str(), HasSubstr("  limits.max_gpus_per_task: 2  (line 8)\n"));

  Write("limits: [\n");
  std::ostringstream out2, err2;
  EXPECT_EQ(RunShowSite(*parsed, out2, err2), kExitUsage);
  EXPECT_THAT(err2.str(), HasSubstr(absl::StrCat(dir_, "/tony-site.yaml:2:1")));
}

}  // namespace
}  // namespace tony::cli
