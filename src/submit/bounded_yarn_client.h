// Copyright libtony authors.
//
// A YarnClient whose every request also ends by one caller's deadline and is not made once the
// caller's Cancellation is cancelled: for a whole operation of many ResourceManager requests
// under one limit (Submitter::Submit, whose cluster checks use the convenience overloads).
//
// Thread-safe as the wrapped client is.

#ifndef TONY_SUBMIT_BOUNDED_YARN_CLIENT_H_
#define TONY_SUBMIT_BOUNDED_YARN_CLIENT_H_

#include <memory>
#include <string>

#include "absl/time/time.h"
#include "tony/submitter.h"
#include "yarn/yarn_client.h"

namespace tony::submit {

// `inner` must outlive the result. A request asked after `cancel` was cancelled fails with
// Cancelled, naming `what` (e.g. "submission of my-job"), without reaching the RM.
std::unique_ptr<yarn::YarnClient> BoundYarnClient(yarn::YarnClient& inner, absl::Time deadline,
                                                  Cancellation cancel, std::string what);

}  // namespace tony::submit

#endif  // TONY_SUBMIT_BOUNDED_YARN_CLIENT_H_
