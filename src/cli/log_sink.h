// Copyright libtony authors.
//
// How the command-line tools show the library's log lines: warnings and errors are messages for
// the user ("ytf-submit: warning: ..."), never log-formatted lines; debug and info lines (only
// shown with TONY_LOG_DEBUG) keep their source location.

#ifndef TONY_CLI_LOG_SINK_H_
#define TONY_CLI_LOG_SINK_H_

#include <string>

#include "absl/strings/string_view.h"
#include "tony/log.h"

namespace tony::cli {

// One line for `severity` and `message`, as the tool `program` prints it (without newline).
std::string UserLogLine(absl::string_view program, LogSeverity severity, absl::string_view file,
                        int line, absl::string_view message);

// Routes library log lines to stderr as UserLogLine, warnings and up only unless TONY_LOG_DEBUG
// is set. Call once at the start of main.
void InstallUserLogSink(absl::string_view program);

}  // namespace tony::cli

#endif  // TONY_CLI_LOG_SINK_H_
