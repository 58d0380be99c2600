// Copyright libtony authors.

#include "http/client.h"

#include <curl/curl.h>
#include <gssapi/gssapi.h>
#include <gssapi/gssapi_krb5.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <mutex>

#include "absl/base/thread_annotations.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "common/egress.h"
#include "common/logging.h"

namespace tony::http {
namespace {

// Who initialises curl for the process (tony/init.h).
enum class CurlInit { kUndecided, kByLibtony, kByHost };
ABSL_CONST_INIT absl::Mutex curl_init_mu(absl::kConstInit);
CurlInit curl_init ABSL_GUARDED_BY(curl_init_mu) = CurlInit::kUndecided;

void GlobalInit() {
  absl::MutexLock lock(&curl_init_mu);
  if (curl_init != CurlInit::kUndecided) return;
  curl_global_init(CURL_GLOBAL_DEFAULT);
  curl_init = CurlInit::kByLibtony;
}

long ToMillis(absl::Duration d) {  // NOLINT(runtime/int): curl takes long
  if (d <= absl::ZeroDuration()) return 1;
  if (d == absl::InfiniteDuration()) return 0;             // curl: 0 means no limit
  return static_cast<long>(absl::ToInt64Milliseconds(d));  // NOLINT(runtime/int)
}

// The curl error space, converted once, here.
absl::StatusCode CurlCodeToStatusCode(CURLcode code) {
  switch (code) {
    case CURLE_COULDNT_CONNECT:
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_RESOLVE_PROXY:
    case CURLE_SEND_ERROR:
    case CURLE_RECV_ERROR:
    case CURLE_GOT_NOTHING:
    case CURLE_PARTIAL_FILE:
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_HTTP2:
    case CURLE_HTTP2_STREAM:
    case CURLE_WEIRD_SERVER_REPLY:
      return absl::StatusCode::kUnavailable;
    case CURLE_OPERATION_TIMEDOUT:
      return absl::StatusCode::kDeadlineExceeded;
    case CURLE_URL_MALFORMAT:
    case CURLE_UNSUPPORTED_PROTOCOL:
    case CURLE_BAD_FUNCTION_ARGUMENT:
      return absl::StatusCode::kInvalidArgument;
    case CURLE_TOO_MANY_REDIRECTS:
    case CURLE_PEER_FAILED_VERIFICATION:
    case CURLE_SSL_CERTPROBLEM:
    case CURLE_SSL_CACERT_BADFILE:
      return absl::StatusCode::kFailedPrecondition;
    case CURLE_LOGIN_DENIED:
    case CURLE_AUTH_ERROR:
      return absl::StatusCode::kUnauthenticated;
    case CURLE_OUT_OF_MEMORY:
    case CURLE_FILESIZE_EXCEEDED:
      return absl::StatusCode::kResourceExhausted;
    case CURLE_ABORTED_BY_CALLBACK:
      return absl::StatusCode::kCancelled;
    default:
      return absl::StatusCode::kUnknown;
  }
}

// Where a request's body comes from: a string or a file, rewindable for redirects.
struct BodySource {
  const std::string* data = nullptr;
  FILE* file = nullptr;
  int64_t offset = 0;
  absl::Status error;
};

size_t ReadBody(char* buffer, size_t size, size_t nitems, void* user) {
  auto* src = static_cast<BodySource*>(user);
  size_t want = size * nitems;
  if (src->file != nullptr) {
    size_t n = std::fread(buffer, 1, want, src->file);
    if (n < want && std::ferror(src->file)) {
      src->error = absl::DataLossError(
          absl::StrCat("reading the request body file: ", std::strerror(errno)));
      return CURL_READFUNC_ABORT;
    }
    return n;
  }
  size_t left = src->data->size() - static_cast<size_t>(src->offset);
  size_t n = std::min(want, left);
  std::memcpy(buffer, src->data->data() + src->offset, n);
  src->offset += static_cast<int64_t>(n);
  return n;
}

int SeekBody(void* user, curl_off_t offset, int origin) {
  auto* src = static_cast<BodySource*>(user);
  if (origin != SEEK_SET) return CURL_SEEKFUNC_CANTSEEK;
  if (src->file != nullptr) {
    return fseeko(src->file, offset, SEEK_SET) == 0 ? CURL_SEEKFUNC_OK : CURL_SEEKFUNC_FAIL;
  }
  if (offset < 0 || static_cast<size_t>(offset) > src->data->size()) return CURL_SEEKFUNC_FAIL;
  src->offset = offset;
  return CURL_SEEKFUNC_OK;
}

// Collects the response: headers of the last response, the body to memory or a file.
struct Sink {
  CURL* curl = nullptr;
  const Request* request = nullptr;
  Response* response = nullptr;
  FILE* file = nullptr;
  std::string file_path;
  absl::Status error;
};

size_t WriteBody(char* data, size_t size, size_t nmemb, void* user) {
  auto* sink = static_cast<Sink*>(user);
  size_t n = size * nmemb;
  long code = 0;  // NOLINT(runtime/int)
  curl_easy_getinfo(sink->curl, CURLINFO_RESPONSE_CODE, &code);
  if (!sink->request->response_file.empty() && code >= 200 && code < 300) {
    if (sink->file == nullptr) {
      sink->file = std::fopen(sink->request->response_file.c_str(), "wb");
      if (sink->file == nullptr) {
        int err = errno;
        sink->error = absl::Status(
            err == ENOSPC ? absl::StatusCode::kResourceExhausted
                          : absl::StatusCode::kFailedPrecondition,
            absl::StrCat("cannot create ", sink->request->response_file, ": ", std::strerror(err)));
        return 0;
      }
    }
    if (std::fwrite(data, 1, n, sink->file) != n) {
      int err = errno;
      sink->error = absl::Status(
          err == ENOSPC ? absl::StatusCode::kResourceExhausted : absl::StatusCode::kDataLoss,
          absl::StrCat("writing ", sink->request->response_file, ": ", std::strerror(err)));
      return 0;
    }
    sink->response->file_bytes += static_cast<int64_t>(n);
    return n;
  }
  if (static_cast<int64_t>(sink->response->body.size() + n) > sink->request->max_response_bytes) {
    sink->error = absl::ResourceExhaustedError(
        absl::StrCat("response body larger than ", sink->request->max_response_bytes, " bytes"));
    return 0;
  }
  sink->response->body.append(data, n);
  return n;
}

size_t WriteHeader(char* data, size_t size, size_t nitems, void* user) {
  auto* sink = static_cast<Sink*>(user);
  size_t n = size * nitems;
  absl::string_view line(data, n);
  line = absl::StripTrailingAsciiWhitespace(line);
  if (absl::StartsWith(line, "HTTP/")) {
    sink->response->headers.clear();  // a new response (after a redirect or a 100 Continue)
    return n;
  }
  size_t colon = line.find(':');
  if (colon == absl::string_view::npos) return n;
  sink->response->headers.emplace_back(
      absl::AsciiStrToLower(absl::StripAsciiWhitespace(line.substr(0, colon))),
      std::string(absl::StripAsciiWhitespace(line.substr(colon + 1))));
  return n;
}

// The egress guard (common/egress.h) at the moment curl opens a connection, after it resolved the
// host: a refused address records why and gives curl no socket, so nothing is sent to it.
curl_socket_t OpenSocket(void* user, curlsocktype purpose, curl_sockaddr* address) {
  auto* sink = static_cast<Sink*>(user);
  // Named without the URL: its query may carry a delegation token.
  absl::Status allowed = CheckEgress(&address->addr, "the HTTP server");
  if (!allowed.ok()) {
    if (sink->error.ok()) sink->error = allowed;
    return CURL_SOCKET_BAD;
  }
  return ::socket(address->family, address->socktype | SOCK_CLOEXEC, address->protocol);
}

// Makes `ccache` the calling thread's default GSS-API credential cache while it lives: MIT
// krb5 keeps gss_krb5_ccache_name per thread, and curl's SPNEGO takes the default credentials,
// so one transfer authenticates as one login without touching the process's KRB5CCNAME.
class ScopedGssCcache {
 public:
  explicit ScopedGssCcache(const std::string& ccache) {
    if (ccache.empty()) return;
    OM_uint32 minor = 0;
    const char* previous = nullptr;
    if (GSS_ERROR(gss_krb5_ccache_name(&minor, ccache.c_str(), &previous))) return;
    set_ = true;
    had_previous_ = previous != nullptr;
    if (had_previous_) previous_ = previous;
  }
  ~ScopedGssCcache() {
    if (!set_) return;
    OM_uint32 minor = 0;
    gss_krb5_ccache_name(&minor, had_previous_ ? previous_.c_str() : nullptr, nullptr);
  }
  ScopedGssCcache(const ScopedGssCcache&) = delete;
  ScopedGssCcache& operator=(const ScopedGssCcache&) = delete;

 private:
  bool set_ = false;
  bool had_previous_ = false;
  std::string previous_;
};

// The options every transfer sets: URL, timeouts, proxy, authentication, redirects, callbacks.
void SetTransferOptions(CURL* curl, const Request& request, const Client::Options& options,
                        char* errbuf, Sink* sink) {
  curl_easy_setopt(curl, CURLOPT_URL, request.url.c_str());
  curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, errbuf);
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(curl, CURLOPT_USERAGENT, options.user_agent.c_str());
  curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, ToMillis(request.timeout));
  curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS, ToMillis(request.connect_timeout));
  curl_easy_setopt(curl, CURLOPT_LOW_SPEED_LIMIT, 1L);
  curl_easy_setopt(curl, CURLOPT_LOW_SPEED_TIME,
                   std::max<long>(1, static_cast<long>(  // NOLINT(runtime/int)
                                         absl::ToInt64Seconds(options.stall_timeout))));
  if (!options.use_environment_proxy) curl_easy_setopt(curl, CURLOPT_PROXY, "");
  if (!options.ca_file.empty()) curl_easy_setopt(curl, CURLOPT_CAINFO, options.ca_file.c_str());
  if (request.negotiate) {
    // An empty user and password: curl's GSS-API takes the identity from the ticket cache.
    curl_easy_setopt(curl, CURLOPT_HTTPAUTH, static_cast<long>(CURLAUTH_NEGOTIATE));  // NOLINT
    curl_easy_setopt(curl, CURLOPT_USERPWD, ":");
  }
  // Only HTTP(S), and a redirect only to the scheme in use: a WebHDFS 307 to file:///... once
  // made curl write an upload into a local file, and one to http:// would send an HTTPS
  // request's delegation token in the clear.
  curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(curl, CURLOPT_REDIR_PROTOCOLS_STR,
                   absl::StartsWithIgnoreCase(request.url, "https://") ? "https" : "http");
  curl_easy_setopt(curl, CURLOPT_FOLLOWLOCATION, request.follow_redirects ? 1L : 0L);
  curl_easy_setopt(curl, CURLOPT_MAXREDIRS, static_cast<long>(request.max_redirects));  // NOLINT
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, &WriteBody);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, sink);
  curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, &WriteHeader);
  curl_easy_setopt(curl, CURLOPT_HEADERDATA, sink);
  curl_easy_setopt(curl, CURLOPT_OPENSOCKETFUNCTION, &OpenSocket);
  curl_easy_setopt(curl, CURLOPT_OPENSOCKETDATA, sink);
}

// Points `body` at the request's body (its file, opened here, or its string); its size.
absl::StatusOr<int64_t> OpenBody(const Request& request, const std::string& what,
                                 BodySource* body) {
  if (request.body_file.empty()) {
    body->data = &request.body;
    return static_cast<int64_t>(request.body.size());
  }
  body->file = std::fopen(request.body_file.c_str(), "rb");
  if (body->file == nullptr) {
    int err = errno;
    std::string message =
        absl::StrCat(what, ": cannot open ", request.body_file, ": ", std::strerror(err));
    return err == ENOENT ? absl::NotFoundError(message) : absl::FailedPreconditionError(message);
  }
  struct stat st;
  if (fstat(fileno(body->file), &st) != 0 || !S_ISREG(st.st_mode)) {
    return absl::FailedPreconditionError(
        absl::StrCat(what, ": ", request.body_file, " is not a regular file"));
  }
  return static_cast<int64_t>(st.st_size);
}

// The method, and the body's callbacks and size when one is sent; whether one is.
bool SetMethod(CURL* curl, const Request& request, int64_t body_size, BodySource* body) {
  const bool has_body = request.method == Method::kPut || request.method == Method::kPost ||
                        (request.method == Method::kDelete && body_size > 0);
  if (has_body) {
    curl_easy_setopt(curl, CURLOPT_READFUNCTION, &ReadBody);
    curl_easy_setopt(curl, CURLOPT_READDATA, body);
    curl_easy_setopt(curl, CURLOPT_SEEKFUNCTION, &SeekBody);
    curl_easy_setopt(curl, CURLOPT_SEEKDATA, body);
    if (request.method == Method::kPut) {
      curl_easy_setopt(curl, CURLOPT_UPLOAD, 1L);
      curl_easy_setopt(curl, CURLOPT_INFILESIZE_LARGE, static_cast<curl_off_t>(body_size));
    } else {
      curl_easy_setopt(curl, CURLOPT_POST, 1L);
      curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body_size));
      if (request.method == Method::kDelete) {
        curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, "DELETE");
      }
    }
  } else if (request.method == Method::kDelete) {
    curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, "DELETE");
  } else if (request.method == Method::kHead) {
    curl_easy_setopt(curl, CURLOPT_NOBODY, 1L);
  }
  return has_body;
}

// Why a transfer failed: our callbacks know better than curl why they stopped it.
absl::Status TransferError(CURLcode code, const Request& request, const std::string& what,
                           const char* errbuf, const Sink& sink, const BodySource& body) {
  if (!sink.error.ok()) {
    return absl::Status(sink.error.code(), absl::StrCat(what, ": ", sink.error.message()));
  }
  if (!body.error.ok()) {
    return absl::Status(body.error.code(), absl::StrCat(what, ": ", body.error.message()));
  }
  std::string detail = errbuf[0] != '\0' ? std::string(errbuf) : curl_easy_strerror(code);
  std::string message = absl::StrCat(what, ": ", detail);
  if (code == CURLE_OPERATION_TIMEDOUT) {
    absl::StrAppend(&message, " (timeout ", absl::FormatDuration(request.timeout), ")");
  }
  return absl::Status(CurlCodeToStatusCode(code), message);
}

// Closes the response file (reporting a failed flush), or creates it empty for an empty 2xx body.
absl::Status FinishResponseFile(const Request& request, const std::string& what,
                                const Response& response, Sink* sink) {
  if (sink->file != nullptr) {
    FILE* f = sink->file;
    sink->file = nullptr;
    if (std::fclose(f) != 0) {
      return absl::DataLossError(
          absl::StrCat(what, ": closing ", request.response_file, ": ", std::strerror(errno)));
    }
  } else if (!request.response_file.empty() && response.ok()) {
    FILE* f = std::fopen(request.response_file.c_str(), "wb");
    if (f == nullptr || std::fclose(f) != 0) {
      return absl::FailedPreconditionError(
          absl::StrCat(what, ": cannot create ", request.response_file));
    }
  }
  return absl::OkStatus();
}

}  // namespace

const char* MethodName(Method method) {
  switch (method) {
    case Method::kGet:
      return "GET";
    case Method::kHead:
      return "HEAD";
    case Method::kPut:
      return "PUT";
    case Method::kPost:
      return "POST";
    case Method::kDelete:
      return "DELETE";
  }
  return "GET";
}

std::optional<std::string> Response::Header(absl::string_view name) const {
  for (const auto& [key, value] : headers) {
    if (absl::EqualsIgnoreCase(key, name)) return value;
  }
  return std::nullopt;
}

class Client::HandlePool {
 public:
  explicit HandlePool(int max_idle) : max_idle_(max_idle) {}
  ~HandlePool() {
    for (CURL* h : idle_) curl_easy_cleanup(h);
  }
  CURL* Take() {
    {
      absl::MutexLock lock(&mu_);
      if (!idle_.empty()) {
        CURL* h = idle_.back();
        idle_.pop_back();
        return h;
      }
    }
    return curl_easy_init();
  }
  // Resetting keeps the handle's connection cache: the next request may reuse the connection.
  void Return(CURL* h) {
    curl_easy_reset(h);
    absl::MutexLock lock(&mu_);
    if (static_cast<int>(idle_.size()) < max_idle_) {
      idle_.push_back(h);
      return;
    }
    curl_easy_cleanup(h);
  }

 private:
  const int max_idle_;
  absl::Mutex mu_;
  std::vector<CURL*> idle_ ABSL_GUARDED_BY(mu_);
};

absl::Status LeaveCurlInitToHost() {
  absl::MutexLock lock(&curl_init_mu);
  if (curl_init == CurlInit::kByLibtony) {
    return absl::FailedPreconditionError("libtony has initialised curl already");
  }
  curl_init = CurlInit::kByHost;
  return absl::OkStatus();
}

bool CurlInitializedByLibtony() {
  absl::MutexLock lock(&curl_init_mu);
  return curl_init == CurlInit::kByLibtony;
}

Client::Client() : Client(Options()) {}

Client::Client(Options options)
    : options_(std::move(options)), pool_(std::make_unique<HandlePool>(options_.max_idle_handles)) {
  GlobalInit();
}

Client::~Client() = default;

absl::StatusOr<Response> Client::Do(const Request& request) const {
  const std::string what = absl::StrCat(MethodName(request.method), " ", RedactUrl(request.url));
  CURL* curl = pool_->Take();
  if (curl == nullptr) return absl::ResourceExhaustedError("curl_easy_init failed");
  struct HandleReturner {
    HandlePool* pool;
    CURL* curl;
    ~HandleReturner() { pool->Return(curl); }
  } returner{pool_.get(), curl};

  Response response;
  Sink sink;
  sink.curl = curl;
  sink.request = &request;
  sink.response = &response;
  BodySource body;
  struct FileCloser {
    FILE** f;
    ~FileCloser() {
      if (*f != nullptr) std::fclose(*f);
    }
  } close_body{&body.file}, close_sink{&sink.file};

  char errbuf[CURL_ERROR_SIZE] = {0};
  SetTransferOptions(curl, request, options_, errbuf, &sink);
  absl::StatusOr<int64_t> body_size = OpenBody(request, what, &body);
  if (!body_size.ok()) return body_size.status();
  const bool has_body = SetMethod(curl, request, *body_size, &body);

  struct curl_slist* headers = nullptr;
  struct SlistFreer {
    struct curl_slist** list;
    ~SlistFreer() { curl_slist_free_all(*list); }
  } free_headers{&headers};
  for (const auto& [name, value] : request.headers) {
    headers = curl_slist_append(headers, absl::StrCat(name, ": ", value).c_str());
  }
  // No "Expect: 100-continue" round trip before uploads: servers answer at once anyway.
  if (has_body) headers = curl_slist_append(headers, "Expect:");
  if (headers != nullptr) curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);

  const ScopedGssCcache gss_ccache(request.negotiate ? request.gss_ccache : std::string());
  CURLcode code = curl_easy_perform(curl);
  if (code != CURLE_OK) return TransferError(code, request, what, errbuf, sink, body);
  if (absl::Status s = FinishResponseFile(request, what, response, &sink); !s.ok()) return s;
  long status = 0;  // NOLINT(runtime/int)
  curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
  response.status = static_cast<int>(status);
  char* effective = nullptr;
  curl_easy_getinfo(curl, CURLINFO_EFFECTIVE_URL, &effective);
  response.url = effective != nullptr ? effective : request.url;
  TONY_LOG(DEBUG) << what << " -> " << response.status;
  return response;
}

absl::StatusOr<Response> Client::Get(const std::string& url, Headers headers) const {
  Request r;
  r.url = url;
  r.headers = std::move(headers);
  return Do(r);
}

absl::StatusOr<Response> Client::Put(const std::string& url, std::string body,
                                     Headers headers) const {
  Request r;
  r.method = Method::kPut;
  r.url = url;
  r.body = std::move(body);
  r.headers = std::move(headers);
  return Do(r);
}

absl::StatusOr<Response> Client::Post(const std::string& url, std::string body,
                                      Headers headers) const {
  Request r;
  r.method = Method::kPost;
  r.url = url;
  r.body = std::move(body);
  r.headers = std::move(headers);
  return Do(r);
}

absl::StatusOr<Response> Client::Delete(const std::string& url, Headers headers) const {
  Request r;
  r.method = Method::kDelete;
  r.url = url;
  r.headers = std::move(headers);
  return Do(r);
}

absl::StatusCode HttpStatusToCode(int s) {
  if (s >= 200 && s < 300) return absl::StatusCode::kOk;
  switch (s) {
    case 400:
      return absl::StatusCode::kInvalidArgument;
    case 401:
      return absl::StatusCode::kUnauthenticated;
    case 403:
      return absl::StatusCode::kPermissionDenied;
    case 404:
      return absl::StatusCode::kNotFound;
    case 408:
    case 504:
      return absl::StatusCode::kDeadlineExceeded;
    case 409:
      return absl::StatusCode::kAborted;
    case 412:
      return absl::StatusCode::kFailedPrecondition;
    case 416:
      return absl::StatusCode::kOutOfRange;
    case 429:
      return absl::StatusCode::kResourceExhausted;
    case 499:
      return absl::StatusCode::kCancelled;
    case 501:
      return absl::StatusCode::kUnimplemented;
    case 502:
    case 503:
      return absl::StatusCode::kUnavailable;
    default:
      break;
  }
  if (s >= 500) return absl::StatusCode::kInternal;
  if (s >= 400) return absl::StatusCode::kFailedPrecondition;
  return absl::StatusCode::kUnknown;
}

absl::Status HttpError(const Response& response, absl::string_view what) {
  constexpr size_t kMaxBody = 512;
  std::string body(absl::StripAsciiWhitespace(response.body));
  if (body.size() > kMaxBody) body = absl::StrCat(body.substr(0, kMaxBody), "...");
  absl::StatusCode code = HttpStatusToCode(response.status);
  if (code == absl::StatusCode::kOk) code = absl::StatusCode::kUnknown;
  return absl::Status(
      code, absl::StrCat(what, ": HTTP ", response.status, body.empty() ? "" : ": ", body));
}

std::string UrlEncode(absl::string_view s) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(s.size());
  for (unsigned char c : s) {
    if (absl::ascii_isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out.push_back(static_cast<char>(c));
    } else {
      out.push_back('%');
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 15]);
    }
  }
  return out;
}

std::string UrlEncodePath(absl::string_view path) {
  std::string out;
  size_t start = 0;
  while (start <= path.size()) {
    size_t slash = path.find('/', start);
    if (slash == absl::string_view::npos) slash = path.size();
    absl::StrAppend(&out, UrlEncode(path.substr(start, slash - start)));
    if (slash < path.size()) out.push_back('/');
    start = slash + 1;
  }
  return out;
}

std::string RedactUrl(absl::string_view url) {
  size_t q = url.find('?');
  if (q == absl::string_view::npos) return std::string(url);
  return absl::StrCat(url.substr(0, q), "?...");
}

}  // namespace tony::http
