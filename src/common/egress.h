// Copyright libtony authors.
//
// The egress guard: which networks libtony's clients may open connections to.
//
// TONY_ALLOWED_NETWORKS (a comma-separated list of CIDR blocks, e.g.
// "127.0.0.0/8,::1/128,10.71.88.0/24") restricts every outgoing TCP connection libtony makes:
// Hadoop IPC, WebHDFS and the other HTTP clients, the broker's gRPC channel, the executor's AM
// locator. A destination outside the list is refused before any packet is sent, with an error
// naming the address and the list. Unset or empty: everything is allowed (the default). A malformed
// list allows nothing, so a typo never silently opens the guard.
//
// The test bed sets it (scripts/hadoop-cluster env) so that no test traffic can leave the
// machine whatever the network's state; a platform team can set it to pin a gateway's clients
// to the cluster's networks.
//
// Thread-safe (as getenv is: the host must not setenv while libtony's threads connect). The
// variable is read at each check: a check is a few comparisons beside the connect it guards.

#ifndef TONY_COMMON_EGRESS_H_
#define TONY_COMMON_EGRESS_H_

#include <netinet/in.h>
#include <sys/socket.h>

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace tony {

// A parsed list of CIDR blocks. Thread-compatible (immutable once built).
class NetworkAllowList {
 public:
  // "a.b.c.d/n" and IPv6 "x::y/n" blocks, comma-separated, spaces ignored; a block without a
  // prefix length is one host. INVALID_ARGUMENT names the first bad block.
  static absl::StatusOr<NetworkAllowList> Parse(absl::string_view spec);

  // Whether `addr` (AF_INET or AF_INET6; an IPv4-mapped IPv6 address counts as IPv4) is inside
  // one of the blocks. Other families are never allowed.
  bool Allows(const sockaddr* addr) const;

  // The list as given, for messages.
  const std::string& spec() const { return spec_; }

 private:
  struct Block {
    int family = AF_INET;
    unsigned char bytes[16] = {};
    int prefix = 0;
  };
  std::string spec_;
  std::vector<Block> blocks_;
};

// OK if the process's TONY_ALLOWED_NETWORKS allows `addr` (or is unset); PERMISSION_DENIED
// naming `peer` (what the caller wanted to reach, e.g. "the ResourceManager at rm:8032"), the
// address and the list otherwise.
absl::Status CheckEgress(const sockaddr* addr, absl::string_view peer);

// Resolves host (a name or an address) and checks every address it resolves to: the guard for
// clients whose library resolves on its own (gRPC). OK when no guard is set, without resolving.
absl::Status CheckEgressToHost(absl::string_view host, absl::string_view peer);

// The address as text ("10.0.0.1", "::1"), for messages.
std::string SockaddrToString(const sockaddr* addr);

// This machine's name (gethostname), or `fallback` when it has none.
std::string LocalHostName(absl::string_view fallback);

}  // namespace tony

#endif  // TONY_COMMON_EGRESS_H_
