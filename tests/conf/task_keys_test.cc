// Copyright libtony authors.

#include "conf/task_keys.h"

#include "absl/time/time.h"
#include "conf/configuration.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tony::conf {
namespace {

using ::testing::HasSubstr;

TEST(HeartbeatTimeoutTest, FromTheClientsConfigurationToTheAmsEnvironment) {
  Configuration conf;
  EXPECT_EQ(*HeartbeatTimeoutFromConf(conf), absl::Minutes(1));
  conf.Set(kHeartbeatTimeoutKey, "20s");
  EXPECT_EQ(*HeartbeatTimeoutFromConf(conf), absl::Seconds(20));
  conf.Set(kHeartbeatTimeoutKey, "90");  // a bare number counts seconds
  EXPECT_EQ(*HeartbeatTimeoutFromConf(conf), absl::Seconds(90));
  conf.Set(kHeartbeatTimeoutKey, "5m");
  EXPECT_EQ(*HeartbeatTimeoutFromConf(conf), absl::Minutes(5));
  for (const char* bad : {"19s", "0", "-1m", "never"}) {
    conf.Set(kHeartbeatTimeoutKey, bad);
    auto timeout = HeartbeatTimeoutFromConf(conf);
    EXPECT_TRUE(absl::IsInvalidArgument(timeout.status())) << bad;
    EXPECT_THAT(timeout.status().message(), HasSubstr(kHeartbeatTimeoutKey)) << bad;
  }

  EXPECT_EQ(HeartbeatTimeoutFromEnv("20"), absl::Seconds(20));
  EXPECT_EQ(HeartbeatTimeoutFromEnv("300"), absl::Minutes(5));
  for (const char* odd : {static_cast<const char*>(nullptr), "", "0", "19", "-3", "x"}) {
    EXPECT_EQ(HeartbeatTimeoutFromEnv(odd), absl::Minutes(1)) << (odd ? odd : "(unset)");
  }
}

}  // namespace
}  // namespace tony::conf
