// Copyright libtony authors.

#include "conf/hadoop_addresses.h"

#include <algorithm>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "common/status_macros.h"

namespace tony::conf {
namespace {

constexpr int kRmPort = 8032;
constexpr int kRmSchedulerPort = 8030;
constexpr int kRmWebPort = 8088;
constexpr int kRmWebHttpsPort = 8090;
constexpr int kNameNodeHttpPort = 9870;
constexpr int kNameNodeHttpsPort = 9871;
constexpr int kNodeManagerWebPort = 8042;

absl::StatusOr<bool> YarnHttpsOnly(const Configuration& conf) {
  TONY_ASSIGN_OR_RETURN(std::string policy, conf.Get("yarn.http.policy", "HTTP_ONLY"));
  return absl::EqualsIgnoreCase(policy, "HTTPS_ONLY");
}

// One address per RM for a service `key` (e.g. yarn.resourcemanager.address). Under HA the
// per-id key wins, then yarn.resourcemanager.hostname.<id> with the service's default port,
// as Hadoop's HAUtil does.
absl::StatusOr<std::vector<HostPort>> RmServiceAddresses(const Configuration& conf,
                                                         absl::string_view key, int default_port) {
  TONY_ASSIGN_OR_RETURN(std::vector<std::string> ids, RmHaIds(conf));
  std::vector<HostPort> out;
  if (ids.empty()) {
    TONY_ASSIGN_OR_RETURN(std::string address, conf.Get(key));
    TONY_ASSIGN_OR_RETURN(HostPort hp, ParseHostPort(address, default_port, key));
    out.push_back(std::move(hp));
    return out;
  }
  for (const std::string& id : ids) {
    std::string id_key = absl::StrCat(key, ".", id);
    std::string host_key = absl::StrCat("yarn.resourcemanager.hostname.", id);
    if (conf.IsSet(id_key)) {
      TONY_ASSIGN_OR_RETURN(std::string address, conf.Get(id_key));
      TONY_ASSIGN_OR_RETURN(HostPort hp, ParseHostPort(address, default_port, id_key));
      out.push_back(std::move(hp));
    } else if (conf.IsSet(host_key)) {
      TONY_ASSIGN_OR_RETURN(std::string host, conf.Get(host_key));
      if (host.empty()) return absl::InvalidArgumentError(absl::StrCat(host_key, " is empty"));
      out.push_back(HostPort{host, default_port});
    } else {
      return absl::InvalidArgumentError(
          absl::StrCat("ResourceManager HA is enabled but neither ", id_key, " nor ", host_key,
                       " is set (yarn.resourcemanager.ha.rm-ids lists '", id, "')"));
    }
  }
  return out;
}

bool IsHostWildcard(absl::string_view host) {
  return host == "0.0.0.0" || host == "::" || host == "[::]" || host == "::0";
}

}  // namespace

std::string HostPort::ToString() const {
  if (absl::StrContains(host, ':') && !absl::StartsWith(host, "[")) {
    return absl::StrCat("[", host, "]:", port);
  }
  return absl::StrCat(host, ":", port);
}

bool HostPort::IsWildcard() const { return IsHostWildcard(host); }

absl::StatusOr<HostPort> ParseHostPort(absl::string_view address, int default_port,
                                       absl::string_view what) {
  absl::string_view a = absl::StripAsciiWhitespace(address);
  // Hadoop's NetUtils also accepts a URI such as hdfs://host:port.
  if (size_t scheme = a.find("://"); scheme != absl::string_view::npos) {
    a.remove_prefix(scheme + 3);
    if (size_t slash = a.find('/'); slash != absl::string_view::npos) a = a.substr(0, slash);
  }
  auto bad = [&](absl::string_view why) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": '", address, "' is not a valid host:port (", why, ")"));
  };
  if (a.empty()) return bad("empty");
  HostPort hp;
  absl::string_view port;
  if (a.front() == '[') {
    size_t close = a.find(']');
    if (close == absl::string_view::npos) return bad("unclosed '['");
    hp.host = std::string(a.substr(1, close - 1));
    absl::string_view rest = a.substr(close + 1);
    if (!rest.empty()) {
      if (rest.front() != ':') return bad("junk after ']'");
      port = rest.substr(1);
      if (port.empty()) return bad("empty port");
    }
  } else {
    size_t colon = a.rfind(':');
    if (colon != absl::string_view::npos && a.find(':') == colon) {
      hp.host = std::string(a.substr(0, colon));
      port = a.substr(colon + 1);
      if (port.empty()) return bad("empty port");
    } else {
      hp.host = std::string(a);  // no port, or a bare IPv6 address
    }
  }
  if (hp.host.empty()) return bad("empty host");
  if (port.empty()) {
    if (default_port <= 0) return bad("no port");
    hp.port = default_port;
  } else if (!absl::SimpleAtoi(port, &hp.port) || hp.port <= 0 || hp.port > 65535) {
    return bad("bad port");
  }
  return hp;
}

absl::StatusOr<FsUri> ParseFsUri(absl::string_view uri) {
  FsUri out;
  absl::string_view rest = absl::StripAsciiWhitespace(uri);
  size_t colon = rest.find(':');
  size_t slash = rest.find('/');
  if (colon != absl::string_view::npos && (slash == absl::string_view::npos || colon < slash)) {
    out.scheme = absl::AsciiStrToLower(rest.substr(0, colon));
    rest.remove_prefix(colon + 1);
    if (out.scheme.empty()) {
      return absl::InvalidArgumentError(absl::StrCat("'", uri, "': empty URI scheme"));
    }
    if (absl::ConsumePrefix(&rest, "//")) {
      size_t end = rest.find('/');
      out.authority = std::string(rest.substr(0, end));
      rest = end == absl::string_view::npos ? absl::string_view() : rest.substr(end);
    }
  }
  out.path = std::string(rest);
  if (!out.path.empty() && out.path.front() != '/') {
    return absl::InvalidArgumentError(
        absl::StrCat("'", uri, "': the path must be absolute (start with '/')"));
  }
  return out;
}

absl::StatusOr<std::vector<std::string>> RmHaIds(const Configuration& conf) {
  TONY_ASSIGN_OR_RETURN(bool ha, conf.GetBool("yarn.resourcemanager.ha.enabled", false));
  if (!ha) return std::vector<std::string>();
  TONY_ASSIGN_OR_RETURN(std::vector<std::string> ids,
                        conf.GetStrings("yarn.resourcemanager.ha.rm-ids"));
  if (ids.empty()) {
    return absl::InvalidArgumentError(
        "yarn.resourcemanager.ha.enabled is true but yarn.resourcemanager.ha.rm-ids is empty");
  }
  return ids;
}

absl::StatusOr<std::vector<HostPort>> RmAddresses(const Configuration& conf) {
  return RmServiceAddresses(conf, "yarn.resourcemanager.address", kRmPort);
}

absl::StatusOr<std::vector<HostPort>> RmSchedulerAddresses(const Configuration& conf) {
  return RmServiceAddresses(conf, "yarn.resourcemanager.scheduler.address", kRmSchedulerPort);
}

absl::StatusOr<HostPort> RmSchedulerAddress(const Configuration& conf) {
  TONY_ASSIGN_OR_RETURN(std::vector<HostPort> all, RmSchedulerAddresses(conf));
  return all.front();
}

absl::StatusOr<std::vector<HostPort>> RmWebAddresses(const Configuration& conf) {
  TONY_ASSIGN_OR_RETURN(bool https, YarnHttpsOnly(conf));
  if (https) {
    return RmServiceAddresses(conf, "yarn.resourcemanager.webapp.https.address", kRmWebHttpsPort);
  }
  return RmServiceAddresses(conf, "yarn.resourcemanager.webapp.address", kRmWebPort);
}

absl::StatusOr<std::vector<std::string>> RmWebUrls(const Configuration& conf) {
  TONY_ASSIGN_OR_RETURN(bool https, YarnHttpsOnly(conf));
  TONY_ASSIGN_OR_RETURN(std::vector<HostPort> addresses, RmWebAddresses(conf));
  std::vector<std::string> urls;
  for (const HostPort& hp : addresses) {
    urls.push_back(absl::StrCat(https ? "https://" : "http://", hp.ToString()));
  }
  return urls;
}

absl::StatusOr<std::vector<std::string>> WebProxyUrls(const Configuration& conf) {
  TONY_ASSIGN_OR_RETURN(std::string proxy, conf.Get("yarn.web-proxy.address", ""));
  if (proxy.empty()) return RmWebUrls(conf);
  TONY_ASSIGN_OR_RETURN(bool https, YarnHttpsOnly(conf));
  TONY_ASSIGN_OR_RETURN(HostPort hp, ParseHostPort(proxy, 0, "yarn.web-proxy.address"));
  return std::vector<std::string>{absl::StrCat(https ? "https://" : "http://", hp.ToString())};
}

absl::StatusOr<std::string> DefaultFs(const Configuration& conf) {
  return conf.Get("fs.defaultFS", "file:///");
}

absl::StatusOr<std::string> NameNodeWebScheme(const Configuration& conf) {
  TONY_ASSIGN_OR_RETURN(std::string policy, conf.Get("dfs.http.policy", "HTTP_ONLY"));
  return absl::EqualsIgnoreCase(policy, "HTTPS_ONLY") ? "https" : "http";
}

absl::StatusOr<std::vector<HostPort>> NameNodeWebAddresses(const Configuration& conf) {
  TONY_ASSIGN_OR_RETURN(std::string scheme, NameNodeWebScheme(conf));
  const bool https = scheme == "https";
  const std::string key = https ? "dfs.namenode.https-address" : "dfs.namenode.http-address";
  const int port = https ? kNameNodeHttpsPort : kNameNodeHttpPort;

  TONY_ASSIGN_OR_RETURN(std::string fs, DefaultFs(conf));
  TONY_ASSIGN_OR_RETURN(FsUri fs_uri, ParseFsUri(fs));
  std::string fs_host;
  if (fs_uri.scheme == "hdfs" && !fs_uri.authority.empty()) {
    auto hp = ParseHostPort(fs_uri.authority, 8020, "fs.defaultFS");
    if (hp.ok()) fs_host = hp->host;
  }
  TONY_ASSIGN_OR_RETURN(std::vector<std::string> nameservices, conf.GetStrings("dfs.nameservices"));
  std::vector<HostPort> out;
  if (!fs_host.empty() &&
      std::find(nameservices.begin(), nameservices.end(), fs_host) != nameservices.end()) {
    const std::string& ns = fs_host;
    TONY_ASSIGN_OR_RETURN(std::vector<std::string> nn_ids,
                          conf.GetStrings(absl::StrCat("dfs.ha.namenodes.", ns)));
    for (const std::string& nn : nn_ids) {
      std::string nn_key = absl::StrCat(key, ".", ns, ".", nn);
      if (!conf.IsSet(nn_key)) {
        return absl::InvalidArgumentError(absl::StrCat(
            "HDFS nameservice '", ns, "' lists NameNode '", nn, "' but ", nn_key, " is not set"));
      }
      TONY_ASSIGN_OR_RETURN(std::string address, conf.Get(nn_key));
      TONY_ASSIGN_OR_RETURN(HostPort hp, ParseHostPort(address, port, nn_key));
      if (hp.IsWildcard()) {
        std::string rpc_key = absl::StrCat("dfs.namenode.rpc-address.", ns, ".", nn);
        TONY_ASSIGN_OR_RETURN(std::string rpc, conf.Get(rpc_key, ""));
        if (auto rpc_hp = ParseHostPort(rpc, 8020, rpc_key); rpc_hp.ok()) hp.host = rpc_hp->host;
      }
      out.push_back(std::move(hp));
    }
    if (!out.empty()) return out;
    std::string ns_key = absl::StrCat(key, ".", ns);
    TONY_ASSIGN_OR_RETURN(std::string address,
                          conf.IsSet(ns_key) ? conf.Get(ns_key) : conf.Get(key));
    TONY_ASSIGN_OR_RETURN(HostPort hp, ParseHostPort(address, port, key));
    out.push_back(std::move(hp));
    return out;
  }
  TONY_ASSIGN_OR_RETURN(std::string address, conf.Get(key));
  TONY_ASSIGN_OR_RETURN(HostPort hp, ParseHostPort(address, port, key));
  // Like Hadoop's DFSUtil: a NameNode web server bound to the wildcard is reached at the
  // NameNode's RPC host.
  if (hp.IsWildcard() && !fs_host.empty()) hp.host = fs_host;
  out.push_back(std::move(hp));
  return out;
}

absl::StatusOr<HostPort> NameNodeWebAddress(const Configuration& conf) {
  TONY_ASSIGN_OR_RETURN(std::vector<HostPort> all, NameNodeWebAddresses(conf));
  return all.front();
}

absl::StatusOr<HostPort> NodeManagerWebAddress(const Configuration& conf) {
  TONY_ASSIGN_OR_RETURN(std::string address, conf.Get("yarn.nodemanager.webapp.address"));
  return ParseHostPort(address, kNodeManagerWebPort, "yarn.nodemanager.webapp.address");
}

}  // namespace tony::conf
