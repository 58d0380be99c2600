// Copyright libtony authors.

#include "executor/am_locator.h"

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <memory>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/status_macros.h"
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

// Waits until `fd` is ready for `events` or the deadline passes.
absl::Status WaitReady(int fd, short events, absl::Time deadline, const std::string& peer) {
  while (true) {
    const int ms = static_cast<int>(absl::ToInt64Milliseconds(deadline - absl::Now()));
    if (ms <= 0) return absl::DeadlineExceededError(absl::StrCat("no answer from ", peer));
    pollfd p = {fd, events, 0};
    const int n = ::poll(&p, 1, ms);
    if (n > 0) return absl::OkStatus();
    if (n < 0 && errno != EINTR) return absl::UnavailableError("poll failed");
  }
}

// A plain or TLS byte stream over a connected non-blocking socket: each call moves what it can,
// saying what it would wait for.
class Stream {
 public:
  enum class Io { kDone, kWantRead, kWantWrite, kEof, kError };

  Stream(int fd, SSL* ssl) : fd_(fd), ssl_(ssl) {}

  Io Write(absl::string_view data, size_t* n) {
    if (ssl_ == nullptr) {
      const ssize_t r = ::send(fd_, data.data(), data.size(), MSG_NOSIGNAL);
      if (r >= 0) return (*n = static_cast<size_t>(r), Io::kDone);
      return errno == EAGAIN || errno == EINTR ? Io::kWantWrite : Io::kError;
    }
    const int r = SSL_write(ssl_, data.data(), static_cast<int>(data.size()));
    if (r > 0) return (*n = static_cast<size_t>(r), Io::kDone);
    return SslIo(r);
  }

  Io Read(char* buf, size_t size, size_t* n) {
    if (ssl_ == nullptr) {
      const ssize_t r = ::recv(fd_, buf, size, 0);
      if (r > 0) return (*n = static_cast<size_t>(r), Io::kDone);
      if (r == 0) return Io::kEof;
      return errno == EAGAIN || errno == EINTR ? Io::kWantRead : Io::kError;
    }
    const int r = SSL_read(ssl_, buf, static_cast<int>(size));
    if (r > 0) return (*n = static_cast<size_t>(r), Io::kDone);
    return SslIo(r);
  }

 private:
  Io SslIo(int r) {
    switch (SSL_get_error(ssl_, r)) {
      case SSL_ERROR_WANT_READ:
        return Io::kWantRead;
      case SSL_ERROR_WANT_WRITE:
        return Io::kWantWrite;
      case SSL_ERROR_ZERO_RETURN:
        return Io::kEof;
      default:
        return Io::kError;
    }
  }
  const int fd_;
  SSL* const ssl_;
};

// A TLS session over `fd` that trusts exactly `ca_pem` and one of `hosts` as the server's name.
absl::Status StartTls(int fd, const AmLocatorOptions& options, const std::string& peer,
                      absl::Time deadline, std::unique_ptr<SSL_CTX, void (*)(SSL_CTX*)>* ctx,
                      std::unique_ptr<SSL, void (*)(SSL*)>* ssl) {
  ctx->reset(SSL_CTX_new(TLS_client_method()));
  if (*ctx == nullptr) return absl::InternalError("TLS: no context");
  SSL_CTX_set_min_proto_version(ctx->get(), TLS1_2_VERSION);
  SSL_CTX_set_verify(ctx->get(), SSL_VERIFY_PEER, nullptr);
  X509_STORE* store = SSL_CTX_get_cert_store(ctx->get());
  std::unique_ptr<BIO, int (*)(BIO*)> bio(
      BIO_new_mem_buf(options.tls_ca_pem.data(), static_cast<int>(options.tls_ca_pem.size())),
      BIO_free);
  int cas = 0;
  while (X509* cert = PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr)) {
    cas += X509_STORE_add_cert(store, cert) == 1 ? 1 : 0;
    X509_free(cert);
  }
  if (cas == 0) return absl::FailedPreconditionError("TLS: no CA certificate to trust");
  ssl->reset(SSL_new(ctx->get()));
  if (*ssl == nullptr || SSL_set_fd(ssl->get(), fd) != 1)
    return absl::InternalError("TLS: no session");
  X509_VERIFY_PARAM* param = SSL_get0_param(ssl->get());
  X509_VERIFY_PARAM_set_hostflags(param, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
  for (const std::string& host : options.tls_hosts) {
    X509_VERIFY_PARAM_add1_host(param, host.c_str(), 0);
  }
  if (!options.tls_hosts.empty())
    SSL_set_tlsext_host_name(ssl->get(), options.tls_hosts[0].c_str());
  while (true) {
    const int r = SSL_connect(ssl->get());
    if (r == 1) return absl::OkStatus();
    const int err = SSL_get_error(ssl->get(), r);
    if (err != SSL_ERROR_WANT_READ && err != SSL_ERROR_WANT_WRITE) {
      const long verify = SSL_get_verify_result(ssl->get());  // NOLINT(runtime/int)
      return absl::UnavailableError(absl::StrCat(
          "TLS with ", peer, " failed",
          verify != X509_V_OK ? absl::StrCat(": ", X509_verify_cert_error_string(verify)) : ""));
    }
    TONY_RETURN_IF_ERROR(
        WaitReady(fd, err == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT, deadline, peer));
  }
}

// One GET to `host_port`, "Connection: close" (over TLS when options name a CA), read until the
// response is whole (or EOF) within the options' timeout.
absl::StatusOr<std::string> HttpGet(const std::string& host_port, const std::string& target,
                                    const AmLocatorOptions& options) {
  const absl::Time deadline = absl::Now() + options.timeout;
  size_t colon = host_port.rfind(':');
  if (colon == std::string::npos) {
    return absl::InvalidArgumentError(absl::StrCat("not host:port: ", host_port));
  }
  const std::string host = host_port.substr(0, colon);
  absl::StatusOr<UniqueFd> connected = ConnectTcp(host, host_port.substr(colon + 1), deadline);
  if (!connected.ok()) return connected.status();
  UniqueFd fd = *std::move(connected);
  std::unique_ptr<SSL_CTX, void (*)(SSL_CTX*)> ctx(nullptr, SSL_CTX_free);
  std::unique_ptr<SSL, void (*)(SSL*)> ssl(nullptr, SSL_free);
  if (!options.tls_ca_pem.empty()) {
    TONY_RETURN_IF_ERROR(StartTls(fd.get(), options, host_port, deadline, &ctx, &ssl));
  }
  Stream stream(fd.get(), ssl.get());
  const std::string request = absl::StrCat("GET ", target, " HTTP/1.1\r\nHost: ", host_port,
                                           "\r\nAccept: application/json\r\n"
                                           "Connection: close\r\n\r\n");
  std::string response;
  size_t sent = 0;
  char buf[8192];
  while (true) {
    size_t n = 0;
    const Stream::Io io = sent < request.size()
                              ? stream.Write(absl::string_view(request).substr(sent), &n)
                              : stream.Read(buf, sizeof(buf), &n);
    if (io == Stream::Io::kEof) break;
    if (io == Stream::Io::kError) {
      return absl::UnavailableError(absl::StrCat("talking to ", host_port, " failed"));
    }
    if (io == Stream::Io::kWantRead || io == Stream::Io::kWantWrite) {
      TONY_RETURN_IF_ERROR(
          WaitReady(fd.get(), io == Stream::Io::kWantRead ? POLLIN : POLLOUT, deadline, host_port));
      continue;
    }
    if (sent < request.size()) {
      sent += n;
      continue;
    }
    response.append(buf, n);
    if (ResponseComplete(response)) break;
    if (response.size() > (1 << 20)) return absl::ResourceExhaustedError("answer over 1 MB");
  }
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
    // A status line shorter than "HTTP/1.1 " threw out_of_range here (found by fuzzing).
    return absl::FailedPreconditionError(
        absl::StrCat("HTTP ", status_line.size() > 9 ? status_line.substr(9) : status_line));
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
    // size + 2 would wrap for a size near 2^64 (a hostile peer's chunk header).
    if (size > body.size() || body.size() - size < 2) return absl::DataLossError("truncated chunk");
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
    absl::StatusOr<std::string> raw = HttpGet(nn, target, options_);
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
