// Copyright libtony authors.
//
// The AM's live view of its job at the tracking URL: the history server's job page, built from
// the event lines the AM has produced so far (kept in memory as they go to the event log), so a
// running job and a finished one look the same. Served through YARN's web proxy, whose viewers
// may not see a task's stderr (the AM's status page quotes none): the view leaves out stderr
// tails and diagnostics.
//
//   auto view = std::make_shared<LiveJobView>(app_id, user);
//   options.on_event_lines = [view](std::vector<std::string> lines) { view->Add(lines); };
//   options.status_routes = view->Routes();
//
// Thread-safe.

#ifndef TONY_HISTORY_LIVE_JOB_VIEW_H_
#define TONY_HISTORY_LIVE_JOB_VIEW_H_

#include <cstddef>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "history/job_history.h"
#include "httpd/status_route.h"

namespace tony::history {

class LiveJobView : public std::enable_shared_from_this<LiveJobView> {
 public:
  // Keeps at most `max_bytes` of lines, dropping the oldest beyond that (a 500-task job's whole
  // log is about 1 MB). Default: 16 MiB.
  LiveJobView(std::string app_id, std::string user, size_t max_bytes = size_t{16} << 20);

  void Add(const std::vector<std::string>& lines);
  // The job as the lines so far tell it, without stderr tails or diagnostics.
  JobHistory Job() const;
  // "/job" (HTML) and "/api/job" (JSON), for ApplicationMasterOptions::status_routes. They hold
  // a reference to this view.
  std::vector<httpd::StatusRoute> Routes();

 private:
  const std::string app_id_;
  const std::string user_;
  const size_t max_bytes_;
  mutable absl::Mutex mu_;
  std::deque<std::string> lines_ ABSL_GUARDED_BY(mu_);
  size_t bytes_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace tony::history

#endif  // TONY_HISTORY_LIVE_JOB_VIEW_H_
