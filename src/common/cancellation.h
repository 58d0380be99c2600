// Copyright libtony authors.
//
// The internals of tony::Cancellation (tony/submitter.h) that waits use: listeners told of a
// Cancel(), a cancellable sleep, and waiting for one asynchronous answer, a cancellation or a
// deadline, whichever comes first.
//
//   std::optional<absl::StatusOr<Reply>> r = AwaitAnswer<absl::StatusOr<Reply>>(
//       cancel, deadline, [&](auto answer, const Cancellation& give_up) {
//         client->CallAsync(request, answer, give_up);
//       });
//   if (!r) return cancel.cancelled() ? Cancelled() : DeadlineExceeded();
//
// Thread-safe.

#ifndef TONY_COMMON_CANCELLATION_H_
#define TONY_COMMON_CANCELLATION_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "tony/submitter.h"

namespace tony {

struct Cancellation::State {
  absl::Mutex mu;
  bool cancelled ABSL_GUARDED_BY(mu) = false;
  uint64_t next_listener ABSL_GUARDED_BY(mu) = 0;
  std::map<uint64_t, std::function<void()>> listeners ABSL_GUARDED_BY(mu);
};

// Runs `on_cancel` once when `token` is cancelled (at once, inline, if it is already), unless
// this object is destroyed first. `on_cancel` runs on the cancelling thread with no lock held;
// it may run just after the destructor began, so it must hold what it uses (shared state).
class CancelListener {
 public:
  CancelListener(const Cancellation& token, std::function<void()> on_cancel);
  ~CancelListener();
  CancelListener(const CancelListener&) = delete;
  CancelListener& operator=(const CancelListener&) = delete;

 private:
  std::shared_ptr<Cancellation::State> state_;
  std::optional<uint64_t> id_;
};

// A token cancelled when either `a` or `b` is, for as long as the returned holder lives.
class EitherCancellation {
 public:
  EitherCancellation(const Cancellation& a, const Cancellation& b);
  const Cancellation& token() const { return token_; }

 private:
  Cancellation token_;
  CancelListener a_;
  CancelListener b_;
};

absl::Status CancelledError(absl::string_view what);

// Sleeps for `d`; false (at once) when `cancel` is cancelled meanwhile.
bool SleepUnlessCancelled(const Cancellation& cancel, absl::Duration d);

// Starts an asynchronous call with `start(answer, give_up)` and waits for its answer (passed to
// `answer` on any thread, at most once), a cancellation or `deadline`: the answer, or nullopt.
// `give_up` is cancelled when `cancel` is or when the deadline passes, so that a call that can
// be cancelled leaves nothing in flight; an answer that comes later is dropped.
template <typename T>
std::optional<T> AwaitAnswer(
    const Cancellation& cancel, absl::Time deadline,
    const std::function<void(std::function<void(T)>, const Cancellation&)>& start) {
  struct Slot {
    absl::Mutex mu;
    std::optional<T> value ABSL_GUARDED_BY(mu);
    bool cancelled ABSL_GUARDED_BY(mu) = false;
  };
  auto slot = std::make_shared<Slot>();
  Cancellation at_deadline;
  EitherCancellation give_up(cancel, at_deadline);
  CancelListener listener(cancel, [slot] {
    absl::MutexLock lock(&slot->mu);
    slot->cancelled = true;
  });
  start(
      [slot](T value) {
        absl::MutexLock lock(&slot->mu);
        if (!slot->value) slot->value = std::move(value);
      },
      give_up.token());
  std::optional<T> out;
  {
    absl::MutexLock lock(&slot->mu);
    auto ready = [&slot]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(slot->mu) {
      return slot->value.has_value() || slot->cancelled;
    };
    slot->mu.AwaitWithDeadline(absl::Condition(&ready), deadline);
    if (!slot->cancelled) out = std::move(slot->value);
  }
  if (!out) at_deadline.Cancel();  // outside slot->mu: the call's end may answer into it
  return out;
}

}  // namespace tony

#endif  // TONY_COMMON_CANCELLATION_H_
