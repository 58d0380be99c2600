// Copyright libtony authors.

#include "history/tensorboard_pool.h"

#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"

namespace tony::history {

TensorBoardPool::TensorBoardPool(TensorBoardLauncher launcher, TensorBoardPoolOptions options)
    : launcher_(std::move(launcher)),
      options_(options),
      clock_(options.clock != nullptr ? options.clock : RealClock()) {}

TensorBoardPool::~TensorBoardPool() {
  std::vector<std::unique_ptr<TensorBoardProcess>> stopping;
  {
    absl::MutexLock lock(&mu_);
    for (auto& [app, entry] : entries_) stopping.push_back(std::move(entry.process));
    entries_.clear();
  }
}

std::unique_ptr<TensorBoardProcess> TensorBoardPool::TakeOldestLocked() {
  auto oldest = entries_.end();
  for (auto it = entries_.begin(); it != entries_.end(); ++it) {
    if (it->second.process == nullptr) continue;  // starting
    if (oldest == entries_.end() || it->second.last_opened < oldest->second.last_opened) {
      oldest = it;
    }
  }
  if (oldest == entries_.end()) return nullptr;
  std::unique_ptr<TensorBoardProcess> process = std::move(oldest->second.process);
  entries_.erase(oldest);
  return process;
}

absl::StatusOr<std::string> TensorBoardPool::Open(const std::string& app_id,
                                                  const std::string& output_path) {
  const absl::Time now = clock_->Now();
  // Stopped after the lock is let go: stopping one waits for its process to end.
  std::vector<std::unique_ptr<TensorBoardProcess>> stopping;
  {
    absl::MutexLock lock(&mu_);
    // Another Open() is starting this job's: wait for it (the launcher has its own deadline).
    auto settled = [this, &app_id]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      auto it = entries_.find(app_id);
      return it == entries_.end() || it->second.process != nullptr;
    };
    mu_.Await(absl::Condition(&settled));
    auto it = entries_.find(app_id);
    if (it != entries_.end()) {
      if (it->second.process->alive()) {
        it->second.last_opened = now;
        return it->second.process->url();
      }
      stopping.push_back(std::move(it->second.process));  // it died: start another
      entries_.erase(it);
    }
    while (static_cast<int>(entries_.size()) >= options_.max_running) {
      std::unique_ptr<TensorBoardProcess> oldest = TakeOldestLocked();
      if (oldest == nullptr) break;
      stopping.push_back(std::move(oldest));
    }
    if (static_cast<int>(entries_.size()) >= options_.max_running) {
      return absl::ResourceExhaustedError(absl::StrCat(
          options_.max_running, " TensorBoards are starting for other jobs; try again shortly"));
    }
    entries_[app_id] = Entry{nullptr, now};  // starting
  }
  stopping.clear();
  absl::StatusOr<std::unique_ptr<TensorBoardProcess>> launched = launcher_(app_id, output_path);
  const absl::Time started = clock_->Now();
  absl::MutexLock lock(&mu_);
  if (!launched.ok() || *launched == nullptr) {
    entries_.erase(app_id);  // the next Open() tries again
    return launched.ok() ? absl::UnavailableError("TensorBoard did not start") : launched.status();
  }
  Entry& entry = entries_[app_id];
  entry.process = *std::move(launched);
  entry.last_opened = started;
  return entry.process->url();
}

int TensorBoardPool::Reap() {
  const absl::Time now = clock_->Now();
  std::vector<std::unique_ptr<TensorBoardProcess>> stopping;
  {
    absl::MutexLock lock(&mu_);
    for (auto it = entries_.begin(); it != entries_.end();) {
      Entry& e = it->second;
      if (e.process != nullptr && (now - e.last_opened >= options_.idle || !e.process->alive())) {
        stopping.push_back(std::move(e.process));
        it = entries_.erase(it);
      } else {
        ++it;
      }
    }
  }
  return static_cast<int>(stopping.size());
}

int TensorBoardPool::running() const {
  absl::MutexLock lock(&mu_);
  int n = 0;
  for (const auto& [app, entry] : entries_) n += entry.process != nullptr ? 1 : 0;
  return n;
}

}  // namespace tony::history
