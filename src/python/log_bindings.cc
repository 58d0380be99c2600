// Copyright libtony authors.
//
// libtony's log lines for Python's logging (libtony/_logging.py). The C++ sink never takes the
// GIL: a line logged on any libtony thread, even one a GIL-holding Python thread waits for,
// goes into a bounded queue, and a Python thread drains it (_log_queue_next, GIL released
// while it waits) into a logging.Logger.

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <pthread.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <deque>
#include <optional>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "common/fork_safe_mutex.h"
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
      ForkSafeLock lock(&mu_);
      if (!running_) severity_before_ = MinLogSeverity();
      running_ = true;
    }
    SetMinLogSeverity(min_severity);
    SetLogSink([this](LogSeverity severity, absl::string_view file, int line,
                      absl::string_view message) { Add(severity, file, line, message); });
  }

  // Back to the default stderr sink and the severity threshold from before Start(); a waiting
  // Next() returns nullopt once the queue is empty.
  void Stop() {
    SetLogSink(nullptr);
    LogSeverity before;
    {
      ForkSafeLock lock(&mu_);
      if (!running_) return;
      running_ = false;
      ready_.SignalAll();
      before = severity_before_;
    }
    SetMinLogSeverity(before);
  }

  // The lines queued, waiting up to `timeout` for the first; nullopt once stopped and empty.
  // The calling thread is the drain: what it logs itself (a handler calling into libtony) goes
  // to stderr, not around again.
  std::optional<std::vector<LogLine>> Next(absl::Duration timeout) {
    ForkSafeLock lock(&mu_);
    drain_ = std::this_thread::get_id();
    const absl::Time deadline = absl::Now() + timeout;
    while (lines_.empty() && running_) {
      if (ready_.WaitUntil(&mu_, deadline)) break;
    }
    if (lines_.empty() && !running_) return std::nullopt;
    std::vector<LogLine> out(std::make_move_iterator(lines_.begin()),
                             std::make_move_iterator(lines_.end()));
    lines_.clear();
    return out;
  }

  // fork() handlers: no thread holds the lock across the fork; the child, which has no drain
  // thread yet, keeps none of the parent's lines. A fork-safe lock (common/fork_safe_mutex.h):
  // the child's copy of an absl::Mutex may be left mid-enqueue by a parent thread.
  void BeforeFork() { mu_.BeforeFork(); }
  void AfterForkInParent() { mu_.AfterForkInParent(); }
  void AfterForkInChild() ABSL_NO_THREAD_SAFETY_ANALYSIS {
    lines_.clear();
    drain_ = std::thread::id();
    ready_.AfterForkInChild();
    mu_.AfterForkInChild();
  }

  int64_t dropped() const {
    ForkSafeLock lock(&mu_);
    return dropped_;
  }

 private:
  void Add(LogSeverity severity, absl::string_view file, int line, absl::string_view message) {
    {
      ForkSafeLock lock(&mu_);
      if (running_ && std::this_thread::get_id() != drain_) {
        if (lines_.size() >= kMaxLines) {
          lines_.pop_front();
          ++dropped_;
        }
        lines_.emplace_back(static_cast<int>(severity), std::string(file), line,
                            std::string(message));
        ready_.Signal();
        return;
      }
    }
    // Logged by the drain thread itself, or just as the routing stopped.
    static constexpr char kLetters[] = "DIWE";
    std::fprintf(stderr, "%c %.*s:%d] %.*s\n", kLetters[static_cast<int>(severity) & 3],
                 static_cast<int>(file.size()), file.data(), line, static_cast<int>(message.size()),
                 message.data());
  }

  mutable ForkSafeMutex mu_;
  ForkSafeCondVar ready_;  // a line queued, or stopped
  bool running_ ABSL_GUARDED_BY(mu_) = false;
  LogSeverity severity_before_ ABSL_GUARDED_BY(mu_) = LogSeverity::kInfo;
  std::thread::id drain_ ABSL_GUARDED_BY(mu_);
  std::deque<LogLine> lines_ ABSL_GUARDED_BY(mu_);
  int64_t dropped_ ABSL_GUARDED_BY(mu_) = 0;
};

// Never destroyed: libtony's threads may log until the process exits.
LogQueue& Queue() {
  static LogQueue* const queue = [] {
    auto* q = new LogQueue;
    pthread_atfork([] { Queue().BeforeFork(); }, [] { Queue().AfterForkInParent(); },
                   [] { Queue().AfterForkInChild(); });
    return q;
  }();
  return *queue;
}

// `bytes` as a str, each invalid UTF-8 sequence as U+FFFD.
py::str Utf8Replacing(const std::string& bytes) {
  PyObject* decoded =
      PyUnicode_DecodeUTF8(bytes.data(), static_cast<Py_ssize_t>(bytes.size()), "replace");
  if (decoded == nullptr) throw py::error_already_set();
  return py::reinterpret_steal<py::str>(decoded);
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
        std::optional<std::vector<LogLine>> lines;
        {
          py::gil_scoped_release release;
          lines = Queue().Next(absl::Seconds(timeout_seconds));
        }
        if (!lines) return py::object(py::none());
        // A line may quote bytes from anywhere (a path, a peer's answer): decoded with
        // replacement, as pybind11's strict decoding raised and ended the routing.
        py::list out;
        for (const auto& [severity, file, line, message] : *lines) {
          out.append(py::make_tuple(severity, Utf8Replacing(file), line, Utf8Replacing(message)));
        }
        return py::object(std::move(out));
      },
      py::arg("timeout"));
  m.def("_log_queue_dropped", [] { return Queue().dropped(); });
  m.def("_min_log_severity", [] { return static_cast<int>(MinLogSeverity()); });
}

}  // namespace tony::python
