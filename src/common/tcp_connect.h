// Copyright libtony authors.
//
// A TCP connection to host:port by a deadline, through the egress guard (common/egress.h): the
// small HTTP probes of the executor and the AM (AM locator, NodeManager GPU query, TensorBoard
// probe). Hadoop IPC has its own in ipc/socket.cc (its errors feed the RPC retry policy).
//
// Thread-safe: no shared state.

#ifndef TONY_COMMON_TCP_CONNECT_H_
#define TONY_COMMON_TCP_CONNECT_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/unique_fd.h"

namespace tony {

// Resolves `host` and connects to the first address that answers by `deadline`; the descriptor is
// non-blocking and close-on-exec. UNAVAILABLE if no address answers or the name does not resolve,
// PERMISSION_DENIED if the egress guard refuses an address (nothing is sent anywhere then).
absl::StatusOr<UniqueFd> ConnectTcp(const std::string& host, const std::string& port,
                                    absl::Time deadline);

}  // namespace tony

#endif  // TONY_COMMON_TCP_CONNECT_H_
