// Copyright libtony authors.
//
// Retirer: destroys objects on a thread of its own, so that an owner whose destructor would wait
// (for a backend call still in flight) does not make its caller wait. One thread, started by
// Start() and joined by Stop() (or the destructor); objects are destroyed in the order given.
//
//   RetireInBackground(std::move(backend));  // its destructor runs on the process's Retirer
//
// Thread-safe.

#ifndef TONY_COMMON_RETIRER_H_
#define TONY_COMMON_RETIRER_H_

#include <deque>
#include <memory>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "common/fork_safe_mutex.h"

namespace tony {

class Retirer {
 public:
  Retirer() = default;
  ~Retirer();  // Stop()
  Retirer(const Retirer&) = delete;
  Retirer& operator=(const Retirer&) = delete;

  // Starts the thread; a no-op when it runs already.
  void Start();
  // Lets the thread destroy what was handed over (each destructor may still wait for its own
  // calls), then joins it.
  void Stop();
  // Drops this reference to `object` on the thread, or here when the thread is not running.
  void Retire(std::shared_ptr<void> object);
  // References handed over and not dropped yet.
  size_t pending() const;
  // Holds `object` for as long as this Retirer exists, never destroying it (the process is
  // ending, or it is a forked child's copy of the parent's).
  void Keep(std::shared_ptr<void> object);

  // fork() handlers (pthread_atfork): no lock is held across the fork, and the child, where
  // the thread does not exist, starts afresh; what the parent had queued is the parent's to
  // destroy, so the child never touches it (leaked there).
  void BeforeFork();
  void AfterForkInParent();
  void AfterForkInChild();

 private:
  void Loop();

  // Fork-safe locks (common/fork_safe_mutex.h): a forked child may retire objects too.
  ForkSafeMutex lifecycle_mu_ ABSL_ACQUIRED_BEFORE(mu_);  // serializes Start and Stop
  std::thread thread_ ABSL_GUARDED_BY(lifecycle_mu_);
  mutable ForkSafeMutex mu_;
  ForkSafeCondVar work_;  // stopping_ set, or queue_ no longer empty
  bool running_ ABSL_GUARDED_BY(mu_) = false;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::deque<std::shared_ptr<void>> queue_ ABSL_GUARDED_BY(mu_);
  size_t destroying_ ABSL_GUARDED_BY(mu_) = 0;
  std::vector<std::shared_ptr<void>> kept_ ABSL_GUARDED_BY(mu_);
};

// Hands `object` to the process's Retirer, started on first use and stopped when the process
// exits normally (std::atexit); from then on what is handed over is let go of without running
// its destructor (the process is ending: no thread is started again). Null is ignored.
void RetireInBackground(std::shared_ptr<void> object);

}  // namespace tony

#endif  // TONY_COMMON_RETIRER_H_
