// Copyright libtony authors.

#include "history/event_log.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/logging.h"
#include "common/unique_fd.h"

namespace tony::history {

absl::Status FileEventSink::Append(const std::string& bytes) {
  UniqueFd fd(::open(path_.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600));
  if (!fd.valid()) {
    return absl::InternalError(absl::StrCat("opening ", path_, ": ", std::strerror(errno)));
  }
  for (size_t done = 0; done < bytes.size();) {
    ssize_t n = ::write(fd.get(), bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      return absl::InternalError(absl::StrCat("appending to ", path_, ": ", std::strerror(errno)));
    }
    done += static_cast<size_t>(n);
  }
  return absl::OkStatus();
}

EventLog::EventLog(std::unique_ptr<EventSink> sink, EventLogOptions options)
    : sink_(std::move(sink)),
      options_(std::move(options)),
      clock_(options_.clock != nullptr ? options_.clock : RealClock()) {}

EventLog::~EventLog() { Stop().IgnoreError(); }

void EventLog::Start() {
  absl::MutexLock lock(&mu_);
  if (phase_ != Phase::kNew) return;
  phase_ = Phase::kRunning;
  next_flush_ = clock_->Now() + options_.flush_interval;  // from here, not from the thread's start
  thread_ = std::thread([this] { Loop(); });
}

void EventLog::Add(std::string line) {
  absl::MutexLock lock(&mu_);
  if (phase_ == Phase::kStopped) {
    ++dropped_;
    return;
  }
  line.push_back('\n');
  pending_bytes_ += line.size();
  pending_.push_back(std::move(line));
  TrimLocked();
}

void EventLog::TrimLocked() {
  while (pending_bytes_ > options_.max_buffered_bytes && !pending_.empty()) {
    pending_bytes_ -= pending_.front().size();
    pending_.pop_front();
    ++dropped_;
  }
}

absl::Status EventLog::Flush() {
  absl::Status status;
  std::string note;  // logged with no lock held
  {
    absl::MutexLock flush_lock(&flush_mu_);
    std::deque<std::string> batch;
    {
      absl::MutexLock lock(&mu_);
      batch.swap(pending_);
      pending_bytes_ = 0;
    }
    if (batch.empty()) return absl::OkStatus();
    std::string bytes;
    for (const std::string& line : batch) bytes += line;
    status = sink_->Append(bytes);
    absl::MutexLock lock(&mu_);
    if (status.ok()) {
      written_ += static_cast<int64_t>(batch.size());
      if (failing_) note = "event log: appending again";
      failing_ = false;
    } else {
      // Back in front of the lines added meanwhile, for the next try.
      for (auto it = batch.rbegin(); it != batch.rend(); ++it) {
        pending_bytes_ += it->size();
        pending_.push_front(std::move(*it));
      }
      TrimLocked();
      if (!failing_) {
        note = absl::StrCat("event log: ", status.message(), " (kept for the next try)");
      }
      failing_ = true;
    }
  }
  if (!note.empty()) TONY_LOG(WARNING) << note;
  return status;
}

void EventLog::AddUrgent(std::string line) {
  Add(std::move(line));
  absl::MutexLock lock(&mu_);
  urgent_ = true;
}

void EventLog::Loop() {
  while (true) {
    {
      absl::MutexLock lock(&mu_);
      auto woken = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
        return phase_ == Phase::kStopped || urgent_;
      };
      clock_->AwaitWithDeadline(&mu_, absl::Condition(&woken), next_flush_);
      if (phase_ == Phase::kStopped) return;  // Stop() flushes what is left
      urgent_ = false;
      next_flush_ = clock_->Now() + options_.flush_interval;
    }
    Flush().IgnoreError();
  }
}

absl::Status EventLog::Stop() {
  absl::MutexLock stop_lock(&stop_mu_);
  {
    absl::MutexLock lock(&mu_);
    if (phase_ == Phase::kStopped) return last_stop_status_;
    phase_ = Phase::kStopped;
  }
  if (thread_.joinable()) thread_.join();
  last_stop_status_ = Flush();
  return last_stop_status_;
}

int64_t EventLog::dropped() const {
  absl::MutexLock lock(&mu_);
  return dropped_;
}

int64_t EventLog::written() const {
  absl::MutexLock lock(&mu_);
  return written_;
}

}  // namespace tony::history
