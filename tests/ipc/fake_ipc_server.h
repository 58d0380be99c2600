// Copyright libtony authors.
//
// An in-process Hadoop IPC server (SIMPLE auth only) for RpcClient tests: it speaks the real
// framing and lets each test decide, per call, to answer, fail, stall, or drop the connection.

#ifndef TONY_TESTS_IPC_FAKE_IPC_SERVER_H_
#define TONY_TESTS_IPC_FAKE_IPC_SERVER_H_

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace tony::ipc::testing {

// Reads exactly `n` bytes from the socket `fd`; false at EOF or on an error.
bool ReadFull(int fd, char* buf, size_t n);

struct ServerCall {
  int connection = 0;  // 0-based index of the accepted connection
  int32_t call_id = 0;
  int32_t retry_count = 0;
  std::string client_id;
  std::string method;
  std::string protocol;
  std::string request;  // serialized request message
};

struct Reply {
  enum Kind { kSuccess, kError, kFatal, kClose, kNone };
  Kind kind = kSuccess;
  std::string response;  // serialized response message (kSuccess)
  std::string exception_class;
  std::string error_message;
  absl::Duration delay = absl::ZeroDuration();  // answer later, from another thread
};

// Thread-safe. Threads are joined by the destructor.
class FakeIpcServer {
 public:
  using Handler = std::function<Reply(const ServerCall&)>;

  explicit FakeIpcServer(Handler handler);
  ~FakeIpcServer();

  std::string address() const;  // "127.0.0.1:port"
  int connections() const;
  int pings() const;
  std::string last_user() const;
  std::string last_context_protocol() const;
  // Drops every open connection (as a restarting server would).
  void DropConnections();

  // What a test waits for instead of sleeping.
  struct Counts {
    int calls = 0;            // calls handed to the handler
    int closed = 0;           // connections the client closed (EOF)
    int delayed_replies = 0;  // Reply::delay answers written
  };
  // Waits until `done` holds for the counts (true) or `timeout` passes (false).
  bool WaitFor(const std::function<bool(const Counts&)>& done,
               absl::Duration timeout = absl::Seconds(10));

 private:
  void AcceptLoop();
  void Serve(int fd, int index);
  void Write(int fd, const std::string& frame);

  Handler handler_;
  int listen_fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stopping_{false};
  std::thread acceptor_;
  mutable absl::Mutex mu_;
  std::vector<std::thread> threads_ ABSL_GUARDED_BY(mu_);
  std::vector<int> fds_ ABSL_GUARDED_BY(mu_);
  int connections_ ABSL_GUARDED_BY(mu_) = 0;
  int pings_ ABSL_GUARDED_BY(mu_) = 0;
  Counts counts_ ABSL_GUARDED_BY(mu_);
  std::string last_user_ ABSL_GUARDED_BY(mu_);
  std::string last_protocol_ ABSL_GUARDED_BY(mu_);
  absl::Mutex write_mu_;
};

}  // namespace tony::ipc::testing

#endif  // TONY_TESTS_IPC_FAKE_IPC_SERVER_H_
