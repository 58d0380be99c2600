// Copyright libtony authors.

#include "spec/jax_env.h"

#include <map>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tony {
namespace {

using ::testing::Contains;
using ::testing::HasSubstr;
using ::testing::Key;
using ::testing::Not;

TEST(JaxEnvTest, DetectorGoesFirstOnPythonPath) {
  std::map<std::string, std::string> env;
  ApplyJaxPlugin("/c/tony-jax", &env);
  EXPECT_EQ(env["PYTHONPATH"], "/c/tony-jax");
  env["PYTHONPATH"] = "/mine:/other";
  ApplyJaxPlugin("/c/tony-jax", &env);
  EXPECT_EQ(env["PYTHONPATH"], "/c/tony-jax:/mine:/other");
}

TEST(JaxEnvTest, LocalDeviceIdsOnlyWithAssignedGpus) {
  std::map<std::string, std::string> env;
  ApplyJaxPlugin("/c/tony-jax", &env);
  EXPECT_THAT(env, Not(Contains(Key("JAX_LOCAL_DEVICE_IDS"))));
  // CUDA_VISIBLE_DEVICES masks the node's GPUs 2 and 5: JAX numbers them 0 and 1.
  env["CUDA_VISIBLE_DEVICES"] = "2,5";
  ApplyJaxPlugin("/c/tony-jax", &env);
  EXPECT_EQ(env["JAX_LOCAL_DEVICE_IDS"], "0,1");
  env["JAX_LOCAL_DEVICE_IDS"] = "1";  // the task's own choice is kept
  ApplyJaxPlugin("/c/tony-jax", &env);
  EXPECT_EQ(env["JAX_LOCAL_DEVICE_IDS"], "1");
}

TEST(JaxEnvTest, DetectorReadsTheVariablesTaskEnvSets) {
  const std::string source(JaxPluginSource());
  EXPECT_THAT(source, HasSubstr("extend_path(__path__, __name__)"));
  for (const char* var : {"JAX_COORDINATOR_ADDRESS", "JAX_NUM_PROCESSES", "JAX_PROCESS_ID"}) {
    EXPECT_THAT(source, HasSubstr(var));
  }
}

}  // namespace
}  // namespace tony
