// Copyright libtony authors.
//
// tony::Initialize (tony/init.h): the host owns curl's process-wide state.

#include "tony/init.h"

#include <curl/curl.h>
#include <unistd.h>

#include "gtest/gtest.h"
#include "http/client.h"

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

TEST(InitializeTest, TheHostOwnsCurl) {
  ASSERT_EQ(curl_global_init(CURL_GLOBAL_DEFAULT), CURLE_OK);  // the host's own
  InitOptions options;
  options.init_curl = false;
  int host_context = 0;  // a 0.1 host's libgsasl context: accepted, never touched
  options.gsasl_context = &host_context;
  ASSERT_TRUE(Initialize(options).ok());

  // HTTP works on the host's curl; libtony never initialised it.
  http::Client client;
  absl::StatusOr<http::Response> r = client.Get("http://127.0.0.1:1/");
  EXPECT_TRUE(absl::IsUnavailable(r.status())) << r.status();
  EXPECT_FALSE(http::CurlInitializedByLibtony());

  // Once per process.
  EXPECT_EQ(Initialize(InitOptions()).code(), absl::StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace tony
