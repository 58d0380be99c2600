// Copyright libtony authors.
//
// The ResourceManager as seen by an ApplicationMaster (ApplicationMasterProtocol on the
// scheduler port, TOKEN auth with the AMRMToken). One interface, a Hadoop-RPC implementation
// (NewAmRmClient) and room for a fake in AM unit tests.
//
// Container requests are kept as a table of outstanding counts: each AddContainerRequest gets
// its own allocation request id, sent as the total still wanted (YARN's asks are totals, not
// increments) and only when it changed. Allocated containers carry that id back; the client
// decrements the count and releases containers nobody is waiting for any more, so asking for N
// yields N.

#ifndef TONY_YARN_AM_RM_CLIENT_H_
#define TONY_YARN_AM_RM_CLIENT_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "ipc/rpc_channel.h"
#include "ipc/sasl.h"
#include "ipc/token.h"
#include "yarn/nm_token_cache.h"
#include "yarn/records.h"

namespace tony::yarn {

struct RegisterResult {
  Resource max_capability;  // the largest container the scheduler grants
  std::string queue;
  std::vector<Container> containers_from_previous_attempts;
  std::vector<ResourceTypeInfo> resource_types;
};

enum class AmCommand {
  kNone,
  kResync,    // the RM lost track of this attempt; the client re-registered and resent its asks
  kShutdown,  // the RM wants this AM gone: stop and exit
};

struct AllocateResult {
  std::vector<Container> allocated;
  std::vector<ContainerStatus> completed;  // exit codes in ContainerStatus::exit_status
  std::vector<NodeReport> updated_nodes;
  Resource headroom;
  int32_t num_cluster_nodes = 0;
  AmCommand command = AmCommand::kNone;
  // Requests the scheduler gave up placing (anti-affinity it cannot meet): their ids and why.
  // They are withdrawn; nothing comes for them.
  std::vector<std::pair<int64_t, std::string>> rejected;
  // Containers the scheduler is about to preempt (repeated in each answer until taken).
  PreemptionNotice preemption;
};

// Thread-safe. Allocate/Register/Unregister exchanges are serialized; requests and releases may
// be added from any thread and go out with the next Allocate.
class AmRmClient {
 public:
  virtual ~AmRmClient() = default;

  virtual absl::StatusOr<RegisterResult> Register(const std::string& host, int32_t rpc_port,
                                                  const std::string& tracking_url) = 0;

  // Adds request.count containers; returns the allocation request id that allocated containers
  // will carry (Container::allocation_request_id).
  virtual int64_t AddContainerRequest(const ContainerRequest& request) = 0;
  // Withdraws up to `count` containers of a request that are still outstanding.
  virtual void RemoveContainerRequest(int64_t request_id, int32_t count) = 0;
  // Containers of a request not yet allocated.
  virtual int32_t Outstanding(int64_t request_id) const = 0;
  // Gives an allocated container back (it completes with exit status -100 if it never ran).
  virtual void ReleaseContainer(const ContainerId& id) = 0;

  // Keeps the job's containers off these hosts (YARN's blacklist: ResourceBlacklistRequest's
  // additions, sent with the next Allocate and again after a resync). Hosts already added are
  // ignored.
  virtual void AddToBlacklist(const std::vector<std::string>& hosts) = 0;
  // Lets the job's containers use these hosts again (the blacklist's removals, sent with the
  // next Allocate; an addition not sent yet is simply dropped). Hosts not on the list are
  // ignored.
  virtual void RemoveFromBlacklist(const std::vector<std::string>& hosts) = 0;

  // One heartbeat: sends changed asks and releases, returns what the RM has for us. Call it
  // regularly (containers are assigned on NodeManager heartbeats). Handles AM_RESYNC itself.
  virtual absl::StatusOr<AllocateResult> Allocate(float progress) = 0;

  // Changes the tracking URL registered with the RM; it goes out with the next Allocate (the
  // RM takes it from AllocateRequestProto.tracking_url since Hadoop 3.3).
  virtual void UpdateTrackingUrl(const std::string& url) = 0;

  // finishApplicationMaster, repeated until the RM says the AM is unregistered.
  virtual absl::Status Unregister(FinalApplicationStatus status, const std::string& diagnostics,
                                  const std::string& tracking_url) = 0;
  // The same without a final tracking URL.
  absl::Status Unregister(FinalApplicationStatus status, const std::string& diagnostics) {
    return Unregister(status, diagnostics, "");
  }
};

struct AmRmClientOptions {
  // "host:port" of every RM's scheduler port (yarn.resourcemanager.scheduler.address[.<id>]).
  std::vector<std::string> scheduler_addresses;
  // The AMRMToken from the AM container's token file (kind YARN_AM_RM_TOKEN).
  ipc::Token am_rm_token;
  // Where NMTokens from the RM go; share it with NmClient. Default: null, meaning a private
  // cache (rarely useful: the NmClient then has no tokens).
  std::shared_ptr<NmTokenCache> nm_tokens;
  // Default: 60 s per exchange, failovers included.
  absl::Duration call_timeout = absl::Seconds(60);
  // Default: 20 s to connect to one RM.
  absl::Duration connect_timeout = absl::Seconds(20);
  // The weakest SASL protection accepted (the client's hadoop.rpc.protection, passed on by the
  // submitter). Default: authentication.
  ipc::Protection min_protection = ipc::Protection::kAuthentication;
  // The DIGEST-MD5 ciphers accepted for auth-conf (ipc::ParseDigestCiphers of
  // tony.rpc.digest-md5.ciphers: 3des, optionally rc4; never weaker). Default: 3des only.
  std::vector<std::string> digest_ciphers = {"3des"};
  // Default: 60 s for Unregister to see the RM confirm.
  absl::Duration unregister_timeout = absl::Seconds(60);
};

absl::StatusOr<std::unique_ptr<AmRmClient>> NewAmRmClient(const AmRmClientOptions& options);

// Over any channel speaking ApplicationMasterProtocol (unit tests, custom transports). A rolled
// AMRMToken is handed to `token_rolled` (may be empty); options' addresses are unused.
std::unique_ptr<AmRmClient> NewAmRmClientOverChannel(
    std::unique_ptr<ipc::RpcChannel> channel, const AmRmClientOptions& options,
    std::function<void(const ipc::Token&)> token_rolled = nullptr);

inline constexpr char kApplicationMasterProtocol[] =
    "org.apache.hadoop.yarn.api.ApplicationMasterProtocolPB";

}  // namespace tony::yarn

#endif  // TONY_YARN_AM_RM_CLIENT_H_
