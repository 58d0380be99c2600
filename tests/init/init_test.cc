// Copyright libtony authors.
//
// tony::Initialize (tony/init.h): the host owns curl's and libgsasl's process-wide state.

#include "tony/init.h"

#include <curl/curl.h>
#include <gsasl.h>
#include <unistd.h>

#include "gtest/gtest.h"
#include "http/client.h"
#include "ipc/sasl.h"

namespace tony {
namespace {

// Death tests run first, each in a fresh child: libtony has initialised nothing there yet.
TEST(InitializeDeathTest, TooLateOnceLibtonyInitialisedCurlItself) {
  EXPECT_EXIT(
      {
        http::Client client;  // libtony initialises curl
        InitOptions options;
        options.init_curl = false;
        absl::Status s = Initialize(options);
        _exit(s.code() == absl::StatusCode::kFailedPrecondition && http::CurlInitializedByLibtony()
                  ? 0
                  : 1);
      },
      ::testing::ExitedWithCode(0), "");
}

TEST(InitializeDeathTest, TooLateOnceLibtonyMadeItsOwnGsaslContext) {
  EXPECT_EXIT(
      {
        auto mechanism = ipc::NewDigestMd5Client("user", "password", "yarn", "localhost");
        Gsasl* host = nullptr;
        if (!mechanism.ok() || gsasl_init(&host) != GSASL_OK) _exit(2);
        InitOptions options;
        options.gsasl_context = host;
        absl::Status s = Initialize(options);
        _exit(s.code() == absl::StatusCode::kFailedPrecondition &&
                      ipc::GsaslContextInUse() != host && ipc::MadeOwnGsaslContext()
                  ? 0
                  : 1);
      },
      ::testing::ExitedWithCode(0), "");
}

TEST(InitializeTest, TheHostOwnsCurlAndLibgsasl) {
  ASSERT_EQ(curl_global_init(CURL_GLOBAL_DEFAULT), CURLE_OK);  // the host's own
  Gsasl* host = nullptr;
  ASSERT_EQ(gsasl_init(&host), GSASL_OK);
  InitOptions options;
  options.init_curl = false;
  options.gsasl_context = host;
  ASSERT_TRUE(Initialize(options).ok());

  // HTTP works on the host's curl; libtony never initialised it.
  http::Client client;
  absl::StatusOr<http::Response> r = client.Get("http://127.0.0.1:1/");
  EXPECT_TRUE(absl::IsUnavailable(r.status())) << r.status();
  EXPECT_FALSE(http::CurlInitializedByLibtony());

  // SASL sessions start on the host's context.
  auto mechanism = ipc::NewDigestMd5Client("user", "password", "yarn", "localhost");
  EXPECT_TRUE(mechanism.ok()) << mechanism.status();
  EXPECT_EQ(ipc::GsaslContextInUse(), host);
  EXPECT_FALSE(ipc::MadeOwnGsaslContext());

  // Once per process.
  EXPECT_EQ(Initialize(InitOptions()).code(), absl::StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace tony
