// Copyright libtony authors.

#include "common/retirer.h"

#include <pthread.h>

#include <atomic>
#include <cstdlib>
#include <new>
#include <utility>

namespace tony {

Retirer::~Retirer() { Stop(); }

void Retirer::Start() {
  ForkSafeLock lifecycle(&lifecycle_mu_);
  if (thread_.joinable()) return;
  {
    ForkSafeLock lock(&mu_);
    running_ = true;
    stopping_ = false;
  }
  thread_ = std::thread([this] { Loop(); });
}

void Retirer::Stop() {
  ForkSafeLock lifecycle(&lifecycle_mu_);
  if (!thread_.joinable()) return;
  {
    ForkSafeLock lock(&mu_);
    stopping_ = true;
    work_.Signal();
  }
  thread_.join();
}

void Retirer::Retire(std::shared_ptr<void> object) {
  if (object == nullptr) return;
  {
    ForkSafeLock lock(&mu_);
    if (running_) {
      queue_.push_back(std::move(object));
      work_.Signal();
      return;
    }
  }
  object.reset();  // no thread: here, with no lock held
}

void Retirer::Keep(std::shared_ptr<void> object) {
  ForkSafeLock lock(&mu_);
  kept_.push_back(std::move(object));
}

size_t Retirer::pending() const {
  ForkSafeLock lock(&mu_);
  return queue_.size() + destroying_;
}

void Retirer::Loop() {
  ForkSafeLock lock(&mu_);
  while (true) {
    while (!stopping_ && queue_.empty()) work_.Wait(&mu_);
    if (queue_.empty()) break;  // stopping, and nothing left to destroy
    std::shared_ptr<void> next = std::move(queue_.front());
    queue_.pop_front();
    ++destroying_;
    mu_.Unlock();
    next.reset();  // the destructor may wait: no lock held
    mu_.Lock();
    --destroying_;
  }
  running_ = false;
}

void Retirer::BeforeFork() {
  lifecycle_mu_.BeforeFork();
  mu_.BeforeFork();
}

void Retirer::AfterForkInParent() {
  mu_.AfterForkInParent();
  lifecycle_mu_.AfterForkInParent();
}

void Retirer::AfterForkInChild() ABSL_NO_THREAD_SAFETY_ANALYSIS {
  // The parent's thread does not exist here: forget its handle without join or detach.
  new (&thread_) std::thread();
  for (auto& object : queue_) kept_.push_back(std::move(object));  // the parent's to destroy
  queue_.clear();
  running_ = false;
  stopping_ = false;
  destroying_ = 0;
  work_.AfterForkInChild();
  mu_.AfterForkInChild();
  lifecycle_mu_.AfterForkInChild();
}

namespace {

std::atomic<bool> process_exiting{false};

// Never destroyed (an object may be handed over during exit); its thread is joined at exit.
Retirer& ProcessRetirer() {
  static Retirer* const retirer = [] {
    auto* r = new Retirer;
    std::atexit([] {
      process_exiting = true;
      ProcessRetirer().Stop();
    });
    pthread_atfork([] { ProcessRetirer().BeforeFork(); },
                   [] { ProcessRetirer().AfterForkInParent(); },
                   [] { ProcessRetirer().AfterForkInChild(); });
    return r;
  }();
  return *retirer;
}

}  // namespace

void RetireInBackground(std::shared_ptr<void> object) {
  if (object == nullptr) return;
  Retirer& retirer = ProcessRetirer();
  if (process_exiting) {
    // Statics are going: a destructor that waits for its calls must not run now.
    retirer.Keep(std::move(object));
    return;
  }
  retirer.Start();
  retirer.Retire(std::move(object));
}

}  // namespace tony
