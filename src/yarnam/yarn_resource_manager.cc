// Copyright libtony authors.

#include "yarnam/yarn_resource_manager.h"

#include <optional>

#include "absl/strings/str_cat.h"
#include "common/logging.h"
#include "common/status_macros.h"

namespace tony::yarnam {

YarnResourceManager::YarnResourceManager(YarnAm* yarn_am,
                                         std::function<int(const std::string&)> priority_of)
    : yarn_am_(yarn_am), priority_of_(std::move(priority_of)) {}

absl::Status YarnResourceManager::Start(const std::map<std::string, std::string>& executor_env,
                                        EventCallback on_event) {
  on_event_ = std::move(on_event);
  TONY_RETURN_IF_ERROR(yarn_am_->StartLauncher(
      executor_env, [this](const TaskContainerEvent& e) { OnLauncherEvent(e); }, nullptr));
  WaitWatchOptions watch;
  watch.rm_web_urls = yarn_am_->RmWebUrls();
  watch.app_id = yarn_am_->application_id();
  watch.queue = yarn_am_->queue();
  watch.user = yarn_am_->user();
  YarnTaskLauncher* launcher = yarn_am_->launcher();
  watch.pending = [launcher] { return launcher->PendingAsks(); };
  wait_watch_ = std::make_unique<WaitWatch>(std::move(watch));
  wait_watch_->Start();
  return absl::OkStatus();
}

void YarnResourceManager::Request(const TaskSpec& task) {
  std::optional<yarn::Container> adopt;
  {
    absl::MutexLock lock(&mu_);
    withdrawn_.erase(task.id());  // asked for again (all-or-nothing allocation)
    if (auto it = adoptions_.find(task.id()); it != adoptions_.end()) {
      adopt = it->second;  // once: asked for again later, it gets a new container
      adoptions_.erase(it);
    }
  }
  if (adopt) {
    yarn_am_->launcher()->Adopt(task, priority_of_(task.job_name), *adopt);
    return;
  }
  yarn_am_->launcher()->Request(task, priority_of_(task.job_name));
}

void YarnResourceManager::Relaunch(const TaskSpec& task, const std::string& host, int port) {
  {
    absl::MutexLock lock(&mu_);
    withdrawn_.erase(task.id());
  }
  yarn_am_->launcher()->Request(task, priority_of_(task.job_name), host, port,
                                /*relaunch=*/true);
}

void YarnResourceManager::Kill(const std::string& task_id, absl::Duration grace) {
  // The NodeManager stops a container with SIGTERM to its process group and SIGKILL after its
  // own sleep-delay-before-sigkill; `grace` cannot be longer than that on YARN.
  bool pending = false;
  for (const std::string& t : yarn_am_->launcher()->PendingTasks())
    pending = pending || t == task_id;
  yarn_am_->launcher()->Kill(task_id);
  if (pending) {
    {
      absl::MutexLock lock(&mu_);
      withdrawn_.insert(task_id);
    }
    // Nothing was allocated: the request is withdrawn and the task is over at once.
    on_event_(
        {am::ContainerEvent::Kind::kCompleted, task_id, "", 0, "withdrawn before allocation"});
  }
}

void YarnResourceManager::ExcludeNodes(const std::vector<std::string>& hosts) {
  if (yarn_am_->launcher() != nullptr) yarn_am_->launcher()->ExcludeNodes(hosts);
}

void YarnResourceManager::IncludeNodes(const std::vector<std::string>& hosts) {
  if (yarn_am_->launcher() != nullptr) yarn_am_->launcher()->IncludeNodes(hosts);
}

std::string YarnResourceManager::Headroom() const {
  return yarn_am_->launcher() != nullptr ? yarn_am_->launcher()->Headroom() : "";
}

std::pair<std::string, std::string> YarnResourceManager::WhyWaiting() const {
  if (wait_watch_ == nullptr) return {};
  submit::WaitReason why = wait_watch_->Reason();
  return {std::string(submit::WaitKindName(why.kind)), std::move(why.text)};
}

void YarnResourceManager::Stop() {
  if (wait_watch_ != nullptr) wait_watch_->Stop();  // before the launcher it asks
  if (yarn_am_->launcher() != nullptr) yarn_am_->launcher()->Stop();
}

void YarnResourceManager::OnLauncherEvent(const TaskContainerEvent& e) {
  {
    absl::MutexLock lock(&mu_);
    if (!e.task_id.empty() && withdrawn_.count(e.task_id)) return;
  }
  am::ContainerEvent out;
  out.task_id = e.task_id;
  out.container_id = e.container_id;
  out.exit_status = e.exit_status;
  out.diagnostics = e.diagnostics;
  out.node = e.node;
  out.node_http = e.node_http;
  switch (e.kind) {
    case TaskContainerEvent::Kind::kAllocated:
      ++allocated_;
      out.kind = am::ContainerEvent::Kind::kAllocated;
      break;
    case TaskContainerEvent::Kind::kLaunched:
      out.kind = am::ContainerEvent::Kind::kLaunched;
      break;
    case TaskContainerEvent::Kind::kLaunchFailed:
      out.kind = am::ContainerEvent::Kind::kLaunchFailed;
      break;
    case TaskContainerEvent::Kind::kCompleted:
      out.kind = am::ContainerEvent::Kind::kCompleted;
      break;
    case TaskContainerEvent::Kind::kAttemptGone:
      yarn_am_->MarkAttemptGone();
      out.kind = am::ContainerEvent::Kind::kAllEnded;
      break;
    case TaskContainerEvent::Kind::kRmError:
      out.kind = am::ContainerEvent::Kind::kFatal;
      break;
    case TaskContainerEvent::Kind::kNodeState:
      out.kind = am::ContainerEvent::Kind::kNodeState;
      break;
    case TaskContainerEvent::Kind::kClusterNodes:
      out.kind = am::ContainerEvent::Kind::kClusterNodes;
      break;
    case TaskContainerEvent::Kind::kPreemptNotice:
      out.kind = am::ContainerEvent::Kind::kPreemptNotice;
      break;
  }
  on_event_(out);
}

}  // namespace tony::yarnam
