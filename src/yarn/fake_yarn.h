// Copyright libtony authors.
//
// In-memory fakes of the YARN peers for unit tests (never for integration tests): one
// FakeYarnCluster holds nodes, containers and applications; FakeAmRmClient, FakeNmClient and
// FakeYarnClient implement the real interfaces on top of it. Header-only so it adds nothing to
// the library.
//
//   auto cluster = std::make_shared<FakeYarnCluster>();
//   cluster->AddNode({"n1", 1}, {8192, 8, {}});
//   FakeAmRmClient rm(cluster);  FakeNmClient nm(cluster);
//   ... AM code under test calls rm.Allocate(), nm.StartContainer() ...
//   cluster->CompleteContainer(id, 0);   // the next Allocate reports it
//
// Allocation is first fit over nodes in insertion order, one Allocate at a time, honouring
// strict node lists (relax_locality = false). Thread-safe: every method locks the cluster.

#ifndef TONY_YARN_FAKE_YARN_H_
#define TONY_YARN_FAKE_YARN_H_

#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "yarn/am_rm_client.h"
#include "yarn/nm_client.h"
#include "yarn/yarn_client.h"

namespace tony::yarn {

class FakeYarnCluster {
 public:
  struct FakeContainer {
    Container container;
    ContainerStatus status;
    std::string anti_affinity_tag;  // ContainerRequest::allocation_tag, with anti_affinity
    bool started = false;
    std::optional<ContainerLaunchContext> context;
  };

  FakeYarnCluster() {
    attempt_.application = {1700000000000, 1};
    attempt_.attempt = 1;
  }

  // ---- Set-up and inspection from tests.
  void AddNode(const NodeId& id, const Resource& capability, std::string label = "") {
    absl::MutexLock lock(&mu_);
    nodes_.push_back({id, capability, Resource{}, std::move(label)});
  }
  // Gives the node (added before) a YARN node attribute, by full name ("nm.yarn.io/pool").
  void SetNodeAttribute(const std::string& host, const std::string& name, std::string value) {
    absl::MutexLock lock(&mu_);
    for (Node& n : nodes_) {
      if (n.id.host == host) n.attributes[name] = value;
    }
  }
  // What FakeYarnClient::ListQueues and SubmittableQueues answer. Default: root with one
  // RUNNING leaf "default" open to every label, on both of which the caller may submit.
  void SetQueues(std::vector<QueueInfo> queues, std::vector<std::string> submittable) {
    absl::MutexLock lock(&mu_);
    queues_ = std::move(queues);
    submittable_ = std::move(submittable);
  }
  ApplicationAttemptId attempt() const {
    absl::MutexLock lock(&mu_);
    return attempt_;
  }
  // The container exits: reported by the next Allocate (and GetContainerStatus).
  void CompleteContainer(const ContainerId& id, int32_t exit_status,
                         const std::string& diagnostics = "") {
    absl::MutexLock lock(&mu_);
    CompleteLocked(id, exit_status, diagnostics);
  }
  // Makes the next Allocate carry this command (once).
  void SendAmCommand(AmCommand command) {
    absl::MutexLock lock(&mu_);
    pending_command_ = command;
  }
  // Every later Allocate carries this preemption notice (as the scheduler repeats its own until
  // it has taken the containers); an empty one ends it.
  void SetPreemption(PreemptionNotice notice) {
    absl::MutexLock lock(&mu_);
    preemption_ = std::move(notice);
  }
  // Makes StartContainer fail for this node with `status`.
  void FailStartsOn(const NodeId& node, absl::Status status) {
    absl::MutexLock lock(&mu_);
    start_failures_[node.ToString()] = std::move(status);
  }
  std::vector<FakeContainer> containers() const {
    absl::MutexLock lock(&mu_);
    std::vector<FakeContainer> out;
    for (const auto& [key, c] : containers_) out.push_back(c);
    return out;
  }
  std::optional<FakeContainer> container(const ContainerId& id) const {
    absl::MutexLock lock(&mu_);
    auto it = containers_.find(id.ToString());
    if (it == containers_.end()) return std::nullopt;
    return it->second;
  }
  bool registered() const {
    absl::MutexLock lock(&mu_);
    return registered_;
  }
  std::string tracking_url() const {
    absl::MutexLock lock(&mu_);
    return tracking_url_;
  }
  std::optional<FinalApplicationStatus> final_status() const {
    absl::MutexLock lock(&mu_);
    return final_status_;
  }
  std::string final_diagnostics() const {
    absl::MutexLock lock(&mu_);
    return final_diagnostics_;
  }
  int allocate_calls() const {
    absl::MutexLock lock(&mu_);
    return allocate_calls_;
  }
  // Every Allocate fails with `status` until it is set back to OK (the scheduler refusing the
  // requests, e.g. an InvalidLabelResourceRequestException).
  void SetAllocateError(absl::Status status) {
    absl::MutexLock lock(&mu_);
    allocate_error_ = std::move(status);
  }

 private:
  friend class FakeAmRmClient;
  friend class FakeNmClient;
  friend class FakeYarnClient;

  struct Node {
    NodeId id;
    Resource capability;
    Resource used;
    std::string label;                              // "" for the default partition
    std::map<std::string, std::string> attributes;  // YARN node attributes, by full name
  };

  static bool Fits(const Resource& want, const Node& n) {
    if (n.used.memory_mb + want.memory_mb > n.capability.memory_mb) return false;
    if (n.used.vcores + want.vcores > n.capability.vcores) return false;
    for (const auto& [name, v] : want.others) {
      auto cap = n.capability.others.find(name);
      int64_t used = n.used.others.count(name) ? n.used.others.at(name) : 0;
      if (cap == n.capability.others.end() || used + v > cap->second) return false;
    }
    return true;
  }
  static void Add(Resource* to, const Resource& r, int sign) {
    to->memory_mb += sign * r.memory_mb;
    to->vcores += sign * r.vcores;
    for (const auto& [name, v] : r.others) to->others[name] += sign * v;
  }

  void CompleteLocked(const ContainerId& id, int32_t exit_status, const std::string& diagnostics)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    auto it = containers_.find(id.ToString());
    if (it == containers_.end() || it->second.status.state == ContainerState::kComplete) return;
    it->second.status.state = ContainerState::kComplete;
    it->second.status.exit_status = exit_status;
    it->second.status.diagnostics = diagnostics;
    for (auto& n : nodes_) {
      if (n.id == it->second.container.node) Add(&n.used, it->second.container.resource, -1);
    }
    completed_.push_back(it->second.status);
  }

  mutable absl::Mutex mu_;
  ApplicationAttemptId attempt_ ABSL_GUARDED_BY(mu_);
  std::vector<Node> nodes_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, FakeContainer> containers_ ABSL_GUARDED_BY(mu_);
  std::vector<ContainerStatus> completed_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, absl::Status> start_failures_ ABSL_GUARDED_BY(mu_);
  std::optional<AmCommand> pending_command_ ABSL_GUARDED_BY(mu_);
  PreemptionNotice preemption_ ABSL_GUARDED_BY(mu_);
  int64_t next_container_ ABSL_GUARDED_BY(mu_) = 2;  // 1 is the AM's own
  bool registered_ ABSL_GUARDED_BY(mu_) = false;
  std::string tracking_url_ ABSL_GUARDED_BY(mu_);
  std::optional<FinalApplicationStatus> final_status_ ABSL_GUARDED_BY(mu_);
  std::string final_diagnostics_ ABSL_GUARDED_BY(mu_);
  int allocate_calls_ ABSL_GUARDED_BY(mu_) = 0;
  std::vector<QueueInfo> queues_ ABSL_GUARDED_BY(mu_) = {
      {"root", "root", QueueState::kRunning, false, {"*"}, ""},
      {"default", "root.default", QueueState::kRunning, true, {"*"}, ""}};
  std::vector<std::string> submittable_ ABSL_GUARDED_BY(mu_) = {"root", "default"};
  absl::Status allocate_error_ ABSL_GUARDED_BY(mu_);
  // FakeYarnClient state.
  int32_t next_app_ ABSL_GUARDED_BY(mu_) = 1;
  std::map<int32_t, ApplicationReport> apps_ ABSL_GUARDED_BY(mu_);
  std::map<int32_t, ApplicationSubmissionContext> submissions_ ABSL_GUARDED_BY(mu_);

 public:
  // ---- FakeYarnClient helpers.
  void SetApplicationState(const ApplicationId& id, YarnApplicationState state,
                           FinalApplicationStatus final_status = FinalApplicationStatus::kUndefined,
                           const std::string& diagnostics = "") {
    absl::MutexLock lock(&mu_);
    ApplicationReport& r = apps_[id.id];
    r.state = state;
    r.final_status = final_status;
    r.diagnostics = diagnostics;
  }
  std::optional<ApplicationSubmissionContext> submission(const ApplicationId& id) const {
    absl::MutexLock lock(&mu_);
    auto it = submissions_.find(id.id);
    if (it == submissions_.end()) return std::nullopt;
    return it->second;
  }
};

class FakeAmRmClient : public AmRmClient {
 public:
  explicit FakeAmRmClient(std::shared_ptr<FakeYarnCluster> cluster)
      : cluster_(std::move(cluster)) {}
  using AmRmClient::Unregister;

  absl::StatusOr<RegisterResult> Register(const std::string&, int32_t,
                                          const std::string& tracking_url) override {
    absl::MutexLock lock(&cluster_->mu_);
    cluster_->registered_ = true;
    cluster_->tracking_url_ = tracking_url;
    RegisterResult r;
    for (const auto& n : cluster_->nodes_) {
      r.max_capability.memory_mb = std::max(r.max_capability.memory_mb, n.capability.memory_mb);
      r.max_capability.vcores = std::max(r.max_capability.vcores, n.capability.vcores);
    }
    r.queue = "root.default";
    return r;
  }

  void UpdateTrackingUrl(const std::string& url) override {
    absl::MutexLock lock(&cluster_->mu_);
    cluster_->tracking_url_ = url;
  }

  // As YARN's blacklist: no container on these hosts afterwards.
  void AddToBlacklist(const std::vector<std::string>& hosts) override {
    absl::MutexLock lock(&cluster_->mu_);
    blacklist_.insert(hosts.begin(), hosts.end());
  }
  void RemoveFromBlacklist(const std::vector<std::string>& hosts) override {
    absl::MutexLock lock(&cluster_->mu_);
    for (const std::string& h : hosts) blacklist_.erase(h);
  }
  std::set<std::string> blacklist() const {
    absl::MutexLock lock(&cluster_->mu_);
    return blacklist_;
  }

  int64_t AddContainerRequest(const ContainerRequest& request) override {
    absl::MutexLock lock(&cluster_->mu_);
    int64_t id = next_request_++;
    asks_[id] = {request, std::max(0, request.count)};
    return id;
  }

  void RemoveContainerRequest(int64_t request_id, int32_t count) override {
    absl::MutexLock lock(&cluster_->mu_);
    auto it = asks_.find(request_id);
    if (it != asks_.end()) it->second.second = std::max(0, it->second.second - count);
  }

  int32_t Outstanding(int64_t request_id) const override {
    absl::MutexLock lock(&cluster_->mu_);
    auto it = asks_.find(request_id);
    return it == asks_.end() ? 0 : it->second.second;
  }

  void ReleaseContainer(const ContainerId& id) override {
    absl::MutexLock lock(&cluster_->mu_);
    cluster_->CompleteLocked(id, exit_status::kAborted, "Container released by application");
  }

  absl::StatusOr<AllocateResult> Allocate(float) override {
    FakeYarnCluster& c = *cluster_;
    absl::MutexLock lock(&c.mu_);  // c.mu_, not cluster_->mu_: the analysis follows names
    ++c.allocate_calls_;
    if (!c.allocate_error_.ok()) return c.allocate_error_;
    if (!c.registered_) {
      return absl::FailedPreconditionError(
          "ApplicationMasterNotRegisteredException: allocate before register");
    }
    AllocateResult out;
    for (auto& [id, ask] : asks_) {
      const ContainerRequest& req = ask.first;
      while (ask.second > 0) {
        FakeYarnCluster::Node* node = nullptr;
        for (auto& n : c.nodes_) {
          bool allowed =
              blacklist_.count(n.id.host) == 0 &&
              (req.relax_locality || req.nodes.empty() ||
               std::find(req.nodes.begin(), req.nodes.end(), n.id.host) != req.nodes.end());
          // Anti-affinity, as the CapacityScheduler's SchedulingRequests: no live container
          // with the tag on the node.
          for (const auto& [cid, other] : c.containers_) {
            allowed =
                allowed &&
                !(req.anti_affinity && other.anti_affinity_tag == req.allocation_tag &&
                  other.container.node == n.id && other.status.state != ContainerState::kComplete);
          }
          // A node attribute constraint: NE also holds on a node without the attribute.
          if (req.node_attribute) {
            auto a = n.attributes.find(req.node_attribute->name);
            const bool has = a != n.attributes.end() && a->second == req.node_attribute->value;
            allowed = allowed && has == req.node_attribute->equal;
          }
          if (allowed && FakeYarnCluster::Fits(req.capability, n)) {
            node = &n;
            break;
          }
        }
        if (node == nullptr) break;
        FakeYarnCluster::Add(&node->used, req.capability, +1);
        FakeYarnCluster::FakeContainer fc;
        fc.container.id.attempt = c.attempt_;
        fc.container.id.id = c.next_container_++;
        fc.container.node = node->id;
        fc.container.resource = req.capability;
        fc.container.priority = req.priority;
        fc.container.allocation_request_id = id;
        if (req.anti_affinity) fc.anti_affinity_tag = req.allocation_tag;
        fc.container.token = ipc::Token{"fake", "fake", ipc::kContainerTokenKind, ""};
        fc.status.id = fc.container.id;
        fc.status.state = ContainerState::kNew;
        c.containers_[fc.container.id.ToString()] = fc;
        out.allocated.push_back(fc.container);
        --ask.second;
      }
    }
    out.completed.swap(c.completed_);
    out.num_cluster_nodes = static_cast<int32_t>(c.nodes_.size());
    out.preemption = c.preemption_;
    if (c.pending_command_.has_value()) {
      out.command = *c.pending_command_;
      c.pending_command_.reset();
    }
    return out;
  }

  absl::Status Unregister(FinalApplicationStatus status, const std::string& diagnostics,
                          const std::string&) override {
    absl::MutexLock lock(&cluster_->mu_);
    cluster_->final_status_ = status;
    cluster_->final_diagnostics_ = diagnostics;
    cluster_->registered_ = false;
    return absl::OkStatus();
  }

 private:
  std::shared_ptr<FakeYarnCluster> cluster_;
  // Request id -> (request, outstanding); guarded by cluster_->mu_.
  std::map<int64_t, std::pair<ContainerRequest, int32_t>> asks_;
  int64_t next_request_ = 1;
  std::set<std::string> blacklist_;  // hosts; guarded by cluster_->mu_
};

class FakeNmClient : public NmClient {
 public:
  explicit FakeNmClient(std::shared_ptr<FakeYarnCluster> cluster) : cluster_(std::move(cluster)) {}

  absl::Status StartContainer(const Container& container,
                              const ContainerLaunchContext& context) override {
    absl::MutexLock lock(&cluster_->mu_);
    auto f = cluster_->start_failures_.find(container.node.ToString());
    if (f != cluster_->start_failures_.end()) return f->second;
    auto it = cluster_->containers_.find(container.id.ToString());
    if (it == cluster_->containers_.end()) {
      return absl::FailedPreconditionError(
          absl::StrCat("InvalidToken: ", container.id.ToString(), " was never allocated"));
    }
    if (it->second.started || it->second.status.state == ContainerState::kComplete) {
      return absl::FailedPreconditionError(
          absl::StrCat(container.id.ToString(), " already started or finished"));
    }
    it->second.started = true;
    it->second.context = context;
    it->second.status.state = ContainerState::kRunning;
    return absl::OkStatus();
  }

  absl::Status StopContainer(const ContainerId& id, const NodeId&) override {
    absl::MutexLock lock(&cluster_->mu_);
    cluster_->CompleteLocked(id, exit_status::kKilledByAppMaster,
                             "Container killed by the ApplicationMaster.");
    return absl::OkStatus();
  }

  absl::StatusOr<ContainerStatus> GetContainerStatus(const ContainerId& id,
                                                     const NodeId&) override {
    absl::MutexLock lock(&cluster_->mu_);
    auto it = cluster_->containers_.find(id.ToString());
    if (it == cluster_->containers_.end()) {
      return absl::NotFoundError(absl::StrCat("ContainerNotFoundException: ", id.ToString()));
    }
    return it->second.status;
  }

 private:
  std::shared_ptr<FakeYarnCluster> cluster_;
};

class FakeYarnClient : public YarnClient {
 public:
  // `user`: who this client's submissions belong to (the reports' user), as the ResourceManager
  // takes it from the connection.
  explicit FakeYarnClient(std::shared_ptr<FakeYarnCluster> cluster, std::string user = "")
      : cluster_(std::move(cluster)), user_(std::move(user)) {}

  using YarnClient::CreateApplication;
  using YarnClient::GetResourceTypes;
  using YarnClient::ListNodes;
  using YarnClient::ListQueues;
  using YarnClient::SubmitApplication;
  using YarnClient::SubmittableQueues;

  absl::StatusOr<NewApplication> CreateApplication(absl::Time) override {
    absl::MutexLock lock(&cluster_->mu_);
    NewApplication app;
    app.id = {cluster_->attempt_.application.cluster_timestamp, cluster_->next_app_++};
    for (const auto& n : cluster_->nodes_) {
      app.max_capability.memory_mb = std::max(app.max_capability.memory_mb, n.capability.memory_mb);
      app.max_capability.vcores = std::max(app.max_capability.vcores, n.capability.vcores);
    }
    return app;
  }

  absl::Status SubmitApplication(const ApplicationSubmissionContext& context, absl::Time) override {
    absl::MutexLock lock(&cluster_->mu_);
    cluster_->submissions_[context.id.id] = context;
    ApplicationReport& r = cluster_->apps_[context.id.id];
    r.id = context.id;
    r.name = context.name;
    r.queue = context.queue;
    r.application_type = context.application_type;
    r.tags = context.tags;
    r.user = user_;
    r.state = YarnApplicationState::kAccepted;
    return absl::OkStatus();
  }

  using YarnClient::GetApplicationReport;
  using YarnClient::KillApplication;
  using YarnClient::ListApplications;

  absl::StatusOr<ApplicationReport> GetApplicationReport(const ApplicationId& id,
                                                         absl::Time) override {
    absl::MutexLock lock(&cluster_->mu_);
    auto it = cluster_->apps_.find(id.id);
    if (it == cluster_->apps_.end()) {
      return absl::NotFoundError(
          absl::StrCat("ApplicationNotFoundException: ", id.ToString(), " doesn't exist in RM."));
    }
    ApplicationReport r = it->second;
    r.id = id;
    return r;
  }

  absl::Status KillApplication(const ApplicationId& id, const std::string& diagnostics,
                               absl::Time) override {
    absl::MutexLock lock(&cluster_->mu_);
    auto it = cluster_->apps_.find(id.id);
    if (it == cluster_->apps_.end()) {
      return absl::NotFoundError(absl::StrCat("ApplicationNotFoundException: ", id.ToString()));
    }
    if (!IsTerminal(it->second.state)) {
      it->second.state = YarnApplicationState::kKilled;
      it->second.final_status = FinalApplicationStatus::kKilled;
      it->second.diagnostics = diagnostics;
    }
    return absl::OkStatus();
  }

  absl::StatusOr<std::vector<ApplicationReport>> ListApplications(const ApplicationFilter& filter,
                                                                  absl::Time) override {
    absl::MutexLock lock(&cluster_->mu_);
    std::vector<ApplicationReport> out;
    for (const auto& [id, r] : cluster_->apps_) {
      if (!filter.states.empty() &&
          std::find(filter.states.begin(), filter.states.end(), r.state) == filter.states.end()) {
        continue;
      }
      // As the ResourceManager: an application carrying any one of the tags.
      const std::vector<std::string>& tags = r.tags;  // C++17 lambdas cannot capture bindings
      if (!filter.tags.empty() &&
          std::none_of(filter.tags.begin(), filter.tags.end(), [&tags](const std::string& t) {
            return std::find(tags.begin(), tags.end(), t) != tags.end();
          })) {
        continue;
      }
      if (!filter.users.empty() &&
          std::find(filter.users.begin(), filter.users.end(), r.user) == filter.users.end()) {
        continue;
      }
      out.push_back(r);
    }
    return out;
  }

  absl::StatusOr<std::vector<NodeReport>> ListNodes(const std::vector<NodeState>&,
                                                    absl::Time) override {
    absl::MutexLock lock(&cluster_->mu_);
    std::vector<NodeReport> out;
    for (const auto& n : cluster_->nodes_) {
      NodeReport r;
      r.id = n.id;
      r.capability = n.capability;
      r.used = n.used;
      if (!n.label.empty()) r.labels = {n.label};
      r.attributes = n.attributes;
      r.state = NodeState::kRunning;
      out.push_back(r);
    }
    return out;
  }

  absl::StatusOr<std::vector<QueueInfo>> ListQueues(absl::Time) override {
    absl::MutexLock lock(&cluster_->mu_);
    return cluster_->queues_;
  }
  absl::StatusOr<std::vector<std::string>> SubmittableQueues(absl::Time) override {
    absl::MutexLock lock(&cluster_->mu_);
    return cluster_->submittable_;
  }

  absl::StatusOr<std::vector<ResourceTypeInfo>> GetResourceTypes(absl::Time) override {
    absl::MutexLock lock(&cluster_->mu_);
    std::vector<ResourceTypeInfo> out = {{"memory-mb", "Mi"}, {"vcores", ""}};
    std::map<std::string, bool> seen;
    for (const auto& n : cluster_->nodes_) {
      for (const auto& [name, v] : n.capability.others) {
        if (!seen[name]) out.push_back({name, ""});
        seen[name] = true;
      }
    }
    return out;
  }

 private:
  std::shared_ptr<FakeYarnCluster> cluster_;
  const std::string user_;
};

}  // namespace tony::yarn

#endif  // TONY_YARN_FAKE_YARN_H_
