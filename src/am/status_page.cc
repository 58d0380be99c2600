// Copyright libtony authors.

#include "am/status_page.h"

#include "absl/strings/str_cat.h"

namespace tony::am {

std::string RenderStatusPage(const ApplicationStatus& status, const std::vector<std::string>& tasks,
                             bool live_view) {
  const bool final_state = IsFinal(status.state);
  std::string html = absl::StrCat(
      "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\">",
      final_state ? "" : "<meta http-equiv=\"refresh\" content=\"5\">", "<title>",
      HtmlEscape(status.id), " — libtony</title>",
      "<style>body{font-family:sans-serif;margin:2em}td,th{padding:2px 12px;text-align:left}"
      "pre{background:#f4f4f4;padding:8px}</style></head><body>\n",
      "<h1>", HtmlEscape(status.id), "</h1>\n<p>State: <b>", AppStateName(status.state),
      "</b></p>\n");
  // What the job still waits for (pending containers, queue headroom) and, when known, why.
  if (!status.pending.empty()) {
    absl::StrAppend(&html, "<p>Waiting: ", HtmlEscape(status.pending), "</p>\n");
  }
  if (!status.wait_reason.empty()) {
    absl::StrAppend(&html, "<p>Why: ", HtmlEscape(status.wait_reason), "</p>\n");
  }
  if (!status.tensorboard_url.empty()) {
    absl::StrAppend(&html, "<p>TensorBoard: <a href=\"", HtmlEscape(status.tensorboard_url), "\">",
                    HtmlEscape(status.tensorboard_url), "</a></p>\n");
  }
  if (!status.diagnostics.empty()) {
    absl::StrAppend(&html, "<h2>Diagnostics</h2><pre>", HtmlEscape(status.diagnostics), "</pre>\n");
  }
  absl::StrAppend(&html,
                  "<h2>Job types</h2><table><tr><th>job</th><th>tasks</th><th>allocated</th>"
                  "<th>registered</th><th>running</th><th>succeeded</th><th>failed</th></tr>\n");
  for (const auto& [job, p] : status.progress) {
    absl::StrAppend(&html, "<tr><td>", HtmlEscape(job), "</td><td>", p.total, "</td><td>",
                    p.allocated, "</td><td>", p.registered, "</td><td>", p.running, "</td><td>",
                    p.succeeded, "</td><td>", p.failed, "</td></tr>\n");
  }
  absl::StrAppend(&html, "</table>\n<h2>Tasks</h2>");
  if (live_view) {
    absl::StrAppend(&html,
                    "<p><a id=\"live\" href=\"job\">Every task: addresses, containers, a "
                    "timeline, memory and CPU over time</a></p>");
  }
  absl::StrAppend(&html, "<pre>");
  for (const std::string& t : tasks) absl::StrAppend(&html, HtmlEscape(t), "\n");
  absl::StrAppend(&html, "</pre>\n");
  if (!status.log_dir.empty()) {
    absl::StrAppend(&html, "<p>Task logs: <code>", HtmlEscape(status.log_dir), "</code></p>\n");
  }
  absl::StrAppend(&html, "</body></html>\n");
  return html;
}

StatusPage::StatusPage(StatusPageOptions options, std::function<std::string()> render)
    : options_(std::move(options)), render_(std::move(render)) {}

StatusPage::~StatusPage() { Stop(); }

void StatusPage::AddRoute(std::string path, std::string content_type,
                          std::function<std::string()> render) {
  routes_[std::move(path)] = Route{std::move(content_type), std::move(render)};
}

void StatusPage::SetViewerCheck(std::function<bool(absl::string_view viewer)> may_view) {
  may_view_ = std::move(may_view);
}

std::string ProxyUser(const httpd::Request& request) {
  return httpd::CookieValue(request.cookie, "proxy-user");
}

absl::Status StatusPage::Start() {
  server_ = std::make_unique<httpd::Server>(
      options_, [this](const httpd::Request& request) { return Answer(request); });
  absl::Status started = server_->Start();
  if (!started.ok()) server_.reset();
  return started;
}

void StatusPage::Stop() {
  if (server_ != nullptr) server_->Stop();
}

int StatusPage::port() const { return server_ != nullptr ? server_->port() : 0; }
int64_t StatusPage::shed() const { return server_ != nullptr ? server_->shed() : 0; }
int64_t StatusPage::refused() const { return server_ != nullptr ? server_->refused() : 0; }

httpd::Reply StatusPage::Answer(const httpd::Request& request) const {
  httpd::Reply reply;
  if (may_view_) {
    const std::string viewer = ProxyUser(request);
    if (!may_view_(viewer)) {
      reply.code = 403;
      reply.content_type = "text/plain; charset=utf-8";
      reply.body = viewer.empty() ? "this job's page is for its viewers; sign in to YARN first\n"
                                  : "this job is not shared with you (view ACL)\n";
      return reply;
    }
  }
  auto route = routes_.find(request.path);
  if (route != routes_.end()) {
    reply.content_type = route->second.content_type;
    reply.body = route->second.render();
  } else {
    reply.body = render_();
  }
  return reply;
}

}  // namespace tony::am
