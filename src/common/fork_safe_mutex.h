// Copyright libtony authors.
//
// A lock whose copy in a fork()ed child is usable: a plain pthread mutex (and a condition
// variable to go with it) behind Clang's thread-safety annotations. absl::Mutex is not one: a
// parent thread caught mid-enqueue on it (its spin bit) or queued as a waiter leaves the child's
// copy spinning or waiting for a thread the child does not have, even when a pthread_atfork
// prepare handler holds it across the fork (docs/hacking.md, "fork() and absl::Mutex").
//
// The owner of a lock a forked child may take installs fork handlers (pthread_atfork) that call
// BeforeFork() on its locks in the order the code takes them, AfterForkInParent() and
// AfterForkInChild() in reverse: no thread is inside the lock while the process forks, and the
// child's copy, held by the forking thread, starts afresh. A condition variable is re-initialised
// in the child too (its waiters were the parent's threads); signal it with its mutex held, so
// that no thread is inside it either.
//
//   ABSL_CONST_INIT ForkSafeMutex mu;
//   int n ABSL_GUARDED_BY(mu);
//   { ForkSafeLock lock(&mu); ++n; }
//
// Header-only, so that the Python module (which sees only libtony's exported symbols) can use it.
//
// Thread-safe.

#ifndef TONY_COMMON_FORK_SAFE_MUTEX_H_
#define TONY_COMMON_FORK_SAFE_MUTEX_H_

#include <pthread.h>

#include <ctime>

#include "absl/base/thread_annotations.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace tony {

class ABSL_LOCKABLE ForkSafeMutex {
 public:
  // Constant-initialised, and nothing to do on destruction (glibc's pthread_mutex_destroy does
  // nothing either): a global one stays usable by other files' static initialisers and by
  // threads that log while the process exits.
  constexpr ForkSafeMutex() = default;
  ~ForkSafeMutex() = default;
  ForkSafeMutex(const ForkSafeMutex&) = delete;
  ForkSafeMutex& operator=(const ForkSafeMutex&) = delete;

  void Lock() ABSL_EXCLUSIVE_LOCK_FUNCTION() { pthread_mutex_lock(&mu_); }
  void Unlock() ABSL_UNLOCK_FUNCTION() { pthread_mutex_unlock(&mu_); }

  // For a prepare handler: held across the fork, released by one of the two below.
  void BeforeFork() ABSL_NO_THREAD_SAFETY_ANALYSIS { Lock(); }
  void AfterForkInParent() ABSL_NO_THREAD_SAFETY_ANALYSIS { Unlock(); }
  // The child's only thread holds it (BeforeFork): a fresh, unlocked mutex.
  void AfterForkInChild() { pthread_mutex_init(&mu_, nullptr); }

 private:
  friend class ForkSafeCondVar;
  pthread_mutex_t mu_ = PTHREAD_MUTEX_INITIALIZER;
};

// Holds a ForkSafeMutex for its scope.
class ABSL_SCOPED_LOCKABLE ForkSafeLock {
 public:
  explicit ForkSafeLock(ForkSafeMutex* mu) ABSL_EXCLUSIVE_LOCK_FUNCTION(mu) : mu_(mu) {
    mu_->Lock();
  }
  ~ForkSafeLock() ABSL_UNLOCK_FUNCTION() { mu_->Unlock(); }
  ForkSafeLock(const ForkSafeLock&) = delete;
  ForkSafeLock& operator=(const ForkSafeLock&) = delete;

 private:
  ForkSafeMutex* const mu_;
};

// A condition variable for a ForkSafeMutex; waits measure time on the monotonic clock.
// Callers loop on their condition around Wait (wake-ups may be spurious).
class ForkSafeCondVar {
 public:
  ForkSafeCondVar() { Init(); }
  ~ForkSafeCondVar() { pthread_cond_destroy(&cv_); }
  ForkSafeCondVar(const ForkSafeCondVar&) = delete;
  ForkSafeCondVar& operator=(const ForkSafeCondVar&) = delete;

  void Wait(ForkSafeMutex* mu) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    pthread_cond_wait(&cv_, &mu->mu_);
  }
  // Whether `deadline` passed.
  bool WaitUntil(ForkSafeMutex* mu, absl::Time deadline) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    const absl::Duration left = deadline - absl::Now();
    if (left <= absl::ZeroDuration()) return true;
    timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    const timespec until = absl::ToTimespec(absl::DurationFromTimespec(now) + left);
    return pthread_cond_timedwait(&cv_, &mu->mu_, &until) != 0 && absl::Now() >= deadline;
  }
  // With the mutex held (see above).
  void Signal() { pthread_cond_signal(&cv_); }
  void SignalAll() { pthread_cond_broadcast(&cv_); }

  // The parent's waiters do not exist in the child: a fresh condition variable. Call it while
  // the mutex is held across the fork.
  void AfterForkInChild() { Init(); }

 private:
  void Init() {
    pthread_condattr_t attr;
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);  // deadlines unmoved by clock steps
    pthread_cond_init(&cv_, &attr);
    pthread_condattr_destroy(&attr);
  }

  pthread_cond_t cv_;
};

}  // namespace tony

#endif  // TONY_COMMON_FORK_SAFE_MUTEX_H_
