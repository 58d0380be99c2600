// Copyright libtony authors.
//
// StatusPage: the ApplicationMaster's tracking URL. The page (the job's state, progress per job
// type, where each task runs, the TensorBoard link), rendered on demand, and routes beside it
// (/metrics, the live view), served by httpd::Server: its limits on request size, time and
// connections keep a flood or a slow client from stalling the page or growing the AM. YARN's web
// proxy forwards the application's "Tracking URL" here; on YARN the page answers only the proxy
// (Hadoop's AmIpFilter rule: anyone else is redirected to the proxy's URL for the application).
// YARN's proxy authenticates the viewer (SPNEGO on a Kerberos cluster) but does not check the
// application's view ACL; it names the viewer in its "proxy-user" cookie, and the page checks
// that name itself (SetViewerCheck). It shows no task's stderr (the AM leaves the tails out of
// what it renders).
//
// Thread-safe. Start() launches the server's threads; Stop() (or the destructor) joins them.

#ifndef TONY_AM_STATUS_PAGE_H_
#define TONY_AM_STATUS_PAGE_H_

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "httpd/escape.h"
#include "httpd/server.h"
#include "tony/submitter.h"

namespace tony::am {

// Where and how the page is served. The AM sets listen_host (where the broker listens) and, on
// YARN, allowed_peers and redirect_url.
using StatusPageOptions = httpd::ServerOptions;

// The page for `status`, as HTML (refreshing itself while the job runs). `tasks` lists one line
// per task: "worker:0  host:port  RUNNING".
// With `live_view`, it links to the job's live view at "job" (relative: YARN's proxy serves the
// page under its own path).
std::string RenderStatusPage(const ApplicationStatus& status, const std::vector<std::string>& tasks,
                             bool live_view = false);

// The viewer YARN's web proxy authenticated and named in its "proxy-user" cookie (Hadoop's
// WebAppProxyServlet), "" when it named none.
std::string ProxyUser(const httpd::Request& request);

// `text` safe inside HTML text and double-quoted attributes (httpd/escape.h).
using httpd::HtmlEscape;

class StatusPage {
 public:
  // `render` returns the page's HTML; it is called on a connection thread, possibly on several
  // at once.
  StatusPage(StatusPageOptions options, std::function<std::string()> render);
  ~StatusPage();
  StatusPage(const StatusPage&) = delete;
  StatusPage& operator=(const StatusPage&) = delete;

  // Serves `path` (e.g. "/metrics"; the query is ignored) with `render`'s body as
  // `content_type`; every other path gets the page. Before Start().
  void AddRoute(std::string path, std::string content_type, std::function<std::string()> render);

  // Every path answers 403 unless `may_view` allows the viewer YARN's proxy named (its
  // "proxy-user" cookie; "" when it named none). Before Start(). Default: everyone.
  void SetViewerCheck(std::function<bool(absl::string_view viewer)> may_view);

  absl::Status Start();
  void Stop();
  int port() const;
  // Connections closed unanswered (too many open), and peers redirected or refused.
  int64_t shed() const;
  int64_t refused() const;

 private:
  httpd::Reply Answer(const httpd::Request& request) const;

  struct Route {
    std::string content_type;
    std::function<std::string()> render;
  };

  const StatusPageOptions options_;
  const std::function<std::string()> render_;
  std::map<std::string, Route, std::less<>> routes_;  // fixed once started
  std::function<bool(absl::string_view)> may_view_;   // fixed once started
  std::unique_ptr<httpd::Server> server_;
};

}  // namespace tony::am

#endif  // TONY_AM_STATUS_PAGE_H_
