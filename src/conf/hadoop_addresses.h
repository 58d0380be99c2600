// Copyright libtony authors.
//
// Where the Hadoop services are, derived from a Configuration the way Hadoop's clients derive
// it: Hadoop's defaults for unset keys, ResourceManager HA (yarn.resourcemanager.ha.enabled,
// yarn.resourcemanager.ha.rm-ids and the per-id keys `<key>.<id>` or
// `yarn.resourcemanager.hostname.<id>`), yarn.http.policy / dfs.http.policy HTTPS_ONLY, and
// HDFS nameservices (dfs.nameservices, dfs.ha.namenodes.<ns>,
// dfs.namenode.http-address.<ns>[.<nn>]).
//
// Thread-safety: free functions over a const Configuration; safe to call concurrently.

#ifndef TONY_CONF_HADOOP_ADDRESSES_H_
#define TONY_CONF_HADOOP_ADDRESSES_H_

#include <string>
#include <vector>
#include "absl/strings/string_view.h"

#include "absl/status/statusor.h"
#include "conf/configuration.h"

namespace tony::conf {

struct HostPort {
  std::string host;
  int port = 0;

  // "host:port", with brackets around an IPv6 host.
  std::string ToString() const;
  // 0.0.0.0 or ::, which a server binds to but a client cannot usefully name.
  bool IsWildcard() const;
  bool operator==(const HostPort& other) const { return host == other.host && port == other.port; }
};

// Parses "host:port", "[v6]:port", or "host" (then `default_port`; 0 means a port is required).
// `what` names the setting in error messages.
absl::StatusOr<HostPort> ParseHostPort(absl::string_view address, int default_port,
                                       absl::string_view what = "address");

// A file system URI such as hdfs://nn:8020/path, hdfs://nameservice/path or file:///x.
struct FsUri {
  std::string scheme;     // lower case; empty for a plain path
  std::string authority;  // host[:port] or a nameservice; may be empty
  std::string path;       // starts with '/' (or is empty)
};
absl::StatusOr<FsUri> ParseFsUri(absl::string_view uri);

// ResourceManager HA ids; empty when HA is off.
absl::StatusOr<std::vector<std::string>> RmHaIds(const Configuration& conf);

// yarn.resourcemanager.address (ApplicationClientProtocol), one per RM.
absl::StatusOr<std::vector<HostPort>> RmAddresses(const Configuration& conf);
// yarn.resourcemanager.scheduler.address (ApplicationMasterProtocol), one per RM.
absl::StatusOr<std::vector<HostPort>> RmSchedulerAddresses(const Configuration& conf);
// The first of RmSchedulerAddresses().
absl::StatusOr<HostPort> RmSchedulerAddress(const Configuration& conf);
// The RM web (REST) addresses: webapp.address, or webapp.https.address under HTTPS_ONLY.
absl::StatusOr<std::vector<HostPort>> RmWebAddresses(const Configuration& conf);
// As RmWebAddresses, as base URLs: "http://host:port".
absl::StatusOr<std::vector<std::string>> RmWebUrls(const Configuration& conf);

// YARN's web proxy, as base URLs: yarn.web-proxy.address when a separate proxy runs, else the
// RMs' web URLs (the RM runs the proxy). The peers an AM's web page should answer.
absl::StatusOr<std::vector<std::string>> WebProxyUrls(const Configuration& conf);

// fs.defaultFS (Hadoop's default: file:///).
absl::StatusOr<std::string> DefaultFs(const Configuration& conf);

// The NameNode web (WebHDFS) addresses for the default file system: one, or one per NameNode of
// an HA nameservice. A wildcard host is replaced by the NameNode's RPC host when known.
absl::StatusOr<std::vector<HostPort>> NameNodeWebAddresses(const Configuration& conf);
// The first of NameNodeWebAddresses().
absl::StatusOr<HostPort> NameNodeWebAddress(const Configuration& conf);
// "http" or "https", following dfs.http.policy.
absl::StatusOr<std::string> NameNodeWebScheme(const Configuration& conf);

// yarn.nodemanager.webapp.address of this configuration's NodeManager.
absl::StatusOr<HostPort> NodeManagerWebAddress(const Configuration& conf);

}  // namespace tony::conf

#endif  // TONY_CONF_HADOOP_ADDRESSES_H_
