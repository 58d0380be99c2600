// Copyright libtony authors.
//
// FakeResourceManager: a ResourceManager for unit tests of the AM core (header only; never in
// integration tests). It records requests and kills; tests emit container events themselves.
// Kill() completes the task at once (exit 143) unless told otherwise. Thread-safe.

#ifndef TONY_AM_FAKE_RESOURCE_MANAGER_H_
#define TONY_AM_FAKE_RESOURCE_MANAGER_H_

#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "am/resource_manager.h"

namespace tony::am {

class FakeResourceManager : public ResourceManager {
 public:
  absl::Status Start(const std::map<std::string, std::string>& executor_env,
                     EventCallback on_event) override {
    absl::MutexLock lock(&mu_);
    env_ = executor_env;
    on_event_ = std::move(on_event);
    return start_status_;
  }
  void Request(const TaskSpec& task) override {
    absl::MutexLock lock(&mu_);
    requested_.push_back(task.id());
  }
  void Relaunch(const TaskSpec& task, const std::string& host, int port) override {
    absl::MutexLock lock(&mu_);
    requested_.push_back(task.id());
    relaunched_.push_back(absl::StrCat(task.id(), "@", host, ":", port));
  }
  void Kill(const std::string& task_id, absl::Duration grace) override {
    EventCallback cb;
    {
      absl::MutexLock lock(&mu_);
      killed_.push_back(task_id);
      if (!complete_on_kill_) return;
      cb = on_event_;
    }
    cb({ContainerEvent::Kind::kCompleted, task_id, "c_" + task_id, 143, ""});
  }
  void Stop() override {
    absl::MutexLock lock(&mu_);
    stopped_ = true;
  }
  std::pair<std::string, std::string> WhyWaiting() const override {
    absl::MutexLock lock(&mu_);
    return why_waiting_;
  }

  // Test side.
  void Emit(ContainerEvent event) {
    EventCallback cb;
    {
      absl::MutexLock lock(&mu_);
      cb = on_event_;
    }
    cb(event);
  }
  void Allocate(const std::string& task) {
    Emit({ContainerEvent::Kind::kAllocated, task, "c_" + task});
  }
  void Complete(const std::string& task, int code) {
    Emit({ContainerEvent::Kind::kCompleted, task, "c_" + task, code});
  }
  bool WaitForRequests(size_t n, absl::Duration timeout = absl::Seconds(10)) {
    absl::MutexLock lock(&mu_);
    auto ready = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return requested_.size() >= n && on_event_ != nullptr;
    };
    mu_.AwaitWithTimeout(absl::Condition(&ready), timeout);
    return ready();
  }
  std::vector<std::string> requested() {
    absl::MutexLock lock(&mu_);
    return requested_;
  }
  // "worker:1@host:port" per Relaunch().
  std::vector<std::string> relaunched() {
    absl::MutexLock lock(&mu_);
    return relaunched_;
  }
  std::vector<std::string> killed() {
    absl::MutexLock lock(&mu_);
    return killed_;
  }
  std::map<std::string, std::string> env() {
    absl::MutexLock lock(&mu_);
    return env_;
  }
  bool stopped() {
    absl::MutexLock lock(&mu_);
    return stopped_;
  }
  void set_why_waiting(std::string kind, std::string text) {
    absl::MutexLock lock(&mu_);
    why_waiting_ = {std::move(kind), std::move(text)};
  }
  void set_complete_on_kill(bool v) {
    absl::MutexLock lock(&mu_);
    complete_on_kill_ = v;
  }
  void set_start_status(absl::Status s) {
    absl::MutexLock lock(&mu_);
    start_status_ = s;
  }

 private:
  mutable absl::Mutex mu_;
  EventCallback on_event_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, std::string> env_ ABSL_GUARDED_BY(mu_);
  std::vector<std::string> requested_ ABSL_GUARDED_BY(mu_);
  std::vector<std::string> killed_ ABSL_GUARDED_BY(mu_);
  std::vector<std::string> relaunched_ ABSL_GUARDED_BY(mu_);
  bool stopped_ ABSL_GUARDED_BY(mu_) = false;
  bool complete_on_kill_ ABSL_GUARDED_BY(mu_) = true;
  std::pair<std::string, std::string> why_waiting_ ABSL_GUARDED_BY(mu_);
  absl::Status start_status_ ABSL_GUARDED_BY(mu_);
};

}  // namespace tony::am

#endif  // TONY_AM_FAKE_RESOURCE_MANAGER_H_
