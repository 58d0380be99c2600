// Copyright libtony authors.
//
// BoundedListener: a TCP listener that never holds more than a fixed number of accepted
// connections at once. The broker hands each accepted connection to gRPC (as an external
// connection, so gRPC's handshake timeout, credentials and resource quota still apply) and gRPC
// closes it when it wants. The listener keeps a duplicate of each descriptor it hands over and
// never touches gRPC's number, which gRPC may close and the kernel give to another thread's file
// at any time: the duplicate keeps the socket itself within reach. gRPC shuts a socket down
// before it closes it (and a peer that leaves closes its end), so, when at its limit, the
// listener polls its duplicates and lets go of those whose socket hung up.
//
// At the limit a new connection takes the place of the oldest one that never proved it knows
// the job's secret (the broker calls MarkTrusted() for the peer of every authenticated call):
// that one is shut down. Only when every connection is trusted is the new one refused. So a
// flood of idle or unauthenticated connections churns among itself while the tasks' own
// connections, trusted after their first call, stay.
//
// Why not gRPC's own listener: the gRPC of Debian 12 (1.51) stops accepting for good once
// accept() fails with EMFILE, so a flood that reaches the process's descriptor limit would
// silence the broker for the rest of the job.
//
// Thread-safe: Start() and Stop() from one thread; the handler runs on the listener's own
// thread, which Stop() joins.

#ifndef TONY_BROKER_BOUNDED_LISTENER_H_
#define TONY_BROKER_BOUNDED_LISTENER_H_

#include <sys/socket.h>

#include <functional>
#include <string>
#include <thread>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/unique_fd.h"

namespace tony::broker {

struct BoundedListenerOptions {
  // "host:port" or "[v6]:port"; port 0 lets the system pick. Default: every IPv4 interface.
  std::string listen_address = "0.0.0.0:0";
  // Connections held at once; each costs two descriptors (gRPC's and the listener's
  // duplicate). Default: 1024.
  int max_connections = 1024;
  // Takes ownership of an accepted, non-blocking socket. `listener_fd` is the listening socket.
  // Required.
  std::function<void(int listener_fd, int fd)> handler;
};

class BoundedListener {
 public:
  explicit BoundedListener(BoundedListenerOptions options);
  ~BoundedListener();  // Stop()s
  BoundedListener(const BoundedListener&) = delete;
  BoundedListener& operator=(const BoundedListener&) = delete;

  // Binds and listens (the port is known afterwards); connections wait in the backlog until
  // Start().
  absl::Status Bind();
  // Starts accepting on the listener's thread.
  absl::Status Start();
  // Stops accepting, closes the listening socket and joins the thread. Connections already
  // handed over stay with their owner. Idempotent.
  void Stop();

  int port() const { return port_; }
  // The connection from `peer` ("ipv4:10.0.0.1:5000", "ipv6:[::1]:5000" as gRPC names peers,
  // or "10.0.0.1:5000") made an authenticated call. Cheap; any thread.
  void MarkTrusted(absl::string_view peer);
  // Connections closed so far to stay within the limit (evicted or refused).
  int64_t shed() const;

 private:
  void Loop();
  // Lets go of connections whose socket hung up (shut down by gRPC or closed by the peer); the
  // count left.
  int Prune() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  bool Admit(int fd, const sockaddr_storage& peer) ABSL_LOCKS_EXCLUDED(mu_);
  // Makes room for one more connection; false when every connection is trusted.
  bool MakeRoom() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Closes the duplicate `own` (the socket stays gRPC's) and forgets the connection.
  void Forget(int own) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  struct Connection {
    UniqueFd own;          // our duplicate of the descriptor handed to gRPC
    std::string peer;      // "address:port"
    int64_t sequence = 0;  // order of acceptance
    bool trusted = false;
  };

  const BoundedListenerOptions options_;
  UniqueFd listen_fd_;
  UniqueFd wake_fd_;  // eventfd that ends Loop()
  int port_ = 0;
  std::thread thread_;
  mutable absl::Mutex mu_;
  absl::flat_hash_map<int, Connection> live_ ABSL_GUARDED_BY(mu_);  // by our duplicate
  absl::flat_hash_map<std::string, int> by_peer_ ABSL_GUARDED_BY(mu_);
  int64_t accepted_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t shed_ ABSL_GUARDED_BY(mu_) = 0;
  absl::Time last_warning_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
};

}  // namespace tony::broker

#endif  // TONY_BROKER_BOUNDED_LISTENER_H_
