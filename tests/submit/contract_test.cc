// Copyright libtony authors.

#include "submit/contract.h"

#include <map>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace tony::submit {
namespace {

TEST(ContractTest, ProgressRoundTrips) {
  std::map<std::string, JobTypeProgress> in;
  in["worker"] = {4, 4, 3, 2, 1, 1, 0};
  in["tensorboard"] = {1, 1, 1, 1, 0, 0, 2};
  absl::StatusOr<std::map<std::string, JobTypeProgress>> out = DecodeProgress(EncodeProgress(in));
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ(out->size(), 2u);
  const JobTypeProgress& w = out->at("worker");
  EXPECT_EQ(w.total, 4);
  EXPECT_EQ(w.allocated, 4);
  EXPECT_EQ(w.registered, 3);
  EXPECT_EQ(w.running, 2);
  EXPECT_EQ(w.succeeded, 1);
  EXPECT_EQ(w.failed, 1);
  EXPECT_EQ(w.restarts, 0);
  EXPECT_EQ(out->at("tensorboard").restarts, 2);
}

TEST(ContractTest, ProgressToleratesMissingAndMistypedCounts) {
  absl::StatusOr<std::map<std::string, JobTypeProgress>> out =
      DecodeProgress(R"({"ps": {"total": 2, "running": "x"}, "chief": 7})");
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->at("ps").total, 2);
  EXPECT_EQ(out->at("ps").running, 0);
  EXPECT_EQ(out->at("chief").total, 0);  // not an object: all zero
}

TEST(ContractTest, ProgressRejectsWhatIsNotAnObject) {
  EXPECT_EQ(DecodeProgress("[1]").status().code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(DecodeProgress("{").status().code(), absl::StatusCode::kDataLoss);
}

TEST(ContractTest, TaskContainersRoundTrip) {
  std::vector<TaskContainer> in = {
      {"am", "container_1700000000000_0001_01_000001", "nm1:8042"},
      {"worker:1@1", "container_1700000000000_0001_01_000003", "nm2:8042"}};
  absl::StatusOr<std::vector<TaskContainer>> out = DecodeTaskContainers(EncodeTaskContainers(in));
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ(out->size(), 2u);
  for (size_t i = 0; i < in.size(); ++i) {
    EXPECT_EQ((*out)[i].task, in[i].task);
    EXPECT_EQ((*out)[i].container_id, in[i].container_id);
    EXPECT_EQ((*out)[i].node_http_address, in[i].node_http_address);
  }
}

TEST(ContractTest, TaskContainersRejectWhatIsNotAList) {
  EXPECT_EQ(DecodeTaskContainers("{}").status().code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(DecodeTaskContainers("not json").status().code(), absl::StatusCode::kDataLoss);
}

TEST(ContractTest, LocalResourcesRoundTrip) {
  std::map<std::string, yarn::LocalResource> in;
  yarn::LocalResource r;
  r.url = "hdfs://nn:8020/user/u/.tony-cache/tony-abc.tar.gz";
  r.size = 12345;
  r.timestamp_ms = 1700000000123;
  r.type = yarn::LocalResourceType::kArchive;
  r.visibility = yarn::LocalResourceVisibility::kPublic;
  in[kRuntimeLink] = r;
  absl::StatusOr<std::map<std::string, yarn::LocalResource>> out =
      DecodeLocalResources(EncodeLocalResources(in));
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ(out->count(kRuntimeLink), 1u);
  const yarn::LocalResource& got = out->at(kRuntimeLink);
  EXPECT_EQ(got.url, r.url);
  EXPECT_EQ(got.size, r.size);
  EXPECT_EQ(got.timestamp_ms, r.timestamp_ms);
  EXPECT_EQ(got.type, r.type);
  EXPECT_EQ(got.visibility, r.visibility);
  EXPECT_FALSE(DecodeLocalResources("%%%").ok());
}

TEST(ContractTest, PathsAreUnderTheUsersHistory) {
  EXPECT_EQ(FinalProgressPath("alice", "application_1_0001"),
            "/user/alice/.tony/history/application_1_0001.progress.json");
  EXPECT_EQ(HistoryPath("alice", "application_1_0001").rfind("/user/alice/.tony/history/", 0), 0u);
}

}  // namespace
}  // namespace tony::submit
