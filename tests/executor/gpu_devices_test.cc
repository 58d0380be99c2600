// Copyright libtony authors.

#include "executor/gpu_devices.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/http/test_http_server.h"

namespace tony::executor {
namespace {

constexpr char kMine[] = "container_1700000000000_0001_01_000002";
constexpr char kOther[] = "container_1700000000000_0001_01_000003";

nlohmann::json Answer(const std::string& text) { return nlohmann::json::parse(text); }

TEST(AssignedGpuIndicesTest, OnlyThisContainersDevicesAscending) {
  // The shape of NMGpuResourceInfo (Hadoop 3.x NodeManager with the GPU plugin).
  auto answer = Answer(R"({"gpuDeviceInformation": {"gpus": []},
    "totalGpuDevices": [{"index": 0, "minorNumber": 0}, {"index": 1, "minorNumber": 1},
                        {"index": 2, "minorNumber": 4}, {"index": 3, "minorNumber": 5}],
    "assignedGpuDevices": [
      {"index": 3, "minorNumber": 5, "containerId": ")" +
                       std::string(kMine) + R"("},
      {"index": 0, "minorNumber": 0, "containerId": ")" +
                       std::string(kOther) + R"("},
      {"index": 2, "minorNumber": 4, "containerId": ")" +
                       std::string(kMine) + R"("}]})");
  EXPECT_EQ(AssignedGpuIndices(answer, kMine), "2,3");
  EXPECT_EQ(AssignedGpuIndices(answer, kOther), "0");
  EXPECT_EQ(AssignedGpuIndices(answer, "container_1700000000000_0001_01_000009"), "");
}

TEST(AssignedGpuIndicesTest, OneDeviceWrittenAsAnObjectAndIndexAsAString) {
  auto answer = Answer(R"({"assignedGpuDevices": {"index": "1", "minorNumber": "1",
                                                  "containerId": ")" +
                       std::string(kMine) + R"("}})");
  EXPECT_EQ(AssignedGpuIndices(answer, kMine), "1");
}

TEST(AssignedGpuIndicesTest, NoPluginOrNothingAssignedGivesNothing) {
  EXPECT_EQ(AssignedGpuIndices(Answer("{}"), kMine), "");  // NMResourceInfo without a plugin
  EXPECT_EQ(AssignedGpuIndices(Answer(R"({"assignedGpuDevices": []})"), kMine), "");
  EXPECT_EQ(AssignedGpuIndices(Answer(R"({"assignedGpuDevices": [{"index": 0}]})"), kMine), "");
  EXPECT_EQ(AssignedGpuIndices(Answer("[]"), kMine), "");
}

TEST(WantsGpuLookupTest, OnlyForGpuTasksWhoseDevicesNobodyChose) {
  EXPECT_FALSE(WantsGpuLookup(0, {}));
  EXPECT_TRUE(WantsGpuLookup(2, {{"NM_HOST", "h"}}));
  EXPECT_FALSE(WantsGpuLookup(2, {{"CUDA_VISIBLE_DEVICES", "1"}}));      // the user's -e
  EXPECT_FALSE(WantsGpuLookup(2, {{"NVIDIA_VISIBLE_DEVICES", "2,3"}}));  // Docker's runtime
}

std::map<std::string, std::string> NmEnv(const testing::TestHttpServer& nm) {
  return {{"NM_HOST", "127.0.0.1"},
          {"NM_HTTP_PORT", std::to_string(nm.port())},
          {"CONTAINER_ID", kMine}};
}

TEST(AddCudaVisibleDevicesTest, SetsTheDevicesTheNodeManagerAssigned) {
  testing::TestHttpServer nm([](const testing::TestHttpServer::Request& r) {
    testing::TestHttpServer::Reply reply;
    if (r.path != "/ws/v1/node/resources/yarn.io%2Fgpu") {
      reply.status = 404;
      return reply;
    }
    reply.body = std::string(R"({"assignedGpuDevices": [{"index": 1, "minorNumber": 1,
        "containerId": ")") +
                 kMine + R"("}]})";
    return reply;
  });
  auto env = NmEnv(nm);
  AddCudaVisibleDevices(1, &env);
  EXPECT_EQ(env["CUDA_VISIBLE_DEVICES"], "1");
  EXPECT_EQ(env["CUDA_DEVICE_ORDER"], "PCI_BUS_ID");
}

TEST(AddCudaVisibleDevicesTest, LeavesItUnsetWithoutPluginOrNodeManager) {
  testing::TestHttpServer nm([](const testing::TestHttpServer::Request&) {
    testing::TestHttpServer::Reply reply;
    reply.body = "{}";
    return reply;
  });
  auto env = NmEnv(nm);
  AddCudaVisibleDevices(2, &env);
  EXPECT_EQ(env.count("CUDA_VISIBLE_DEVICES"), 0u);

  // Nobody listens: unset, and the wait is bounded.
  env["NM_HTTP_PORT"] = "1";
  AddCudaVisibleDevices(2, &env, absl::Seconds(2));
  EXPECT_EQ(env.count("CUDA_VISIBLE_DEVICES"), 0u);

  testing::TestHttpServer hangs([](const testing::TestHttpServer::Request&) {
    testing::TestHttpServer::Reply reply;
    reply.delay = absl::Seconds(30);
    return reply;
  });
  env = NmEnv(hangs);
  auto status = FetchNmGpuResources("127.0.0.1", hangs.port(), absl::Milliseconds(300));
  EXPECT_EQ(status.status().code(), absl::StatusCode::kDeadlineExceeded) << status.status();
}

}  // namespace
}  // namespace tony::executor
