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

TensorBoardPool::~TensorBoardPool() { StopAll(); }

void TensorBoardPool::StopAll() {
  std::vector<std::unique_ptr<TensorBoardProcess>> stopping;  // stopped after the lock goes
  absl::MutexLock lock(&mu_);
  for (auto it = entries_.begin(); it != entries_.end();) {
    if (it->second.starting()) {
      ++it;  // its Open() is in the launcher and fills the entry
      continue;
    }
    stopping.push_back(std::move(it->second.process));
    it = entries_.erase(it);
  }
}

int TensorBoardPool::OccupiedLocked() const {
  int n = 0;
  for (const auto& [app, entry] : entries_) n += entry.failure.ok() ? 1 : 0;
  return n;
}

std::unique_ptr<TensorBoardProcess> TensorBoardPool::TakeOldestLocked() {
  auto oldest = entries_.end();
  for (auto it = entries_.begin(); it != entries_.end(); ++it) {
    if (it->second.process == nullptr) continue;  // starting, or failed
    if (oldest == entries_.end() || it->second.last_opened < oldest->second.last_opened) {
      oldest = it;
    }
  }
  if (oldest == entries_.end()) return nullptr;
  std::unique_ptr<TensorBoardProcess> process = std::move(oldest->second.process);
  entries_.erase(oldest);
  return process;
}

absl::StatusOr<std::string> TensorBoardPool::Open(const TensorBoardJob& job) {
  const absl::Time now = clock_->Now();
  // Stopped after the lock is let go: stopping one waits for its process to end.
  std::vector<std::unique_ptr<TensorBoardProcess>> stopping;
  {
    absl::MutexLock lock(&mu_);
    // Another Open() is starting this job's: wait for it (the launcher has its own deadline).
    auto settled = [this, &job]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      auto it = entries_.find(job.app_id);
      return it == entries_.end() || !it->second.starting();
    };
    mu_.Await(absl::Condition(&settled));
    auto it = entries_.find(job.app_id);
    if (it != entries_.end() && !it->second.failure.ok()) {
      if (now - it->second.last_opened < options_.retry_after) return it->second.failure;
      entries_.erase(it);  // long enough ago: try again
    } else if (it != entries_.end()) {
      if (it->second.process->alive()) {
        it->second.last_opened = now;
        return it->second.process->url();
      }
      stopping.push_back(std::move(it->second.process));  // it died: start another
      entries_.erase(it);
    }
    while (OccupiedLocked() >= options_.max_running) {
      std::unique_ptr<TensorBoardProcess> oldest = TakeOldestLocked();
      if (oldest == nullptr) break;
      stopping.push_back(std::move(oldest));
    }
    if (OccupiedLocked() >= options_.max_running) {
      return absl::ResourceExhaustedError(absl::StrCat(
          options_.max_running, " TensorBoards are starting for other jobs; try again shortly"));
    }
    entries_[job.app_id] = Entry{nullptr, now, absl::OkStatus()};  // starting
  }
  stopping.clear();
  absl::StatusOr<std::unique_ptr<TensorBoardProcess>> launched = launcher_(job);
  const absl::Time started = clock_->Now();
  absl::MutexLock lock(&mu_);
  Entry& entry = entries_[job.app_id];
  entry.last_opened = started;
  if (!launched.ok() || *launched == nullptr) {
    // Opens waiting for this start get its error, as do those within retry_after.
    entry.failure =
        launched.ok() ? absl::UnavailableError("TensorBoard did not start") : launched.status();
    return entry.failure;
  }
  entry.process = *std::move(launched);
  return entry.process->url();
}

int TensorBoardPool::Reap() {
  const absl::Time now = clock_->Now();
  std::vector<std::unique_ptr<TensorBoardProcess>> stopping;
  {
    absl::MutexLock lock(&mu_);
    for (auto it = entries_.begin(); it != entries_.end();) {
      Entry& e = it->second;
      const bool failed_long_ago = !e.failure.ok() && now - e.last_opened >= options_.retry_after;
      const bool done =
          e.process != nullptr && (now - e.last_opened >= options_.idle || !e.process->alive());
      if (done) stopping.push_back(std::move(e.process));
      it = done || failed_long_ago ? entries_.erase(it) : std::next(it);
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
