// Copyright libtony authors.

#include "common/logging.h"

#include <pthread.h>
#include <sys/time.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <memory>
#include <string>

#include "absl/base/attributes.h"
#include "absl/strings/str_cat.h"
#include "common/fork_safe_mutex.h"

namespace tony {
namespace {

// The sink is swapped under the lock but called outside it (a snapshot keeps it alive), so a
// slow sink never blocks SetLogSink and a sink may itself log.
ABSL_CONST_INIT ForkSafeMutex sink_mu;
std::shared_ptr<const LogSink> current_sink ABSL_GUARDED_BY(sink_mu);

// The default sink writes one line at a time: glibc's localtime_r holds a lock of its own that
// fork() leaves as it was, so no thread of ours may be inside it when the process forks.
ABSL_CONST_INIT ForkSafeMutex default_sink_mu;

// A child forked while other threads log may log too (docs/hacking.md, "fork() and
// absl::Mutex"): neither lock is held by any thread across fork(), and the child's are fresh.
// The two are never held together.
[[maybe_unused]] const int fork_handlers = pthread_atfork(
    [] {
      default_sink_mu.BeforeFork();
      sink_mu.BeforeFork();
    },
    [] {
      sink_mu.AfterForkInParent();
      default_sink_mu.AfterForkInParent();
    },
    [] {
      sink_mu.AfterForkInChild();
      default_sink_mu.AfterForkInChild();
    });

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
  ForkSafeLock lock(&default_sink_mu);
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
  ForkSafeLock lock(&sink_mu);
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
    ForkSafeLock lock(&sink_mu);
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
