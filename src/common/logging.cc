// Copyright libtony authors.

#include "common/logging.h"

#include <sys/time.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"

namespace tony {
namespace {

absl::Mutex sink_mu;
LogSink* current_sink ABSL_GUARDED_BY(sink_mu) = nullptr;

std::atomic<int> min_severity{-1};  // -1: not yet read from the environment.

char SeverityLetter(LogSeverity s) {
  switch (s) {
    case LogSeverity::kDebug:
      return 'D';
    case LogSeverity::kInfo:
      return 'I';
    case LogSeverity::kWarning:
      return 'W';
    case LogSeverity::kError:
      return 'E';
  }
  return '?';
}

absl::string_view Basename(absl::string_view path) {
  size_t slash = path.rfind('/');
  return slash == absl::string_view::npos ? path : path.substr(slash + 1);
}

void DefaultSink(LogSeverity severity, absl::string_view file, int line, absl::string_view msg) {
  timeval tv;
  gettimeofday(&tv, nullptr);
  tm local;
  localtime_r(&tv.tv_sec, &local);
  char prefix[64];
  std::snprintf(prefix, sizeof(prefix), "%c%02d%02d %02d:%02d:%02d.%03d ", SeverityLetter(severity),
                local.tm_mon + 1, local.tm_mday, local.tm_hour, local.tm_min, local.tm_sec,
                static_cast<int>(tv.tv_usec / 1000));
  std::string out = absl::StrCat(prefix, Basename(file), ":", line, "] ", msg, "\n");
  std::fwrite(out.data(), 1, out.size(), stderr);
}

}  // namespace

void SetLogSink(LogSink sink) {
  absl::MutexLock lock(&sink_mu);
  delete current_sink;
  current_sink = sink ? new LogSink(std::move(sink)) : nullptr;
}

void SetMinLogSeverity(LogSeverity severity) { min_severity.store(static_cast<int>(severity)); }

LogSeverity MinLogSeverity() {
  int v = min_severity.load(std::memory_order_relaxed);
  if (v < 0) {
    const char* debug = std::getenv("TONY_LOG_DEBUG");
    v = static_cast<int>(debug != nullptr && *debug != '\0' ? LogSeverity::kDebug
                                                            : LogSeverity::kInfo);
    min_severity.store(v);
  }
  return static_cast<LogSeverity>(v);
}

namespace internal {

LogMessage::~LogMessage() {
  std::string msg = stream_.str();
  absl::MutexLock lock(&sink_mu);
  if (current_sink != nullptr) {
    (*current_sink)(severity_, file_, line_, msg);
  } else {
    DefaultSink(severity_, file_, line_, msg);
  }
}

}  // namespace internal
}  // namespace tony
