// Copyright libtony authors.

#include "common/signal_watcher.h"

#include <pthread.h>

#include <ctime>

namespace tony {

SignalWatcher::SignalWatcher() {
  sigemptyset(&signals_);
  sigaddset(&signals_, SIGTERM);
  sigaddset(&signals_, SIGINT);
  sigaddset(&signals_, SIGHUP);
  ::pthread_sigmask(SIG_BLOCK, &signals_, nullptr);
}

SignalWatcher::~SignalWatcher() { Stop(); }

void SignalWatcher::Start(std::function<void(int)> on_signal) {
  thread_ = std::thread([this, on_signal = std::move(on_signal)] {
    // Wake up now and then to notice Stop(): sigtimedwait has no other way out.
    timespec tick{0, 100 * 1000 * 1000};
    while (!stop_.load()) {
      int sig = ::sigtimedwait(&signals_, nullptr, &tick);
      if (sig > 0) on_signal(sig);
    }
  });
}

void SignalWatcher::Stop() {
  stop_.store(true);
  if (thread_.joinable()) thread_.join();
}

}  // namespace tony
