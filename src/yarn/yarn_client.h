// Copyright libtony authors.
//
// The ResourceManager as seen by a submitting client (ApplicationClientProtocol, SIMPLE auth).
// One interface, a Hadoop-RPC implementation (NewYarnClient) and room for a fake in tests.

#ifndef TONY_YARN_YARN_CLIENT_H_
#define TONY_YARN_YARN_CLIENT_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "ipc/rpc_channel.h"
#include "ipc/sasl.h"
#include "yarn/records.h"

namespace tony::yarn {

struct NewApplication {
  ApplicationId id;
  Resource max_capability;  // the largest container the scheduler grants
};

struct ApplicationFilter {
  std::vector<YarnApplicationState> states;  // empty: all
  std::vector<std::string> application_types;
  std::vector<std::string> tags;
  std::vector<std::string> users;
  std::vector<std::string> queues;
  std::string name;   // exact application name; empty: any
  int64_t limit = 0;  // 0: no limit
};

// Thread-safe.
class YarnClient {
 public:
  virtual ~YarnClient() = default;

  // Every call taking a `deadline` ends by it too (the convenience overloads: only by the
  // options' timeouts), with DeadlineExceeded naming the ResourceManager; a deadline already
  // passed asks nothing.
  virtual absl::StatusOr<NewApplication> CreateApplication(absl::Time deadline) = 0;
  absl::StatusOr<NewApplication> CreateApplication() {
    return CreateApplication(absl::InfiniteFuture());
  }
  // Submits, then waits until the RM has accepted and saved the application (state SUBMITTED or
  // later), as Hadoop's client does, so a failover right after cannot lose it. DeadlineExceeded
  // after the request went out leaves it open whether the RM has the application.
  virtual absl::Status SubmitApplication(const ApplicationSubmissionContext& context,
                                         absl::Time deadline) = 0;
  absl::Status SubmitApplication(const ApplicationSubmissionContext& context) {
    return SubmitApplication(context, absl::InfiniteFuture());
  }
  // NotFound (ApplicationNotFoundException) for unknown ids.
  virtual absl::StatusOr<ApplicationReport> GetApplicationReport(const ApplicationId& id,
                                                                 absl::Time deadline) = 0;
  absl::StatusOr<ApplicationReport> GetApplicationReport(const ApplicationId& id) {
    return GetApplicationReport(id, absl::InfiniteFuture());
  }
  // Asks the RM to kill and waits until it reports the kill complete (or the timeout).
  virtual absl::Status KillApplication(const ApplicationId& id, const std::string& diagnostics,
                                       absl::Time deadline) = 0;
  absl::Status KillApplication(const ApplicationId& id, const std::string& diagnostics) {
    return KillApplication(id, diagnostics, absl::InfiniteFuture());
  }
  virtual absl::StatusOr<std::vector<ApplicationReport>> ListApplications(
      const ApplicationFilter& filter, absl::Time deadline) = 0;
  absl::StatusOr<std::vector<ApplicationReport>> ListApplications(const ApplicationFilter& filter) {
    return ListApplications(filter, absl::InfiniteFuture());
  }
  // Nodes in the given states (empty: RUNNING only, like `yarn node -list`).
  virtual absl::StatusOr<std::vector<NodeReport>> ListNodes(const std::vector<NodeState>& states,
                                                            absl::Time deadline) = 0;
  absl::StatusOr<std::vector<NodeReport>> ListNodes(const std::vector<NodeState>& states) {
    return ListNodes(states, absl::InfiniteFuture());
  }
  // The cluster's resource types ("memory-mb", "vcores", "yarn.io/gpu", ...).
  virtual absl::StatusOr<std::vector<ResourceTypeInfo>> GetResourceTypes(absl::Time deadline) = 0;
  absl::StatusOr<std::vector<ResourceTypeInfo>> GetResourceTypes() {
    return GetResourceTypes(absl::InfiniteFuture());
  }
  // Every queue of the scheduler, parents before their children (getQueueInfo of "root",
  // recursive).
  virtual absl::StatusOr<std::vector<QueueInfo>> ListQueues(absl::Time deadline) = 0;
  absl::StatusOr<std::vector<QueueInfo>> ListQueues() { return ListQueues(absl::InfiniteFuture()); }
  // Names of the queues the calling user may submit to (getQueueUserAcls).
  virtual absl::StatusOr<std::vector<std::string>> SubmittableQueues(absl::Time deadline) = 0;
  absl::StatusOr<std::vector<std::string>> SubmittableQueues() {
    return SubmittableQueues(absl::InfiniteFuture());
  }
};

struct YarnClientOptions {
  // "host:port" of every ResourceManager's client port (yarn.resourcemanager.address, or one per
  // HA id; see yarn/rm_addresses.h). Tried in order; the client fails over on connection
  // failures and StandbyException.
  std::vector<std::string> rm_addresses;
  // The user the RM acts for (SIMPLE auth). Default: empty, meaning $USER or the process's user.
  std::string user;
  // Kerberos cluster: the RM's principal (yarn.resourcemanager.principal, "rm/_HOST@REALM");
  // the client then authenticates with SASL GSSAPI and kerberos_login's credentials.
  // Default: empty (SIMPLE auth).
  std::string kerberos_server_principal;
  // Kerberos: a keytab login of this client's own. Default: null, the process's default
  // credentials (the ticket cache, KRB5CCNAME / kinit).
  std::shared_ptr<const ipc::KerberosLogin> kerberos_login;
  // The weakest SASL protection accepted from the RM (this side's hadoop.rpc.protection).
  // Default: authentication.
  ipc::Protection min_protection = ipc::Protection::kAuthentication;
  // Default: 60 s per operation, failovers included.
  absl::Duration call_timeout = absl::Seconds(60);
  // Default: 20 s to connect to one RM.
  absl::Duration connect_timeout = absl::Seconds(20);
  // Default: 2 minutes for SubmitApplication/KillApplication to see the RM finish the change.
  absl::Duration state_change_timeout = absl::Minutes(2);
};

absl::StatusOr<std::unique_ptr<YarnClient>> NewYarnClient(const YarnClientOptions& options);

// Over any channel speaking ApplicationClientProtocol (tests, custom transports).
std::unique_ptr<YarnClient> NewYarnClientOverChannel(std::unique_ptr<ipc::RpcChannel> channel,
                                                     const YarnClientOptions& options);

// The current OS user name ($USER, else getpwuid).
std::string CurrentUserName();

inline constexpr char kApplicationClientProtocol[] =
    "org.apache.hadoop.yarn.api.ApplicationClientProtocolPB";

}  // namespace tony::yarn

#endif  // TONY_YARN_YARN_CLIENT_H_
