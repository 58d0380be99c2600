// Copyright libtony authors.

#include "cli/log_sink.h"

#include <cstdio>

#include "absl/strings/str_cat.h"

namespace tony::cli {

std::string UserLogLine(absl::string_view program, LogSeverity severity, absl::string_view file,
                        int line, absl::string_view message) {
  switch (severity) {
    case LogSeverity::kWarning:
      return absl::StrCat(program, ": warning: ", message);
    case LogSeverity::kError:
      return absl::StrCat(program, ": error: ", message);
    default:
      break;
  }
  size_t slash = file.rfind('/');
  if (slash != absl::string_view::npos) file.remove_prefix(slash + 1);
  return absl::StrCat(program, ": [", file, ":", line, "] ", message);
}

void InstallUserLogSink(absl::string_view program) {
  if (MinLogSeverity() > LogSeverity::kDebug) SetMinLogSeverity(LogSeverity::kWarning);
  SetLogSink([name = std::string(program)](LogSeverity severity, absl::string_view file, int line,
                                           absl::string_view message) {
    std::string text = UserLogLine(name, severity, file, line, message) + "\n";
    // One write per line, so lines from several threads do not interleave.
    std::fwrite(text.data(), 1, text.size(), stderr);
    std::fflush(stderr);
  });
}

}  // namespace tony::cli
