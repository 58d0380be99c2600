// Copyright libtony authors.
//
// SignalWatcher: takes SIGTERM, SIGINT and SIGHUP on a thread of its own and hands each to a
// callback, so that a process can end its work in order (e.g. an ApplicationMaster stopping its
// tasks) instead of dying mid-way. Construct it before starting other threads: it blocks the
// signals in the calling thread, and threads started afterwards inherit the mask.
//
// Thread-safe. The callback runs on the watcher's thread; Stop() (or the destructor) joins it.

#ifndef TONY_COMMON_SIGNAL_WATCHER_H_
#define TONY_COMMON_SIGNAL_WATCHER_H_

#include <signal.h>

#include <atomic>
#include <functional>
#include <thread>

namespace tony {

class SignalWatcher {
 public:
  SignalWatcher();  // blocks the signals in the calling thread
  ~SignalWatcher();
  SignalWatcher(const SignalWatcher&) = delete;
  SignalWatcher& operator=(const SignalWatcher&) = delete;

  void Start(std::function<void(int signal)> on_signal);
  void Stop();

 private:
  sigset_t signals_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace tony

#endif  // TONY_COMMON_SIGNAL_WATCHER_H_
