// Copyright libtony authors.
//
// Internal logging macros over the public sink in tony/log.h:
//   TONY_LOG(INFO) << "registered " << task;
// Severities: DEBUG, INFO, WARNING, ERROR. A line is assembled in a local buffer and handed to
// the sink once, so concurrent lines never interleave.

#ifndef TONY_COMMON_LOGGING_H_
#define TONY_COMMON_LOGGING_H_

#include <sstream>
#include <string>
#include <vector>

#include "tony/log.h"

namespace tony::internal {

class LogMessage {
 public:
  LogMessage(LogSeverity severity, const char* file, int line)
      : severity_(severity), file_(file), line_(line) {}
  LogMessage(const LogMessage&) = delete;
  LogMessage& operator=(const LogMessage&) = delete;
  ~LogMessage();

  std::ostream& stream() { return stream_; }

 private:
  LogSeverity severity_;
  const char* file_;
  int line_;
  std::ostringstream stream_;
};

// Hands one complete line to the sink (or stderr).
void EmitLogLine(LogSeverity severity, const char* file, int line, const std::string& message);

// Lets the macro below swallow a stream expression in a void context.
struct LogVoidify {
  void operator&(std::ostream&) {}
};

}  // namespace tony::internal

namespace tony {

// Log lines built under a lock and emitted after it, since the sink runs with no libtony lock
// held (tony/log.h):
//   DeferredLog log;
//   { absl::MutexLock lock(&mu_); TONY_DEFER_LOG(log, INFO) << "registered " << task; }
//   log.Emit();
// Thread-compatible. Movable; lines not emitted are dropped with it.
class DeferredLog {
 public:
  std::ostream& Add(LogSeverity severity, const char* file, int line);
  // Emits the lines in order and forgets them.
  void Emit();
  // Moves `other`'s lines after these.
  void Append(DeferredLog&& other);
  bool empty() const { return lines_.empty(); }
  // The lines' texts, for tests.
  std::vector<std::string> Texts() const;

 private:
  struct Line {
    LogSeverity severity;
    const char* file;
    int line;
    std::ostringstream text;
  };
  std::vector<Line> lines_;
};

}  // namespace tony

#define TONY_LOG_SEVERITY_DEBUG ::tony::LogSeverity::kDebug
#define TONY_LOG_SEVERITY_INFO ::tony::LogSeverity::kInfo
#define TONY_LOG_SEVERITY_WARNING ::tony::LogSeverity::kWarning
#define TONY_LOG_SEVERITY_ERROR ::tony::LogSeverity::kError

#define TONY_LOG(severity)                                                                 \
  (TONY_LOG_SEVERITY_##severity < ::tony::MinLogSeverity())                                \
      ? (void)0                                                                            \
      : ::tony::internal::LogVoidify() &                                                   \
            ::tony::internal::LogMessage(TONY_LOG_SEVERITY_##severity, __FILE__, __LINE__) \
                .stream()

#define TONY_DEFER_LOG(deferred, severity)                  \
  (TONY_LOG_SEVERITY_##severity < ::tony::MinLogSeverity()) \
      ? (void)0                                             \
      : ::tony::internal::LogVoidify() &                    \
            (deferred).Add(TONY_LOG_SEVERITY_##severity, __FILE__, __LINE__)

#endif  // TONY_COMMON_LOGGING_H_
