// Copyright libtony authors.
//
// The AM's check of the spec it received against its node's site file: a job over a limit
// fails there even when its client skipped the check.

#include "yarnam/site_check.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "spec/site_config.h"

namespace tony::yarnam {
namespace {

using ::testing::HasSubstr;

JobSpec Workers(int gpus) {
  JobSpec spec;
  spec.command = "true";
  spec.job_types.push_back({.name = "worker", .instances = 1});
  spec.job_types[0].resources.gpus = gpus;
  return spec;
}

TEST(SiteCheckTest, TheAmRefusesASpecOverTheLimitOfItsConfDirsSiteFile) {
  const std::string dir = absl::StrCat(::testing::TempDir(), "/am-site-", getpid());
  mkdir(dir.c_str(), 0700);
  std::ofstream(dir + "/tony-site.yaml") << "limits:\n  max_gpus_per_task: 1\n";
  setenv("HADOOP_CONF_DIR", dir.c_str(), 1);
  unsetenv("YARN_CONF_DIR");
  setenv(spec::kSiteFileEnv, "", 1);

  absl::StatusOr<JobSpec> over = CheckedAgainstSite(Workers(2));
  ASSERT_FALSE(over.ok());
  EXPECT_EQ(over.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(over.status().message(), HasSubstr(absl::StrCat("limits.max_gpus_per_task is 1 (",
                                                              dir, "/tony-site.yaml:2)")));
  EXPECT_TRUE(CheckedAgainstSite(Workers(1)).ok());
  // An error passes through untouched.
  EXPECT_EQ(CheckedAgainstSite(absl::NotFoundError("no spec")).status(),
            absl::NotFoundError("no spec"));

  std::ofstream(dir + "/tony-site.yaml") << "limits: {max_gpu: 1}\n";
  EXPECT_THAT(CheckedAgainstSite(Workers(0)).status().message(), HasSubstr("max_gpu: unknown key"));
  unsetenv("HADOOP_CONF_DIR");
  unsetenv(spec::kSiteFileEnv);
}

}  // namespace
}  // namespace tony::yarnam
