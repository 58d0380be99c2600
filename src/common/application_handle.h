// Copyright libtony authors.
//
// The Application a Submitter hands out: every call goes to the backend's Application, and
// destroying the handle never waits for the backend. A backend's own destructor cancels its
// calls and joins their threads, which takes as long as the slowest call in flight (a
// ResourceManager request, up to its deadline; a local AM being reaped, up to its stop grace);
// a host on an event loop must not wait for that. So the handle, when destroyed:
//   - cancels the waits it started and lets no `done` or `on_progress` of its calls run
//     afterwards: one already running on another thread is waited for (the host's own code),
//     every call not answered yet gets its `done` with Cancelled, on the destroying thread;
//   - destroys the backend at once when nothing is in flight, else hands it to the process's
//     Retirer (common/retirer.h), where the backend's destructor ends its calls; a call the
//     backend already made goes on (a Kill still stops the job), its answer is dropped.
// A `done` may destroy the handle (the destructor does not wait for its own thread).
//
// Thread-safe as the backend is.

#ifndef TONY_COMMON_APPLICATION_HANDLE_H_
#define TONY_COMMON_APPLICATION_HANDLE_H_

#include <memory>

#include "tony/submitter.h"

namespace tony {

std::unique_ptr<Application> MakeApplicationHandle(std::shared_ptr<Application> backend);

}  // namespace tony

#endif  // TONY_COMMON_APPLICATION_HANDLE_H_
