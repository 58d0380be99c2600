// Copyright libtony authors.

#include "tests/http/test_http_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace tony::testing {
namespace {

bool SendAll(int fd, const std::string& data) {
  size_t sent = 0;
  while (sent < data.size()) {
    ssize_t n = send(fd, data.data() + sent, data.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) return false;
    sent += static_cast<size_t>(n);
  }
  return true;
}

const char* Reason(int status) {
  switch (status) {
    case 200:
      return "OK";
    case 201:
      return "Created";
    case 307:
      return "Temporary Redirect";
    case 400:
      return "Bad Request";
    case 403:
      return "Forbidden";
    case 404:
      return "Not Found";
    case 500:
      return "Internal Server Error";
    default:
      return "Status";
  }
}

}  // namespace

std::optional<std::string> TestHttpServer::Request::Header(const std::string& name) const {
  for (const auto& [k, v] : headers) {
    if (k == name) return v;
  }
  return std::nullopt;
}

std::optional<std::string> TestHttpServer::Request::Param(const std::string& name) const {
  for (absl::string_view kv : absl::StrSplit(query, '&')) {
    std::pair<std::string, std::string> p = absl::StrSplit(kv, absl::MaxSplits('=', 1));
    if (p.first == name) return p.second;
  }
  return std::nullopt;
}

TestHttpServer::TestHttpServer(Handler handler) : handler_(std::move(handler)) {
  listen_fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  int one = 1;
  setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  if (bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
      listen(listen_fd_, 64) != 0) {
    std::abort();
  }
  socklen_t len = sizeof(addr);
  getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len);
  port_ = ntohs(addr.sin_port);
  acceptor_ = std::thread([this] { AcceptLoop(); });
}

TestHttpServer::~TestHttpServer() {
  stopping_.Notify();
  shutdown(listen_fd_, SHUT_RDWR);
  acceptor_.join();
  close(listen_fd_);
  std::vector<std::thread> threads;
  {
    absl::MutexLock lock(&mu_);
    for (int fd : fds_) shutdown(fd, SHUT_RDWR);
    threads.swap(connections_);
  }
  for (std::thread& t : threads) t.join();
}

std::string TestHttpServer::url() const { return absl::StrCat("http://127.0.0.1:", port_); }

std::vector<TestHttpServer::Request> TestHttpServer::requests() const {
  absl::MutexLock lock(&mu_);
  return requests_;
}

int TestHttpServer::connections() const {
  absl::MutexLock lock(&mu_);
  return accepted_;
}

void TestHttpServer::AcceptLoop() {
  while (!stopping_.HasBeenNotified()) {
    pollfd pfd{listen_fd_, POLLIN, 0};
    if (poll(&pfd, 1, 100) <= 0) continue;
    int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) continue;
    absl::MutexLock lock(&mu_);
    ++accepted_;
    fds_.push_back(fd);
    connections_.emplace_back([this, fd] { Serve(fd); });
  }
}

void TestHttpServer::Serve(int fd) {
  std::string buffer;
  char chunk[65536];
  auto read_more = [&]() {
    ssize_t n = recv(fd, chunk, sizeof(chunk), 0);
    if (n <= 0) return false;
    buffer.append(chunk, static_cast<size_t>(n));
    return true;
  };
  while (!stopping_.HasBeenNotified()) {
    size_t header_end;
    while ((header_end = buffer.find("\r\n\r\n")) == std::string::npos) {
      if (!read_more()) goto done;
    }
    {
      Request request;
      std::vector<std::string> lines =
          absl::StrSplit(buffer.substr(0, header_end), "\r\n", absl::SkipEmpty());
      buffer.erase(0, header_end + 4);
      if (lines.empty()) break;
      std::vector<std::string> start = absl::StrSplit(lines[0], ' ');
      if (start.size() < 2) break;
      request.method = start[0];
      request.target = start[1];
      size_t q = request.target.find('?');
      request.path = request.target.substr(0, q);
      if (q != std::string::npos) request.query = request.target.substr(q + 1);
      size_t content_length = 0;
      for (size_t i = 1; i < lines.size(); ++i) {
        size_t colon = lines[i].find(':');
        if (colon == std::string::npos) continue;
        std::string name = absl::AsciiStrToLower(lines[i].substr(0, colon));
        std::string value(absl::StripAsciiWhitespace(lines[i].substr(colon + 1)));
        if (name == "content-length") (void)absl::SimpleAtoi(value, &content_length);
        request.headers.emplace_back(std::move(name), std::move(value));
      }
      while (buffer.size() < content_length) {
        if (!read_more()) goto done;
      }
      request.body = buffer.substr(0, content_length);
      buffer.erase(0, content_length);
      {
        absl::MutexLock lock(&mu_);
        requests_.push_back(request);
      }
      Reply reply = handler_(request);
      if (reply.delay > absl::ZeroDuration()) {
        stopping_.WaitForNotificationWithTimeout(reply.delay);
      }
      if (reply.hang_up || stopping_.HasBeenNotified()) break;
      std::string out = absl::StrCat("HTTP/1.1 ", reply.status, " ", Reason(reply.status), "\r\n",
                                     "Content-Length: ", reply.body.size(), "\r\n");
      for (const auto& [k, v] : reply.headers) absl::StrAppend(&out, k, ": ", v, "\r\n");
      absl::StrAppend(&out, "\r\n", request.method == "HEAD" ? "" : reply.body);
      if (!SendAll(fd, out)) break;
    }
  }
done : {
  absl::MutexLock lock(&mu_);
  fds_.erase(std::remove(fds_.begin(), fds_.end(), fd), fds_.end());
}
  close(fd);
}

int UnusedLoopbackPort() {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  socklen_t len = sizeof(addr);
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  close(fd);
  return ntohs(addr.sin_port);
}

}  // namespace tony::testing
