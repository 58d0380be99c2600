// Copyright libtony authors.

#include "local/local_resource_manager.h"

#include <signal.h>

#include "absl/strings/str_cat.h"
#include "common/file_util.h"
#include "common/logging.h"
#include "local/process_sweep.h"

namespace tony::local {

LocalResourceManager::LocalResourceManager(LocalResourceManagerOptions options)
    : options_(std::move(options)) {}

LocalResourceManager::~LocalResourceManager() { Stop(); }

absl::Status LocalResourceManager::Start(const std::map<std::string, std::string>& executor_env,
                                         EventCallback on_event) {
  if (options_.executor_path.empty() || options_.job_dir.empty() || options_.app_id.empty()) {
    return absl::InvalidArgumentError(
        "LocalResourceManager needs executor_path, job_dir and app_id");
  }
  if (::access(options_.executor_path.c_str(), X_OK) != 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("no executable tony-executor at ", options_.executor_path));
  }
  executor_env_ = executor_env;
  on_event_ = std::move(on_event);
  monitor_ = std::thread([this] { MonitorLoop(); });
  return absl::OkStatus();
}

void LocalResourceManager::Emit(const am::ContainerEvent& event) {
  absl::MutexLock lock(&emit_mu_);
  on_event_(event);
}

void LocalResourceManager::Request(const TaskSpec& task) {
  const std::string id = task.id();
  const std::string container =
      absl::StrCat("local_", options_.app_id, "_", task.job_name, "_", task.index);
  Emit({am::ContainerEvent::Kind::kAllocated, id, container});
  const std::string dir = absl::StrCat(options_.job_dir, "/", task.job_name, "-", task.index);
  auto fail = [&](const absl::Status& s) {
    Emit({am::ContainerEvent::Kind::kLaunchFailed, id, container, 0, std::string(s.message())});
    absl::MutexLock lock(&mu_);
    tasks_[id].done = true;
  };
  if (absl::Status s = MakeDirectories(dir); !s.ok()) return fail(s);
  for (const std::string& f : options_.files) {
    if (absl::Status s = CopyFile(f, dir + "/" + BaseName(f)); !s.ok()) return fail(s);
  }
  SubprocessOptions o;
  o.argv = {options_.executor_path};
  o.env = options_.base_env;
  for (const auto& [k, v] : executor_env_) o.env[k] = v;
  o.env[kAppIdEnv] = options_.app_id;
  o.env["TONY_JOB_NAME"] = task.job_name;
  o.env["TONY_TASK_INDEX"] = std::to_string(task.index);
  o.env["TONY_TASK_LOG_DIR"] = dir;
  o.env["TONY_TASK_HOST"] = "127.0.0.1";
  {
    absl::MutexLock lock(&mu_);
    if (auto it = port_hints_.find(id); it != port_hints_.end() && it->second > 0) {
      o.env["TONY_TASK_PORT_HINT"] = std::to_string(it->second);
    }
  }
  o.cwd = dir;
  o.stdout_path = dir + "/executor.log";
  o.stderr_path = dir + "/executor.log";
  absl::StatusOr<std::unique_ptr<Subprocess>> p = absl::CancelledError("stopping");
  {
    absl::MutexLock lock(&mu_);
    if (stopping_) return;
    p = Subprocess::Spawn(o);
    if (p.ok()) {
      TONY_LOG(INFO) << id << ": executor pid " << (*p)->pid() << " in " << dir;
      Task& t = tasks_[id];
      t = Task{};  // a relaunch starts afresh
      t.process = *std::move(p);
    }
  }
  if (!p.ok()) return fail(p.status());
  Emit({am::ContainerEvent::Kind::kLaunched, id, container});
}

void LocalResourceManager::Relaunch(const TaskSpec& task, const std::string& host, int port) {
  {
    absl::MutexLock lock(&mu_);
    port_hints_[task.id()] = port;
  }
  Request(task);
}

void LocalResourceManager::Kill(const std::string& task_id, absl::Duration grace) {
  bool withdrawn = false;
  {
    absl::MutexLock lock(&mu_);
    Task& t = tasks_[task_id];
    if (t.done) return;
    if (t.process == nullptr) {
      t.done = true;  // never started: nothing to stop
      withdrawn = true;
    } else if (!t.kill_at) {
      t.process->Signal(SIGTERM);
      t.kill_at = absl::Now() + grace + options_.kill_margin;
    }
  }
  if (withdrawn) Emit({am::ContainerEvent::Kind::kCompleted, task_id, "", 0, "never started"});
}

void LocalResourceManager::MonitorLoop() {
  while (true) {
    std::vector<am::ContainerEvent> completed;
    {
      absl::MutexLock lock(&mu_);
      if (stopping_) return;
      for (auto& [id, t] : tasks_) {
        if (t.done || t.process == nullptr) continue;
        if (std::optional<int> code = t.process->Poll()) {
          t.done = true;
          completed.push_back({am::ContainerEvent::Kind::kCompleted, id, "", *code, ""});
        } else if (t.kill_at && absl::Now() >= *t.kill_at) {
          TONY_LOG(WARNING) << id << ": executor still running; SIGKILL";
          t.process->Signal(SIGKILL);
          t.kill_at.reset();
        }
      }
    }
    for (const auto& e : completed) Emit(e);
    absl::SleepFor(absl::Milliseconds(20));
  }
}

void LocalResourceManager::Stop() {
  {
    absl::MutexLock lock(&mu_);
    if (stopping_) return;
    stopping_ = true;
  }
  if (monitor_.joinable()) monitor_.join();
  absl::MutexLock lock(&mu_);
  for (auto& [id, t] : tasks_) {
    if (t.process != nullptr && !t.process->Poll()) {
      TONY_LOG(WARNING) << id << ": executor left at the end; SIGKILL";
      t.process->Signal(SIGKILL);
      t.process->Wait(absl::Seconds(5)).IgnoreError();
    }
  }
  if (int n = KillJobProcesses(options_.app_id); n > 0) {
    TONY_LOG(WARNING) << "killed " << n << " leftover process(es) of " << options_.app_id;
  }
}

}  // namespace tony::local
