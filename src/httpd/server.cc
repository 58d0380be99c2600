// Copyright libtony authors.

#include "httpd/server.h"

#include <arpa/inet.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/socket.h>

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "common/egress.h"
#include "common/logging.h"

namespace tony::httpd {

// One TCP connection libmicrohttpd holds: its socket and when it is shut unless answered.
struct Server::Connection {
  int fd = -1;
  absl::Time deadline;
  bool shut = false;
  bool other = false;  // a peer outside allowed_peers (counted in open_others_)
};

namespace {

// One request: what libmicrohttpd's URI log callback saw, before it decoded anything.
struct RequestState {
  std::string raw_target;
  bool answered = false;
};

MHD_Result ToMhd(bool yes) { return yes ? MHD_YES : MHD_NO; }

void LogCallback(void*, const char* format, va_list ap) {
  char line[512];
  vsnprintf(line, sizeof(line), format, ap);
  TONY_LOG(DEBUG) << "libmicrohttpd: " << absl::StripTrailingAsciiWhitespace(line);
}

std::string Header(MHD_Connection* c, const char* name) {
  const char* value = MHD_lookup_connection_value(c, MHD_HEADER_KIND, name);
  return value != nullptr ? value : "";
}

std::string PeerOf(MHD_Connection* c) {
  const MHD_ConnectionInfo* info = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
  return info != nullptr && info->client_addr != nullptr ? SockaddrToString(info->client_addr) : "";
}

MHD_Result Send(MHD_Connection* c, const Reply& reply) {
  MHD_Response* response = MHD_create_response_from_buffer(
      reply.body.size(), const_cast<char*>(reply.body.data()), MHD_RESPMEM_MUST_COPY);
  if (response == nullptr) return MHD_NO;
  // libmicrohttpd refuses a value with CR or LF: such a reply is not sent half-made.
  bool headers =
      MHD_add_response_header(response, MHD_HTTP_HEADER_CONTENT_TYPE, reply.content_type.c_str()) ==
          MHD_YES &&
      MHD_add_response_header(response, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store") == MHD_YES &&
      MHD_add_response_header(response, MHD_HTTP_HEADER_CONNECTION, "close") == MHD_YES;
  if (headers && !reply.location.empty()) {
    headers = MHD_add_response_header(response, MHD_HTTP_HEADER_LOCATION, reply.location.c_str()) ==
              MHD_YES;
  }
  if (headers && !reply.www_authenticate.empty()) {
    headers = MHD_add_response_header(response, MHD_HTTP_HEADER_WWW_AUTHENTICATE,
                                      reply.www_authenticate.c_str()) == MHD_YES;
  }
  if (headers && reply.code == MHD_HTTP_METHOD_NOT_ALLOWED) {
    headers = MHD_add_response_header(response, MHD_HTTP_HEADER_ALLOW, "GET, HEAD") == MHD_YES;
  }
  if (!headers) {
    MHD_destroy_response(response);
    TONY_LOG(WARNING) << "http server: a reply header was refused; the connection is closed";
    return MHD_NO;
  }
  const MHD_Result queued = MHD_queue_response(c, static_cast<unsigned>(reply.code), response);
  MHD_destroy_response(response);
  return queued;
}

Reply Plain(int code, std::string body) {
  Reply r;
  r.code = code;
  r.content_type = "text/plain; charset=utf-8";
  r.body = std::move(body);
  return r;
}

}  // namespace

bool PeerAllowed(absl::string_view peer, const std::vector<std::string>& allowed) {
  if (allowed.empty()) return true;
  absl::string_view ip = peer;
  absl::ConsumePrefix(&ip, "::ffff:");  // an IPv4 peer on a dual-stack socket
  for (const std::string& a : allowed) {
    if (a == ip || a == peer) return true;
  }
  return false;
}

std::string CookieValue(absl::string_view cookie_header, absl::string_view name) {
  for (absl::string_view pair : absl::StrSplit(cookie_header, ';')) {
    pair = absl::StripAsciiWhitespace(pair);
    const size_t eq = pair.find('=');
    if (eq == absl::string_view::npos || pair.substr(0, eq) != name) continue;
    absl::string_view raw = pair.substr(eq + 1);
    auto hex = [](char c) { return absl::ascii_isdigit(c) ? c - '0' : (c | 0x20) - 'a' + 10; };
    std::string value;
    for (size_t i = 0; i < raw.size(); ++i) {
      if (raw[i] == '%' && i + 2 < raw.size() && absl::ascii_isxdigit(raw[i + 1]) &&
          absl::ascii_isxdigit(raw[i + 2])) {
        value.push_back(static_cast<char>(hex(raw[i + 1]) * 16 + hex(raw[i + 2])));
        i += 2;
      } else {
        value.push_back(raw[i] == '+' ? ' ' : raw[i]);
      }
    }
    return value;
  }
  return "";
}

std::string NormalizeTarget(absl::string_view raw) {
  absl::string_view target = raw.substr(0, raw.find('#'));
  if (target.empty() || target[0] != '/') return "/";
  return std::string(target);
}

Server::Server(ServerOptions options, Handler handler)
    : options_(std::move(options)), handler_(std::move(handler)) {}

Server::~Server() { Stop(); }

absl::Status Server::Start() {
  if (daemon_ != nullptr) return absl::FailedPreconditionError("http server: started already");
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(options_.port));
  if (::inet_pton(AF_INET, options_.listen_host.c_str(), &addr.sin_addr) != 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("http server: not an IPv4 address: ", options_.listen_host));
  }
  {
    absl::MutexLock lock(&mu_);
    stopping_ = false;
  }
  // The accept policy is ours (shed() counts); libmicrohttpd's own limit is a backstop above it.
  // Both count a connection until libmicrohttpd has joined its thread, a moment after the client
  // saw it end: a client reconnecting at once to a full server may be shed.
  const unsigned backstop = static_cast<unsigned>(std::max(1, options_.max_connections) * 2 + 4);
  const unsigned flags = MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD |
                         MHD_USE_POLL | MHD_USE_ERROR_LOG;
  using AcceptFn = MHD_Result (*)(void*, const sockaddr*, socklen_t);
  AcceptFn admit = [](void* cls, const sockaddr* addr, socklen_t) {
    return ToMhd(static_cast<Server*>(cls)->Admit(addr));
  };
  MHD_AccessHandlerCallback answer = [](void* cls, MHD_Connection* c, const char*,
                                        const char* method, const char*, const char*,
                                        size_t* upload_size, void** request_context) {
    return static_cast<MHD_Result>(
        static_cast<Server*>(cls)->Answer(c, method, upload_size, request_context));
  };
  MHD_NotifyConnectionCallback notify = [](void* cls, MHD_Connection* c, void** socket_context,
                                           MHD_ConnectionNotificationCode toe) {
    auto* self = static_cast<Server*>(cls);
    if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
      self->Opened(c, socket_context);
    } else {
      self->Closed(socket_context);
    }
  };
  using UriFn = void* (*)(void*, const char*, MHD_Connection*);
  UriFn began = [](void* cls, const char* uri, MHD_Connection*) {
    return static_cast<Server*>(cls)->Began(uri);
  };
  MHD_RequestCompletedCallback completed = [](void* cls, MHD_Connection*, void** request_context,
                                              MHD_RequestTerminationCode) {
    static_cast<Server*>(cls)->Completed(request_context);
  };
  using LogFn = void (*)(void*, const char*, va_list);
  LogFn log = LogCallback;
  daemon_ = MHD_start_daemon(
      flags, 0, admit, this, answer, this, MHD_OPTION_SOCK_ADDR, &addr, MHD_OPTION_CONNECTION_LIMIT,
      backstop, MHD_OPTION_CONNECTION_MEMORY_LIMIT, static_cast<size_t>(options_.max_header_bytes),
      MHD_OPTION_NOTIFY_CONNECTION, notify, this, MHD_OPTION_URI_LOG_CALLBACK, began, this,
      MHD_OPTION_NOTIFY_COMPLETED, completed, this, MHD_OPTION_EXTERNAL_LOGGER, log, nullptr,
      MHD_OPTION_END);
  if (daemon_ == nullptr) {
    return absl::UnavailableError(
        absl::StrCat("http server: cannot listen on ", options_.listen_host, ":", options_.port));
  }
  const MHD_DaemonInfo* info = MHD_get_daemon_info(daemon_, MHD_DAEMON_INFO_BIND_PORT);
  port_ = info != nullptr ? info->port : options_.port;
  watcher_ = std::thread([this] { Watch(); });
  return absl::OkStatus();
}

void Server::Stop() {
  // libmicrohttpd shuts every connection and joins its threads (a handler running finishes).
  if (daemon_ != nullptr) MHD_stop_daemon(daemon_);
  daemon_ = nullptr;
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  if (watcher_.joinable()) watcher_.join();
}

bool Server::Admit(const sockaddr* addr) {
  // Both counts change only on libmicrohttpd's accepting thread (Opened), which calls this too;
  // Closed lowers them from other threads, which only makes room.
  const bool other =
      !options_.allowed_peers.empty() &&
      !PeerAllowed(addr != nullptr ? SockaddrToString(addr) : "", options_.allowed_peers);
  if (open_.load() < options_.max_connections &&
      (!other || open_others_.load() < options_.max_other_connections)) {
    return true;
  }
  shed_.fetch_add(1);  // closed: the client sees the connection end and may try again
  return false;
}

void Server::Opened(MHD_Connection* c, void** socket_context) {
  const MHD_ConnectionInfo* info = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
  auto* conn = new Connection{info != nullptr ? info->connect_fd : -1,
                              absl::Now() + options_.request_timeout};
  conn->other = !PeerAllowed(PeerOf(c), options_.allowed_peers);
  *socket_context = conn;
  open_.fetch_add(1);
  if (conn->other) open_others_.fetch_add(1);
  absl::MutexLock lock(&mu_);
  connections_.insert(conn);
  ++changes_;
}

void Server::Closed(void** socket_context) {
  auto* conn = static_cast<Connection*>(*socket_context);
  if (conn == nullptr) return;
  {
    // The socket is closed after this returns: the deadline thread never shuts a reused fd.
    absl::MutexLock lock(&mu_);
    connections_.erase(conn);
  }
  if (conn->other) open_others_.fetch_sub(1);
  delete conn;
  *socket_context = nullptr;
  open_.fetch_sub(1);
}

void* Server::Began(const char* uri) { return new RequestState{uri != nullptr ? uri : ""}; }

void Server::Completed(void** request_context) {
  delete static_cast<RequestState*>(*request_context);
  *request_context = nullptr;
}

void Server::SetDeadline(MHD_Connection* c, absl::Time deadline) {
  const MHD_ConnectionInfo* info = MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
  if (info == nullptr || info->socket_context == nullptr) return;
  absl::MutexLock lock(&mu_);
  static_cast<Connection*>(info->socket_context)->deadline = deadline;
  ++changes_;
}

int Server::Answer(MHD_Connection* c, const char* method, size_t* upload_size,
                   void** request_context) {
  auto* state = static_cast<RequestState*>(*request_context);
  if (state == nullptr) return MHD_NO;
  if (state->answered) {
    *upload_size = 0;  // a body after the answer (the connection closes after it): dropped
    return MHD_YES;
  }
  state->answered = true;
  Request request;
  request.method = method != nullptr ? method : "";
  request.peer = PeerOf(c);
  if (!PeerAllowed(request.peer, options_.allowed_peers)) {
    // As Hadoop's AmIpFilter: only the proxy's addresses; anyone else goes through the proxy.
    refused_.fetch_add(1);
    Reply r =
        Plain(options_.redirect_url.empty() ? MHD_HTTP_FORBIDDEN : MHD_HTTP_TEMPORARY_REDIRECT, "");
    r.location = options_.redirect_url;
    return Send(c, r);
  }
  if (request.method != "GET" && request.method != "HEAD") {
    return Send(c, Plain(MHD_HTTP_METHOD_NOT_ALLOWED, "only GET and HEAD\n"));
  }
  uint64_t length = 0;
  const std::string declared = Header(c, MHD_HTTP_HEADER_CONTENT_LENGTH);
  if ((!declared.empty() &&
       (!absl::SimpleAtoi(declared, &length) || length > options_.max_body_bytes)) ||
      (!Header(c, MHD_HTTP_HEADER_TRANSFER_ENCODING).empty() && options_.max_body_bytes == 0)) {
    return Send(c, Plain(MHD_HTTP_CONTENT_TOO_LARGE, "a page takes no request body\n"));
  }
  request.target = NormalizeTarget(state->raw_target);
  request.path = request.target.substr(0, request.target.find('?'));
  request.authorization = Header(c, MHD_HTTP_HEADER_AUTHORIZATION);
  request.cookie = Header(c, MHD_HTTP_HEADER_COOKIE);
  request.host = Header(c, MHD_HTTP_HEADER_HOST);
  SetDeadline(c, absl::InfiniteFuture());
  const Reply reply = handler_(request);
  const double send_seconds =
      static_cast<double>(reply.body.size()) / std::max<int64_t>(1, options_.min_answer_rate);
  SetDeadline(c, absl::Now() + options_.request_timeout + absl::Seconds(send_seconds));
  return Send(c, reply);
}

void Server::Watch() {
  absl::MutexLock lock(&mu_);
  while (!stopping_) {
    absl::Time earliest = absl::InfiniteFuture();
    for (const Connection* c : connections_) {
      if (!c->shut) earliest = std::min(earliest, c->deadline);
    }
    const int64_t seen = changes_;
    auto woken = [this, seen]()
                     ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return stopping_ || changes_ != seen; };
    mu_.AwaitWithDeadline(absl::Condition(&woken), earliest);
    const absl::Time now = absl::Now();
    for (Connection* c : connections_) {
      if (c->shut || c->deadline > now || c->fd < 0) continue;
      // Counted first: the client may see the end before this thread runs on.
      timed_out_.fetch_add(1);
      c->shut = true;
      // libmicrohttpd's thread sees the connection end and closes it.
      ::shutdown(c->fd, SHUT_RDWR);
    }
  }
}

}  // namespace tony::httpd
