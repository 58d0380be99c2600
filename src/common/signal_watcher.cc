// Copyright libtony authors.

#include "common/signal_watcher.h"

#include <poll.h>
#include <pthread.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>

#include "absl/strings/str_cat.h"
#include "common/logging.h"

namespace tony {
namespace {

absl::Status Errno(absl::string_view what) {
  return absl::InternalError(absl::StrCat("signal watcher: ", what, ": ", strerror(errno)));
}

}  // namespace

SignalWatcher::SignalWatcher() {
  sigemptyset(&signals_);
  sigaddset(&signals_, SIGTERM);
  sigaddset(&signals_, SIGINT);
  sigaddset(&signals_, SIGHUP);
  // pthread_sigmask returns the error number rather than setting errno.
  if (int rc = ::pthread_sigmask(SIG_BLOCK, &signals_, nullptr); rc != 0) {
    status_ = absl::InternalError(absl::StrCat("signal watcher: pthread_sigmask: ", strerror(rc)));
    return;
  }
  signal_fd_.Reset(::signalfd(-1, &signals_, SFD_CLOEXEC | SFD_NONBLOCK));
  if (!signal_fd_.valid()) {
    status_ = Errno("signalfd");
  } else {
    stop_fd_.Reset(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
    if (!stop_fd_.valid()) status_ = Errno("eventfd");
  }
  // Nobody would take the signals: let them end the process as they would have.
  if (!status_.ok()) ::pthread_sigmask(SIG_UNBLOCK, &signals_, nullptr);
}

SignalWatcher::~SignalWatcher() { Stop(); }

void SignalWatcher::Start(std::function<void(int)> on_signal) {
  if (!status_.ok()) {
    TONY_LOG(ERROR) << status_.message() << "; signals keep their default action";
    return;
  }
  thread_ = std::thread([this, on_signal = std::move(on_signal)] {
    pollfd fds[2] = {{signal_fd_.get(), POLLIN, 0}, {stop_fd_.get(), POLLIN, 0}};
    while (true) {
      if (::poll(fds, 2, -1) < 0) {
        if (errno == EINTR) continue;
        TONY_LOG(ERROR) << Errno("poll").message() << "; no more signals taken";
        return;
      }
      if (fds[1].revents != 0) return;
      signalfd_siginfo si;
      while (::read(signal_fd_.get(), &si, sizeof(si)) == static_cast<ssize_t>(sizeof(si))) {
        on_signal(static_cast<int>(si.ssi_signo));
      }
    }
  });
}

void SignalWatcher::Stop() {
  if (!thread_.joinable()) return;
  uint64_t one = 1;
  if (::write(stop_fd_.get(), &one, sizeof(one)) != static_cast<ssize_t>(sizeof(one))) {
    // An eventfd write fails only when the counter would overflow: it is already signalled.
    TONY_LOG(WARNING) << Errno("waking the watcher").message();
  }
  thread_.join();
}

}  // namespace tony
