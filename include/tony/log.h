// Copyright libtony authors.
//
// Library logging. libtony never writes to stdout; its log lines go to a sink that the host
// program may replace (e.g. to route them into its own logger). The default sink writes
// "I1122 06:30:01.123 file.cc:42] message" lines to stderr.
//
// Stability: stable API (tony/version.h); the default sink's line format is not an API.
//
// Thread-safe: all functions here may be called from any thread.

#ifndef TONY_LOG_H_
#define TONY_LOG_H_

#include <functional>
#include "absl/strings/string_view.h"
#include "tony/export.h"

namespace tony {

enum class LogSeverity { kDebug = 0, kInfo = 1, kWarning = 2, kError = 3 };

// Receives one complete log line (without trailing newline). May be called from any thread,
// concurrently; the sink must be thread-safe. It is called with no libtony lock held, so it may
// block or call into libtony; a line it logs itself (through libtony) goes to stderr rather
// than back into the sink. `file` is relative to libtony's source tree ("src/am/am.cc").
using LogSink = std::function<void(LogSeverity severity, absl::string_view file, int line,
                                   absl::string_view message)>;

// Replaces the sink; an empty function restores the default stderr sink. Calls already running
// in the old sink finish there (the old sink is destroyed after the last of them).
TONY_EXPORT void SetLogSink(LogSink sink);

// Lines below this severity are dropped before formatting. Default: kInfo, or kDebug when the
// environment variable TONY_LOG_DEBUG is set to a non-empty value.
TONY_EXPORT void SetMinLogSeverity(LogSeverity severity);
TONY_EXPORT LogSeverity MinLogSeverity();

}  // namespace tony

#endif  // TONY_LOG_H_
