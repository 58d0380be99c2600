// Copyright libtony authors.

#include "am/status_page.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "common/egress.h"
#include "common/logging.h"

namespace tony::am {

std::string HtmlEscape(absl::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

namespace {

// Sends what it can of `data` by `deadline` on a non-blocking socket: a client that stops
// reading costs the server at most that long.
void SendAll(int fd, absl::string_view data, absl::Time deadline) {
  while (!data.empty()) {
    ssize_t n = ::send(fd, data.data(), data.size(), MSG_NOSIGNAL);
    if (n > 0) {
      data.remove_prefix(static_cast<size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      int left_ms = static_cast<int>(absl::ToInt64Milliseconds(deadline - absl::Now()));
      pollfd pfd{fd, POLLOUT, 0};
      if (left_ms > 0 && ::poll(&pfd, 1, left_ms) > 0) continue;
    }
    return;
  }
}

}  // namespace

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

StatusPage::StatusPage(StatusPageOptions options, Handler handler)
    : options_(std::move(options)), handler_(std::move(handler)) {}

StatusPage::~StatusPage() { Stop(); }

absl::Status StatusPage::Start() {
  // Non-blocking: a connection reset between poll() and accept() must not block the thread.
  listen_fd_.Reset(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  if (!listen_fd_.valid()) return absl::InternalError(absl::StrCat("socket: ", strerror(errno)));
  int one = 1;
  ::setsockopt(listen_fd_.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(options_.port));
  if (::inet_pton(AF_INET, options_.listen_host.c_str(), &addr.sin_addr) != 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("status page: not an IPv4 address: ", options_.listen_host));
  }
  if (::bind(listen_fd_.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
      ::listen(listen_fd_.get(), 16) != 0) {
    std::string why = strerror(errno);
    listen_fd_.Reset();
    return absl::UnavailableError(absl::StrCat(
        "status page: cannot listen on ", options_.listen_host, ":", options_.port, ": ", why));
  }
  socklen_t len = sizeof(addr);
  ::getsockname(listen_fd_.get(), reinterpret_cast<sockaddr*>(&addr), &len);
  port_ = ntohs(addr.sin_port);
  thread_ = std::thread([this] { Serve(); });
  for (int i = 0; i < std::max(1, options_.workers); ++i) {
    workers_.emplace_back([this] { Work(); });
  }
  return absl::OkStatus();
}

void StatusPage::Stop() {
  stop_.store(true);
  if (thread_.joinable()) thread_.join();
  for (std::thread& w : workers_) w.join();
  workers_.clear();
  listen_fd_.Reset();
  absl::MutexLock lock(&mu_);
  pending_.clear();
}

bool PeerAllowed(absl::string_view peer, const std::vector<std::string>& allowed) {
  if (allowed.empty()) return true;
  absl::string_view ip = peer;
  absl::ConsumePrefix(&ip, "::ffff:");  // an IPv4 peer on a dual-stack socket
  for (const std::string& a : allowed) {
    if (a == ip || a == peer) return true;
  }
  return false;
}

void StatusPage::Serve() {
  while (!stop_.load()) {
    // Wakes up now and then to notice Stop().
    pollfd pfd{listen_fd_.get(), POLLIN, 0};
    if (::poll(&pfd, 1, 200) <= 0) continue;
    sockaddr_storage peer{};
    socklen_t len = sizeof(peer);
    UniqueFd fd(::accept4(listen_fd_.get(), reinterpret_cast<sockaddr*>(&peer), &len,
                          SOCK_CLOEXEC | SOCK_NONBLOCK));
    if (!fd.valid()) continue;
    if (!PeerAllowed(SockaddrToString(reinterpret_cast<sockaddr*>(&peer)),
                     options_.allowed_peers)) {
      Refuse(fd.get());
      continue;
    }
    absl::MutexLock lock(&mu_);
    if (static_cast<int>(pending_.size()) >= options_.max_pending) {
      shed_.fetch_add(1);  // closed: the client sees the connection end and may try again
      continue;
    }
    pending_.push_back(std::move(fd));
  }
}

void StatusPage::Work() {
  while (true) {
    UniqueFd fd;
    {
      absl::MutexLock lock(&mu_);
      auto ready = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
        return !pending_.empty() || stop_.load();
      };
      // Stop() sets stop_ without the lock: look again now and then.
      mu_.AwaitWithTimeout(absl::Condition(&ready), absl::Milliseconds(200));
      if (stop_.load()) return;
      if (pending_.empty()) continue;
      fd = std::move(pending_.front());
      pending_.pop_front();
    }
    Answer(fd.get());
  }
}

// A peer other than YARN's proxy: sent to the proxy (as Hadoop's AmIpFilter does), without
// reading its request, or refused.
void StatusPage::Refuse(int fd) {
  refused_.fetch_add(1);
  const std::string answer =
      options_.redirect_url.empty()
          ? std::string("HTTP/1.0 403 Forbidden\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
          : absl::StrCat("HTTP/1.0 307 Temporary Redirect\r\nLocation: ", options_.redirect_url,
                         "\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
  SendAll(fd, answer, absl::Now() + absl::Milliseconds(100));
}

HttpRequestVerdict ClassifyHttpRequest(absl::string_view received) {
  if (!absl::StrContains(received, "\r\n\r\n") && !absl::StrContains(received, "\n\n")) {
    // No real browser sends that much to us.
    return received.size() > 16384 ? HttpRequestVerdict::kTooLarge
                                   : HttpRequestVerdict::kIncomplete;
  }
  if (absl::StartsWith(received, "GET ")) return HttpRequestVerdict::kGet;
  if (absl::StartsWith(received, "HEAD ")) return HttpRequestVerdict::kHead;
  return HttpRequestVerdict::kNotAllowed;
}

std::string HttpRequestTarget(absl::string_view received) {
  const size_t start = received.find(' ');
  if (start == absl::string_view::npos) return "/";
  absl::string_view target = received.substr(start + 1);
  target = target.substr(0, target.find_first_of(" \r\n"));
  target = target.substr(0, target.find('#'));
  if (target.empty() || target[0] != '/') return "/";
  return std::string(target);
}

std::string HttpRequestPath(absl::string_view received) {
  std::string target = HttpRequestTarget(received);
  return target.substr(0, target.find('?'));
}

std::string HttpAnswer(HttpRequestVerdict verdict, absl::string_view body,
                       absl::string_view content_type) {
  switch (verdict) {
    case HttpRequestVerdict::kIncomplete:
    case HttpRequestVerdict::kTooLarge:
      return "";
    case HttpRequestVerdict::kNotAllowed:
      return "HTTP/1.0 405 Method Not Allowed\r\nAllow: GET, HEAD\r\nContent-Length: 0\r\n"
             "Connection: close\r\n\r\n";
    case HttpRequestVerdict::kGet:
    case HttpRequestVerdict::kHead:
      break;
  }
  return HttpAnswer(verdict, HttpReply{200, std::string(content_type), std::string(body), ""});
}

std::string HttpAnswer(HttpRequestVerdict verdict, const HttpReply& reply) {
  if (verdict != HttpRequestVerdict::kGet && verdict != HttpRequestVerdict::kHead) {
    return HttpAnswer(verdict, "");
  }
  const char* reason = reply.code == 200   ? "OK"
                       : reply.code == 302 ? "Found"
                       : reply.code == 400 ? "Bad Request"
                       : reply.code == 404 ? "Not Found"
                       : reply.code == 503 ? "Service Unavailable"
                                           : "Error";
  return absl::StrCat("HTTP/1.0 ", reply.code, " ", reason,
                      "\r\nContent-Type: ", reply.content_type,
                      reply.location.empty() ? "" : absl::StrCat("\r\nLocation: ", reply.location),
                      "\r\nCache-Control: no-store\r\nContent-Length: ", reply.body.size(),
                      "\r\nConnection: close\r\n\r\n",
                      verdict == HttpRequestVerdict::kGet ? reply.body : std::string());
}

void StatusPage::Answer(int fd) {
  std::string request;
  const absl::Time deadline = absl::Now() + options_.read_timeout;
  char buf[2048];
  HttpRequestVerdict verdict;
  while ((verdict = ClassifyHttpRequest(request)) == HttpRequestVerdict::kIncomplete) {
    int left_ms = static_cast<int>(absl::ToInt64Milliseconds(deadline - absl::Now()));
    if (left_ms <= 0) return;
    pollfd pfd{fd, POLLIN, 0};
    if (::poll(&pfd, 1, left_ms) <= 0) return;
    ssize_t n = ::recv(fd, buf, sizeof(buf), 0);
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) continue;
    if (n <= 0) return;
    request.append(buf, static_cast<size_t>(n));
  }
  if (verdict == HttpRequestVerdict::kTooLarge) return;
  const absl::Time send_deadline = absl::Now() + options_.read_timeout;
  if (verdict == HttpRequestVerdict::kNotAllowed) {
    SendAll(fd, HttpAnswer(verdict, ""), send_deadline);
    return;
  }
  if (handler_) {
    SendAll(fd, HttpAnswer(verdict, handler_(HttpRequestTarget(request))), send_deadline);
    return;
  }
  auto route = routes_.find(HttpRequestPath(request));
  if (route != routes_.end()) {
    SendAll(fd, HttpAnswer(verdict, route->second.render(), route->second.content_type),
            send_deadline);
    return;
  }
  SendAll(fd, HttpAnswer(verdict, render_()), send_deadline);
}

void StatusPage::AddRoute(std::string path, std::string content_type,
                          std::function<std::string()> render) {
  routes_[std::move(path)] = Route{std::move(content_type), std::move(render)};
}

}  // namespace tony::am
