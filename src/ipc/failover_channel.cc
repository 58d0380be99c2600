// Copyright libtony authors.

#include "ipc/failover_channel.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/logging.h"
#include "ipc/rpc_errors.h"

namespace tony::ipc {

FailoverChannel::FailoverChannel(std::vector<std::unique_ptr<RpcChannel>> channels,
                                 std::vector<std::string> names, FailoverOptions options)
    : channels_(std::move(channels)), names_(std::move(names)), options_(options) {}

size_t FailoverChannel::current() const {
  absl::MutexLock lock(&mu_);
  return current_;
}

absl::Status FailoverChannel::Call(absl::string_view method,
                                   const google::protobuf::MessageLite& request,
                                   google::protobuf::MessageLite* response,
                                   const CallOptions& options) {
  if (channels_.empty()) return absl::FailedPreconditionError("no servers configured");
  const absl::Duration timeout =
      options.timeout > absl::ZeroDuration() ? options.timeout : options_.call_timeout;
  const absl::Time deadline = absl::Now() + timeout;
  absl::Duration backoff = options_.round_backoff;
  size_t index;
  {
    absl::MutexLock lock(&mu_);
    index = current_;
  }
  size_t tried_in_round = 0;
  bool warned = false;
  absl::Status last;
  while (true) {
    absl::Duration left = deadline - absl::Now();
    if (left <= absl::ZeroDuration()) break;
    CallOptions attempt = options;
    attempt.timeout = left;
    last = channels_[index]->Call(method, request, response, attempt);
    if (!ShouldFailOver(last)) {
      if (last.ok()) {
        absl::MutexLock lock(&mu_);
        current_ = index;
      }
      return last;
    }
    // Only a request that never reached a server may go elsewhere unless it is idempotent.
    if (!options.idempotent && GetConnectionFailure(last) == ConnectionFailure::kLost) {
      return last;
    }
    const std::string& name = index < names_.size() ? names_[index] : std::to_string(index);
    index = (index + 1) % channels_.size();
    if (channels_.size() > 1) {
      TONY_LOG(INFO) << method << ": " << name << " unavailable (" << last.message()
                     << "); failing over to "
                     << (index < names_.size() ? names_[index] : std::to_string(index));
    }
    if (++tried_in_round >= channels_.size()) {
      tried_in_round = 0;
      // Say once per call that it waits, and how long at most: silence looks like a hang.
      if (!warned) {
        TONY_LOG(WARNING) << options_.peer << " at " << absl::StrJoin(names_, ", ")
                          << " unreachable (" << last.message() << "); retrying for up to "
                          << absl::FormatDuration(timeout);
        warned = true;
      }
      if (absl::Now() + backoff >= deadline) break;
      absl::SleepFor(backoff);
      backoff = std::min(backoff * 2, options_.max_round_backoff);
    }
  }
  if (last.ok()) last = absl::DeadlineExceededError("no attempt made");
  absl::Status out(absl::IsDeadlineExceeded(last) ? absl::StatusCode::kDeadlineExceeded
                                                  : absl::StatusCode::kUnavailable,
                   absl::StrCat(options_.peer, " at ", absl::StrJoin(names_, ", "),
                                " unreachable: gave up after ", absl::FormatDuration(timeout), " (",
                                method, "): ", last.message()));
  last.ForEachPayload([&](absl::string_view url, const absl::Cord& p) { out.SetPayload(url, p); });
  return out;
}

}  // namespace tony::ipc
