// Copyright libtony authors.
//
// NodeManagers as seen by an ApplicationMaster (ContainerManagementProtocol, TOKEN auth with the
// NMToken the RM issued for each node). One interface, a Hadoop-RPC implementation
// (NewNmClient) and room for a fake in AM unit tests.

#ifndef TONY_YARN_NM_CLIENT_H_
#define TONY_YARN_NM_CLIENT_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "ipc/sasl.h"
#include "yarn/nm_token_cache.h"
#include "yarn/records.h"

namespace tony::yarn {

// Thread-safe: launch many containers concurrently from several threads (one connection per
// NodeManager, calls multiplexed on it).
class NmClient {
 public:
  virtual ~NmClient() = default;

  // Starts the container the RM allocated. A per-container failure on the NodeManager comes
  // back as the mapped Java exception (class name kept, see ipc/rpc_errors.h).
  virtual absl::Status StartContainer(const Container& container,
                                      const ContainerLaunchContext& context) = 0;
  virtual absl::Status StopContainer(const ContainerId& id, const NodeId& node) = 0;
  virtual absl::StatusOr<ContainerStatus> GetContainerStatus(const ContainerId& id,
                                                             const NodeId& node) = 0;
};

struct NmClientOptions {
  // NMTokens by node, filled by AmRmClient (share the same cache). Required.
  std::shared_ptr<NmTokenCache> nm_tokens;
  // Default: 60 s per call.
  absl::Duration call_timeout = absl::Seconds(60);
  // Default: 20 s to connect to a NodeManager.
  absl::Duration connect_timeout = absl::Seconds(20);
  // Default: 30 s. A NodeManager connection unused this long is closed (one socket and reader
  // thread each; an AM talks to many nodes but mostly at launch).
  absl::Duration max_idle = absl::Seconds(30);
  // The weakest SASL protection accepted: StartContainers carries the tasks' credentials.
  // Default: authentication.
  ipc::Protection min_protection = ipc::Protection::kAuthentication;
  // The DIGEST-MD5 ciphers accepted for auth-conf (as AmRmClientOptions). Default: 3des only.
  std::vector<std::string> digest_ciphers = {"3des"};
};

absl::StatusOr<std::unique_ptr<NmClient>> NewNmClient(const NmClientOptions& options);

inline constexpr char kContainerManagementProtocol[] =
    "org.apache.hadoop.yarn.api.ContainerManagementProtocolPB";

}  // namespace tony::yarn

#endif  // TONY_YARN_NM_CLIENT_H_
