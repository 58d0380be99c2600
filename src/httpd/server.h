// Copyright libtony authors.
//
// httpd::Server: the HTTP server under the AM's status page and the history server, on GNU
// libmicrohttpd (a thread accepting, a thread per connection, at most max_connections of them).
// It is the one place libmicrohttpd is used. Every limit a page needs is here and tested:
//
//   - header size: a request whose line and headers exceed max_header_bytes gets 431;
//   - body size: the pages take none; a body beyond max_body_bytes gets 413 unread, any method
//     but GET and HEAD 405;
//   - connections: beyond max_connections a connection is closed as it is accepted (shed());
//     with allowed_peers set, other peers together hold at most max_other_connections, so
//     they cannot take the slots of the peers the page is for (YARN's proxy);
//   - time: a client gets request_timeout to send its request and again to take the answer
//     (plus its size at min_answer_rate); past either its connection is shut (libmicrohttpd's own
//     timeout restarts with every byte, so a client sending one byte a second would hold a thread
//     for hours). The handler's own time is not counted: a history page reading a large log from
//     HDFS is not cut.
//
// Every answer closes its connection (pages are few and small; a kept-alive connection would
// hold a thread). With allowed_peers set (the AM on YARN: Hadoop's AmIpFilter rule), a peer
// outside it is redirected to redirect_url (403 without one) and its request never reaches the
// handler.
//
//   httpd::Server server(options, [](const httpd::Request& r) {
//     return httpd::Reply{.body = "hello " + r.path};
//   });
//   TONY_RETURN_IF_ERROR(server.Start());
//   ... server.port() ...
//   server.Stop();
//
// Thread-safe once started: the handler is called on connection threads, several at once, and
// the counters may be read from any thread. Start() and Stop() are called from one thread (the
// owner's): Start() launches libmicrohttpd's threads and a deadline thread; Stop() (or the
// destructor) shuts every connection, waits for handlers running and joins them all.

#ifndef TONY_HTTPD_SERVER_H_
#define TONY_HTTPD_SERVER_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

struct MHD_Daemon;
struct sockaddr;
struct MHD_Connection;

namespace tony::httpd {

struct ServerOptions {
  // Where to listen (an IPv4 address). Default: loopback only, a port the system picks.
  std::string listen_host = "127.0.0.1";
  int port = 0;
  // How long a client may take to send its request, and again to take the answer. Default: 2 s.
  absl::Duration request_timeout = absl::Seconds(2);
  // The answer's time grows by its size at this rate (a large page over a slow link is not a
  // stalled client). Default: 64 KiB/s.
  int64_t min_answer_rate = 64 << 10;
  // The peers (IP addresses, e.g. YARN's web proxy's) allowed a page; anyone else is redirected
  // to `redirect_url` (403 without one). Default: empty (anyone).
  std::vector<std::string> allowed_peers;
  std::string redirect_url;
  // Connections open at once (each has a thread while open). Default: 16.
  int max_connections = 16;
  // Of those, how many peers outside a non-empty allowed_peers may hold together (they only
  // get the redirect). Default: 4.
  int max_other_connections = 4;
  // The request line and headers. Default: 16 KiB (no browser sends that much to us).
  size_t max_header_bytes = 16 << 10;
  // A request's body. Default: 0 (GET and HEAD only; a Content-Length: 0 is fine).
  size_t max_body_bytes = 0;
};

struct Request {
  std::string method;         // "GET" or "HEAD"
  std::string target;         // as sent, path and query: "/jobs?state=FAILED" (no fragment)
  std::string path;           // the target up to '?'
  std::string peer;           // the client's IP address
  std::string host;           // the Host header ("name:port"), "" without one
  std::string authorization;  // the Authorization header, "" without one
  std::string cookie;         // the Cookie header, "" without one
};

// The value of cookie `name` in a Cookie header ("a=1; proxy-user=alice"), %XX and '+'
// decoded as a form value; "" when absent.
std::string CookieValue(absl::string_view cookie_header, absl::string_view name);

struct Reply {
  int code = 200;
  std::string content_type = "text/html; charset=utf-8";
  std::string body;
  std::string location;          // sent as Location (3xx)
  std::string www_authenticate;  // sent as WWW-Authenticate (401, or a final SPNEGO token)
};

// Whether `peer` (an IPv4 or IPv6 address in text form, or an IPv4-mapped IPv6 one) is one of
// `allowed` (empty: anyone).
bool PeerAllowed(absl::string_view peer, const std::vector<std::string>& allowed);

// The target as a handler sees it: without a fragment, "/" unless it starts with '/'.
std::string NormalizeTarget(absl::string_view raw);

class Server {
 public:
  using Handler = std::function<Reply(const Request&)>;

  Server(ServerOptions options, Handler handler);
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Listens and serves. InvalidArgument for a listen_host that is not an IPv4 address,
  // Unavailable when the address cannot be bound, FailedPrecondition when started already.
  absl::Status Start();
  // Idempotent.
  void Stop();
  int port() const { return port_; }

  // Connections closed unanswered at accept (max_connections open), peers redirected or
  // refused, and connections shut at their deadline.
  int64_t shed() const { return shed_.load(); }
  int64_t refused() const { return refused_.load(); }
  int64_t timed_out() const { return timed_out_.load(); }

 private:
  struct Connection;

  // libmicrohttpd's callbacks (static trampolines in server.cc call these).
  bool Admit(const sockaddr* addr);
  void Opened(MHD_Connection* c, void** socket_context);
  void Closed(void** socket_context);
  void* Began(const char* uri);
  void Completed(void** request_context);
  int Answer(MHD_Connection* c, const char* method, size_t* upload_size, void** request_context);

  // A connection's deadline: `deadline` from now, or none while its handler runs.
  void SetDeadline(MHD_Connection* c, absl::Time deadline);
  void Watch();

  const ServerOptions options_;
  const Handler handler_;
  MHD_Daemon* daemon_ = nullptr;
  int port_ = 0;
  std::atomic<int> open_{0};
  std::atomic<int> open_others_{0};  // of open_, from peers outside allowed_peers
  std::atomic<int64_t> shed_{0};
  std::atomic<int64_t> refused_{0};
  std::atomic<int64_t> timed_out_{0};

  absl::Mutex mu_;
  std::set<Connection*> connections_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  int64_t changes_ ABSL_GUARDED_BY(mu_) = 0;  // wakes the deadline thread
  std::thread watcher_;
};

}  // namespace tony::httpd

#endif  // TONY_HTTPD_SERVER_H_
