// Copyright libtony authors.
//
// tony::Initialize (tony/init.h).

#include "tony/init.h"

#include "absl/base/const_init.h"
#include "absl/synchronization/mutex.h"
#include "common/status_macros.h"
#include "http/client.h"

namespace tony {

absl::Status Initialize(const InitOptions& options) {
  ABSL_CONST_INIT static absl::Mutex mu(absl::kConstInit);
  static bool initialized = false;  // guarded by mu
  absl::MutexLock lock(&mu);
  if (initialized) return absl::FailedPreconditionError("tony::Initialize was called before");
  // Both checked before either changes.
  if (!options.init_curl && http::CurlInitializedByLibtony()) {
    return absl::FailedPreconditionError(
        "tony::Initialize: libtony has initialised curl already; call Initialize before any "
        "other libtony call");
  }
  if (!options.init_curl) TONY_RETURN_IF_ERROR(http::LeaveCurlInitToHost());
  // options.gsasl_context is ignored: libtony's DIGEST-MD5 is its own (tony/init.h).
  initialized = true;
  return absl::OkStatus();
}

}  // namespace tony
