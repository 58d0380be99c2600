// Copyright libtony authors.
//
// A channel to the ResourceManager(s) for one protocol: one RpcClient per address, behind a
// FailoverChannel. Internal to the yarn clients.
//
// Thread-safety: the channel is thread-safe.

#ifndef TONY_YARN_RM_CHANNEL_H_
#define TONY_YARN_RM_CHANNEL_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "ipc/rpc_channel.h"
#include "ipc/rpc_client.h"
#include "ipc/sasl.h"

namespace tony::yarn {

struct RmChannel {
  std::unique_ptr<ipc::RpcChannel> channel;
  // The per-address clients inside `channel` (owned by it), e.g. to roll a token.
  std::vector<ipc::RpcClient*> clients;
};

absl::StatusOr<RmChannel> NewRmChannel(const std::vector<std::string>& addresses,
                                       const std::string& protocol, const ipc::ClientAuth& auth,
                                       absl::Duration call_timeout, absl::Duration connect_timeout);

}  // namespace tony::yarn

#endif  // TONY_YARN_RM_CHANNEL_H_
