// Copyright libtony authors.

#include "yarnam/task_launcher.h"

#include <algorithm>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "common/logging.h"
#include "spec/parse_util.h"
#include "submit/contract.h"
#include "yarnam/scheduler_answer.h"

namespace tony::yarnam {

YarnTaskLauncher::YarnTaskLauncher(TaskLauncherOptions options) : options_(std::move(options)) {}

YarnTaskLauncher::~YarnTaskLauncher() { Stop(); }

absl::Status YarnTaskLauncher::Start() {
  if (options_.rm == nullptr || options_.nm == nullptr || !options_.on_event) {
    return absl::InvalidArgumentError("YarnTaskLauncher needs rm, nm and on_event");
  }
  started_ = true;
  heartbeat_thread_ = std::thread([this] { HeartbeatLoop(); });
  for (int i = 0; i < std::max(1, options_.launch_threads); ++i) {
    launch_threads_.emplace_back([this] { LaunchLoop(); });
  }
  return absl::OkStatus();
}

void YarnTaskLauncher::Stop() {
  {
    absl::MutexLock lock(&mu_);
    if (stopping_) return;
    stopping_ = true;
  }
  if (!started_) return;
  heartbeat_thread_.join();
  for (std::thread& t : launch_threads_) t.join();
  launch_threads_.clear();
}

namespace {

// One container for `task` at `priority`, anywhere.
yarn::ContainerRequest ContainerRequestFor(const TaskSpec& task, int priority) {
  yarn::ContainerRequest req;
  req.capability.memory_mb = task.memory_mb;
  req.capability.vcores = task.vcores;
  if (task.gpus > 0) req.capability.others[yarn::kResourceGpu] = task.gpus;
  req.priority = priority;
  req.count = 1;
  req.node_label_expression = task.node_label;
  // Placement constraints: the role's name is the allocation tag. At most one of the role's
  // tasks per node; or only nodes with a node attribute (validated with the spec).
  req.allocation_tag = task.job_name;
  req.anti_affinity = task.anti_affinity;
  if (!task.node_attribute.empty()) {
    if (absl::StatusOr<spec::NodeAttributeExpr> a = spec::ParseNodeAttribute(task.node_attribute);
        a.ok()) {
      req.node_attribute = yarn::NodeAttributeMatch{a->name, a->value, a->equal};
    }
  }
  return req;
}

}  // namespace

void YarnTaskLauncher::Request(const TaskSpec& task, int priority, const std::string& host,
                               int port, bool relaunch) {
  yarn::ContainerRequest req = ContainerRequestFor(task, priority);
  // A SchedulingRequest has no locality preference: a task placed by constraints goes where it
  // may.
  const std::string pinned =
      task.anti_affinity || !task.node_attribute.empty() ? std::string() : host;
  if (!pinned.empty()) {
    // Its old node only, for a while (RelaxOverdueRequests): YARN's relaxed locality would give
    // the container to whichever node heartbeats first once a few opportunities were missed.
    req.nodes = {pinned};
    req.relax_locality = false;
  }
  // Under the lock until the request is recorded: the heartbeat thread may otherwise see its
  // container before by_request_ knows it, and release it as surplus (the task would then never
  // get one). Lock order mu_ -> rm, as in Launch().
  absl::MutexLock lock(&mu_);
  int64_t id = options_.rm->AddContainerRequest(req);
  TaskState& st = tasks_[task.id()];
  const int relaunches = st.relaunches + (relaunch ? 1 : 0);
  st = TaskState{};  // a relaunch starts afresh
  st.relaunches = relaunches;
  st.spec = task;
  st.request_id = id;
  st.port_hint = port;
  st.priority = priority;
  if (!pinned.empty()) {
    st.strict_host = pinned;
    st.strict_until = absl::Now() + options_.relaunch_locality_wait;
  }
  by_request_[id] = task.id();
  wake_ = true;
}

bool YarnTaskLauncher::Busy() const {
  if (!stop_queue_.empty()) return true;
  for (const auto& [task_id, st] : tasks_) {
    if (!st.allocated && !st.kill_requested) return true;                 // pending
    if (st.allocated && st.kill_requested && !st.completed) return true;  // being stopped
    if (winding_down_ && st.allocated && !st.completed) return true;      // its end awaited
  }
  return false;
}

void YarnTaskLauncher::Adopt(const TaskSpec& task, int priority, const yarn::Container& container) {
  {
    absl::MutexLock lock(&mu_);
    TaskState& st = tasks_[task.id()];
    st = TaskState{};
    st.spec = task;
    st.priority = priority;
    st.allocated = true;
    st.container = container;
    by_container_[container.id.ToString()] = task.id();
  }
  TONY_LOG(INFO) << "adopted " << container.id.ToString() << " on " << container.node.ToString()
                 << " for " << task.id() << " (an earlier attempt's)";
  Emit({TaskContainerEvent::Kind::kAllocated, task.id(), container.id.ToString(), 0, "",
        container.node.ToString(), container.node_http_address});
  Emit({TaskContainerEvent::Kind::kLaunched, task.id(), container.id.ToString(), 0, ""});
}

void YarnTaskLauncher::RelaxOverdueRequests() {
  const absl::Time now = absl::Now();
  for (auto& [task_id, st] : tasks_) {
    if (st.strict_host.empty() || st.allocated || st.kill_requested || now < st.strict_until) {
      continue;
    }
    TONY_LOG(INFO) << task_id << ": no container on its old node " << st.strict_host << " within "
                   << absl::FormatDuration(options_.relaunch_locality_wait)
                   << "; asking for any node";
    options_.rm->RemoveContainerRequest(st.request_id, 1);
    yarn::ContainerRequest req = ContainerRequestFor(st.spec, st.priority);
    req.nodes = {st.strict_host};  // still the preferred one
    req.relax_locality = true;
    st.request_id = options_.rm->AddContainerRequest(req);
    by_request_[st.request_id] = task_id;
    st.strict_host.clear();
  }
}

void YarnTaskLauncher::Kill(const std::string& task_id) {
  absl::MutexLock lock(&mu_);
  auto it = tasks_.find(task_id);
  if (it == tasks_.end() || it->second.completed || it->second.kill_requested) return;
  TaskState& st = it->second;
  st.kill_requested = true;
  if (!st.allocated) {
    options_.rm->RemoveContainerRequest(st.request_id, 1);
    return;
  }
  // Still in the launch queue: Launch() releases it instead of starting it.
  if (queued_.count(task_id) != 0) {
    return;
  }
  stop_queue_.emplace_back(st.container.id, st.container.node);
  wake_ = true;
}

void YarnTaskLauncher::WindDown() {
  absl::MutexLock lock(&mu_);
  winding_down_ = true;
  wake_ = true;
}

std::vector<submit::TaskContainer> YarnTaskLauncher::Containers() const {
  absl::MutexLock lock(&mu_);
  std::vector<submit::TaskContainer> out;
  for (const auto& [id, st] : tasks_) {
    if (!st.allocated) continue;
    out.push_back({id, st.container.id.ToString(), st.container.node_http_address});
  }
  return out;
}

std::vector<std::string> YarnTaskLauncher::PendingTasks() const {
  absl::MutexLock lock(&mu_);
  std::vector<std::string> out;
  for (const auto& [id, st] : tasks_) {
    if (!st.allocated && !st.kill_requested) out.push_back(id);
  }
  return out;
}

std::vector<submit::PendingAsk> YarnTaskLauncher::PendingAsks() const {
  absl::MutexLock lock(&mu_);
  std::vector<submit::PendingAsk> out;
  for (const auto& [id, st] : tasks_) {
    if (st.allocated || st.kill_requested) continue;
    const TaskSpec& t = st.spec;
    out.push_back({{t.memory_mb, t.vcores, t.gpus}, 1, t.node_label});
  }
  return out;
}

void YarnTaskLauncher::Emit(TaskContainerEvent event) { options_.on_event(event); }

std::string YarnTaskLauncher::Headroom() const {
  absl::MutexLock lock(&headroom_mu_);
  return headroom_;
}

namespace {

constexpr char kPlacementHint[] =
    " (anti_affinity needs yarn.resourcemanager.placement-constraints.handler=scheduler on the "
    "ResourceManager, with the CapacityScheduler)";

}  // namespace

void YarnTaskLauncher::ReportRejected(
    const std::vector<std::pair<int64_t, std::string>>& rejected) {
  for (const auto& [request_id, reason] : rejected) {
    std::string task_id;
    {
      absl::MutexLock lock(&mu_);
      auto it = by_request_.find(request_id);
      if (it == by_request_.end()) continue;
      task_id = it->second;
    }
    Emit({TaskContainerEvent::Kind::kRmError, task_id, "", 0,
          absl::StrCat("the ResourceManager could not place ", task_id, " (", reason,
                       "): its role's anti_affinity allows one task per node, and no node "
                       "without one of them had room")});
  }
}

void YarnTaskLauncher::ReportPreemption(const yarn::PreemptionNotice& notice) {
  auto report = [this](const std::vector<yarn::ContainerId>& ids, const char* kind) {
    for (const yarn::ContainerId& id : ids) {
      std::string container = id.ToString();
      std::string task_id;
      {
        absl::MutexLock lock(&mu_);
        if (auto it = by_container_.find(container); it != by_container_.end()) {
          task_id = it->second;
        }
      }
      Emit({TaskContainerEvent::Kind::kPreemptNotice, std::move(task_id), std::move(container), 0,
            kind});
    }
  };
  report(notice.strict, "strict");
  report(notice.contract, "contract");
}

void YarnTaskLauncher::HeartbeatLoop() {
  SchedulerAnswerRule rule(options_.rm_unreachable);
  while (true) {
    std::vector<std::pair<yarn::ContainerId, yarn::NodeId>> to_stop;
    {
      absl::MutexLock lock(&mu_);
      if (stopping_) return;
      wake_ = false;
      to_stop.swap(stop_queue_);
      if (rule.attempt_gone()) {
        // YARN released every container with the attempt; a NodeManager that is gone would
        // only make a stop call wait for its timeout.
        auto stop = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return stopping_; };
        mu_.Await(absl::Condition(&stop));
        return;
      }
      RelaxOverdueRequests();
    }
    for (const auto& [cid, node] : to_stop) {
      absl::Status s = options_.nm->StopContainer(cid, node);
      if (!s.ok()) TONY_LOG(WARNING) << "stopping " << cid.ToString() << ": " << s;
    }
    auto result = options_.rm->Allocate(options_.progress ? options_.progress() : 0.0f);
    if (!HeedVerdict(rule, result)) continue;
    if (result.ok()) OnAllocateAnswer(*result);
    // Fast while something is pending or failing; woken at once by a request or a kill.
    absl::MutexLock lock(&mu_);
    const bool fast = Busy() || rule.failing();
    auto wake = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return stopping_ || wake_; };
    mu_.AwaitWithTimeout(absl::Condition(&wake),
                         fast ? options_.heartbeat : options_.idle_heartbeat);
  }
}

bool YarnTaskLauncher::HeedVerdict(SchedulerAnswerRule& rule,
                                   const absl::StatusOr<yarn::AllocateResult>& result) {
  SchedulerAnswerRule::Decision d = result.ok() ? rule.OnAnswer(absl::Now(), result->command)
                                                : rule.OnFailure(absl::Now(), result.status());
  for (const std::string& w : d.warnings) TONY_LOG(WARNING) << w;
  switch (d.verdict) {
    case SchedulerAnswerRule::Verdict::kGoOn:
      break;
    case SchedulerAnswerRule::Verdict::kRefused:
      Emit({TaskContainerEvent::Kind::kRmError, "", "", 0,
            absl::StrCat("the ResourceManager refused the job's container requests: ", d.why,
                         IsPlacementRefusal(result.status()) ? kPlacementHint : "")});
      break;
    case SchedulerAnswerRule::Verdict::kUnreachable:
      Emit({TaskContainerEvent::Kind::kRmError, "", "", 0, d.why});
      break;
    case SchedulerAnswerRule::Verdict::kAttemptGone:
      TONY_LOG(WARNING) << d.why << "; the ApplicationMaster ends";
      Emit({TaskContainerEvent::Kind::kAttemptGone, "", "", 0, d.why});
      return false;
  }
  return true;
}

void YarnTaskLauncher::OnAllocateAnswer(const yarn::AllocateResult& result) {
  {
    const yarn::Resource& h = result.headroom;
    std::string text =
        absl::StrCat("<", h.memory_mb, " MB, ", h.vcores, h.vcores == 1 ? " vcore" : " vcores");
    if (auto gpu = h.others.find(yarn::kResourceGpu); gpu != h.others.end()) {
      absl::StrAppend(&text, ", ", gpu->second, gpu->second == 1 ? " GPU" : " GPUs");
    }
    text += ">";
    absl::MutexLock lock(&headroom_mu_);
    headroom_ = std::move(text);
  }
  // Bad nodes (am/node_exclusion.h): what changed about the cluster's nodes.
  for (const yarn::NodeReport& n : result.updated_nodes) {
    TONY_LOG(INFO) << "YARN reports node " << n.id.ToString() << " "
                   << yarn::NodeStateName(n.state);
    TaskContainerEvent e{TaskContainerEvent::Kind::kNodeState, "", "", 0,
                         std::string(yarn::NodeStateName(n.state))};
    e.node = n.id.ToString();
    Emit(std::move(e));
  }
  if (result.num_cluster_nodes > 0 && result.num_cluster_nodes != cluster_nodes_) {
    cluster_nodes_ = result.num_cluster_nodes;
    Emit({TaskContainerEvent::Kind::kClusterNodes, "", "", cluster_nodes_, ""});
  }
  for (const yarn::Container& c : result.allocated) TakeAllocated(c);
  ReportRejected(result.rejected);
  ReportPreemption(result.preemption);
  for (const yarn::ContainerStatus& s : result.completed) TakeCompleted(s);
}

void YarnTaskLauncher::TakeAllocated(const yarn::Container& c) {
  std::string task_id;
  {
    absl::MutexLock lock(&mu_);
    auto it = by_request_.find(c.allocation_request_id);
    if (it != by_request_.end()) {
      TaskState& st = tasks_[it->second];
      // The request must be the task's current one: not one it withdrew before asking
      // again (all-or-nothing allocation, restarts).
      if (!st.allocated && !st.kill_requested && st.request_id == c.allocation_request_id) {
        task_id = it->second;
        st.allocated = true;
        st.container = c;
        by_container_[c.id.ToString()] = task_id;
        launch_queue_.push_back(task_id);
        ++queued_[task_id];
      }
    }
  }
  if (task_id.empty()) {
    // A surplus or withdrawn allocation: hand it back at once.
    options_.rm->ReleaseContainer(c.id);
    return;
  }
  TONY_LOG(INFO) << "allocated " << c.id.ToString() << " on " << c.node.ToString() << " for "
                 << task_id;
  Emit({TaskContainerEvent::Kind::kAllocated, task_id, c.id.ToString(), 0, "", c.node.ToString(),
        c.node_http_address});
}

void YarnTaskLauncher::TakeCompleted(const yarn::ContainerStatus& s) {
  std::string task_id;
  {
    absl::MutexLock lock(&mu_);
    auto it = by_container_.find(s.id.ToString());
    if (it == by_container_.end()) return;  // a released surplus container
    task_id = it->second;
    TaskState& st = tasks_[task_id];
    // Also a late report of a relaunched task's earlier container.
    if (st.completed || !st.allocated || st.container.id.ToString() != s.id.ToString()) return;
    st.completed = true;
  }
  Emit({TaskContainerEvent::Kind::kCompleted, task_id, s.id.ToString(), s.exit_status,
        s.diagnostics});
}

void YarnTaskLauncher::LaunchLoop() {
  while (true) {
    std::string task_id;
    yarn::Container container;
    {
      absl::MutexLock lock(&mu_);
      auto ready = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
        return stopping_ || !launch_queue_.empty();
      };
      mu_.AwaitWithTimeout(absl::Condition(&ready), absl::Seconds(1));
      if (stopping_) return;
      if (launch_queue_.empty()) continue;
      task_id = launch_queue_.front();
      launch_queue_.pop_front();
      if (auto q = queued_.find(task_id); --q->second == 0) queued_.erase(q);
      container = tasks_[task_id].container;
    }
    Launch(task_id, container);
  }
}

void YarnTaskLauncher::Launch(const std::string& task_id, const yarn::Container& container) {
  TaskSpec task;
  int port_hint = 0;
  int relaunches = 0;
  bool released = false;
  {
    absl::MutexLock lock(&mu_);
    task = tasks_[task_id].spec;
    port_hint = tasks_[task_id].port_hint;
    relaunches = tasks_[task_id].relaunches;
    if (tasks_[task_id].kill_requested) {
      // Stopped before it ever ran: give the container back instead of starting it. Its end is
      // reported now (the scheduler's later report of the release is then ignored).
      options_.rm->ReleaseContainer(container.id);
      tasks_[task_id].completed = true;
      released = true;
    }
  }
  if (released) {
    Emit({TaskContainerEvent::Kind::kCompleted, task_id, container.id.ToString(),
          yarn::exit_status::kAborted, "released before its executor started"});
    return;
  }
  const absl::Time picked = absl::Now();
  yarn::ContainerLaunchContext ctx;
  ctx.local_resources = options_.local_resources;
  ctx.environment = options_.environment;
  ctx.tokens = options_.tokens;
  ctx.environment["TONY_JOB_NAME"] = task.job_name;
  ctx.environment["TONY_TASK_INDEX"] = std::to_string(task.index);
  if (port_hint > 0) ctx.environment["TONY_TASK_PORT_HINT"] = std::to_string(port_hint);
  if (relaunches > 0) {
    // A task that checkpoints resumes (a later attempt's own TONY_RESUMED, the attempts before
    // it, stays).
    ctx.environment.try_emplace("TONY_RESUMED", "1");
    ctx.environment["TONY_TASK_RESTARTS"] = std::to_string(relaunches);
  }
  for (auto& [k, v] : DockerRuntimeEnvironment(task, options_.docker_mounts)) {
    ctx.environment[k] = std::move(v);
  }
  ctx.commands = {submit::kExecutorBinary, "1><LOG_DIR>/stdout", "2><LOG_DIR>/stderr"};
  absl::Status s = options_.nm->StartContainer(container, ctx);
  if (!s.ok()) {
    TONY_LOG(ERROR) << "starting " << task_id << " in " << container.id.ToString() << ": " << s;
    options_.rm->ReleaseContainer(container.id);
    {
      absl::MutexLock lock(&mu_);
      tasks_[task_id].completed = true;
    }
    Emit({TaskContainerEvent::Kind::kLaunchFailed, task_id, container.id.ToString(), -1,
          absl::StrCat("could not start its container on ", container.node.ToString(), ": ",
                       s.message())});
    return;
  }
  // bench/scale.py times the launch threads' queue and the NodeManager's answer by this line.
  TONY_LOG(INFO) << "started " << container.id.ToString() << " for " << task_id << " in "
                 << absl::ToInt64Milliseconds(absl::Now() - picked) << " ms";
  Emit({TaskContainerEvent::Kind::kLaunched, task_id, container.id.ToString(), 0, ""});
}

std::map<std::string, std::string> DockerRuntimeEnvironment(
    const TaskSpec& task, const std::vector<std::string>& mounts) {
  std::map<std::string, std::string> env;
  if (task.docker_image.empty()) return env;
  env["YARN_CONTAINER_RUNTIME_TYPE"] = "docker";
  env["YARN_CONTAINER_RUNTIME_DOCKER_IMAGE"] = task.docker_image;
  env["YARN_CONTAINER_RUNTIME_DOCKER_CONTAINER_NETWORK"] = "host";
  std::vector<std::string> specs;
  for (const std::string& m : mounts) {
    // YARN's mount list is "src:dst:mode,...": such paths cannot be expressed.
    if (m.find_first_of(",:") == std::string::npos) specs.push_back(absl::StrCat(m, ":", m, ":rw"));
  }
  if (!specs.empty()) env["YARN_CONTAINER_RUNTIME_DOCKER_MOUNTS"] = absl::StrJoin(specs, ",");
  return env;
}

std::vector<std::string> LocalPaths(const std::vector<std::string>& paths) {
  std::vector<std::string> out;
  for (const std::string& p : paths) {
    if (absl::StartsWith(p, "file://")) {
      out.push_back(p.substr(std::string("file://").size()));
    } else if (absl::StartsWith(p, "/")) {
      out.push_back(p);
    }
  }
  return out;
}

}  // namespace tony::yarnam
