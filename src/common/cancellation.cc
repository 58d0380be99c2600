// Copyright libtony authors.

#include "common/cancellation.h"

#include <vector>

#include "absl/strings/str_cat.h"

namespace tony {

Cancellation::Cancellation() : state_(std::make_shared<State>()) {}

void Cancellation::Cancel() {
  std::vector<std::function<void()>> listeners;
  {
    absl::MutexLock lock(&state_->mu);
    if (state_->cancelled) return;
    state_->cancelled = true;
    for (auto& [id, fn] : state_->listeners) listeners.push_back(std::move(fn));
    state_->listeners.clear();
  }
  for (auto& fn : listeners) fn();
}

bool Cancellation::cancelled() const {
  absl::MutexLock lock(&state_->mu);
  return state_->cancelled;
}

CancelListener::CancelListener(const Cancellation& token, std::function<void()> on_cancel)
    : state_(token.state_) {
  {
    absl::MutexLock lock(&state_->mu);
    if (!state_->cancelled) {
      id_ = state_->next_listener++;
      state_->listeners.emplace(*id_, std::move(on_cancel));
      return;
    }
  }
  on_cancel();
}

CancelListener::~CancelListener() {
  if (!id_) return;
  absl::MutexLock lock(&state_->mu);
  state_->listeners.erase(*id_);
}

EitherCancellation::EitherCancellation(const Cancellation& a, const Cancellation& b)
    : a_(a, [s = token_]() mutable { s.Cancel(); }),
      b_(b, [s = token_]() mutable { s.Cancel(); }) {}

absl::Status CancelledError(absl::string_view what) {
  return absl::CancelledError(absl::StrCat(what, ": cancelled"));
}

bool SleepUnlessCancelled(const Cancellation& cancel, absl::Duration d) {
  struct Flag {
    absl::Mutex mu;
    bool set ABSL_GUARDED_BY(mu) = false;
  };
  auto flag = std::make_shared<Flag>();
  CancelListener listener(cancel, [flag] {
    absl::MutexLock lock(&flag->mu);
    flag->set = true;
  });
  absl::MutexLock lock(&flag->mu);
  auto set = [&flag]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(flag->mu) { return flag->set; };
  return !flag->mu.AwaitWithTimeout(absl::Condition(&set), d);
}

}  // namespace tony
