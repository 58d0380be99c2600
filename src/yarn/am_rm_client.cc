// Copyright libtony authors.

#include "yarn/am_rm_client.h"

#include <algorithm>
#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "common/logging.h"
#include "common/status_macros.h"
#include "hadoop/yarn_service_protos.pb.h"
#include "ipc/rpc_errors.h"
#include "yarn/proto_convert.h"
#include "yarn/rm_channel.h"

namespace tony::yarn {
namespace {

namespace pb = tony::hadoop::yarn;

constexpr char kAnyResource[] = "*";
// Hadoop's default rack: a node request needs a rack request beside it to be schedulable.
constexpr char kDefaultRack[] = "/default-rack";

// Removes `host` from `hosts`; whether it was there.
bool EraseHost(std::vector<std::string>* hosts, const std::string& host) {
  auto end = std::remove(hosts->begin(), hosts->end(), host);
  const bool found = end != hosts->end();
  hosts->erase(end, hosts->end());
  return found;
}

struct Ask {
  ContainerRequest request;
  int32_t outstanding = 0;
  bool dirty = true;
};

class RpcAmRmClient : public AmRmClient {
 public:
  using AmRmClient::Unregister;
  RpcAmRmClient(std::unique_ptr<ipc::RpcChannel> channel, const AmRmClientOptions& options,
                std::function<void(const ipc::Token&)> token_rolled)
      : channel_(std::move(channel)),
        options_(options),
        nm_tokens_(options.nm_tokens != nullptr ? options.nm_tokens
                                                : std::make_shared<NmTokenCache>()),
        token_rolled_(std::move(token_rolled)) {}

  absl::StatusOr<RegisterResult> Register(const std::string& host, int32_t rpc_port,
                                          const std::string& tracking_url) override {
    absl::MutexLock exchange(&exchange_mu_);
    {
      absl::MutexLock lock(&mu_);
      host_ = host;
      rpc_port_ = rpc_port;
      tracking_url_ = tracking_url;
    }
    return RegisterLocked();
  }

  void UpdateTrackingUrl(const std::string& url) override {
    absl::MutexLock lock(&mu_);
    tracking_url_ = url;
    tracking_url_dirty_ = true;
  }

  void AddToBlacklist(const std::vector<std::string>& hosts) override {
    absl::MutexLock lock(&mu_);
    for (const std::string& h : hosts) {
      if (h.empty() || !blacklist_.insert(h).second) continue;
      blacklist_pending_.push_back(h);
      EraseHost(&unblacklist_pending_, h);
    }
  }

  void RemoveFromBlacklist(const std::vector<std::string>& hosts) override {
    absl::MutexLock lock(&mu_);
    for (const std::string& h : hosts) {
      if (blacklist_.erase(h) == 0) continue;
      // An addition the RM has not heard of needs no removal.
      if (!EraseHost(&blacklist_pending_, h)) unblacklist_pending_.push_back(h);
    }
  }

  int64_t AddContainerRequest(const ContainerRequest& request) override {
    absl::MutexLock lock(&mu_);
    int64_t id = next_request_id_++;
    Ask& ask = asks_[id];
    ask.request = request;
    ask.outstanding = std::max(0, request.count);
    ask.dirty = true;
    return id;
  }

  void RemoveContainerRequest(int64_t request_id, int32_t count) override {
    absl::MutexLock lock(&mu_);
    auto it = asks_.find(request_id);
    if (it == asks_.end() || count <= 0) return;
    it->second.outstanding = std::max(0, it->second.outstanding - count);
    it->second.dirty = true;
  }

  int32_t Outstanding(int64_t request_id) const override {
    absl::MutexLock lock(&mu_);
    auto it = asks_.find(request_id);
    return it == asks_.end() ? 0 : it->second.outstanding;
  }

  void ReleaseContainer(const ContainerId& id) override {
    absl::MutexLock lock(&mu_);
    releases_.push_back(id);
  }

  absl::StatusOr<AllocateResult> Allocate(float progress) override {
    absl::MutexLock exchange(&exchange_mu_);
    absl::StatusOr<AllocateResult> result = AllocateOnce(progress);
    if (!result.ok() &&
        ipc::IsRemoteException(result.status(), "ApplicationMasterNotRegisteredException")) {
      // The RM restarted or failed over without this attempt: register again and resend.
      TONY_LOG(WARNING) << "RM does not know this AM (" << result.status().message()
                        << "); registering again";
      TONY_RETURN_IF_ERROR(Resync());
      result = AllocateOnce(progress);
      if (result.ok()) result->command = AmCommand::kResync;
    }
    return result;
  }

  absl::Status Unregister(FinalApplicationStatus status, const std::string& diagnostics,
                          const std::string& tracking_url) override {
    absl::MutexLock exchange(&exchange_mu_);
    pb::FinishApplicationMasterRequestProto req;
    req.set_final_application_status(static_cast<pb::FinalApplicationStatusProto>(status));
    if (!diagnostics.empty()) req.set_diagnostics(diagnostics);
    if (!tracking_url.empty()) req.set_tracking_url(tracking_url);
    absl::Time deadline = absl::Now() + options_.unregister_timeout;
    absl::Status last;
    while (true) {
      pb::FinishApplicationMasterResponseProto resp;
      ipc::CallOptions co;
      co.timeout = std::max(absl::Milliseconds(1), deadline - absl::Now());
      last = channel_->Call("finishApplicationMaster", req, &resp, co);
      if (last.ok() && resp.isunregistered()) return absl::OkStatus();
      if (!last.ok() && ipc::IsRemoteException(last, "ApplicationMasterNotRegisteredException")) {
        TONY_RETURN_IF_ERROR(Resync());
        continue;
      }
      if (!last.ok() && !absl::IsUnavailable(last)) return last;
      // The RM unregisters asynchronously: ask again shortly.
      if (absl::Now() + absl::Milliseconds(100) >= deadline) break;
      absl::SleepFor(absl::Milliseconds(100));
    }
    return absl::DeadlineExceededError(
        absl::StrCat("RM did not confirm unregistration within ",
                     absl::FormatDuration(options_.unregister_timeout),
                     last.ok() ? std::string() : absl::StrCat(": ", last.message())));
  }

 private:
  absl::StatusOr<RegisterResult> RegisterLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(exchange_mu_) {
    pb::RegisterApplicationMasterRequestProto req;
    {
      absl::MutexLock lock(&mu_);
      req.set_host(host_);
      req.set_rpc_port(rpc_port_);
      req.set_tracking_url(tracking_url_);
    }
    pb::RegisterApplicationMasterResponseProto resp;
    TONY_RETURN_IF_ERROR(Call("registerApplicationMaster", req, &resp));
    RegisterResult out;
    out.max_capability = FromProto(resp.maximumcapability());
    out.queue = resp.queue();
    for (const auto& c : resp.containers_from_previous_attempts()) {
      out.containers_from_previous_attempts.push_back(FromProto(c));
    }
    for (const auto& t : resp.resource_types()) out.resource_types.push_back({t.name(), t.units()});
    for (const auto& t : resp.nm_tokens_from_previous_attempts()) {
      nm_tokens_->Set(FromProto(t.nodeid()).ToString(), FromProto(t.token()));
    }
    {
      absl::MutexLock lock(&mu_);
      registered_ = true;
    }
    return out;
  }

  absl::Status Resync() ABSL_EXCLUSIVE_LOCKS_REQUIRED(exchange_mu_) {
    TONY_RETURN_IF_ERROR(RegisterLocked().status());
    absl::MutexLock lock(&mu_);
    response_id_ = 0;
    for (auto& [id, ask] : asks_) ask.dirty = true;
    // A restarted RM forgot the blacklist with the rest: all of it again.
    blacklist_pending_.assign(blacklist_.begin(), blacklist_.end());
    unblacklist_pending_.clear();
    return absl::OkStatus();
  }

  // Adds the asks for one request: its hosts, its racks, and ANY (always, with the label).
  static void AddAsks(int64_t id, const Ask& ask, pb::AllocateRequestProto* req) {
    const ContainerRequest& r = ask.request;
    pb::ResourceProto capability = ToProto(r.capability);
    auto add = [&](const std::string& name, bool relax, bool with_label) {
      pb::ResourceRequestProto* rr = req->add_ask();
      rr->mutable_priority()->set_priority(r.priority);
      rr->set_resource_name(name);
      *rr->mutable_capability() = capability;
      rr->set_num_containers(ask.outstanding);
      rr->set_relax_locality(relax);
      rr->set_allocation_request_id(id);
      if (with_label && !r.node_label_expression.empty()) {
        rr->set_node_label_expression(r.node_label_expression);
      }
    };
    std::set<std::string> racks(r.racks.begin(), r.racks.end());
    if (!r.nodes.empty() && racks.empty()) racks.insert(kDefaultRack);
    for (const auto& node : std::set<std::string>(r.nodes.begin(), r.nodes.end())) {
      add(node, true, false);
    }
    for (const auto& rack : racks) add(rack, r.relax_locality, false);
    add(kAnyResource, r.relax_locality, true);
  }

  // A SchedulingRequest: the same container under one simple constraint (validation allows
  // one of the two kinds per request): anti-affinity, at most one per node with the tag among
  // this application's containers ("self" namespace, at most 0 others on the node); or a node
  // attribute, as PlacementConstraints.targetNodeAttribute builds it (cardinalities -1).
  static void AddSchedulingRequest(int64_t id, const Ask& ask, pb::AllocateRequestProto* req) {
    const ContainerRequest& r = ask.request;
    pb::SchedulingRequestProto* sr = req->add_scheduling_requests();
    sr->set_allocationrequestid(id);
    sr->mutable_priority()->set_priority(r.priority);
    sr->mutable_executiontype()->set_execution_type(pb::GUARANTEED);
    sr->add_allocationtags(r.allocation_tag);
    sr->mutable_resourcesizing()->set_numallocations(ask.outstanding);
    *sr->mutable_resourcesizing()->mutable_resources() = ToProto(r.capability);
    pb::SimplePlacementConstraintProto* c =
        sr->mutable_placementconstraint()->mutable_simpleconstraint();
    c->set_scope("node");
    pb::PlacementConstraintTargetProto* t = c->add_targetexpressions();
    if (r.anti_affinity) {
      c->set_mincardinality(0);
      c->set_maxcardinality(0);
      t->set_targettype(pb::PlacementConstraintTargetProto::ALLOCATION_TAG);
      t->set_targetkey("self");
      t->add_targetvalues(r.allocation_tag);
      return;
    }
    const NodeAttributeMatch& m = *r.node_attribute;
    c->set_mincardinality(-1);
    c->set_maxcardinality(-1);
    c->set_attributeopcode(m.equal ? pb::NODE_ATTRIBUTE_EQ : pb::NODE_ATTRIBUTE_NE);
    t->set_targettype(pb::PlacementConstraintTargetProto::NODE_ATTRIBUTE);
    t->set_targetkey(m.name);
    t->add_targetvalues(m.value);
  }

  // The dirty requests for the next exchange. The CapacityScheduler skips a call's
  // SchedulingRequests when the same call changed its ResourceRequests (one `||` in
  // CapacityScheduler#allocate), so a call carries one kind only: asks first.
  std::vector<int64_t> TakeDirtyLocked(pb::AllocateRequestProto* req)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    bool any_asks = false;
    for (const auto& [id, ask] : asks_) {
      any_asks = any_asks || (ask.dirty && !ask.request.scheduling());
    }
    std::vector<int64_t> sent;
    for (auto& [id, ask] : asks_) {
      const bool scheduling = ask.request.scheduling();
      if (!ask.dirty || (any_asks && scheduling)) continue;
      if (scheduling) {
        AddSchedulingRequest(id, ask, req);
      } else {
        AddAsks(id, ask, req);
      }
      ask.dirty = false;
      sent.push_back(id);
    }
    return sent;
  }

  absl::StatusOr<AllocateResult> AllocateOnce(float progress)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(exchange_mu_) {
    pb::AllocateRequestProto req;
    std::vector<int64_t> sent;
    std::vector<ContainerId> released;
    std::vector<std::string> blacklisted, unblacklisted;
    {
      absl::MutexLock lock(&mu_);
      if (!registered_) return absl::FailedPreconditionError("Allocate before Register");
      req.set_response_id(response_id_);
      req.set_progress(progress);
      if (tracking_url_dirty_) req.set_tracking_url(tracking_url_);
      tracking_url_dirty_ = false;
      sent = TakeDirtyLocked(&req);
      released.swap(releases_);
      for (const auto& c : released) *req.add_release() = ToProto(c);
      blacklisted.swap(blacklist_pending_);
      for (const auto& h : blacklisted) req.mutable_blacklist_request()->add_blacklist_additions(h);
      unblacklisted.swap(unblacklist_pending_);
      for (const auto& h : unblacklisted) {
        req.mutable_blacklist_request()->add_blacklist_removals(h);
      }
    }
    pb::AllocateResponseProto resp;
    absl::Status s = Call("allocate", req, &resp);
    absl::MutexLock lock(&mu_);
    if (!s.ok()) {
      // Asks are totals and the RM replays its last response for a repeated response_id, so
      // sending the same again next time is safe.
      for (int64_t id : sent) {
        if (auto it = asks_.find(id); it != asks_.end()) it->second.dirty = true;
      }
      releases_.insert(releases_.begin(), released.begin(), released.end());
      if (req.has_tracking_url()) tracking_url_dirty_ = true;
      // Sent again next time, but only what still holds: a host removed (or added back) since
      // goes with the list it is on now.
      for (const auto& h : blacklisted) {
        if (blacklist_.count(h) != 0 &&
            std::count(blacklist_pending_.begin(), blacklist_pending_.end(), h) == 0) {
          blacklist_pending_.push_back(h);
        }
      }
      for (const auto& h : unblacklisted) {
        if (blacklist_.count(h) == 0 &&
            std::count(unblacklist_pending_.begin(), unblacklist_pending_.end(), h) == 0) {
          unblacklist_pending_.push_back(h);
        }
      }
      return s;
    }
    response_id_ = resp.response_id();
    AllocateResult out;
    if (resp.has_am_rm_token()) {
      ipc::Token token = FromProto(resp.am_rm_token());
      TONY_LOG(INFO) << "AMRMToken rolled over by the RM; using the new one";
      if (token_rolled_) token_rolled_(token);
    }
    for (const auto& t : resp.nm_tokens()) {
      nm_tokens_->Set(FromProto(t.nodeid()).ToString(), FromProto(t.token()));
    }
    for (const auto& cp : resp.allocated_containers()) {
      Container c = FromProto(cp);
      auto it = asks_.find(c.allocation_request_id);
      if (it != asks_.end()) {
        Ask& ask = it->second;
        if (ask.outstanding == 0) {
          // Asked for and then withdrawn, or the RM raced our last update: nobody wants it.
          TONY_LOG(INFO) << "releasing surplus container " << c.id.ToString() << " on "
                         << c.node.ToString();
          releases_.push_back(c.id);
          continue;
        }
        --ask.outstanding;
        // The RM decremented ANY (and the node/rack it used); resend locality asks so our totals
        // and its totals agree again.
        if (!ask.request.nodes.empty() || !ask.request.racks.empty()) ask.dirty = true;
      }
      out.allocated.push_back(std::move(c));
    }
    for (const auto& st : resp.completed_container_statuses()) {
      out.completed.push_back(FromProto(st));
    }
    for (const auto& rejected : resp.rejected_scheduling_requests()) {
      const int64_t id = rejected.request().allocationrequestid();
      if (auto it = asks_.find(id); it != asks_.end()) {
        it->second.outstanding = 0;
        it->second.dirty = false;
      }
      out.rejected.emplace_back(id, pb::RejectionReasonProto_Name(rejected.reason()));
    }
    for (const auto& n : resp.updated_nodes()) out.updated_nodes.push_back(FromProto(n));
    out.headroom = FromProto(resp.limit());
    out.num_cluster_nodes = resp.num_cluster_nodes();
    if (resp.has_preempt()) out.preemption = FromProto(resp.preempt());
    // Forget finished requests once the RM has been told.
    for (auto it = asks_.begin(); it != asks_.end();) {
      if (it->second.outstanding == 0 && !it->second.dirty) {
        it = asks_.erase(it);
      } else {
        ++it;
      }
    }
    if (resp.has_a_m_command()) {
      out.command =
          resp.a_m_command() == pb::AM_SHUTDOWN ? AmCommand::kShutdown : AmCommand::kResync;
    }
    if (out.command == AmCommand::kResync) {
      mu_.Unlock();
      absl::Status rs = Resync();
      mu_.Lock();
      if (!rs.ok()) return rs;
    }
    return out;
  }

  absl::Status Call(absl::string_view method, const google::protobuf::MessageLite& req,
                    google::protobuf::MessageLite* resp) {
    ipc::CallOptions co;
    co.timeout = options_.call_timeout;
    return channel_->Call(method, req, resp, co);
  }

  const std::unique_ptr<ipc::RpcChannel> channel_;
  const AmRmClientOptions options_;
  const std::shared_ptr<NmTokenCache> nm_tokens_;
  const std::function<void(const ipc::Token&)> token_rolled_;

  // Serializes exchanges with the RM (response ids must follow one another).
  absl::Mutex exchange_mu_;
  mutable absl::Mutex mu_ ABSL_ACQUIRED_AFTER(exchange_mu_);
  bool registered_ ABSL_GUARDED_BY(mu_) = false;
  std::string host_ ABSL_GUARDED_BY(mu_);
  int32_t rpc_port_ ABSL_GUARDED_BY(mu_) = 0;
  std::string tracking_url_ ABSL_GUARDED_BY(mu_);
  bool tracking_url_dirty_ ABSL_GUARDED_BY(mu_) = false;
  int32_t response_id_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t next_request_id_ ABSL_GUARDED_BY(mu_) = 1;
  std::map<int64_t, Ask> asks_ ABSL_GUARDED_BY(mu_);
  std::vector<ContainerId> releases_ ABSL_GUARDED_BY(mu_);
  std::set<std::string> blacklist_ ABSL_GUARDED_BY(mu_);               // every host added
  std::vector<std::string> blacklist_pending_ ABSL_GUARDED_BY(mu_);    // not sent yet
  std::vector<std::string> unblacklist_pending_ ABSL_GUARDED_BY(mu_);  // removals not sent yet
};

}  // namespace

absl::StatusOr<std::unique_ptr<AmRmClient>> NewAmRmClient(const AmRmClientOptions& options) {
  if (options.am_rm_token.identifier.empty()) {
    return absl::InvalidArgumentError("AmRmClient needs the AMRMToken");
  }
  ipc::ClientAuth auth;
  auth.method = ipc::AuthMethod::kToken;
  auth.token = options.am_rm_token;
  auth.min_protection = options.min_protection;
  auth.digest_ciphers = options.digest_ciphers;
  TONY_ASSIGN_OR_RETURN(RmChannel rm,
                        NewRmChannel(options.scheduler_addresses, kApplicationMasterProtocol, auth,
                                     options.call_timeout, options.connect_timeout));
  std::vector<ipc::RpcClient*> clients = rm.clients;
  // The clients live inside the channel, which the AmRmClient owns: they outlive the callback.
  auto roll = [clients](const ipc::Token& token) {
    for (ipc::RpcClient* c : clients) c->UpdateToken(token);
  };
  return NewAmRmClientOverChannel(std::move(rm.channel), options, roll);
}

std::unique_ptr<AmRmClient> NewAmRmClientOverChannel(
    std::unique_ptr<ipc::RpcChannel> channel, const AmRmClientOptions& options,
    std::function<void(const ipc::Token&)> token_rolled) {
  return std::make_unique<RpcAmRmClient>(std::move(channel), options, std::move(token_rolled));
}

}  // namespace tony::yarn
