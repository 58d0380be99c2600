// Copyright libtony authors.

#include "hdfs/webhdfs_client.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "absl/random/random.h"
#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "common/logging.h"
#include "common/status_macros.h"
#include "conf/hadoop_addresses.h"
#include "hdfs/remote_exception.h"
#include "ipc/credentials.h"

namespace tony::hdfs {
namespace {

// Sets a request's limits: `timeout` and `connect_timeout`, shortened to what is left before
// `deadline`; DeadlineExceeded naming `what` once it has passed.
absl::Status LimitToDeadline(absl::Duration timeout, absl::Duration connect_timeout,
                             absl::Time deadline, absl::string_view what, http::Request* request) {
  const absl::Duration left = deadline - absl::Now();
  if (left <= absl::ZeroDuration()) {
    return absl::DeadlineExceededError(absl::StrCat(what, ": the deadline passed before asking"));
  }
  // Whole milliseconds at least: curl takes a zero limit for none.
  const absl::Duration floor = absl::Milliseconds(1);
  request->timeout = std::max(floor, std::min(timeout, left));
  request->connect_timeout = std::max(floor, std::min(connect_timeout, left));
  return absl::OkStatus();
}

// Tries of an upload the DataNode could not place (see UploadRequest).
constexpr int kUploadAttempts = 3;

std::string Octal(int mode) { return absl::StrFormat("%o", mode); }

std::string LastComponent(absl::string_view path) {
  size_t slash = path.rfind('/');
  return std::string(slash == absl::string_view::npos ? path : path.substr(slash + 1));
}

std::string Join(absl::string_view dir, absl::string_view name) {
  if (name.empty()) return std::string(dir);
  if (absl::EndsWith(dir, "/")) return absl::StrCat(dir, name);
  return absl::StrCat(dir, "/", name);
}

bool ValidMode(int mode) { return mode >= 0 && mode <= 01777; }

// Whether an IP literal (any form getaddrinfo takes, e.g. "2852039166" for 169.254.169.254)
// names no DataNode: unspecified, multicast, broadcast or link-local (where cloud metadata
// services answer, 169.254.169.254).
bool ForbiddenAddress(const std::string& host) {
  in_addr v4{};
  if (::inet_aton(host.c_str(), &v4) != 0) {
    const uint32_t a = ntohl(v4.s_addr);
    return (a >> 24) == 0 || (a >> 16) == 0xa9fe || (a >> 28) == 0xe || a == 0xffffffffu;
  }
  in6_addr v6{};
  if (::inet_pton(AF_INET6, host.c_str(), &v6) != 1) return false;
  if (IN6_IS_ADDR_V4MAPPED(&v6) || IN6_IS_ADDR_V4COMPAT(&v6)) {
    char v4text[INET_ADDRSTRLEN] = {0};
    ::inet_ntop(AF_INET, &v6.s6_addr[12], v4text, sizeof(v4text));
    return IN6_IS_ADDR_V4COMPAT(&v6) || ForbiddenAddress(v4text);
  }
  return IN6_IS_ADDR_UNSPECIFIED(&v6) || IN6_IS_ADDR_MULTICAST(&v6) || IN6_IS_ADDR_LINKLOCAL(&v6);
}

}  // namespace

// Why a DataNode URL from a NameNode's Location is refused, or "" when it may be used: the
// client's scheme, a host and nothing else in the authority (no user:password@, which also
// makes "http://nn.example@elsewhere/" look like the NameNode's in a log), a numeric port, no
// byte curl would read differently than a person, and no address that is never a DataNode.
std::string BadDataNodeUrl(absl::string_view url, absl::string_view scheme) {
  const std::string prefix = absl::StrCat(scheme, "://");
  if (!absl::StartsWithIgnoreCase(url, prefix)) {
    return absl::StrCat("that is not to an ", scheme, ":// DataNode address");
  }
  for (char c : url) {
    if (static_cast<unsigned char>(c) <= 0x20 || c == 0x7f || c == '\\') {
      return "to an address with a control character, space or backslash";
    }
  }
  absl::string_view rest = url.substr(prefix.size());
  absl::string_view authority = rest.substr(0, rest.find_first_of("/?#"));
  if (absl::StrContains(authority, "@")) return "to an address with user information (user@)";
  std::string host;
  absl::string_view port;
  if (absl::ConsumePrefix(&authority, "[")) {
    const size_t close = authority.find(']');
    if (close == absl::string_view::npos) return "to an address with a bad IPv6 literal";
    host = std::string(authority.substr(0, close));
    authority.remove_prefix(close + 1);
    if (!authority.empty() && !absl::ConsumePrefix(&authority, ":")) {
      return "to an address with a bad port";
    }
    port = authority;
  } else {
    const size_t colon = authority.find(':');
    host = std::string(authority.substr(0, colon));
    if (colon != absl::string_view::npos) port = authority.substr(colon + 1);
  }
  if (host.empty()) return "to an address without a host";
  // An IPv6 zone ("fe80::1%eth0") hides the address from the checks below.
  if (absl::StrContains(host, "%")) return "to an address with a zone or escape (%)";
  int port_number = 0;
  if (!port.empty() && (!absl::SimpleAtoi(port, &port_number) || port_number < 1 ||
                        port_number > 65535 || !absl::ascii_isdigit(port[0]))) {
    return "to an address with a bad port";
  }
  if (ForbiddenAddress(host)) {
    return "to a link-local, multicast or unspecified address (never a DataNode)";
  }
  return "";
}

absl::StatusOr<FileStatus> ParseFileStatus(const http::Json& json, absl::string_view dir) {
  constexpr absl::string_view kWhat = "WebHDFS FileStatus";
  FileStatus s;
  TONY_ASSIGN_OR_RETURN(std::string suffix, http::JsonString(json, "pathSuffix", kWhat));
  s.path = Join(dir, suffix);
  s.name = suffix.empty() ? LastComponent(dir) : suffix;
  TONY_ASSIGN_OR_RETURN(std::string type, http::JsonString(json, "type", kWhat));
  if (type == "FILE") {
    s.type = FileType::kFile;
  } else if (type == "DIRECTORY") {
    s.type = FileType::kDirectory;
  } else if (type == "SYMLINK") {
    s.type = FileType::kSymlink;
  } else {
    return absl::InvalidArgumentError(absl::StrCat(kWhat, ": unknown type '", type, "'"));
  }
  TONY_ASSIGN_OR_RETURN(s.length, http::JsonInt(json, "length", kWhat));
  TONY_ASSIGN_OR_RETURN(s.modification_time_ms, http::JsonInt(json, "modificationTime", kWhat));
  s.access_time_ms = http::JsonInt(json, "accessTime", kWhat).value_or(0);
  TONY_ASSIGN_OR_RETURN(std::string permission, http::JsonString(json, "permission", kWhat));
  char* end = nullptr;
  long mode = std::strtol(permission.c_str(), &end, 8);  // NOLINT(runtime/int)
  if (permission.empty() || *end != '\0' || mode < 0 || mode > 07777) {
    return absl::InvalidArgumentError(absl::StrCat(kWhat, ": bad permission '", permission, "'"));
  }
  s.permission = static_cast<int>(mode);
  s.owner = http::JsonString(json, "owner", kWhat).value_or("");
  s.group = http::JsonString(json, "group", kWhat).value_or("");
  s.replication = static_cast<int>(http::JsonInt(json, "replication", kWhat).value_or(0));
  s.block_size = http::JsonInt(json, "blockSize", kWhat).value_or(0);
  return s;
}

absl::StatusOr<WebHdfsClient::Options> WebHdfsClient::OptionsFromConfiguration(
    const conf::Configuration& conf) {
  TONY_ASSIGN_OR_RETURN(std::string auth, conf.Get("hadoop.security.authentication", "simple"));
  const bool kerberos = absl::EqualsIgnoreCase(auth, "kerberos");
  if (!kerberos && !absl::EqualsIgnoreCase(auth, "simple")) {
    return absl::InvalidArgumentError(absl::StrCat("hadoop.security.authentication=", auth,
                                                   " is not supported (simple or kerberos)"));
  }
  TONY_ASSIGN_OR_RETURN(bool enabled, conf.GetBool("dfs.webhdfs.enabled", true));
  if (!enabled) {
    return absl::FailedPreconditionError("WebHDFS is disabled (dfs.webhdfs.enabled=false)");
  }
  Options options;
  options.spnego = kerberos;
  TONY_ASSIGN_OR_RETURN(std::vector<conf::HostPort> namenodes, conf::NameNodeWebAddresses(conf));
  for (const conf::HostPort& hp : namenodes) options.namenodes.push_back(hp.ToString());
  TONY_ASSIGN_OR_RETURN(options.scheme, conf::NameNodeWebScheme(conf));
  TONY_ASSIGN_OR_RETURN(std::string fs, conf::DefaultFs(conf));
  TONY_ASSIGN_OR_RETURN(conf::FsUri fs_uri, conf::ParseFsUri(fs));
  if (fs_uri.scheme == "hdfs") options.default_fs = absl::StrCat("hdfs://", fs_uri.authority);
  options.ca_file = conf.Get(kCaFileKey).value_or("");
  return options;
}

absl::StatusOr<std::unique_ptr<WebHdfsClient>> WebHdfsClient::Create(Options options) {
  if (options.namenodes.empty()) {
    return absl::InvalidArgumentError("WebHdfsClient: no NameNode address");
  }
  if (options.scheme != "http" && options.scheme != "https") {
    return absl::InvalidArgumentError(
        absl::StrCat("WebHdfsClient: scheme must be http or https, not '", options.scheme, "'"));
  }
  return std::unique_ptr<WebHdfsClient>(new WebHdfsClient(std::move(options)));
}

namespace {

http::Client::Options HttpOptions(const WebHdfsClient::Options& options) {
  http::Client::Options o;
  o.ca_file = options.ca_file;
  return o;
}

}  // namespace

WebHdfsClient::WebHdfsClient(Options options)
    : options_(std::move(options)),
      user_(options_.user.empty() ? conf::HadoopUserName() : options_.user),
      http_(HttpOptions(options_)) {}

std::unique_ptr<WebHdfsClient> WebHdfsClient::BoundedBy(absl::Time deadline) const {
  std::unique_ptr<WebHdfsClient> bounded(new WebHdfsClient(options_));
  bounded->bound_ = std::min(bound_, deadline);
  bounded->active_.store(active_.load(std::memory_order_relaxed), std::memory_order_relaxed);
  return bounded;
}

absl::StatusOr<std::string> WebHdfsClient::ResolvePath(absl::string_view path) const {
  TONY_ASSIGN_OR_RETURN(conf::FsUri uri, conf::ParseFsUri(path));
  if (uri.scheme == "hdfs") {
    if (!options_.default_fs.empty()) {
      TONY_ASSIGN_OR_RETURN(conf::FsUri fs, conf::ParseFsUri(options_.default_fs));
      if (!uri.authority.empty() && !absl::EqualsIgnoreCase(uri.authority, fs.authority)) {
        return absl::InvalidArgumentError(absl::StrCat("'", path,
                                                       "' is not on the configured file system ",
                                                       options_.default_fs, " (fs.defaultFS)"));
      }
    }
  } else if (uri.scheme == "webhdfs" || uri.scheme == "swebhdfs") {
    if (!uri.authority.empty() && std::find(options_.namenodes.begin(), options_.namenodes.end(),
                                            uri.authority) == options_.namenodes.end()) {
      return absl::InvalidArgumentError(absl::StrCat("'", path, "' names NameNode ", uri.authority,
                                                     ", not one of ",
                                                     absl::StrJoin(options_.namenodes, ", ")));
    }
  } else if (!uri.scheme.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("'", path, "' is not an HDFS path (scheme ", uri.scheme, ")"));
  } else if (uri.path.empty()) {
    return absl::InvalidArgumentError("empty HDFS path");
  }
  std::vector<absl::string_view> parts = absl::StrSplit(uri.path, '/', absl::SkipEmpty());
  return absl::StrCat("/", absl::StrJoin(parts, "/"));
}

absl::StatusOr<http::Response> WebHdfsClient::CallNameNode(http::Method method,
                                                           const std::string& path,
                                                           absl::string_view op,
                                                           absl::string_view extra,
                                                           absl::Time deadline) const {
  deadline = std::min(deadline, bound_);
  const std::string what = absl::StrCat("WebHDFS ", op, " ", path);
  const size_t n = options_.namenodes.size();
  const size_t first = active_.load(std::memory_order_relaxed) % n;
  std::vector<std::string> failures;
  for (size_t i = 0; i < n; ++i) {
    const size_t index = (first + i) % n;
    const std::string& nn = options_.namenodes[index];
    http::Request request;
    request.method = method;
    std::string auth;
    if (!options_.delegation.empty()) {
      auth = absl::StrCat("&delegation=", http::UrlEncode(options_.delegation));
    } else if (!options_.spnego) {
      auth = absl::StrCat("&user.name=", http::UrlEncode(user_));
    }
    request.url = absl::StrCat(options_.scheme, "://", nn, "/webhdfs/v1", http::UrlEncodePath(path),
                               "?op=", op, auth, extra);
    request.negotiate = options_.spnego && options_.delegation.empty();
    if (request.negotiate && options_.spnego_ccache) {
      TONY_ASSIGN_OR_RETURN(request.gss_ccache, options_.spnego_ccache());
    }
    TONY_RETURN_IF_ERROR(LimitToDeadline(options_.request_timeout, options_.connect_timeout,
                                         deadline, absl::StrCat(what, ": NameNode at ", nn),
                                         &request));
    absl::StatusOr<http::Response> response = http_.Do(request);
    if (!response.ok()) {
      if (response.status().code() != absl::StatusCode::kUnavailable) {
        return absl::Status(response.status().code(), absl::StrCat(what, ": NameNode at ", nn, ": ",
                                                                   response.status().message()));
      }
      failures.push_back(
          absl::StrCat("NameNode at ", nn, " is unreachable (", response.status().message(), ")"));
      continue;
    }
    if (n > 1 && !response->ok()) {
      std::optional<RemoteException> e = ParseRemoteException(response->body);
      if (e && IsStandbyException(*e)) {
        failures.push_back(absl::StrCat("NameNode at ", nn, " is in standby"));
        continue;
      }
    }
    if (index != first) active_.store(index, std::memory_order_relaxed);
    return response;
  }
  return absl::UnavailableError(absl::StrCat(what, ": ", absl::StrJoin(failures, "; ")));
}

absl::StatusOr<http::Json> WebHdfsClient::CallJson(http::Method method, const std::string& path,
                                                   absl::string_view op, absl::string_view extra,
                                                   absl::Time deadline) const {
  TONY_ASSIGN_OR_RETURN(http::Response response, CallNameNode(method, path, op, extra, deadline));
  std::string what = absl::StrCat("WebHDFS ", op, " ", path);
  if (response.status != 200) return WebHdfsErrorStatus(response.status, response.body, what);
  return http::ParseJson(response.body, what);
}

absl::StatusOr<ipc::Token> WebHdfsClient::GetDelegationToken(absl::string_view renewer,
                                                             absl::string_view rpc_service) const {
  TONY_ASSIGN_OR_RETURN(
      http::Json json,
      CallJson(
          http::Method::kGet, "/", "GETDELEGATIONTOKEN",
          renewer.empty() ? std::string() : absl::StrCat("&renewer=", http::UrlEncode(renewer))));
  const char kWhat[] = "WebHDFS GETDELEGATIONTOKEN";
  auto it = json.find("Token");
  if (it == json.end() || !it->is_object()) {
    return absl::InternalError(absl::StrCat(kWhat, ": no Token in the answer (is security on?)"));
  }
  TONY_ASSIGN_OR_RETURN(std::string url_string, http::JsonString(*it, "urlString", kWhat));
  TONY_ASSIGN_OR_RETURN(ipc::Token token, ipc::DecodeTokenUrlString(url_string));
  // WebHDFS names it "WEBHDFS delegation"; the identifier is the NameNode's either way.
  token.kind = ipc::kHdfsDelegationTokenKind;
  token.service = std::string(rpc_service);
  return token;
}

absl::StatusOr<std::string> WebHdfsClient::Redirect(http::Method method, const std::string& path,
                                                    absl::string_view op, absl::string_view extra,
                                                    absl::Time deadline) const {
  TONY_ASSIGN_OR_RETURN(http::Response response, CallNameNode(method, path, op, extra, deadline));
  std::string what = absl::StrCat("WebHDFS ", op, " ", path);
  if (response.status != 307) {
    if (response.ok()) {
      return absl::InternalError(
          absl::StrCat(what, ": expected a redirect to a DataNode, got HTTP ", response.status));
    }
    return WebHdfsErrorStatus(response.status, response.body, what);
  }
  std::optional<std::string> location = response.Header("location");
  if (!location || location->empty()) {
    return absl::InternalError(absl::StrCat(what, ": redirect without a Location"));
  }
  // The body goes wherever this points: only to a DataNode over the NameNode's own scheme (a
  // file:// Location once had the upload written to a local file; http:// from an HTTPS
  // NameNode would carry the delegation token in the clear).
  // Hosts are not resolved nor listed here: under HTTPS the certificate check (tony.ssl.ca-file)
  // is what ties the name to a cluster node.
  const std::string bad = BadDataNodeUrl(*location, options_.scheme);
  if (!bad.empty()) {
    // Only the scheme is quoted: what follows may be credentials or terminal escapes.
    return absl::PermissionDeniedError(
        absl::StrCat(what, ": refused the NameNode's redirect ", bad));
  }
  return *location;
}

absl::Status WebHdfsClient::Mkdirs(absl::string_view path, std::optional<int> permission) const {
  TONY_ASSIGN_OR_RETURN(std::string p, ResolvePath(path));
  std::string extra;
  if (permission) {
    if (!ValidMode(*permission)) return absl::InvalidArgumentError("bad permission");
    extra = absl::StrCat("&permission=", Octal(*permission));
  }
  TONY_ASSIGN_OR_RETURN(http::Json json, CallJson(http::Method::kPut, p, "MKDIRS", extra));
  TONY_ASSIGN_OR_RETURN(bool created, http::JsonBool(json, "boolean", "WebHDFS MKDIRS"));
  if (!created) {
    return absl::FailedPreconditionError(absl::StrCat("WebHDFS MKDIRS ", p, " returned false"));
  }
  return absl::OkStatus();
}

absl::StatusOr<http::Response> WebHdfsClient::SendToDataNode(
    http::Request& request, http::Method method, absl::Duration timeout, absl::string_view op,
    const std::string& path, std::string* what) const {
  request.method = method;
  request.headers = {{"Content-Type", "application/octet-stream"}};
  *what = absl::StrCat("WebHDFS ", op, " ", path, " (DataNode ", http::RedactUrl(request.url), ")");
  TONY_RETURN_IF_ERROR(LimitToDeadline(timeout, options_.connect_timeout, bound_, *what, &request));
  absl::StatusOr<http::Response> response = http_.Do(request);
  if (!response.ok()) {
    return absl::Status(response.status().code(),
                        absl::StrCat(*what, ": ", response.status().message()));
  }
  return response;
}

absl::StatusOr<FileStatus> WebHdfsClient::UploadRequest(http::Request request,
                                                        absl::string_view path,
                                                        const UploadOptions& options) const {
  TONY_ASSIGN_OR_RETURN(std::string p, ResolvePath(path));
  std::string extra = absl::StrCat("&overwrite=", options.overwrite ? "true" : "false");
  if (options.permission) {
    if (!ValidMode(*options.permission)) return absl::InvalidArgumentError("bad permission");
    absl::StrAppend(&extra, "&permission=", Octal(*options.permission));
  }
  if (options.replication) absl::StrAppend(&extra, "&replication=", *options.replication);
  for (int attempt = 1;; ++attempt) {
    // Step 1: the NameNode names a DataNode; no data is sent to the NameNode.
    TONY_ASSIGN_OR_RETURN(request.url, Redirect(http::Method::kPut, p, "CREATE", extra));
    // Step 2: the bytes go to the DataNode, which answers 201 Created.
    std::string what;
    TONY_ASSIGN_OR_RETURN(
        http::Response response,
        SendToDataNode(request, http::Method::kPut, options_.transfer_timeout, "CREATE", p, &what));
    if (response.status == 201 || response.status == 200) return Stat(p);
    absl::Status error = WebHdfsErrorStatus(response.status, response.body, what);
    // The DataNode's own HDFS client excluded every DataNode after a failed write pipeline
    // (seen once on a busy single-DataNode cluster): the file was created empty by this call,
    // so it is removed and the whole upload tried again, a bounded number of times.
    if (attempt >= kUploadAttempts ||
        !absl::StrContains(error.message(), "could only be written to 0 of the")) {
      return error;
    }
    TONY_LOG(WARNING) << error.message() << " (attempt " << attempt << " of " << kUploadAttempts
                      << "; trying again)";
    (void)Delete(p, /*recursive=*/false);
    absl::SleepFor(absl::Seconds(attempt));
  }
}

absl::StatusOr<FileStatus> WebHdfsClient::Upload(const std::string& local_path,
                                                 absl::string_view path,
                                                 const UploadOptions& options) const {
  if (access(local_path.c_str(), R_OK) != 0) {
    int err = errno;
    std::string message =
        absl::StrCat("upload to ", path, ": cannot read ", local_path, ": ", std::strerror(err));
    return err == ENOENT ? absl::NotFoundError(message) : absl::FailedPreconditionError(message);
  }
  http::Request request;
  request.body_file = local_path;
  return UploadRequest(std::move(request), path, options);
}

absl::StatusOr<FileStatus> WebHdfsClient::UploadString(std::string data, absl::string_view path,
                                                       const UploadOptions& options) const {
  http::Request request;
  request.body = std::move(data);
  return UploadRequest(std::move(request), path, options);
}

absl::Status WebHdfsClient::AppendString(const std::string& data, absl::string_view path,
                                         const UploadOptions& options) const {
  TONY_ASSIGN_OR_RETURN(std::string p, ResolvePath(path));
  for (int attempt = 1;; ++attempt) {
    absl::StatusOr<std::string> location = Redirect(http::Method::kPost, p, "APPEND", "");
    if (absl::IsNotFound(location.status())) {
      UploadOptions create = options;
      create.overwrite = false;
      absl::StatusOr<FileStatus> created = UploadString(data, p, create);
      // Created meanwhile by another writer: append to it.
      if (absl::IsAlreadyExists(created.status()) && attempt == 1) continue;
      return created.status();
    }
    if (!location.ok()) return location.status();
    http::Request request;
    request.url = *std::move(location);
    request.body = data;
    std::string what;
    TONY_ASSIGN_OR_RETURN(
        http::Response response,
        SendToDataNode(request, http::Method::kPost, options_.request_timeout, "APPEND", p, &what));
    if (response.ok()) return absl::OkStatus();
    return WebHdfsErrorStatus(response.status, response.body, what);
  }
}

absl::StatusOr<FileStatus> WebHdfsClient::ReplaceWithString(std::string data,
                                                            absl::string_view path,
                                                            const UploadOptions& options) const {
  TONY_ASSIGN_OR_RETURN(std::string p, ResolvePath(path));
  const size_t slash = p.rfind('/');
  // Beside the file (same directory, same permissions to check), hidden, and our own.
  const std::string tmp =
      absl::StrCat(p.substr(0, slash + 1), ".", p.substr(slash + 1), ".", ::getpid(), "-",
                   absl::Uniform<uint64_t>(absl::BitGen()), ".tmp");
  UploadOptions fresh = options;
  fresh.overwrite = false;
  absl::StatusOr<FileStatus> uploaded = UploadString(std::move(data), tmp, fresh);
  absl::Status status = uploaded.ok() ? RenameReplacing(tmp, p) : uploaded.status();
  if (!status.ok()) {
    (void)Delete(tmp, /*recursive=*/false);
    return status;
  }
  return Stat(p);
}

absl::StatusOr<FileStatus> WebHdfsClient::Stat(absl::string_view path) const {
  TONY_ASSIGN_OR_RETURN(std::string p, ResolvePath(path));
  TONY_ASSIGN_OR_RETURN(http::Json json, CallJson(http::Method::kGet, p, "GETFILESTATUS", ""));
  const http::Json* status = http::JsonField(json, "FileStatus");
  if (status == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("WebHDFS GETFILESTATUS ", p, ": no FileStatus in the answer"));
  }
  return ParseFileStatus(*status, p);
}

absl::StatusOr<std::string> WebHdfsClient::HomeDirectory() const {
  TONY_ASSIGN_OR_RETURN(http::Json json, CallJson(http::Method::kGet, "/", "GETHOMEDIRECTORY", ""));
  const http::Json* path = http::JsonField(json, "Path");
  if (path == nullptr || !path->is_string() || path->get<std::string>().empty()) {
    return absl::InvalidArgumentError("WebHDFS GETHOMEDIRECTORY: no Path in the answer");
  }
  return path->get<std::string>();
}

absl::StatusOr<bool> WebHdfsClient::Exists(absl::string_view path) const {
  absl::StatusOr<FileStatus> status = Stat(path);
  if (status.ok()) return true;
  if (absl::IsNotFound(status.status())) return false;
  return status.status();
}

absl::StatusOr<std::vector<FileStatus>> WebHdfsClient::List(absl::string_view path) const {
  TONY_ASSIGN_OR_RETURN(std::string p, ResolvePath(path));
  TONY_ASSIGN_OR_RETURN(http::Json json, CallJson(http::Method::kGet, p, "LISTSTATUS", ""));
  const http::Json* statuses = http::JsonField(json, "FileStatuses");
  const http::Json* list = statuses ? http::JsonField(*statuses, "FileStatus") : nullptr;
  if (list == nullptr || !list->is_array()) {
    return absl::InvalidArgumentError(
        absl::StrCat("WebHDFS LISTSTATUS ", p, ": no FileStatuses.FileStatus array"));
  }
  std::vector<FileStatus> out;
  out.reserve(list->size());
  for (const http::Json& entry : *list) {
    TONY_ASSIGN_OR_RETURN(FileStatus s, ParseFileStatus(entry, p));
    out.push_back(std::move(s));
  }
  return out;
}

absl::StatusOr<std::string> WebHdfsClient::ReadToString(absl::string_view path, int64_t max_bytes,
                                                        absl::Time deadline) const {
  TONY_ASSIGN_OR_RETURN(std::string p, ResolvePath(path));
  http::Request request;
  TONY_ASSIGN_OR_RETURN(request.url, Redirect(http::Method::kGet, p, "OPEN", "", deadline));
  request.max_response_bytes = max_bytes;
  const std::string what =
      absl::StrCat("WebHDFS OPEN ", p, " (DataNode ", http::RedactUrl(request.url), ")");
  TONY_RETURN_IF_ERROR(LimitToDeadline(options_.transfer_timeout, options_.connect_timeout,
                                       std::min(deadline, bound_), what, &request));
  absl::StatusOr<http::Response> response = http_.Do(request);
  if (!response.ok()) {
    return absl::Status(response.status().code(),
                        absl::StrCat(what, ": ", response.status().message()));
  }
  if (response->status != 200) return WebHdfsErrorStatus(response->status, response->body, what);
  return std::move(response->body);
}

absl::Status WebHdfsClient::ReadToFile(absl::string_view path,
                                       const std::string& local_path) const {
  TONY_ASSIGN_OR_RETURN(std::string p, ResolvePath(path));
  http::Request request;
  TONY_ASSIGN_OR_RETURN(request.url, Redirect(http::Method::kGet, p, "OPEN", ""));
  static std::atomic<int> counter{0};
  request.response_file = absl::StrCat(local_path, ".tony-part-", getpid(), "-", counter++);
  const std::string what =
      absl::StrCat("WebHDFS OPEN ", p, " (DataNode ", http::RedactUrl(request.url), ")");
  TONY_RETURN_IF_ERROR(
      LimitToDeadline(options_.transfer_timeout, options_.connect_timeout, bound_, what, &request));
  absl::StatusOr<http::Response> response = http_.Do(request);
  absl::Status status;
  if (!response.ok()) {
    status = absl::Status(response.status().code(),
                          absl::StrCat(what, ": ", response.status().message()));
  } else if (response->status != 200) {
    status = WebHdfsErrorStatus(response->status, response->body, what);
  } else if (std::rename(request.response_file.c_str(), local_path.c_str()) != 0) {
    status = absl::FailedPreconditionError(absl::StrCat("renaming the download of ", p, " to ",
                                                        local_path, ": ", std::strerror(errno)));
  }
  if (!status.ok()) std::remove(request.response_file.c_str());
  return status;
}

absl::StatusOr<bool> WebHdfsClient::Delete(absl::string_view path, bool recursive,
                                           absl::Time deadline) const {
  TONY_ASSIGN_OR_RETURN(std::string p, ResolvePath(path));
  if (p == "/") return absl::InvalidArgumentError("refusing to delete /");
  TONY_ASSIGN_OR_RETURN(
      http::Json json,
      CallJson(http::Method::kDelete, p, "DELETE",
               absl::StrCat("&recursive=", recursive ? "true" : "false"), deadline));
  return http::JsonBool(json, "boolean", "WebHDFS DELETE");
}

absl::Status WebHdfsClient::SetPermission(absl::string_view path, int permission) const {
  if (!ValidMode(permission)) return absl::InvalidArgumentError("bad permission");
  TONY_ASSIGN_OR_RETURN(std::string p, ResolvePath(path));
  TONY_ASSIGN_OR_RETURN(http::Response response,
                        CallNameNode(http::Method::kPut, p, "SETPERMISSION",
                                     absl::StrCat("&permission=", Octal(permission))));
  if (response.status != 200) {
    return WebHdfsErrorStatus(response.status, response.body,
                              absl::StrCat("WebHDFS SETPERMISSION ", p));
  }
  return absl::OkStatus();
}

absl::Status WebHdfsClient::SetOwner(absl::string_view path, absl::string_view owner,
                                     absl::string_view group) const {
  if (owner.empty() && group.empty()) return absl::InvalidArgumentError("no owner nor group");
  TONY_ASSIGN_OR_RETURN(std::string p, ResolvePath(path));
  std::string extra;
  if (!owner.empty()) absl::StrAppend(&extra, "&owner=", http::UrlEncode(owner));
  if (!group.empty()) absl::StrAppend(&extra, "&group=", http::UrlEncode(group));
  TONY_ASSIGN_OR_RETURN(http::Response response,
                        CallNameNode(http::Method::kPut, p, "SETOWNER", extra));
  if (response.status != 200) {
    return WebHdfsErrorStatus(response.status, response.body, absl::StrCat("WebHDFS SETOWNER ", p));
  }
  return absl::OkStatus();
}

absl::Status WebHdfsClient::SetXAttr(absl::string_view path, absl::string_view name,
                                     absl::string_view value) const {
  TONY_ASSIGN_OR_RETURN(std::string p, ResolvePath(path));
  const std::string what = absl::StrCat("WebHDFS SETXATTR ", name, " on ", p);
  for (const char* flag : {"CREATE", "REPLACE"}) {
    TONY_ASSIGN_OR_RETURN(
        http::Response response,
        CallNameNode(http::Method::kPut, p, "SETXATTR",
                     absl::StrCat("&xattr.name=", http::UrlEncode(name), "&xattr.value=0x",
                                  absl::BytesToHexString(value), "&flag=", flag)));
    if (response.status == 200) return absl::OkStatus();
    absl::Status error = WebHdfsErrorStatus(response.status, response.body, what);
    // CREATE on a file that has it already: replace it instead.
    if (!absl::StrContains(error.message(), "already exists")) return error;
  }
  return absl::InternalError(absl::StrCat(what, ": neither CREATE nor REPLACE was accepted"));
}

absl::StatusOr<std::optional<std::string>> WebHdfsClient::GetXAttr(absl::string_view path,
                                                                   absl::string_view name) const {
  TONY_ASSIGN_OR_RETURN(std::string p, ResolvePath(path));
  const std::string what = absl::StrCat("WebHDFS GETXATTRS ", name, " of ", p);
  TONY_ASSIGN_OR_RETURN(
      http::Response response,
      CallNameNode(http::Method::kGet, p, "GETXATTRS",
                   absl::StrCat("&xattr.name=", http::UrlEncode(name), "&encoding=hex")));
  if (response.status != 200) {
    absl::Status error = WebHdfsErrorStatus(response.status, response.body, what);
    // HDFS answers a missing attribute with an IOException naming it.
    if (absl::StrContains(error.message(),
                          "At least one of the attributes provided was not found")) {
      return std::optional<std::string>();
    }
    return error;
  }
  TONY_ASSIGN_OR_RETURN(http::Json json, http::ParseJson(response.body, what));
  auto list = json.find("XAttrs");
  if (list == json.end() || !list->is_array()) return std::optional<std::string>();
  for (const http::Json& x : *list) {
    if (!x.is_object() || x.value("name", "") != name) continue;
    const std::string value = x.value("value", "");
    absl::string_view hex = value;
    if ((!absl::ConsumePrefix(&hex, "0x") && !absl::ConsumePrefix(&hex, "0X")) ||
        hex.size() % 2 != 0 ||
        !std::all_of(hex.begin(), hex.end(), [](char c) { return absl::ascii_isxdigit(c); })) {
      return absl::InternalError(absl::StrCat(what, ": not a hex value"));
    }
    return std::optional<std::string>(absl::HexStringToBytes(hex));
  }
  return std::optional<std::string>();
}

absl::StatusOr<bool> WebHdfsClient::Rename(absl::string_view from, absl::string_view to) const {
  TONY_ASSIGN_OR_RETURN(std::string src, ResolvePath(from));
  TONY_ASSIGN_OR_RETURN(std::string dst, ResolvePath(to));
  TONY_ASSIGN_OR_RETURN(http::Json json,
                        CallJson(http::Method::kPut, src, "RENAME",
                                 absl::StrCat("&destination=", http::UrlEncode(dst))));
  return http::JsonBool(json, "boolean", "WebHDFS RENAME");
}

absl::Status WebHdfsClient::RenameReplacing(absl::string_view from, absl::string_view to) const {
  TONY_ASSIGN_OR_RETURN(std::string src, ResolvePath(from));
  TONY_ASSIGN_OR_RETURN(std::string dst, ResolvePath(to));
  // With rename options the NameNode answers 200 with no body, or an exception.
  TONY_ASSIGN_OR_RETURN(http::Response response,
                        CallNameNode(http::Method::kPut, src, "RENAME",
                                     absl::StrCat("&destination=", http::UrlEncode(dst),
                                                  "&renameoptions=OVERWRITE")));
  if (response.status != 200) {
    return WebHdfsErrorStatus(response.status, response.body,
                              absl::StrCat("WebHDFS RENAME ", src, " to ", dst));
  }
  return absl::OkStatus();
}

}  // namespace tony::hdfs
