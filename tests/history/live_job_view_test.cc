// Copyright libtony authors.
//
// LiveJobView: the AM's live page from the lines so far, without stderr, bounded, and safe to
// render while lines arrive (TSan).

#include "history/live_job_view.h"

#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tony::history {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

std::string Line(int seq, const std::string& rest) {
  return absl::StrCat(R"({"v":1,"attempt":1,"seq":)", seq, R"(,"time":"2026-11-26T10:00:0)",
                      seq % 10, R"(.000Z",)", rest, "}");
}

std::string Render(LiveJobView& view, const std::string& path) {
  for (const httpd::StatusRoute& r : view.Routes()) {
    if (r.path == path) return r.render();
  }
  return "no route " + path;
}

TEST(LiveJobViewTest, ShowsTheRunningJobWithoutStderr) {
  auto view = std::make_shared<LiveJobView>("application_1_0001", "alice");
  view->Add({Line(1, R"("event":"am_started","name":"live")"),
             Line(2, R"("event":"task_started","task":"worker:0")"),
             Line(3, R"("event":"task_exited","task":"worker:1","exit_code":2,)"
                     R"("stderr_tail":"secret token")"),
             Line(4, R"("event":"job_outcome","diagnostics":"worker:1: secret token")"),
             Line(5, R"("event":"tensorboard_listening","url":"http://nm1:6006/")")});
  const std::string html = Render(*view, "/job");
  EXPECT_THAT(html, HasSubstr("<td>worker:0</td>"));
  EXPECT_THAT(html, HasSubstr("<td>alice</td>"));
  EXPECT_THAT(html, HasSubstr("http-equiv=\"refresh\""));  // no end yet
  EXPECT_THAT(html, HasSubstr("href=\"./\""));             // relative: YARN's proxy path
  EXPECT_THAT(html, HasSubstr("href=\"api/job\""));
  EXPECT_THAT(html, Not(HasSubstr("secret token")));
  EXPECT_THAT(html, HasSubstr("<a id=\"tensorboard\" href=\"http://nm1:6006/\">"));
  const std::string json = Render(*view, "/api/job");
  EXPECT_THAT(json, HasSubstr("\"name\":\"live\""));
  EXPECT_THAT(json, Not(HasSubstr("secret token")));

  view->Add({Line(6, R"("event":"job_finished","state":"FAILED")")});
  const std::string ended = Render(*view, "/job");
  EXPECT_THAT(ended, Not(HasSubstr("http-equiv=\"refresh\"")));
  EXPECT_THAT(ended, Not(HasSubstr("id=\"tensorboard\"")));  // gone with the job
}

// The URL is whatever a log line says: only http(s) is a link, anything else escaped text.
TEST(LiveJobViewTest, ATensorBoardUrlOfAnotherSchemeIsNoLink) {
  for (const std::string url :
       {"javascript:alert(document.cookie)//", "JavaScript:alert(1)", " javascript:alert(1)",
        "data:text/html,<script>x</script>", "//evil.example/"}) {
    SCOPED_TRACE(url);
    auto view = std::make_shared<LiveJobView>("application_1_0003", "alice");
    view->Add({Line(1, R"("event":"am_started","name":"live")"),
               Line(2, absl::StrCat(R"("event":"tensorboard_listening","url":")", url, R"(")"))});
    const std::string html = Render(*view, "/job");
    EXPECT_THAT(html, Not(HasSubstr("id=\"tensorboard\"")));
    EXPECT_THAT(html, Not(HasSubstr("href=\" ")));
    EXPECT_THAT(html, Not(HasSubstr("href=\"javascript")));
    EXPECT_THAT(html, Not(HasSubstr("href=\"JavaScript")));
    EXPECT_THAT(html, Not(HasSubstr("<script>")));
  }
  auto view = std::make_shared<LiveJobView>("application_1_0004", "alice");
  view->Add({Line(1, R"("event":"am_started","name":"live")"),
             Line(2, R"("event":"tensorboard_listening","url":"HTTPS://nm1:6006/")")});
  EXPECT_THAT(Render(*view, "/job"),
              HasSubstr("<a id=\"tensorboard\" href=\"HTTPS://nm1:6006/\">"));
}

TEST(LiveJobViewTest, KeepsTheNewestLinesWithinItsBound) {
  auto view = std::make_shared<LiveJobView>("application_1_0002", "", 300);
  for (int i = 0; i < 10; ++i) {
    view->Add({Line(i, absl::StrCat(R"("event":"task_started","task":"worker:)", i, R"(")"))});
  }
  JobHistory job = view->Job();
  ASSERT_FALSE(job.tasks.empty());
  EXPECT_LT(job.tasks.size(), 10u);
  EXPECT_EQ(job.tasks.back().task, "worker:9");
}

TEST(LiveJobViewTest, RendersWhileLinesArrive) {
  auto view = std::make_shared<LiveJobView>("application_1_0003", "");
  std::thread writer([&] {
    for (int i = 0; i < 200; ++i) {
      view->Add({Line(i, absl::StrCat(R"("event":"task_started","task":"w:)", i % 7, R"(")"))});
    }
  });
  for (int i = 0; i < 50; ++i) EXPECT_THAT(Render(*view, "/job"), HasSubstr("<html>"));
  writer.join();
  EXPECT_EQ(view->Job().tasks.size(), 7u);
}

}  // namespace
}  // namespace tony::history
