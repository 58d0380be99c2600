// Copyright libtony authors.
//
// The broker's timer (the registration deadline, silent tasks, status long polls that reach the
// end of their wait) and the status it serves.

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "broker/broker_impl.h"
#include "broker/wire.h"
#include "common/logging.h"

namespace tony {

namespace pb = ::tony::broker;

ApplicationStatus ClusterSpecBroker::Impl::CurrentStatus() {
  if (options_.status_provider) return options_.status_provider();
  ApplicationStatus status;
  absl::MutexLock lock(&mu_);
  status.state = model_.aborted().ok() ? AppState::kRunning : AppState::kFailed;
  status.diagnostics = std::string(model_.aborted().message());
  for (const auto& [name, progress] : model_.progress()) {
    JobTypeProgress& p = status.progress[name];
    p.total = progress.total;
    p.registered = progress.registered;
    p.succeeded = progress.exited;
  }
  return status;
}

pb::StatusResponse ClusterSpecBroker::Impl::RefreshStatus() {
  absl::MutexLock refresh(&refresh_mu_);
  pb::StatusResponse wire = broker::ApplicationStatusToWire(CurrentStatus());
  std::string bytes = wire.SerializeAsString();
  std::vector<StatusReactor*> changed;
  {
    absl::MutexLock lock(&mu_);
    if (bytes != status_bytes_ || status_version_ == 0) {
      status_bytes_ = std::move(bytes);
      ++status_version_;
      for (auto& [reactor, deadline] : status_waiters_) changed.push_back(reactor);
      status_waiters_.clear();
    }
    wire.set_version(status_version_);
  }
  for (StatusReactor* r : changed) {
    *r->response() = wire;
    r->Finish(grpc::Status::OK);
  }
  return wire;
}

void ClusterSpecBroker::Impl::CancelStatusWaiter(StatusReactor* reactor) {
  absl::MutexLock lock(&mu_);
  if (status_waiters_.erase(reactor) > 0) {
    reactor->Finish(grpc::Status(grpc::StatusCode::CANCELLED, "status poll cancelled"));
  }
}

grpc::ServerUnaryReactor* ClusterSpecBroker::Impl::GetStatus(grpc::CallbackServerContext* ctx,
                                                             const pb::StatusRequest* request,
                                                             pb::StatusResponse* response) {
  if (!Authenticated(ctx)) return Reply(ctx, absl::UnauthenticatedError("wrong or no secret"));
  pb::StatusResponse current = RefreshStatus();
  if (request->wait_ms() == 0 || request->known_version() != current.version()) {
    *response = std::move(current);
    return Reply(ctx, absl::OkStatus());
  }
  // A long poll: parked until the status changes or the wait (at most a minute) ends.
  auto* reactor = new StatusReactor(this, response);
  grpc::Status answer_now;
  {
    absl::MutexLock lock(&mu_);
    if (!stopping_ && status_version_ == request->known_version()) {
      const absl::Duration wait =
          std::min(absl::Milliseconds(request->wait_ms()), absl::Minutes(1));
      status_waiters_[reactor] = clock_->Now() + wait;
      ++timer_kicks_;
      return reactor;
    }
    if (stopping_) {
      answer_now = grpc::Status(grpc::StatusCode::UNAVAILABLE, "the broker is stopping");
    }
  }
  *response = std::move(current);  // changed meanwhile
  reactor->Finish(answer_now);
  return reactor;
}

void ClusterSpecBroker::Impl::TimerLoop() {
  const bool watch_heartbeats = options_.heartbeat_timeout != absl::InfiniteDuration();
  const absl::Duration tick = watch_heartbeats
                                  ? std::min(absl::Seconds(1), options_.heartbeat_timeout / 4)
                                  : absl::InfiniteDuration();
  absl::MutexLock lock(&mu_);
  while (!stopping_) {
    // One reading of the clock for the pass and the next wake: a clock moved on meanwhile (a
    // simulated one jumps) finds the wake already due rather than one tick past the jump.
    const absl::Time now = clock_->Now();
    TimerPassLocked(now);
    if (stopping_) break;
    timer_seen_ = now;
    absl::Time wake = model_.NextDeadline();
    if (watch_heartbeats) wake = std::min(wake, now + tick);
    for (const auto& [reactor, deadline] : status_waiters_) wake = std::min(wake, deadline);
    const uint64_t kicks = timer_kicks_;
    auto woken = [this, kicks]()
                     ABSL_SHARED_LOCKS_REQUIRED(mu_) { return stopping_ || timer_kicks_ != kicks; };
    clock_->AwaitWithDeadline(&mu_, absl::Condition(&woken), wake);
  }
}

void ClusterSpecBroker::Impl::TimerPassLocked(absl::Time now) {
  AnswerExpiredPollsLocked(now);
  if (stopping_) return;
  broker::TickDecision d = model_.Tick(now);
  if (d.timeout) {
    std::vector<RegisterReactor*> waiters(waiters_.begin(), waiters_.end());
    waiters_.clear();
    mu_.Unlock();
    TONY_LOG(WARNING) << *d.timeout;
    FinishWaiters(std::move(waiters), absl::AbortedError(*d.timeout), nullptr);
    if (options_.observer != nullptr) options_.observer->OnRegistrationTimeout(d.missing);
    mu_.Lock();
    if (stopping_) return;
  }
  if (d.lost.empty() || options_.observer == nullptr) return;
  mu_.Unlock();
  for (const auto& [name, index] : d.lost) {
    TONY_LOG(WARNING) << "no heartbeat from " << name << ":" << index << " for "
                      << absl::FormatDuration(options_.heartbeat_timeout);
    options_.observer->OnHeartbeatTimeout(name, index);
  }
  mu_.Lock();
}

void ClusterSpecBroker::Impl::AnswerExpiredPollsLocked(absl::Time now) {
  std::vector<StatusReactor*> expired;
  for (const auto& [reactor, deadline] : status_waiters_) {
    if (deadline <= now) expired.push_back(reactor);
  }
  if (expired.empty()) return;
  for (StatusReactor* r : expired) status_waiters_.erase(r);
  mu_.Unlock();
  pb::StatusResponse current = RefreshStatus();  // answers the others if it changed
  for (StatusReactor* r : expired) {
    *r->response() = current;
    r->Finish(grpc::Status::OK);
  }
  mu_.Lock();
}

}  // namespace tony
