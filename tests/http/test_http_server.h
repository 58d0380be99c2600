// Copyright libtony authors.
//
// A tiny HTTP/1.1 server on 127.0.0.1 for unit tests of HTTP clients: every request goes to a
// handler that returns the reply. Connections are kept alive; each runs on its own thread.
//
// Thread-safe: the handler is called from connection threads, possibly concurrently.

#ifndef TONY_TESTS_HTTP_TEST_HTTP_SERVER_H_
#define TONY_TESTS_HTTP_TEST_HTTP_SERVER_H_

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"

namespace tony::testing {

class TestHttpServer {
 public:
  struct Request {
    std::string method;
    std::string target;  // path and query, as sent
    std::string path;
    std::string query;
    std::vector<std::pair<std::string, std::string>> headers;  // names lower-cased
    std::string body;
    std::optional<std::string> Header(const std::string& lower_name) const;
    // The value of a query parameter (not decoded).
    std::optional<std::string> Param(const std::string& name) const;
  };
  struct Reply {
    int status = 200;
    std::vector<std::pair<std::string, std::string>> headers;
    std::string body;
    // Wait this long before answering (or until the server stops).
    absl::Duration delay = absl::ZeroDuration();
    // Close the connection without any answer.
    bool hang_up = false;
  };
  using Handler = std::function<Reply(const Request&)>;

  explicit TestHttpServer(Handler handler);
  ~TestHttpServer();

  int port() const { return port_; }
  std::string url() const;  // "http://127.0.0.1:<port>"
  std::vector<Request> requests() const;
  // Connections accepted so far.
  int connections() const;

 private:
  void AcceptLoop();
  void Serve(int fd);

  Handler handler_;
  int listen_fd_ = -1;
  int port_ = 0;
  absl::Notification stopping_;
  std::thread acceptor_;
  mutable absl::Mutex mu_;
  std::vector<std::thread> connections_ ABSL_GUARDED_BY(mu_);
  std::vector<int> fds_ ABSL_GUARDED_BY(mu_);
  std::vector<Request> requests_ ABSL_GUARDED_BY(mu_);
  int accepted_ ABSL_GUARDED_BY(mu_) = 0;
};

// A port on 127.0.0.1 that nothing listens on (bound, then closed).
int UnusedLoopbackPort();

}  // namespace tony::testing

#endif  // TONY_TESTS_HTTP_TEST_HTTP_SERVER_H_
