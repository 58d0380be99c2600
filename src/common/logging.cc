// Copyright libtony authors.

#include "common/logging.h"

#include <sys/time.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"

namespace tony {
namespace {

// The sink is swapped under the lock but called outside it (a snapshot keeps it alive), so a
// slow sink never blocks SetLogSink and a sink may itself log.
absl::Mutex sink_mu;
std::shared_ptr<const LogSink> current_sink ABSL_GUARDED_BY(sink_mu);

// Depth of sink calls on this thread: a line logged from inside the sink goes to stderr instead
// of recursing into the sink.
thread_local int sink_depth = 0;

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

absl::string_view SourcePath(absl::string_view file) {
  // From the last top-level directory of the source tree in the path, so the sink gets the same
  // "src/am/am.cc" wherever the tree was built.
  size_t best = absl::string_view::npos;
  for (absl::string_view root : {"/src/", "/tools/", "/include/", "/tests/", "/fuzz/"}) {
    size_t at = file.rfind(root);
    if (at != absl::string_view::npos && (best == absl::string_view::npos || at > best)) best = at;
  }
  return best == absl::string_view::npos ? file : file.substr(best + 1);
}

}  // namespace

void SetLogSink(LogSink sink) {
  auto next = sink ? std::make_shared<const LogSink>(std::move(sink)) : nullptr;
  absl::MutexLock lock(&sink_mu);
  current_sink.swap(next);
  // `next` (the old sink) is released after the lock; calls in flight keep their own reference.
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

LogMessage::~LogMessage() { EmitLogLine(severity_, file_, line_, stream_.str()); }

void EmitLogLine(LogSeverity severity, const char* file_path, int line, const std::string& msg) {
  absl::string_view file = SourcePath(file_path);
  std::shared_ptr<const LogSink> sink;
  if (sink_depth == 0) {
    absl::MutexLock lock(&sink_mu);
    sink = current_sink;
  }
  if (sink == nullptr) {
    DefaultSink(severity, file, line, msg);
    return;
  }
  ++sink_depth;
  (*sink)(severity, file, line, msg);
  --sink_depth;
}

}  // namespace internal

std::ostream& DeferredLog::Add(LogSeverity severity, const char* file, int line) {
  lines_.push_back(Line{severity, file, line, {}});
  return lines_.back().text;
}

void DeferredLog::Emit() {
  std::vector<Line> lines;
  lines.swap(lines_);
  for (Line& l : lines) internal::EmitLogLine(l.severity, l.file, l.line, l.text.str());
}

void DeferredLog::Append(DeferredLog&& other) {
  for (Line& l : other.lines_) lines_.push_back(std::move(l));
  other.lines_.clear();
}

std::vector<std::string> DeferredLog::Texts() const {
  std::vector<std::string> out;
  for (const Line& l : lines_) out.push_back(l.text.str());
  return out;
}

}  // namespace tony
