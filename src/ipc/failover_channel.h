// Copyright libtony authors.
//
// Calls one of several equivalent servers (ResourceManager HA): sticks to the current one and
// moves to the next on a connection failure or a StandbyException, round-robin, until the call's
// deadline. Mirrors Hadoop's RM failover proxy for protocols whose methods are idempotent or
// at-most-once (all of ApplicationClientProtocol and ApplicationMasterProtocol).

#ifndef TONY_IPC_FAILOVER_CHANNEL_H_
#define TONY_IPC_FAILOVER_CHANNEL_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "ipc/rpc_channel.h"

namespace tony::ipc {

struct FailoverOptions {
  // Default: 60 s, used when CallOptions.timeout is zero; covers every attempt.
  absl::Duration call_timeout = absl::Seconds(60);
  // Default: 200 ms pause after every server has been tried once, doubling up to 5 s.
  absl::Duration round_backoff = absl::Milliseconds(200);
  absl::Duration max_round_backoff = absl::Seconds(5);
  // What the servers are, for messages ("ResourceManager at localhost:8032 unreachable").
  // Default: "server".
  std::string peer = "server";
};

// Thread-safe (the wrapped channels must be too).
class FailoverChannel : public RpcChannel {
 public:
  // `names` label the channels in logs and errors (e.g. the RM ids or addresses).
  FailoverChannel(std::vector<std::unique_ptr<RpcChannel>> channels, std::vector<std::string> names,
                  FailoverOptions options = FailoverOptions());

  absl::Status Call(absl::string_view method, const google::protobuf::MessageLite& request,
                    google::protobuf::MessageLite* response, const CallOptions& options) override;

  // Index of the server calls currently go to.
  size_t current() const;

 private:
  const std::vector<std::unique_ptr<RpcChannel>> channels_;
  const std::vector<std::string> names_;
  const FailoverOptions options_;
  mutable absl::Mutex mu_;
  size_t current_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace tony::ipc

#endif  // TONY_IPC_FAILOVER_CHANNEL_H_
