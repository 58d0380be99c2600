// Copyright libtony authors.

#include "conf/history_keys.h"

#include "absl/time/time.h"
#include "conf/configuration.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tony::history {
namespace {

using ::testing::HasSubstr;

TEST(UsageIntervalTest, FromTheClientsConfigurationToTheAmsEnvironment) {
  conf::Configuration conf;
  EXPECT_EQ(*UsageIntervalFromConf(conf), absl::Minutes(1));
  conf.Set(kUsageIntervalKey, "15s");
  EXPECT_EQ(*UsageIntervalFromConf(conf), absl::Seconds(15));
  conf.Set(kUsageIntervalKey, "20");  // a bare number counts seconds
  EXPECT_EQ(*UsageIntervalFromConf(conf), absl::Seconds(20));
  for (const char* bad : {"500ms", "0", "often"}) {
    conf.Set(kUsageIntervalKey, bad);
    auto every = UsageIntervalFromConf(conf);
    EXPECT_TRUE(absl::IsInvalidArgument(every.status())) << bad;
    EXPECT_THAT(every.status().message(), HasSubstr(kUsageIntervalKey)) << bad;
  }

  EXPECT_EQ(UsageIntervalFromEnv("15"), absl::Seconds(15));
  for (const char* odd : {static_cast<const char*>(nullptr), "", "0", "-3", "x"}) {
    EXPECT_EQ(UsageIntervalFromEnv(odd), absl::Minutes(1)) << (odd ? odd : "(unset)");
  }
}

}  // namespace
}  // namespace tony::history
