// Copyright libtony authors.
//
// tony::Initialize (tony/init.h).

#include "tony/init.h"

#include "absl/base/const_init.h"
#include "absl/synchronization/mutex.h"
#include "common/status_macros.h"
#include "http/client.h"
#include "ipc/sasl.h"

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
  if (options.gsasl_context != nullptr && ipc::GsaslContextInUse() != nullptr) {
    return absl::FailedPreconditionError(
        "tony::Initialize: libtony has a libgsasl context already; call Initialize before any "
        "other libtony call");
  }
  if (!options.init_curl) TONY_RETURN_IF_ERROR(http::LeaveCurlInitToHost());
  if (options.gsasl_context != nullptr) {
    TONY_RETURN_IF_ERROR(ipc::UseHostGsaslContext(options.gsasl_context));
  }
  initialized = true;
  return absl::OkStatus();
}

}  // namespace tony
