// Copyright libtony authors.

#include "common/application_handle.h"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <thread>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "common/cancellation.h"
#include "common/retirer.h"

namespace tony {
// Named, not anonymous: ApplicationHandle (a friend of Application, so in namespace tony) holds
// one, and a member of an internal-linkage type warns where files are compiled together.
namespace handle_internal {

// The answers of one handle's async calls. Each call's `done` (and a wait's `on_progress`) runs
// through Deliver() until Close(); Close() answers the calls still open with their "cancelled"
// value. Thread-safe.
class Deliveries : public std::enable_shared_from_this<Deliveries> {
 public:
  // `done`, wrapped: it runs through this gate, and Close() calls it with `if_closed` instead
  // when the call has not been answered by then. `call_id`, when set, receives the call's id
  // (for TrackProgress).
  template <typename... Args>
  std::function<void(Args...)> Track(uint64_t* call_id, std::function<void(Args...)> done,
                                     std::decay_t<Args>... if_closed) {
    auto slot = std::make_shared<std::function<void(Args...)>>(std::move(done));
    const uint64_t call =
        Begin([slot, closed = std::make_tuple(std::move(if_closed)...)]() mutable {
          std::apply(std::exchange(*slot, nullptr), std::move(closed));
        });
    if (call_id != nullptr) *call_id = call;
    return [self = shared_from_this(), call, slot](Args... args) {
      self->Deliver(call, /*last=*/true,
                    [&] { std::exchange(*slot, nullptr)(std::move(args)...); });
    };
  }

  // `on_progress` of the call `call` (an id from Track), through this gate (null stays null).
  Application::ProgressCallback TrackProgress(uint64_t call,
                                              Application::ProgressCallback on_progress) {
    if (on_progress == nullptr) return nullptr;
    auto slot = std::make_shared<Application::ProgressCallback>(std::move(on_progress));
    return [self = shared_from_this(), call, slot](const ApplicationStatus& s) {
      self->Deliver(call, /*last=*/false, [&] { (*slot)(s); });
    };
  }

  // Whether Close() has begun: a call started from then on (by a `done` that Close() runs) is
  // answered Cancelled at once rather than started and never answered.
  bool closed() const {
    absl::MutexLock lock(&mu_);
    return closed_;
  }

  // Ends every delivery: waits for those running on other threads, then answers the calls not
  // answered yet, on this thread. Whether any was.
  bool Close() {
    std::map<uint64_t, std::function<void()>> open;
    {
      absl::MutexLock lock(&mu_);
      closed_ = true;
      const std::thread::id self = std::this_thread::get_id();
      auto others_done = [this, self]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
        return std::all_of(delivering_.begin(), delivering_.end(),
                           [&](std::thread::id t) { return t == self; });
      };
      mu_.Await(absl::Condition(&others_done));
      open.swap(open_);
    }
    for (auto& [call, answer_closed] : open) answer_closed();
    return !open.empty();
  }

 private:
  uint64_t Begin(std::function<void()> answer_closed) {
    absl::MutexLock lock(&mu_);
    open_.emplace(++next_, std::move(answer_closed));
    return next_;
  }

  // Runs `f` for `call` unless the gate is closed or the call answered; `last`: f answers it.
  void Deliver(uint64_t call, bool last, const std::function<void()>& f) {
    {
      absl::MutexLock lock(&mu_);
      auto it = open_.find(call);
      if (closed_ || it == open_.end()) return;
      if (last) open_.erase(it);
      delivering_.push_back(std::this_thread::get_id());
    }
    f();
    absl::MutexLock lock(&mu_);
    delivering_.erase(
        std::find(delivering_.begin(), delivering_.end(), std::this_thread::get_id()));
  }

  mutable absl::Mutex mu_;
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
  uint64_t next_ ABSL_GUARDED_BY(mu_) = 0;
  // Calls begun and not answered: what answers them when the gate closes first.
  std::map<uint64_t, std::function<void()>> open_ ABSL_GUARDED_BY(mu_);
  std::vector<std::thread::id> delivering_ ABSL_GUARDED_BY(mu_);  // threads inside an `f`
};

}  // namespace handle_internal

using handle_internal::Deliveries;

class ApplicationHandle final : public Application {
 public:
  explicit ApplicationHandle(std::shared_ptr<Application> backend)
      : backend_(std::move(backend)), deliveries_(std::make_shared<Deliveries>()) {}

  ~ApplicationHandle() override {
    closing_.Cancel();
    const bool in_flight = deliveries_->Close();
    if (in_flight) {
      RetireInBackground(std::move(backend_));
    } else {
      backend_.reset();
    }
  }

  const std::string& id() const override { return backend_->id(); }

  absl::StatusOr<ClusterSpec> WaitForClusterSpec(absl::Duration timeout) override {
    return backend_->WaitForClusterSpec(timeout);
  }
  absl::Status ReportClientStarted() override { return backend_->ReportClientStarted(); }
  absl::Status ReportClientAlive() override { return backend_->ReportClientAlive(); }
  absl::Status ReportClientExit(int exit_code) override {
    return backend_->ReportClientExit(exit_code);
  }

 protected:
  absl::StatusOr<ApplicationStatus> DoStatus(const CallOptions& options) override {
    return backend_->Status(options);
  }
  absl::StatusOr<ApplicationStatus> DoWait(absl::Duration timeout,
                                           const ProgressCallback& on_progress,
                                           const Cancellation& cancel) override {
    return backend_->Wait(timeout, on_progress, cancel);
  }
  absl::Status DoKill(const CallOptions& options) override { return backend_->Kill(options); }
  absl::Status DoScale(absl::string_view job_name, int tasks, const CallOptions& options) override {
    return backend_->Scale(job_name, tasks, options);
  }
  absl::Status DoSuspend(bool suspend, const CallOptions& options) override {
    return suspend ? backend_->Suspend(options) : backend_->Resume(options);
  }

  void DoStatusAsync(const CallOptions& options, StatusCallback done) override {
    if (deliveries_->closed()) return done(Cancelled());
    backend_->StatusAsync(options, deliveries_->Track(nullptr, std::move(done), Cancelled()));
  }
  void DoWaitAsync(absl::Duration timeout, ProgressCallback on_progress, StatusCallback done,
                   const Cancellation& cancel) override {
    if (deliveries_->closed()) return done(Cancelled());
    uint64_t call = 0;
    StatusCallback tracked = deliveries_->Track(&call, std::move(done), Cancelled());
    ProgressCallback progress = deliveries_->TrackProgress(call, std::move(on_progress));
    // Ended by the caller's token or by this handle going away; the token pair lives as long as
    // the wait does.
    auto either = std::make_shared<EitherCancellation>(cancel, closing_);
    backend_->WaitAsync(
        timeout, std::move(progress),
        [either, tracked = std::move(tracked)](absl::StatusOr<ApplicationStatus> s) mutable {
          tracked(std::move(s));
        },
        either->token());
  }
  void DoKillAsync(const CallOptions& options, DoneCallback done) override {
    if (deliveries_->closed()) return done(Cancelled().status());
    backend_->KillAsync(options,
                        deliveries_->Track(nullptr, std::move(done), Cancelled().status()));
  }
  void DoScaleAsync(absl::string_view job_name, int tasks, const CallOptions& options,
                    DoneCallback done) override {
    if (deliveries_->closed()) return done(Cancelled().status());
    backend_->ScaleAsync(job_name, tasks, options,
                         deliveries_->Track(nullptr, std::move(done), Cancelled().status()));
  }
  void DoSuspendAsync(bool suspend, const CallOptions& options, DoneCallback done) override {
    if (deliveries_->closed()) return done(Cancelled().status());
    DoneCallback tracked = deliveries_->Track(nullptr, std::move(done), Cancelled().status());
    if (suspend) {
      backend_->SuspendAsync(options, std::move(tracked));
    } else {
      backend_->ResumeAsync(options, std::move(tracked));
    }
  }
  void DoWatchAsync(uint64_t known_version, absl::Duration max_wait, WatchCallback done) override {
    if (deliveries_->closed()) return done(Cancelled(), 0);
    backend_->DoWatchAsync(known_version, max_wait,
                           deliveries_->Track(nullptr, std::move(done), Cancelled(), uint64_t{0}));
  }

 private:
  absl::StatusOr<ApplicationStatus> Cancelled() const {
    return CancelledError(absl::StrCat(backend_->id(), ": its handle was destroyed"));
  }

  std::shared_ptr<Application> backend_;
  const std::shared_ptr<Deliveries> deliveries_;
  Cancellation closing_;
};

std::unique_ptr<Application> MakeApplicationHandle(std::shared_ptr<Application> backend) {
  return std::make_unique<ApplicationHandle>(std::move(backend));
}

}  // namespace tony
