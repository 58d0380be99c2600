// Copyright libtony authors.
//
// ChangeFollower: a thread of its own that runs `look` each time a ChangeSignal counts changes
// past what it saw, until `look` returns false or the signal closes. An owned object with
// Start()/Stop() in place of an ad hoc std::thread whose lambda captures locals.
//
// Thread-compatible: Start() and Stop() from one thread; `look` runs on the follower's thread.

#ifndef TONY_YARNAM_CHANGE_FOLLOWER_H_
#define TONY_YARNAM_CHANGE_FOLLOWER_H_

#include <functional>
#include <thread>
#include <utility>

#include "common/change_signal.h"

namespace tony::yarnam {

class ChangeFollower {
 public:
  // `changes` outlives this object.
  ChangeFollower(ChangeSignal* changes, std::function<bool()> look)
      : changes_(changes), look_(std::move(look)) {}
  ~ChangeFollower() { Stop(); }
  ChangeFollower(const ChangeFollower&) = delete;
  ChangeFollower& operator=(const ChangeFollower&) = delete;

  void Start() {
    thread_ = std::thread([this] {
      for (uint64_t seen = 0; changes_->WaitPast(&seen) && look_();) {
      }
    });
  }
  // Closes the signal (every follower of it ends) and waits for the thread. Idempotent.
  void Stop() {
    if (!thread_.joinable()) return;
    changes_->Close();
    thread_.join();
  }

 private:
  ChangeSignal* const changes_;
  const std::function<bool()> look_;
  std::thread thread_;
};

}  // namespace tony::yarnam

#endif  // TONY_YARNAM_CHANGE_FOLLOWER_H_
