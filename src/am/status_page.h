// Copyright libtony authors.
//
// StatusPage: the ApplicationMaster's tracking URL. A minimal HTTP/1.0 server answering every GET
// with a page rendered on demand (the job's state, progress per job type, where each task runs,
// the TensorBoard link). YARN's web proxy forwards the application's "Tracking URL" here.
//
// It is deliberately tiny: one thread, one request per connection, requests read and answers
// sent each within a deadline and requests capped in size, so a slow or hostile client can delay
// it by at most twice that deadline. It needs no secret: like YARN's own web UI on an insecure
// cluster it shows state, addresses and diagnostics (which the RM shows too) to anyone who can
// reach it.
//
// Thread-safe. Start() launches the serving thread; Stop() (or the destructor) joins it.

#ifndef TONY_AM_STATUS_PAGE_H_
#define TONY_AM_STATUS_PAGE_H_

#include <atomic>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "common/unique_fd.h"
#include "tony/submitter.h"

namespace tony::am {

struct StatusPageOptions {
  // Where to listen. Default: every interface, a port the system picks.
  std::string listen_host = "0.0.0.0";
  int port = 0;
  // How long a client may take to send its request, and to take the answer. Default: 2 seconds.
  absl::Duration read_timeout = absl::Seconds(2);
};

// The page for `status`, as HTML (refreshing itself while the job runs). `tasks` lists one line
// per task: "worker:0  host:port  RUNNING".
std::string RenderStatusPage(const ApplicationStatus& status,
                             const std::vector<std::string>& tasks);

// What the page makes of the bytes a client sent so far (pure, so it can be tested and fuzzed
// without sockets): wait for more until the blank line ending the headers, give up past 16 KB,
// then answer GET and HEAD and refuse every other method.
enum class HttpRequestVerdict { kIncomplete, kTooLarge, kGet, kHead, kNotAllowed };
HttpRequestVerdict ClassifyHttpRequest(absl::string_view received);

// The whole HTTP/1.0 answer to a complete request: the page `body` for GET, its headers alone for
// HEAD, 405 for kNotAllowed. Empty for kIncomplete and kTooLarge (nothing is sent).
std::string HttpAnswer(HttpRequestVerdict verdict, absl::string_view body);

class StatusPage {
 public:
  // `render` returns the page's HTML; it is called on the serving thread.
  StatusPage(StatusPageOptions options, std::function<std::string()> render);
  ~StatusPage();
  StatusPage(const StatusPage&) = delete;
  StatusPage& operator=(const StatusPage&) = delete;

  absl::Status Start();
  void Stop();
  int port() const { return port_; }

 private:
  void Serve();
  void Answer(int fd);

  const StatusPageOptions options_;
  const std::function<std::string()> render_;
  UniqueFd listen_fd_;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace tony::am

#endif  // TONY_AM_STATUS_PAGE_H_
