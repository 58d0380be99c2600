// Copyright libtony authors.
//
// One thread serves every followed application and never blocks on a backend: applications are
// asked through their asynchronous hooks (long polls of the AM, answered on gRPC's threads, or a
// status call on a thread of the application's own), whose answers land in the inbox. The inbox
// is shared with the calls in flight, so an answer arriving after Stop() finds it, not a dead
// monitor.

#include "tony/application_monitor.h"

#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <deque>
#include <map>
#include <optional>
#include <thread>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "common/logging.h"

namespace tony {
namespace {

constexpr absl::Duration kFirstPause = absl::Milliseconds(100);

}  // namespace

class TONY_NO_EXPORT ApplicationMonitor::Impl {
 public:
  explicit Impl(ApplicationMonitorOptions options) : options_(options) {}
  ~Impl() {
    if (fd_ >= 0) close(fd_);
  }

  // `self` is this Impl: the thread holds it, so a Stop() from a callback (which cannot join
  // the thread it runs on) leaves the thread what it still reads.
  absl::Status Start(std::shared_ptr<Impl> self) {
    absl::MutexLock lock(&inbox_->mu);
    if (started_) return absl::OkStatus();
    fd_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (fd_ < 0) return absl::InternalError(absl::StrCat("eventfd: ", std::strerror(errno)));
    started_ = true;
    thread_ = std::thread([self = std::move(self)] { self->Loop(); });
    return absl::OkStatus();
  }

  void Stop() {
    {
      absl::MutexLock lock(&inbox_->mu);
      if (!started_ || inbox_->closed) return;
      inbox_->closed = true;
    }
    if (thread_.get_id() == std::this_thread::get_id()) {
      // From a callback: the loop ends when it returns; its thread then lets go of this Impl.
      thread_.detach();
    } else if (thread_.joinable()) {
      thread_.join();
    }
    std::map<std::string, Followed> apps;  // destroyed (applications released) without the lock
    absl::MutexLock lock(&inbox_->mu);
    apps.swap(apps_);
  }

  absl::Status Follow(std::shared_ptr<Application> app, absl::Duration timeout, Callback callback) {
    if (app == nullptr) return absl::InvalidArgumentError("Follow: no application");
    absl::MutexLock lock(&inbox_->mu);
    if (!started_ || inbox_->closed) {
      return absl::FailedPreconditionError("the ApplicationMonitor is not running");
    }
    const std::string id = app->id();
    if (apps_.count(id) > 0) return absl::AlreadyExistsError(absl::StrCat(id, " is followed"));
    Followed& f = apps_[id];
    f.app = std::move(app);
    f.callback = std::move(callback);
    f.deadline = absl::Now() + timeout;
    f.generation = ++generation_;
    f.next_ask = absl::Now();
    poked_ = true;  // the loop may be asleep until a later deadline
    return absl::OkStatus();
  }

  void Unfollow(absl::string_view id) {
    // The application is destroyed after the lock is released: its destructor waits for its
    // calls in flight, whose callbacks take this lock.
    std::shared_ptr<Application> app;
    {
      absl::MutexLock lock(&inbox_->mu);
      auto it = apps_.find(std::string(id));
      if (it == apps_.end()) return;
      app = std::move(it->second.app);
      apps_.erase(it);
    }
  }

  int size() const {
    absl::MutexLock lock(&inbox_->mu);
    return static_cast<int>(apps_.size());
  }

  int fd() const {
    absl::MutexLock lock(&inbox_->mu);
    return fd_;
  }

  std::vector<ApplicationEvent> TakeEvents() {
    absl::MutexLock lock(&inbox_->mu);
    uint64_t count;
    // Resets the eventfd; nothing to do if it was not set.
    if (fd_ >= 0 && read(fd_, &count, sizeof(count)) < 0) count = 0;
    std::vector<ApplicationEvent> out(std::make_move_iterator(queue_.begin()),
                                      std::make_move_iterator(queue_.end()));
    queue_.clear();
    return out;
  }

 private:
  // An answer about one application, from any thread.
  struct Answer {
    std::string id;
    uint64_t generation = 0;
    absl::StatusOr<ApplicationStatus> status;
    uint64_t version = 0;
    bool confirmed = false;  // the application's Wait() after a final status: the last event
  };
  struct Inbox {
    absl::Mutex mu;
    std::deque<Answer> answers ABSL_GUARDED_BY(mu);
    bool closed ABSL_GUARDED_BY(mu) = false;
  };
  struct Followed {
    std::shared_ptr<Application> app;
    Callback callback;
    absl::Time deadline;
    uint64_t generation = 0;
    uint64_t version = 0;
    bool asking = false;
    absl::Time next_ask;
    absl::Duration pause = kFirstPause;
    int failures = 0;
    std::optional<ApplicationStatus> last;
  };
  // An event to hand out once the lock is released.
  struct Delivery {
    Callback callback;  // empty: queued already
    ApplicationEvent event;
  };

  void Loop();
  // Handles one answer; may end following (erases from apps_).
  void Absorb(Answer answer, std::vector<Delivery>* out,
              std::vector<std::pair<std::string, std::shared_ptr<Application>>>* confirm)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(inbox_->mu);
  void Emit(Followed& f, const std::string& id, absl::StatusOr<ApplicationStatus> status, bool last,
            std::vector<Delivery>* out) ABSL_EXCLUSIVE_LOCKS_REQUIRED(inbox_->mu);
  void Ask(const std::string& id, Followed& f) ABSL_EXCLUSIVE_LOCKS_REQUIRED(inbox_->mu);
  // Asks the applications in `confirm` to make their final status definitive (their Wait()),
  // answered through the inbox.
  void Confirm(std::vector<std::pair<std::string, std::shared_ptr<Application>>> confirm)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(inbox_->mu);

  const ApplicationMonitorOptions options_;
  const std::shared_ptr<Inbox> inbox_ = std::make_shared<Inbox>();
  std::thread thread_;
  bool started_ ABSL_GUARDED_BY(inbox_->mu) = false;
  int fd_ ABSL_GUARDED_BY(inbox_->mu) = -1;
  uint64_t generation_ ABSL_GUARDED_BY(inbox_->mu) = 0;
  bool poked_ ABSL_GUARDED_BY(inbox_->mu) = false;  // a new application to ask
  std::map<std::string, Followed> apps_ ABSL_GUARDED_BY(inbox_->mu);
  // Applications no longer followed, let go of by Loop() without the lock.
  std::vector<std::shared_ptr<Application>> released_ ABSL_GUARDED_BY(inbox_->mu);
  std::deque<ApplicationEvent> queue_ ABSL_GUARDED_BY(inbox_->mu);
};

void ApplicationMonitor::Impl::Emit(Followed& f, const std::string& id,
                                    absl::StatusOr<ApplicationStatus> status, bool last,
                                    std::vector<Delivery>* out) {
  ApplicationEvent event{id, std::move(status), last};
  if (f.callback) {
    out->push_back({f.callback, std::move(event)});
    return;
  }
  queue_.push_back(std::move(event));
  const uint64_t one = 1;
  // An eventfd's write fails only at its counter's limit, when the reader is woken anyway.
  if (write(fd_, &one, sizeof(one)) < 0) return;
}

void ApplicationMonitor::Impl::Ask(const std::string& id, Followed& f) {
  f.asking = true;
  const uint64_t generation = f.generation;
  std::shared_ptr<Inbox> inbox = inbox_;
  auto deliver = [inbox, id, generation](absl::StatusOr<ApplicationStatus> s, uint64_t version) {
    absl::MutexLock lock(&inbox->mu);
    if (inbox->closed) return;
    inbox->answers.push_back({id, generation, std::move(s), version});
  };
  std::shared_ptr<Application> app = f.app;  // alive while asked, even if unfollowed meanwhile
  const uint64_t version = f.version;
  const absl::Duration wait =
      std::max(absl::ZeroDuration(), std::min(options_.long_poll, f.deadline - absl::Now()));
  // The backends may answer inline (and take the inbox lock): ask without holding it. They
  // never block this thread: libtony's backends ask on threads of their own.
  inbox_->mu.Unlock();
  app->DoWatchAsync(version, wait, deliver);
  // Unfollowed meanwhile, this may have been the last reference: the Application goes here,
  // without the lock (its destruction answers the watch, whose `deliver` takes it).
  app.reset();
  inbox_->mu.Lock();
}

void ApplicationMonitor::Impl::Confirm(
    std::vector<std::pair<std::string, std::shared_ptr<Application>>> confirm) {
  // The lock was released since `confirm` was made (Ask() calls out without it): an application
  // unfollowed meanwhile is not confirmed.
  std::vector<uint64_t> generations;
  for (const auto& [id, app] : confirm) {
    auto it = apps_.find(id);
    generations.push_back(it != apps_.end() && it->second.app == app ? it->second.generation : 0);
  }
  std::shared_ptr<Inbox> inbox = inbox_;
  inbox_->mu.Unlock();
  for (size_t i = 0; i < confirm.size(); ++i) {
    if (generations[i] == 0) continue;
    auto deliver = [inbox, id = confirm[i].first,
                    generation = generations[i]](absl::StatusOr<ApplicationStatus> s) {
      absl::MutexLock lock(&inbox->mu);
      if (inbox->closed) return;
      inbox->answers.push_back({id, generation, std::move(s), 0, /*confirmed=*/true});
    };
    confirm[i].second->WaitAsync(absl::Minutes(2), nullptr, std::move(deliver));
  }
  confirm.clear();  // as in Ask(): the last references go without the lock
  inbox_->mu.Lock();
}

void ApplicationMonitor::Impl::Absorb(
    Answer answer, std::vector<Delivery>* out,
    std::vector<std::pair<std::string, std::shared_ptr<Application>>>* confirm) {
  auto it = apps_.find(answer.id);
  if (it == apps_.end() || it->second.generation != answer.generation) return;  // unfollowed
  Followed& f = it->second;
  if (answer.confirmed) {
    Emit(f, answer.id, std::move(answer.status), /*last=*/true, out);
    released_.push_back(std::move(f.app));
    apps_.erase(it);
    return;
  }
  f.asking = false;
  const absl::Time now = absl::Now();
  if (!answer.status.ok()) {
    f.version = 0;  // ask the backend afresh
    if (++f.failures >= options_.max_failures) {
      Emit(f, answer.id, answer.status.status(), /*last=*/true, out);
      released_.push_back(std::move(f.app));
      apps_.erase(it);
      return;
    }
    f.next_ask = now + f.pause;
    f.pause = std::min(f.pause * 2, options_.max_poll_interval);
    return;
  }
  f.failures = 0;
  ApplicationStatus& s = *answer.status;
  if (IsFinal(s.state)) {
    // The backend's Wait() makes it definitive (a local job is reaped, YARN's staging removed);
    // it returns at once for an application already over.
    confirm->emplace_back(answer.id, f.app);
    f.asking = true;
    if (!f.last || *f.last != s) f.last = s;
    return;
  }
  if (!f.last || *f.last != s) {
    f.last = s;
    Emit(f, answer.id, s, /*last=*/false, out);
  }
  if (answer.version != 0) {
    f.version = answer.version;  // a long poll answered: the next one starts at once
    f.pause = kFirstPause;
    f.next_ask = now;
  } else {
    f.next_ask = now + f.pause;
    f.pause = std::min(f.pause * 2, options_.max_poll_interval);
  }
}

void ApplicationMonitor::Impl::Loop() {
  absl::MutexLock lock(&inbox_->mu);
  while (!inbox_->closed) {
    std::vector<Delivery> out;
    std::vector<std::pair<std::string, std::shared_ptr<Application>>> confirm;
    while (!inbox_->answers.empty()) {
      Answer a = std::move(inbox_->answers.front());
      inbox_->answers.pop_front();
      Absorb(std::move(a), &out, &confirm);
    }
    const absl::Time now = absl::Now();
    absl::Time wake = absl::InfiniteFuture();
    for (auto it = apps_.begin(); it != apps_.end();) {
      Followed& f = it->second;
      if (!f.asking && now >= f.deadline) {
        Emit(
            f, it->first,
            absl::DeadlineExceededError(absl::StrCat(it->first, " is not final after its timeout")),
            /*last=*/true, &out);
        released_.push_back(std::move(f.app));
        it = apps_.erase(it);
        continue;
      }
      if (!f.asking && now >= f.next_ask) {
        const std::string id = it->first;
        Ask(id, f);  // releases the lock for the call: `it` and `f` may be stale after it
        it = apps_.upper_bound(id);
        continue;
      }
      if (!f.asking) wake = std::min({wake, f.next_ask, f.deadline});
      ++it;
    }
    if (!confirm.empty()) Confirm(std::move(confirm));
    if (!released_.empty()) {
      std::vector<std::shared_ptr<Application>> released;
      released.swap(released_);
      inbox_->mu.Unlock();
      released.clear();  // a destroyed Application answers its calls, whose callbacks lock
      inbox_->mu.Lock();
    }
    if (!out.empty()) {
      inbox_->mu.Unlock();
      // Callbacks run without the lock: they may follow, unfollow, stop or take events.
      for (Delivery& d : out) {
        if (d.callback) d.callback(d.event);
      }
      inbox_->mu.Lock();
      continue;
    }
    auto ready = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(inbox_->mu) {
      return inbox_->closed || !inbox_->answers.empty() || poked_;
    };
    inbox_->mu.AwaitWithDeadline(absl::Condition(&ready), wake);
    poked_ = false;
  }
}

ApplicationMonitor::ApplicationMonitor(ApplicationMonitorOptions options)
    : impl_(std::make_shared<Impl>(options)) {}
ApplicationMonitor::~ApplicationMonitor() { Stop(); }
absl::Status ApplicationMonitor::Start() { return impl_->Start(impl_); }
void ApplicationMonitor::Stop() { impl_->Stop(); }
absl::Status ApplicationMonitor::Follow(std::shared_ptr<Application> app, absl::Duration timeout,
                                        Callback callback) {
  return impl_->Follow(std::move(app), timeout, std::move(callback));
}
void ApplicationMonitor::Unfollow(absl::string_view id) { impl_->Unfollow(id); }
int ApplicationMonitor::size() const { return impl_->size(); }
int ApplicationMonitor::fd() const { return impl_->fd(); }
std::vector<ApplicationEvent> ApplicationMonitor::TakeEvents() { return impl_->TakeEvents(); }

}  // namespace tony
