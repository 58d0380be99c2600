// Copyright libtony authors.
//
// ChangeSignal: a counter of "something may have changed" notices that threads wait on instead
// of polling at an interval; Close() releases every waiter for good.
//
//   ChangeSignal changes;
//   std::thread follower([&] {
//     for (uint64_t seen = 0; changes.WaitPast(&seen);) Look();
//   });
//   changes.Notify();  // from whoever changes what Look() reads
//   changes.Close();
//   follower.join();
//
// Thread-safe.

#ifndef TONY_COMMON_CHANGE_SIGNAL_H_
#define TONY_COMMON_CHANGE_SIGNAL_H_

#include <cstdint>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

namespace tony {

class ChangeSignal {
 public:
  // Counts one change and wakes the waiters. Never blocks on them.
  void Notify() {
    absl::MutexLock lock(&mu_);
    ++count_;
  }

  // Releases every waiter, now and later.
  void Close() {
    absl::MutexLock lock(&mu_);
    closed_ = true;
  }

  // Blocks until changes were counted beyond `*seen` (then sets `*seen` to the count: notices
  // that came meanwhile fold into one wake-up) and returns true, or until Close(): false.
  [[nodiscard]] bool WaitPast(uint64_t* seen) {
    absl::MutexLock lock(&mu_);
    const uint64_t known = *seen;
    auto ready = [this, known]()
                     ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return closed_ || count_ != known; };
    mu_.Await(absl::Condition(&ready));
    if (closed_) return false;
    *seen = count_;
    return true;
  }

 private:
  absl::Mutex mu_;
  uint64_t count_ ABSL_GUARDED_BY(mu_) = 0;
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace tony

#endif  // TONY_COMMON_CHANGE_SIGNAL_H_
