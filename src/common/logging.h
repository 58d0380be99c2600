// Copyright libtony authors.
//
// Internal logging macros over the public sink in tony/log.h:
//   TONY_LOG(INFO) << "registered " << task;
// Severities: DEBUG, INFO, WARNING, ERROR. A line is assembled in a local buffer and handed to
// the sink once, so concurrent lines never interleave.

#ifndef TONY_COMMON_LOGGING_H_
#define TONY_COMMON_LOGGING_H_

#include <sstream>

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

// Lets the macro below swallow a stream expression in a void context.
struct LogVoidify {
  void operator&(std::ostream&) {}
};

}  // namespace tony::internal

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

#endif  // TONY_COMMON_LOGGING_H_
