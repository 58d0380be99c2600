// Copyright libtony authors.

#include "history/live_job_view.h"

#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "history/history_pages.h"

namespace tony::history {

LiveJobView::LiveJobView(std::string app_id, std::string user, size_t max_bytes)
    : app_id_(std::move(app_id)), user_(std::move(user)), max_bytes_(max_bytes) {}

void LiveJobView::Add(const std::vector<std::string>& lines) {
  absl::MutexLock lock(&mu_);
  for (const std::string& line : lines) {
    lines_.push_back(line);
    bytes_ += line.size() + 1;
  }
  while (bytes_ > max_bytes_ && !lines_.empty()) {
    bytes_ -= lines_.front().size() + 1;
    lines_.pop_front();
  }
}

JobHistory LiveJobView::Job() const {
  std::string text;
  {
    absl::MutexLock lock(&mu_);
    text = absl::StrJoin(lines_, "\n");
  }
  JobHistory job = ReadJobHistory(app_id_, text, user_);
  job.summary.diagnostics.clear();
  for (TaskHistory& t : job.tasks) t.stderr_tail.clear();
  return job;
}

std::vector<httpd::StatusRoute> LiveJobView::Routes() {
  std::shared_ptr<LiveJobView> self = shared_from_this();
  return {
      {"/job", "text/html; charset=utf-8",
       [self] {
         JobPageOptions options;
         options.list_href = "./";  // the status page, wherever the proxy serves it
         options.list_text = "status";
         options.json_href = "api/job";
         options.live = true;
         options.now = absl::Now();
         return RenderJobPage(self->Job(), options);
       }},
      {"/api/job", "application/json",
       [self] {
         return JobJson(self->Job()).dump(-1, ' ', false, http::Json::error_handler_t::replace) +
                "\n";
       }},
  };
}

}  // namespace tony::history
