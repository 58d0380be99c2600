// Copyright libtony authors.

#include "executor/am_locator.h"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/tcp_connect.h"
#include "common/unique_fd.h"
#include "nlohmann/json.hpp"

namespace tony::executor {
namespace {

// Percent-encodes a query value.
std::string QueryEscape(absl::string_view s) {
  std::string out;
  for (char c : s) {
    if (absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.' ||
        c == '~') {
      out += c;
    } else {
      absl::StrAppend(&out, "%", absl::Hex(static_cast<unsigned char>(c), absl::kZeroPad2));
    }
  }
  return out;
}

// Whether `raw` holds a whole response: its body as long as Content-Length says, or the last
// chunk of a chunked one (otherwise the server's close ends it).
bool ResponseComplete(absl::string_view raw) {
  size_t end = raw.find("\r\n\r\n");
  if (end == absl::string_view::npos) return false;
  const std::string head = absl::AsciiStrToLower(raw.substr(0, end));
  const absl::string_view body = raw.substr(end + 4);
  if (absl::StrContains(head, "\r\ntransfer-encoding: chunked")) {
    return absl::EndsWith(body, "\r\n0\r\n\r\n") || body == "0\r\n\r\n";
  }
  size_t cl = head.find("\r\ncontent-length:");
  if (cl == std::string::npos) return false;
  size_t value = cl + std::string("\r\ncontent-length:").size();
  size_t line_end = head.find("\r\n", value);
  uint64_t length = 0;
  if (!absl::SimpleAtoi(
          absl::StripAsciiWhitespace(absl::string_view(head).substr(
              value, line_end == std::string::npos ? std::string::npos : line_end - value)),
          &length)) {
    return false;
  }
  return body.size() >= length;
}

// One GET to `host_port`, "Connection: close", read until the response is whole (or EOF) within
// `timeout`.
absl::StatusOr<std::string> HttpGet(const std::string& host_port, const std::string& target,
                                    absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  size_t colon = host_port.rfind(':');
  if (colon == std::string::npos) {
    return absl::InvalidArgumentError(absl::StrCat("not host:port: ", host_port));
  }
  const std::string host = host_port.substr(0, colon);
  absl::StatusOr<UniqueFd> connected = ConnectTcp(host, host_port.substr(colon + 1), deadline);
  if (!connected.ok()) return connected.status();
  UniqueFd fd = *std::move(connected);
  const std::string request = absl::StrCat("GET ", target, " HTTP/1.1\r\nHost: ", host_port,
                                           "\r\nAccept: application/json\r\n"
                                           "Connection: close\r\n\r\n");
  std::string response;
  size_t sent = 0;
  absl::Status status;
  while (true) {
    int ms = static_cast<int>(absl::ToInt64Milliseconds(deadline - absl::Now()));
    if (ms <= 0) {
      status = absl::DeadlineExceededError(absl::StrCat("no answer from ", host_port));
      break;
    }
    pollfd p = {fd.get(), static_cast<short>(sent < request.size() ? POLLOUT : POLLIN), 0};
    if (::poll(&p, 1, ms) < 0 && errno != EINTR) {
      status = absl::UnavailableError("poll failed");
      break;
    }
    if (sent < request.size()) {
      ssize_t n = ::send(fd.get(), request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
      if (n > 0) sent += static_cast<size_t>(n);
      if (n < 0 && errno != EAGAIN && errno != EINTR) {
        status = absl::UnavailableError(absl::StrCat("sending to ", host_port, " failed"));
        break;
      }
      continue;
    }
    char buf[8192];
    ssize_t n = ::recv(fd.get(), buf, sizeof(buf), 0);
    if (n == 0) break;
    if (n > 0) {
      response.append(buf, static_cast<size_t>(n));
      if (ResponseComplete(response)) break;
      if (response.size() > (1 << 20)) {
        status = absl::ResourceExhaustedError("answer over 1 MB");
        break;
      }
    } else if (errno != EAGAIN && errno != EINTR) {
      status = absl::UnavailableError(absl::StrCat("reading from ", host_port, " failed"));
      break;
    }
  }
  if (!status.ok()) return status;
  return response;
}

}  // namespace

absl::StatusOr<std::string> HttpResponseBody(absl::string_view raw) {
  size_t end = raw.find("\r\n\r\n");
  if (!absl::StartsWith(raw, "HTTP/1.") || end == absl::string_view::npos) {
    return absl::DataLossError("not an HTTP response");
  }
  absl::string_view head = raw.substr(0, end);
  absl::string_view body = raw.substr(end + 4);
  absl::string_view status_line = head.substr(0, head.find("\r\n"));
  if (status_line.size() < 12 || status_line.substr(9, 3) != "200") {
    return absl::FailedPreconditionError(absl::StrCat("HTTP ", status_line.substr(9)));
  }
  std::string lower = absl::AsciiStrToLower(head);
  if (!absl::StrContains(lower, "\r\ntransfer-encoding: chunked")) return std::string(body);
  std::string out;
  while (true) {
    size_t line_end = body.find("\r\n");
    if (line_end == absl::string_view::npos) return absl::DataLossError("truncated chunk");
    absl::string_view size_text = body.substr(0, line_end);
    size_text = size_text.substr(0, size_text.find(';'));
    uint64_t size = 0;
    if (!absl::SimpleHexAtoi(absl::StripAsciiWhitespace(size_text), &size)) {
      return absl::DataLossError("bad chunk size");
    }
    body.remove_prefix(line_end + 2);
    if (size == 0) return out;
    if (body.size() < size + 2) return absl::DataLossError("truncated chunk");
    out.append(body.data(), size);
    body.remove_prefix(size + 2);
  }
}

absl::StatusOr<std::vector<std::string>> ParseListStatusNames(absl::string_view json) {
  nlohmann::json j = nlohmann::json::parse(json.begin(), json.end(), nullptr,
                                           /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) return absl::DataLossError("LISTSTATUS: not JSON");
  std::vector<std::string> names;
  auto fs = j.find("FileStatuses");
  if (fs == j.end() || !fs->is_object()) return absl::DataLossError("LISTSTATUS: no FileStatuses");
  auto list = fs->find("FileStatus");
  if (list == fs->end() || !list->is_array()) return names;
  for (const auto& e : *list) {
    if (!e.is_object()) continue;
    auto s = e.find("pathSuffix");
    if (s != e.end() && s->is_string()) names.push_back(s->get<std::string>());
  }
  return names;
}

absl::StatusOr<broker::AmAddress> AmLocator::Latest() const {
  std::string target = absl::StrCat("/webhdfs/v1", options_.dir, "?op=LISTSTATUS");
  if (!options_.delegation.empty()) {
    absl::StrAppend(&target, "&delegation=", QueryEscape(options_.delegation));
  } else if (!options_.user.empty()) {
    absl::StrAppend(&target, "&user.name=", QueryEscape(options_.user));
  }
  absl::Status last = absl::UnavailableError("no NameNode");
  for (const std::string& nn : options_.namenodes) {
    absl::StatusOr<std::string> raw = HttpGet(nn, target, options_.timeout);
    if (!raw.ok()) {
      last = raw.status();
      continue;
    }
    absl::StatusOr<std::string> body = HttpResponseBody(*raw);
    if (!body.ok()) {
      last = body.status();  // e.g. a standby NameNode's 403: try the next one
      continue;
    }
    absl::StatusOr<std::vector<std::string>> names = ParseListStatusNames(*body);
    if (!names.ok()) return names.status();
    std::optional<broker::AmAddress> latest = broker::LatestAmAddress(*names);
    if (!latest) return absl::NotFoundError(absl::StrCat("no AM address in ", options_.dir));
    return *latest;
  }
  return last;
}

}  // namespace tony::executor
