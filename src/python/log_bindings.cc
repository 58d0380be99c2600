// Copyright libtony authors.
//
// libtony's log lines for Python's logging (libtony/_logging.py). The C++ sink never takes the
// GIL: a line logged on any libtony thread, even one a GIL-holding Python thread waits for,
// goes into a bounded queue, and a Python thread drains it (_log_queue_next, GIL released
// while it waits) into a logging.Logger.

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cmath>
#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "python/bindings.h"
#include "tony/log.h"

namespace tony::python {
namespace {

using LogLine = std::tuple<int, std::string, int, std::string>;  // severity, file, line, message

// Thread-safe.
class LogQueue {
 public:
  static constexpr size_t kMaxLines = 10000;

  // Routes libtony's lines here (replacing the sink), from `min_severity` up.
  void Start(LogSeverity min_severity) {
    {
      absl::MutexLock lock(&mu_);
      running_ = true;
    }
    SetMinLogSeverity(min_severity);
    SetLogSink(
        [this](LogSeverity severity, absl::string_view file, int line, absl::string_view message) {
          absl::MutexLock lock(&mu_);
          if (!running_) return;
          if (lines_.size() >= kMaxLines) {
            lines_.pop_front();
            ++dropped_;
          }
          lines_.emplace_back(static_cast<int>(severity), std::string(file), line,
                              std::string(message));
        });
  }

  // Back to the default stderr sink; a waiting Next() returns nullopt.
  void Stop() {
    SetLogSink(nullptr);
    absl::MutexLock lock(&mu_);
    running_ = false;
  }

  // The lines queued, waiting up to `timeout` for the first; nullopt once stopped and empty.
  std::optional<std::vector<LogLine>> Next(absl::Duration timeout) {
    absl::MutexLock lock(&mu_);
    auto ready = [this]()
                     ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return !lines_.empty() || !running_; };
    mu_.AwaitWithTimeout(absl::Condition(&ready), timeout);
    if (lines_.empty() && !running_) return std::nullopt;
    std::vector<LogLine> out(std::make_move_iterator(lines_.begin()),
                             std::make_move_iterator(lines_.end()));
    lines_.clear();
    return out;
  }

  int64_t dropped() const {
    absl::MutexLock lock(&mu_);
    return dropped_;
  }

 private:
  mutable absl::Mutex mu_;
  bool running_ ABSL_GUARDED_BY(mu_) = false;
  std::deque<LogLine> lines_ ABSL_GUARDED_BY(mu_);
  int64_t dropped_ ABSL_GUARDED_BY(mu_) = 0;
};

// Never destroyed: libtony's threads may log until the process exits.
LogQueue& Queue() {
  static LogQueue* const queue = new LogQueue;
  return *queue;
}

}  // namespace

void BindLogging(py::module_& m) {
  m.def(
      "_log_queue_start",
      [](int min_severity) {
        if (min_severity < 0 || min_severity > 3) {
          throw py::value_error("min_severity must be 0 (debug) to 3 (error)");
        }
        Queue().Start(static_cast<LogSeverity>(min_severity));
      },
      py::arg("min_severity"));
  m.def("_log_queue_stop", [] { Queue().Stop(); });
  m.def(
      "_log_queue_next",
      [](double timeout_seconds) {
        if (!std::isfinite(timeout_seconds) || timeout_seconds < 0) {
          throw py::value_error("timeout must be a finite number of seconds >= 0");
        }
        py::gil_scoped_release release;
        return Queue().Next(absl::Seconds(timeout_seconds));
      },
      py::arg("timeout"));
  m.def("_log_queue_dropped", [] { return Queue().dropped(); });
  m.def("_min_log_severity", [] { return static_cast<int>(MinLogSeverity()); });
}

}  // namespace tony::python
