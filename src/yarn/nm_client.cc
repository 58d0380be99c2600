// Copyright libtony authors.

#include "yarn/nm_client.h"

#include <map>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "common/logging.h"
#include "common/status_macros.h"
#include "hadoop/yarn_service_protos.pb.h"
#include "ipc/rpc_client.h"
#include "ipc/rpc_errors.h"
#include "yarn/proto_convert.h"

namespace tony::yarn {
namespace {

namespace pb = tony::hadoop::yarn;

absl::Status FromSerializedException(const pb::SerializedExceptionProto& e,
                                     absl::string_view context) {
  absl::Status s = ipc::RemoteExceptionToStatus(e.class_name(), e.message());
  absl::Status out(s.code(), absl::StrCat(context, ": ", s.message()));
  s.ForEachPayload([&](absl::string_view url, const absl::Cord& p) { out.SetPayload(url, p); });
  return out;
}

class RpcNmClient : public NmClient {
 public:
  explicit RpcNmClient(const NmClientOptions& options) : options_(options) {}

  absl::Status StartContainer(const Container& container,
                              const ContainerLaunchContext& context) override {
    pb::StartContainersRequestProto req;
    pb::StartContainerRequestProto* one = req.add_start_container_request();
    TONY_ASSIGN_OR_RETURN(*one->mutable_container_launch_context(), ToProto(context));
    *one->mutable_container_token() = ToProto(container.token);
    pb::StartContainersResponseProto resp;
    // Never launch twice: a lost connection after sending is reported, not retried.
    TONY_RETURN_IF_ERROR(Call(container.node, "startContainers", req, &resp, false));
    const std::string what =
        absl::StrCat("start ", container.id.ToString(), " on ", container.node.ToString());
    for (const auto& f : resp.failed_requests()) {
      return FromSerializedException(f.exception(), what);
    }
    for (const auto& ok : resp.succeeded_requests()) {
      if (FromProto(ok) == container.id) return absl::OkStatus();
    }
    return absl::InternalError(absl::StrCat(what, ": NodeManager reported no result"));
  }

  absl::Status StopContainer(const ContainerId& id, const NodeId& node) override {
    pb::StopContainersRequestProto req;
    *req.add_container_id() = ToProto(id);
    pb::StopContainersResponseProto resp;
    TONY_RETURN_IF_ERROR(Call(node, "stopContainers", req, &resp, true));
    for (const auto& f : resp.failed_requests()) {
      return FromSerializedException(f.exception(),
                                     absl::StrCat("stop ", id.ToString(), " on ", node.ToString()));
    }
    return absl::OkStatus();
  }

  absl::StatusOr<ContainerStatus> GetContainerStatus(const ContainerId& id,
                                                     const NodeId& node) override {
    pb::GetContainerStatusesRequestProto req;
    *req.add_container_id() = ToProto(id);
    pb::GetContainerStatusesResponseProto resp;
    TONY_RETURN_IF_ERROR(Call(node, "getContainerStatuses", req, &resp, true));
    for (const auto& f : resp.failed_requests()) {
      return FromSerializedException(
          f.exception(), absl::StrCat("status of ", id.ToString(), " on ", node.ToString()));
    }
    for (const auto& st : resp.status()) {
      if (FromProto(st.container_id()) == id) return FromProto(st);
    }
    return absl::NotFoundError(
        absl::StrCat(node.ToString(), " returned no status for ", id.ToString()));
  }

 private:
  struct Peer {
    ipc::Token token;
    std::shared_ptr<ipc::RpcClient> client;
  };

  // The client for a node, rebuilt when the RM has issued a newer NMToken for it.
  absl::StatusOr<std::shared_ptr<ipc::RpcClient>> ClientFor(const NodeId& node) {
    const std::string key = node.ToString();
    std::optional<ipc::Token> token = options_.nm_tokens->Get(key);
    if (!token.has_value()) {
      return absl::FailedPreconditionError(
          absl::StrCat("no NMToken for NodeManager ", key,
                       " (the RM sends it with the first container allocated there)"));
    }
    absl::MutexLock lock(&mu_);
    auto it = peers_.find(key);
    if (it != peers_.end() && it->second.token == *token) return it->second.client;
    ipc::RpcClientOptions o;
    o.address = key;
    o.protocol = kContainerManagementProtocol;
    o.auth.method = ipc::AuthMethod::kToken;
    o.auth.token = *token;
    o.auth.min_protection = options_.min_protection;
    o.auth.digest_ciphers = options_.digest_ciphers;
    o.call_timeout = options_.call_timeout;
    o.connect_timeout = options_.connect_timeout;
    o.max_idle = options_.max_idle;
    TONY_ASSIGN_OR_RETURN(std::unique_ptr<ipc::RpcClient> client, ipc::RpcClient::Create(o));
    // A replaced client may still be in use by another thread: shared ownership ends it.
    Peer& peer = peers_[key];
    peer.token = *token;
    peer.client = std::shared_ptr<ipc::RpcClient>(std::move(client));
    return peer.client;
  }

  absl::Status Call(const NodeId& node, absl::string_view method,
                    const google::protobuf::MessageLite& req, google::protobuf::MessageLite* resp,
                    bool idempotent) {
    TONY_ASSIGN_OR_RETURN(std::shared_ptr<ipc::RpcClient> client, ClientFor(node));
    ipc::CallOptions co;
    co.timeout = options_.call_timeout;
    co.idempotent = idempotent;
    return client->Call(method, req, resp, co);
  }

  const NmClientOptions options_;
  absl::Mutex mu_;
  std::map<std::string, Peer> peers_ ABSL_GUARDED_BY(mu_);
};

}  // namespace

absl::StatusOr<std::unique_ptr<NmClient>> NewNmClient(const NmClientOptions& options) {
  if (options.nm_tokens == nullptr) {
    return absl::InvalidArgumentError("NmClient needs the NMToken cache");
  }
  return std::unique_ptr<NmClient>(new RpcNmClient(options));
}

}  // namespace tony::yarn
