// Copyright libtony authors.
//
// StatusPage: the ApplicationMaster's tracking URL (and the server under the history server). A
// minimal HTTP/1.0 server answering every GET with a page rendered on demand (the job's state,
// progress per job type, where each task runs, the TensorBoard link). YARN's web proxy forwards the
// application's "Tracking URL" here.
//
// It is deliberately small: one request per connection, requests read and answers sent each
// within a deadline and capped in size, answered by a few worker threads with a bounded queue of
// accepted connections (beyond it a connection is closed at once), so a flood or a slow client
// can neither stall the page for long nor grow the AM. On YARN it answers only the
// ResourceManager's web proxy (Hadoop's AmIpFilter rule: the peer must be one of the proxy's
// addresses; anyone else is redirected to the proxy's URL for the application), so YARN's view ACLs
// and SPNEGO apply; it shows no task's stderr (the AM leaves the tails out of what it renders).
//
// Thread-safe. Start() launches the accepting and the worker threads; Stop() (or the destructor)
// joins them.

#ifndef TONY_AM_STATUS_PAGE_H_
#define TONY_AM_STATUS_PAGE_H_

#include <atomic>
#include <deque>
#include <functional>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
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
  // The peers (IP addresses, e.g. the web proxy's) allowed a page; anyone else gets a redirect to
  // `redirect_url` (403 without one). Default: empty (anyone).
  std::vector<std::string> allowed_peers;
  std::string redirect_url;
  // Threads answering requests, and accepted connections waiting for one. Default: 2 and 16.
  int workers = 2;
  int max_pending = 16;
};

// Whether `peer` (an IPv4 or IPv6 address in text form, or an IPv4-mapped IPv6 one) is one of
// `allowed` (empty: anyone).
bool PeerAllowed(absl::string_view peer, const std::vector<std::string>& allowed);

// The page for `status`, as HTML (refreshing itself while the job runs). `tasks` lists one line
// per task: "worker:0  host:port  RUNNING".
// With `live_view`, it links to the job's live view at "job" (relative: YARN's proxy serves the
// page under its own path).
std::string RenderStatusPage(const ApplicationStatus& status, const std::vector<std::string>& tasks,
                             bool live_view = false);

// What the page makes of the bytes a client sent so far (pure, so it can be tested and fuzzed
// without sockets): wait for more until the blank line ending the headers, give up past 16 KB,
// then answer GET and HEAD and refuse every other method.
enum class HttpRequestVerdict { kIncomplete, kTooLarge, kGet, kHead, kNotAllowed };
HttpRequestVerdict ClassifyHttpRequest(absl::string_view received);

// The target of a complete GET or HEAD request, path and query ("/jobs?state=FAILED"), without a
// fragment; "/" when there is none to be read.
std::string HttpRequestTarget(absl::string_view received);

// The path of a complete GET or HEAD request, without its query ("/metrics" of
// "GET /metrics?x=1 HTTP/1.1"); "/" when there is none to be read.
std::string HttpRequestPath(absl::string_view received);

// The whole HTTP/1.0 answer to a complete request: `body` (of `content_type`) for GET, its
// headers alone for HEAD, 405 for kNotAllowed. Empty for kIncomplete and kTooLarge (nothing is
// sent).
std::string HttpAnswer(HttpRequestVerdict verdict, absl::string_view body,
                       absl::string_view content_type = "text/html; charset=utf-8");

// An answer of a Handler.
struct HttpReply {
  int code = 200;  // 200, 302, 400, 404 or 503
  std::string content_type = "text/html; charset=utf-8";
  std::string body;
  std::string location;  // for 302
};

// The whole HTTP/1.0 answer to a complete request with `reply`, as HttpAnswer above.
std::string HttpAnswer(HttpRequestVerdict verdict, const HttpReply& reply);

// `text` safe inside HTML text and double-quoted attributes.
std::string HtmlEscape(absl::string_view text);

class StatusPage {
 public:
  // Answers a request's target (path and query, HttpRequestTarget); called on a worker thread,
  // possibly on several at once.
  using Handler = std::function<HttpReply(const std::string& target)>;

  // `render` returns the page's HTML; it is called on the serving thread.
  StatusPage(StatusPageOptions options, std::function<std::string()> render);
  // Every request goes to `handler` (AddRoute is not used).
  StatusPage(StatusPageOptions options, Handler handler);

  // Serves `path` (e.g. "/metrics"; the query is ignored) with `render`'s body as
  // `content_type`; every other path gets the page. Before Start().
  void AddRoute(std::string path, std::string content_type, std::function<std::string()> render);
  ~StatusPage();
  StatusPage(const StatusPage&) = delete;
  StatusPage& operator=(const StatusPage&) = delete;

  absl::Status Start();
  void Stop();
  int port() const { return port_; }
  // Connections closed unanswered because the queue was full, and peers redirected or refused.
  int64_t shed() const { return shed_.load(); }
  int64_t refused() const { return refused_.load(); }

 private:
  void Serve();
  void Work();
  void Answer(int fd);
  void Refuse(int fd);

  struct Route {
    std::string content_type;
    std::function<std::string()> render;
  };

  const StatusPageOptions options_;
  const std::function<std::string()> render_;
  const Handler handler_;
  std::map<std::string, Route, std::less<>> routes_;  // fixed once started
  UniqueFd listen_fd_;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<int64_t> shed_{0};
  std::atomic<int64_t> refused_{0};
  absl::Mutex mu_;
  std::deque<UniqueFd> pending_ ABSL_GUARDED_BY(mu_);
  std::thread thread_;
  std::vector<std::thread> workers_;
};

}  // namespace tony::am

#endif  // TONY_AM_STATUS_PAGE_H_
