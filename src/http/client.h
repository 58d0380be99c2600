// Copyright libtony authors.
//
// A small HTTP/1.1 client on libcurl for the Hadoop REST APIs (WebHDFS, the ResourceManager and
// NodeManager web services). This is the one place curl errors become absl::Status:
// connection refused or unresolvable host → Unavailable, timeout → DeadlineExceeded, malformed
// URL → InvalidArgument, too many redirects → FailedPrecondition, and so on. HTTP error
// statuses are not errors here: the caller reads Response::status (HttpStatusToCode and
// HttpError help).
//
// Thread-safety: Client is thread-safe. It keeps a small pool of curl handles so that
// sequential requests to the same server reuse connections.

#ifndef TONY_HTTP_CLIENT_H_
#define TONY_HTTP_CLIENT_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace tony::http {

enum class Method { kGet, kHead, kPut, kPost, kDelete };
const char* MethodName(Method method);

using Headers = std::vector<std::pair<std::string, std::string>>;

struct Request {
  Method method = Method::kGet;
  std::string url;
  // Sent as given, in order. Default: none.
  Headers headers;
  // The body of a PUT, POST or DELETE; ignored when body_file is set. Default: empty.
  std::string body;
  // Streams this local file as the body (large uploads never sit in memory). Default: none.
  std::string body_file;
  // Writes a 2xx response's body to this local file (created or truncated) instead of
  // Response::body; other responses (error documents) still land in Response::body. After a
  // failed transfer the file may hold part of the body. Default: none.
  std::string response_file;
  // Follow 3xx redirects (at most max_redirects). Default: false.
  bool follow_redirects = false;
  // Default: 5.
  int max_redirects = 5;
  // Deadline for the whole request, connecting and transferring. Default: 60 s.
  absl::Duration timeout = absl::Seconds(60);
  // Deadline for establishing the connection. Default: 10 s.
  absl::Duration connect_timeout = absl::Seconds(10);
  // Fail with ResourceExhausted when an in-memory body grows beyond this. Default: 64 MiB.
  int64_t max_response_bytes = int64_t{64} << 20;
  // Authenticate with SPNEGO (Kerberos) when the server asks for it (Hadoop's web endpoints on
  // a secure cluster). Default: false.
  bool negotiate = false;
  // With negotiate: the GSS-API credential cache to authenticate from ("MEMORY:...", a keytab
  // login's, ipc::KerberosLogin::ccache()), for this transfer only. Default: empty, the
  // process's default credentials (KRB5CCNAME / kinit).
  std::string gss_ccache;
};

struct Response {
  int status = 0;
  // Headers of the final response, names lower-cased, in order.
  Headers headers;
  std::string body;
  // The URL that answered (differs from the request's after followed redirects).
  std::string url;
  // Bytes written to Request::response_file.
  int64_t file_bytes = 0;

  // The first header with this (case-insensitive) name.
  std::optional<std::string> Header(absl::string_view name) const;
  bool ok() const { return status >= 200 && status < 300; }
};

class Client {
 public:
  struct Options {
    // Default: "libtony".
    std::string user_agent = "libtony";
    // Abort a transfer that moves no byte for this long, whatever Request::timeout says.
    // Default: 60 s.
    absl::Duration stall_timeout = absl::Seconds(60);
    // Honour http_proxy / https_proxy / no_proxy from the environment. Hadoop's Java clients
    // do not, and a proxy in front of loopback clusters breaks them. Default: false.
    bool use_environment_proxy = false;
    // Idle curl handles (and their open connections) kept for reuse. Default: 8.
    int max_idle_handles = 8;
    // The certificates (PEM) HTTPS servers must chain to, instead of the system's store: a
    // cluster's own CA. Default: "" (the system's CA store).
    std::string ca_file;
  };

  Client();
  explicit Client(Options options);
  ~Client();
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  // Performs the request. A non-OK status means no HTTP response was obtained (or the body
  // could not be stored); an HTTP error status is an OK result with Response::status set.
  absl::StatusOr<Response> Do(const Request& request) const;

  absl::StatusOr<Response> Get(const std::string& url, Headers headers = {}) const;
  absl::StatusOr<Response> Put(const std::string& url, std::string body,
                               Headers headers = {}) const;
  absl::StatusOr<Response> Post(const std::string& url, std::string body,
                                Headers headers = {}) const;
  absl::StatusOr<Response> Delete(const std::string& url, Headers headers = {}) const;

 private:
  class HandlePool;
  Options options_;
  std::unique_ptr<HandlePool> pool_;
};

// The absl code matching an HTTP status (google.rpc's mapping): 2xx → kOk, 400 →
// InvalidArgument, 401 → Unauthenticated, 403 → PermissionDenied, 404 → NotFound, 409 →
// Aborted, 429 → ResourceExhausted, 503 → Unavailable, 504 → DeadlineExceeded, other 5xx →
// Internal, other codes → Unknown / FailedPrecondition.
absl::StatusCode HttpStatusToCode(int http_status);

// A status for an unexpected HTTP response: the mapped code, `what`, the HTTP status and the
// start of the body.
absl::Status HttpError(const Response& response, absl::string_view what);

// Percent-encodes everything but unreserved characters (RFC 3986), for query values.
std::string UrlEncode(absl::string_view s);
// Percent-encodes a path, keeping '/'.
std::string UrlEncodePath(absl::string_view path);
// The URL without its query string (which may carry tokens), for messages.
std::string RedactUrl(absl::string_view url);

// Process-wide curl initialisation (tony/init.h): the first Client calls
// curl_global_init(CURL_GLOBAL_DEFAULT) unless the host took it over with
// LeaveCurlInitToHost(), which fails (FailedPrecondition) once libtony has initialised curl.
absl::Status LeaveCurlInitToHost();
// Whether libtony called curl_global_init.
bool CurlInitializedByLibtony();

}  // namespace tony::http

#endif  // TONY_HTTP_CLIENT_H_
