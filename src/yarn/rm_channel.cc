// Copyright libtony authors.

#include "yarn/rm_channel.h"

#include "absl/status/status.h"
#include "common/status_macros.h"
#include "ipc/failover_channel.h"

namespace tony::yarn {

absl::StatusOr<RmChannel> NewRmChannel(const std::vector<std::string>& addresses,
                                       const std::string& protocol, const ipc::ClientAuth& auth,
                                       absl::Duration call_timeout,
                                       absl::Duration connect_timeout) {
  if (addresses.empty()) {
    return absl::InvalidArgumentError("no ResourceManager address given");
  }
  RmChannel out;
  std::vector<std::unique_ptr<ipc::RpcChannel>> channels;
  for (const std::string& address : addresses) {
    ipc::RpcClientOptions o;
    o.address = address;
    o.protocol = protocol;
    o.auth = auth;
    o.call_timeout = call_timeout;
    o.connect_timeout = connect_timeout;
    // With several RMs, a refused connection means "try the next one" at once.
    o.max_connect_attempts = addresses.size() > 1 ? 1 : 3;
    TONY_ASSIGN_OR_RETURN(std::unique_ptr<ipc::RpcClient> client, ipc::RpcClient::Create(o));
    out.clients.push_back(client.get());
    channels.push_back(std::move(client));
  }
  ipc::FailoverOptions fo;
  fo.call_timeout = call_timeout;
  fo.peer = "ResourceManager";
  out.channel = std::make_unique<ipc::FailoverChannel>(std::move(channels), addresses, fo);
  return out;
}

}  // namespace tony::yarn
