// Copyright libtony authors.

#include "common/async_calls.h"

#include <iterator>
#include <list>
#include <thread>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "common/cancellation.h"

namespace tony {

struct AsyncCalls::Shared {
  struct Call {
    std::thread thread;
    bool finished = false;
  };
  absl::Mutex mu;
  bool stopped ABSL_GUARDED_BY(mu) = false;
  std::list<Call> calls ABSL_GUARDED_BY(mu);

  // Joins the threads of finished calls (they have returned or are about to).
  void ReapLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    for (auto it = calls.begin(); it != calls.end();) {
      if (it->finished) {
        it->thread.join();
        it = calls.erase(it);
      } else {
        ++it;
      }
    }
  }
};

AsyncCalls::AsyncCalls() : shared_(std::make_shared<Shared>()) {}
AsyncCalls::~AsyncCalls() { Stop(); }

bool AsyncCalls::Run(std::function<void()> call) {
  absl::MutexLock lock(&shared_->mu);
  if (shared_->stopped) return false;
  shared_->ReapLocked();
  auto it = shared_->calls.emplace(shared_->calls.end());
  // The thread keeps the shared state: after a Stop() from its own call, it outlives us.
  it->thread = std::thread([shared = shared_, it, call = std::move(call)] {
    call();
    absl::MutexLock lock(&shared->mu);
    it->finished = true;
  });
  return true;
}

void AsyncCalls::Stop() {
  Cancellation(cancellation_).Cancel();
  std::list<Shared::Call> others;
  {
    absl::MutexLock lock(&shared_->mu);
    shared_->stopped = true;
    for (auto it = shared_->calls.begin(); it != shared_->calls.end();) {
      auto next = std::next(it);
      if (!it->thread.joinable()) {
        // Detached by an earlier Stop() from its own call (a second Stop(): the owner's
        // destructor after its own call stopped it): nothing to join.
      } else if (it->thread.get_id() == std::this_thread::get_id()) {
        // Our own call: it stays in the shared list, which its thread keeps alive.
        it->thread.detach();
      } else {
        others.splice(others.end(), shared_->calls, it);
      }
      it = next;
    }
  }
  for (Shared::Call& c : others) c.thread.join();
}

void RunSubmitAsync(AsyncCalls& calls, const JobSpec& spec, const CallOptions& call,
                    const Cancellation& cancel, Submitter::SubmitCallback done,
                    BlockingSubmit submit) {
  // Ended by the caller's token or by Stop(): a submitter being destroyed cancels its own.
  auto either = std::make_shared<EitherCancellation>(cancel, calls.cancellation());
  const bool started = calls.Run([spec, call, either, done, submit = std::move(submit)] {
    done(submit(spec, call, either->token()));
  });
  if (!started) done(CancelledError("submission: the submitter is being destroyed"));
}

}  // namespace tony
