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

#include <functional>
#include <thread>

#include "absl/status/status.h"
#include "common/unique_fd.h"

namespace tony {

class SignalWatcher {
 public:
  // Blocks the signals in the calling thread and opens the signalfd that takes them. If that
  // fails (status() says why), the signals are left unblocked: they keep their default action
  // (ending the process) rather than being lost.
  SignalWatcher();
  ~SignalWatcher();
  SignalWatcher(const SignalWatcher&) = delete;
  SignalWatcher& operator=(const SignalWatcher&) = delete;

  // OK, or why the watcher cannot take signals (then Start() logs it and starts no thread).
  absl::Status status() const { return status_; }
  // Calls `on_signal` on the watcher's thread for each signal taken, until Stop().
  void Start(std::function<void(int signal)> on_signal);
  void Stop();

 private:
  sigset_t signals_;
  absl::Status status_;  // set by the constructor only
  UniqueFd signal_fd_;   // signalfd for signals_
  UniqueFd stop_fd_;     // eventfd that Stop() writes to end the thread
  std::thread thread_;
};

}  // namespace tony

#endif  // TONY_COMMON_SIGNAL_WATCHER_H_
