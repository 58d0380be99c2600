// Copyright libtony authors.

#include "broker/wire.h"

#include <limits>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "common/utf8.h"

namespace tony::broker {
namespace {

void AppendUint16(std::string* out, uint32_t v) {
  out->push_back(static_cast<char>(v & 0xff));
  out->push_back(static_cast<char>((v >> 8) & 0xff));
}

uint32_t Uint16At(const std::string& s, size_t i) {
  return static_cast<uint32_t>(static_cast<unsigned char>(s[2 * i])) |
         (static_cast<uint32_t>(static_cast<unsigned char>(s[2 * i + 1])) << 8);
}

}  // namespace

absl::StatusOr<ClusterSpecWire> ClusterSpecToWire(const ClusterSpec& cluster) {
  ClusterSpecWire wire;
  if (cluster.version < 1) return absl::InvalidArgumentError("cluster spec version below 1");
  wire.set_version(static_cast<uint32_t>(cluster.version));
  absl::flat_hash_map<std::string, uint32_t> host_ids;
  for (const auto& [name, addresses] : cluster.jobs) {
    JobAddresses* job = wire.add_jobs();
    job->set_name(name);
    std::string ports, hosts;
    ports.reserve(2 * addresses.size());
    hosts.reserve(2 * addresses.size());
    bool all_first_host = true;
    for (const std::string& address : addresses) {
      size_t colon = address.rfind(':');
      uint32_t port = 0;
      if (colon == std::string::npos || colon == 0 ||
          !absl::SimpleAtoi(absl::string_view(address).substr(colon + 1), &port) || port == 0 ||
          port > 65535) {
        return absl::InvalidArgumentError(
            absl::StrCat("task address '", address, "' of job '", name, "' is not host:port"));
      }
      std::string host = address.substr(0, colon);
      auto [it, inserted] = host_ids.try_emplace(host, static_cast<uint32_t>(host_ids.size()));
      if (inserted) {
        if (it->second > 0xffff) return absl::InvalidArgumentError("more than 65536 hosts");
        wire.add_hosts(host);
      }
      if (it->second != 0) all_first_host = false;
      AppendUint16(&ports, port);
      AppendUint16(&hosts, it->second);
    }
    job->set_ports(std::move(ports));
    if (!all_first_host) job->set_host_index(std::move(hosts));
  }
  return wire;
}

absl::StatusOr<ClusterSpec> ClusterSpecFromWire(const ClusterSpecWire& wire) {
  ClusterSpec cluster;
  if (wire.version() > static_cast<uint32_t>(std::numeric_limits<int>::max())) {
    return absl::InvalidArgumentError("cluster spec version out of range");
  }
  cluster.version = wire.version() == 0 ? 1 : static_cast<int>(wire.version());
  for (const JobAddresses& job : wire.jobs()) {
    const std::string& ports = job.ports();
    const std::string& hosts = job.host_index();
    if (ports.size() % 2 != 0 || (!hosts.empty() && hosts.size() != ports.size())) {
      return absl::InvalidArgumentError(
          absl::StrCat("malformed addresses of job '", job.name(), "'"));
    }
    size_t n = ports.size() / 2;
    std::vector<std::string>& out = cluster.jobs[job.name()];
    out.reserve(n);
    for (size_t i = 0; i < n; ++i) {
      uint32_t host = hosts.empty() ? 0 : Uint16At(hosts, i);
      if (static_cast<int>(host) >= wire.hosts_size()) {
        return absl::InvalidArgumentError(
            absl::StrCat("host index out of range in job '", job.name(), "'"));
      }
      // What no registration can give (and ClusterSpecToWire refuses): an empty host or port 0.
      const std::string& host_name = wire.hosts(static_cast<int>(host));
      const uint32_t port = Uint16At(ports, i);
      if (host_name.empty() || port == 0) {
        return absl::InvalidArgumentError(
            absl::StrCat("task ", i, " of job '", job.name(), "' has no host or port"));
      }
      out.push_back(absl::StrCat(host_name, ":", port));
    }
  }
  return cluster;
}

absl::StatusOr<std::string> RegisteredAddress(const RegisterRequest& request) {
  if (request.host().empty() || request.port() == 0 || request.port() > 65535) {
    return absl::InvalidArgumentError(absl::StrCat("registration of ", request.task().job_name(),
                                                   ":", request.task().index(),
                                                   " needs a host and a port"));
  }
  return absl::StrCat(request.host(), ":", request.port());
}

StatusResponse ApplicationStatusToWire(const ApplicationStatus& status) {
  StatusResponse wire;
  wire.set_id(status.id);
  wire.set_state(static_cast<broker::AppState>(static_cast<int>(status.state)));
  wire.set_tracking_url(status.tracking_url);
  // Diagnostics quote tasks' stderr and users' strings: a status that is not UTF-8 could not be
  // parsed by the client at all.
  wire.set_diagnostics(ToValidUtf8(status.diagnostics));
  wire.set_log_dir(status.log_dir);
  wire.set_tensorboard_url(status.tensorboard_url);
  wire.set_pending(ToValidUtf8(status.pending));
  if (status.suspended_since != absl::InfinitePast()) {
    wire.set_suspended_since_ms(absl::ToUnixMillis(status.suspended_since));
  }
  for (const auto& [name, p] : status.progress) {
    broker::JobTypeProgress* w = wire.add_progress();
    w->set_job_name(name);
    w->set_total(p.total);
    w->set_allocated(p.allocated);
    w->set_registered(p.registered);
    w->set_running(p.running);
    w->set_succeeded(p.succeeded);
    w->set_failed(p.failed);
    w->set_restarts(p.restarts);
  }
  return wire;
}

ApplicationStatus ApplicationStatusFromWire(const StatusResponse& wire) {
  ApplicationStatus status;
  status.id = wire.id();
  int state = static_cast<int>(wire.state());
  status.state = state >= 0 && state <= static_cast<int>(tony::AppState::kSuspended)
                     ? static_cast<tony::AppState>(state)
                     : tony::AppState::kRunning;
  status.tracking_url = wire.tracking_url();
  status.diagnostics = wire.diagnostics();
  status.log_dir = wire.log_dir();
  status.tensorboard_url = wire.tensorboard_url();
  status.pending = wire.pending();
  if (wire.suspended_since_ms() != 0) {
    status.suspended_since = absl::FromUnixMillis(wire.suspended_since_ms());
  }
  for (const broker::JobTypeProgress& w : wire.progress()) {
    tony::JobTypeProgress& p = status.progress[w.job_name()];
    p.total = w.total();
    p.allocated = w.allocated();
    p.registered = w.registered();
    p.running = w.running();
    p.succeeded = w.succeeded();
    p.failed = w.failed();
    p.restarts = w.restarts();
  }
  return status;
}

}  // namespace tony::broker
