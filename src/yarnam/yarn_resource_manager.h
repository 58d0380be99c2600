// Copyright libtony authors.
//
// The AM core's ResourceManager on YARN: tasks run in YARN containers that YarnTaskLauncher
// obtains and starts; YARN's container events become the core's ContainerEvents.
//
// Thread-safe, as am::ResourceManager requires.

#ifndef TONY_YARNAM_YARN_RESOURCE_MANAGER_H_
#define TONY_YARNAM_YARN_RESOURCE_MANAGER_H_

#include <atomic>
#include <functional>
#include <map>
#include <set>
#include <string>

#include "absl/synchronization/mutex.h"
#include "am/resource_manager.h"
#include "yarnam/wait_watch.h"
#include "yarnam/yarn_am.h"

namespace tony::yarnam {

class YarnResourceManager : public am::ResourceManager {
 public:
  // `yarn_am` must be registered before Start() and outlive this. `priority_of` gives the
  // scheduler priority of a job type (lower first).
  YarnResourceManager(YarnAm* yarn_am, std::function<int(const std::string& job)> priority_of);

  absl::Status Start(const std::map<std::string, std::string>& executor_env,
                     EventCallback on_event) override;
  void Request(const TaskSpec& task) override;
  // On `host` first (relaxed locality: elsewhere when the scheduler cannot place it there),
  // the executor asked to reserve `port` again.
  void Relaunch(const TaskSpec& task, const std::string& host, int port) override;
  void Kill(const std::string& task_id, absl::Duration grace) override;
  void Stop() override;
  void ExcludeNodes(const std::vector<std::string>& hosts) override;
  void IncludeNodes(const std::vector<std::string>& hosts) override;
  std::string Headroom() const override;
  // From a WaitWatch over the launcher's pending asks, started with the launcher.
  std::pair<std::string, std::string> WhyWaiting() const override;

  // Containers of an earlier attempt to adopt instead of asking for new ones, by task
  // (YarnAm::PlanAdoption). Before Start().
  void SetAdoptions(std::map<std::string, yarn::Container> adoptions) {
    absl::MutexLock lock(&mu_);
    adoptions_ = std::move(adoptions);
  }

  // Number of tasks with a container so far.
  int allocated() const { return allocated_.load(); }

 private:
  void OnLauncherEvent(const TaskContainerEvent& e);

  YarnAm* const yarn_am_;
  const std::function<int(const std::string&)> priority_of_;
  EventCallback on_event_;
  std::atomic<int> allocated_{0};
  absl::Mutex mu_;
  std::set<std::string> withdrawn_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, yarn::Container> adoptions_ ABSL_GUARDED_BY(mu_);
  // Set by Start() (before any other thread may call WhyWaiting), stopped by Stop().
  std::unique_ptr<WaitWatch> wait_watch_;
};

}  // namespace tony::yarnam

#endif  // TONY_YARNAM_YARN_RESOURCE_MANAGER_H_
