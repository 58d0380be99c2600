// Copyright libtony authors.
//
// AsyncCalls: where an Application's async twins run their blocking calls. Each call gets a
// thread of its own (calls are few and long: waits, kills), owned here and joined by Stop(),
// which first cancels cancellation() so that waits end promptly.
//
//   AsyncCalls calls;
//   calls.Run([this, done] { done(DoStatus({})); });
//   ...
//   calls.Stop();  // in the owner's destructor, before what the calls use goes
//
// Stop() from one of its own calls (a `done` that destroys the owner) joins every other call
// and lets its own thread finish on its own. Thread-safe.

#ifndef TONY_COMMON_ASYNC_CALLS_H_
#define TONY_COMMON_ASYNC_CALLS_H_

#include <functional>
#include <memory>

#include "tony/submitter.h"

namespace tony {

class AsyncCalls {
 public:
  AsyncCalls();
  ~AsyncCalls();  // Stop()s
  AsyncCalls(const AsyncCalls&) = delete;
  AsyncCalls& operator=(const AsyncCalls&) = delete;

  // Runs `call` on a new thread. After Stop() it is not run: false.
  bool Run(std::function<void()> call);

  // Cancelled by Stop().
  const Cancellation& cancellation() const { return cancellation_; }

  // Cancels cancellation(), refuses new calls and joins the threads of those in flight (except
  // the calling thread's own). Idempotent.
  void Stop();

 private:
  struct Shared;
  const Cancellation cancellation_;
  const std::shared_ptr<Shared> shared_;
};

// A backend's Submitter::SubmitAsync: `submit` (its blocking Submit) on a thread of `calls`,
// cancelled by `cancel` or by calls.Stop(); `done` gets its answer on that thread.
using BlockingSubmit = std::function<absl::StatusOr<std::unique_ptr<Application>>(
    const JobSpec&, const CallOptions&, const Cancellation&)>;
void RunSubmitAsync(AsyncCalls& calls, const JobSpec& spec, const CallOptions& call,
                    const Cancellation& cancel, Submitter::SubmitCallback done,
                    BlockingSubmit submit);

}  // namespace tony

#endif  // TONY_COMMON_ASYNC_CALLS_H_
