// Copyright libtony authors.
//
// EventLog: the job's event log (JSON lines, docs/events.md) on its way to a sink, the history
// file in HDFS. Add() only buffers: a thread of the log's own appends the lines in batches, every
// flush_interval and at Stop(), so the AM's loop never waits on HDFS and a crashed AM leaves what
// was flushed, a readable prefix. A failed append keeps its lines for the next try (at most
// max_buffered_bytes; the oldest beyond that are dropped and counted).
//
//   EventLog log(std::make_unique<HdfsEventSink>(hdfs, path));
//   log.Start();
//   log.Add(R"({"v":1,"event":"am_started"})");
//   log.Stop();  // flushes what is left, joins the thread
//
// Thread-safe.

#ifndef TONY_HISTORY_EVENT_LOG_H_
#define TONY_HISTORY_EVENT_LOG_H_

#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <thread>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/clock.h"

namespace tony::history {

// Where the lines go. Called from one thread at a time.
class EventSink {
 public:
  virtual ~EventSink() = default;
  // Appends `bytes` (whole lines) at the end of the log.
  virtual absl::Status Append(const std::string& bytes) = 0;
};

// A local file, appended to (the local backend's job directory). Created 0600.
class FileEventSink : public EventSink {
 public:
  explicit FileEventSink(std::string path) : path_(std::move(path)) {}
  absl::Status Append(const std::string& bytes) override;

 private:
  const std::string path_;
};

struct EventLogOptions {
  // How often buffered lines are appended. Default: 2 seconds.
  absl::Duration flush_interval = absl::Seconds(2);
  // Lines kept while the sink fails; the oldest go first. Default: 8 MiB.
  size_t max_buffered_bytes = size_t{8} << 20;
  // Where the flush thread reads the time and waits. Not owned. Default: null (RealClock()).
  Clock* clock = nullptr;
};

class EventLog {
 public:
  explicit EventLog(std::unique_ptr<EventSink> sink, EventLogOptions options = {});
  ~EventLog();  // Stop()s
  EventLog(const EventLog&) = delete;
  EventLog& operator=(const EventLog&) = delete;

  // Starts the flush thread. Lines added before are kept for its first flush.
  void Start();
  // Buffers one line (a JSON object; the newline is added). Never blocks on the sink.
  void Add(std::string line);
  // Add(), and the flush thread appends it (with what is buffered) now rather than at the next
  // interval: for a line the next attempt of a crashed AM must find (a scale target). Never
  // blocks on the sink.
  void AddUrgent(std::string line);
  // Appends what is buffered now, on the caller's thread (waits for a flush in progress).
  absl::Status Flush();
  // Flushes what is left and joins the thread; the last flush's status. Idempotent; lines
  // added afterwards are dropped.
  absl::Status Stop();

  // Lines dropped: beyond max_buffered_bytes while the sink failed, or added after Stop().
  int64_t dropped() const;
  // Lines the sink has taken.
  int64_t written() const;

 private:
  void Loop();
  // Drops the oldest lines beyond max_buffered_bytes.
  void TrimLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const std::unique_ptr<EventSink> sink_;
  const EventLogOptions options_;
  Clock* const clock_;

  // Serialises Stop() calls, then flushes (the sink's calls); both taken before mu_.
  absl::Mutex stop_mu_ ABSL_ACQUIRED_BEFORE(flush_mu_);
  absl::Status last_stop_status_ ABSL_GUARDED_BY(stop_mu_);
  absl::Mutex flush_mu_ ABSL_ACQUIRED_BEFORE(mu_);
  mutable absl::Mutex mu_;
  std::deque<std::string> pending_ ABSL_GUARDED_BY(mu_);
  size_t pending_bytes_ ABSL_GUARDED_BY(mu_) = 0;
  enum class Phase { kNew, kRunning, kStopped };
  Phase phase_ ABSL_GUARDED_BY(mu_) = Phase::kNew;
  absl::Time next_flush_ ABSL_GUARDED_BY(mu_);
  int64_t dropped_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t written_ ABSL_GUARDED_BY(mu_) = 0;
  bool failing_ ABSL_GUARDED_BY(mu_) = false;  // the last append failed (logged once)
  bool urgent_ ABSL_GUARDED_BY(mu_) = false;   // AddUrgent() since the last flush began
  std::thread thread_;
};

}  // namespace tony::history

#endif  // TONY_HISTORY_EVENT_LOG_H_
