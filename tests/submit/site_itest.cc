// Copyright libtony authors.
//
// The C++ YARN Submitter (and so Python's) over the cluster's site file, on the real test
// cluster: a spec over a limit is refused before any application exists.

#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <memory>
#include <random>
#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/harness/hadoop_cluster.h"
#include "tony/job_spec.h"
#include "tony/submitter.h"

namespace tony {
namespace {

using ::testing::HasSubstr;

TEST(SubmitterSiteTest, ALimitRefusesBeforeAnyApplicationExists) {
  const std::string conf = absl::StrCat(::testing::TempDir(), "/submitter-site-conf");
  ASSERT_EQ(std::system(("rm -rf '" + conf + "' && mkdir -p '" + conf + "' && cp -R '" +
                         harness::HadoopCluster::Get().conf_dir() + "'/. '" + conf + "/'")
                            .c_str()),
            0);
  std::ofstream(conf + "/tony-site.yaml") << "limits:\n  max_tasks_per_job: 1\n";
  setenv("TONY_SITE_FILE", "", 1);
  YarnSubmitterOptions options;
  options.conf_dir = conf;
  absl::StatusOr<std::unique_ptr<Submitter>> submitter = NewYarnSubmitter(options);
  ASSERT_TRUE(submitter.ok()) << submitter.status();

  JobSpec spec;
  spec.name = "submitter-site-refused";
  // A tag of this run alone: an earlier run's refusal may have been an application.
  const std::string tag = absl::StrCat("site-itest-", getpid(), "-", std::random_device()());
  spec.tags = {tag};
  spec.command = "true";
  spec.task_defaults.memory_mb = 128;
  spec.job_types.push_back({.name = "worker", .instances = 2});
  auto app = (*submitter)->Submit(spec);
  ASSERT_FALSE(app.ok());
  EXPECT_EQ(app.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(app.status().message(),
            absl::StrCat("limits.max_tasks_per_job is 1 (", conf,
                         "/tony-site.yaml:2): the job has 2 tasks; ask for less or ask the "
                         "cluster's admins"));

  spec.site_template = "gpu";
  app = (*submitter)->Submit(spec);
  ASSERT_FALSE(app.ok());
  EXPECT_THAT(app.status().message(), HasSubstr("'gpu' is unknown;"));

  ListOptions list;
  list.include_finished = true;
  list.tags = {tag};
  auto apps = (*submitter)->List(list);
  ASSERT_TRUE(apps.ok()) << apps.status();
  EXPECT_TRUE(apps->empty());
  unsetenv("TONY_SITE_FILE");
}

}  // namespace
}  // namespace tony
