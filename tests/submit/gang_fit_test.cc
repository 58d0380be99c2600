// Copyright libtony authors.

#include "submit/gang_fit.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tony::submit {
namespace {

using ::testing::HasSubstr;

GangItem C(const std::string& name, int64_t mb, int64_t vcores = 1, int64_t gpus = 0,
           const std::string& label = "") {
  return {name, mb, vcores, gpus, label};
}

TEST(GangFitTest, TheIssuesExampleCanNeverRun) {
  // ps:1,worker:2 at 8192 MB each plus a 256 MB AM on two 8 GB nodes: the AM takes room from
  // one node, so only one task fits beside it.
  std::vector<GangItem> job = {C("the ApplicationMaster", 256), C("ps:0", 8192),
                               C("worker:0", 8192), C("worker:1", 8192)};
  std::vector<GangItem> nodes = {C("node1", 8192, 8), C("node2", 8192, 8)};
  absl::Status s = CheckGangFits(job, nodes);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()), HasSubstr("can never run at once"));
  EXPECT_THAT(std::string(s.message()), HasSubstr("node1 <8192 MB, 8 vcores>"));
  EXPECT_THAT(std::string(s.message()), HasSubstr("-m/--task_memory"));
}

TEST(GangFitTest, FitsWhenThePackingExistsEvenIfTotalsAreTight) {
  std::vector<GangItem> job = {C("am", 256), C("ps:0", 4096), C("worker:0", 3840),
                               C("worker:1", 4096)};
  EXPECT_TRUE(CheckGangFits(job, {C("n1", 8192, 8), C("n2", 4096, 8)}).ok());
  // Totals fit, placement does not: 3 x 5 GB on 2 x 8 GB.
  EXPECT_FALSE(CheckGangFits({C("a", 5120), C("b", 5120), C("c", 5120)},
                             {C("n1", 8192, 8), C("n2", 8192, 8)})
                   .ok());
  // vcores and GPUs count too.
  EXPECT_FALSE(CheckGangFits({C("a", 1, 5), C("b", 1, 5)}, {C("n1", 8192, 8)}).ok());
  EXPECT_FALSE(CheckGangFits({C("a", 1, 1, 2), C("b", 1, 1, 1)}, {C("n1", 8192, 8, 2)}).ok());
  EXPECT_TRUE(
      CheckGangFits({C("a", 1, 1, 1), C("b", 1, 1, 1)}, {C("n1", 8192, 8, 1), C("n2", 8192, 8, 1)})
          .ok());
}

TEST(GangFitTest, LabelledTasksGoOnlyToTheirNodes) {
  std::vector<GangItem> nodes = {C("plain", 8192, 8), C("gpu", 8192, 8, 2, "gpu")};
  EXPECT_TRUE(CheckGangFits({C("w0", 6000, 1, 1, "gpu"), C("ps", 6000)}, nodes).ok());
  absl::Status s = CheckGangFits({C("w0", 6000, 1, 1, "gpu"), C("w1", 6000, 1, 1, "gpu")}, nodes);
  EXPECT_FALSE(s.ok());
  EXPECT_THAT(std::string(s.message()), HasSubstr("labelled 'gpu'"));
}

TEST(GangFitTest, LargeJobsThatOnlyMightFitAreNotRefused) {
  // 400 tasks on 100 nodes: the search is cut short; a job is refused only when provably stuck.
  std::vector<GangItem> job, nodes;
  for (int i = 0; i < 400; ++i) job.push_back(C("t", 1000 + (i % 7) * 300));
  for (int i = 0; i < 100; ++i) nodes.push_back(C("n", 8192, 8));
  EXPECT_TRUE(CheckGangFits(job, nodes).ok());
  EXPECT_TRUE(CheckGangFits(job, {}).ok());  // no node known: YARN decides
}

}  // namespace
}  // namespace tony::submit
