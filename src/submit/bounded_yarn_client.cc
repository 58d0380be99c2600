// Copyright libtony authors.

#include "submit/bounded_yarn_client.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "common/cancellation.h"

namespace tony::submit {
namespace {

class BoundedYarnClient : public yarn::YarnClient {
 public:
  BoundedYarnClient(yarn::YarnClient& inner, absl::Time deadline, Cancellation cancel,
                    std::string what)
      : inner_(inner), deadline_(deadline), cancel_(std::move(cancel)), what_(std::move(what)) {}

  absl::StatusOr<yarn::NewApplication> CreateApplication(absl::Time deadline) override {
    if (cancel_.cancelled()) return Cancelled();
    return inner_.CreateApplication(Bound(deadline));
  }
  absl::Status SubmitApplication(const yarn::ApplicationSubmissionContext& context,
                                 absl::Time deadline) override {
    if (cancel_.cancelled()) return Cancelled();
    return inner_.SubmitApplication(context, Bound(deadline));
  }
  absl::StatusOr<yarn::ApplicationReport> GetApplicationReport(const yarn::ApplicationId& id,
                                                               absl::Time deadline) override {
    if (cancel_.cancelled()) return Cancelled();
    return inner_.GetApplicationReport(id, Bound(deadline));
  }
  absl::Status KillApplication(const yarn::ApplicationId& id, const std::string& diagnostics,
                               absl::Time deadline) override {
    if (cancel_.cancelled()) return Cancelled();
    return inner_.KillApplication(id, diagnostics, Bound(deadline));
  }
  absl::StatusOr<std::vector<yarn::ApplicationReport>> ListApplications(
      const yarn::ApplicationFilter& filter, absl::Time deadline) override {
    if (cancel_.cancelled()) return Cancelled();
    return inner_.ListApplications(filter, Bound(deadline));
  }
  absl::StatusOr<std::vector<yarn::NodeReport>> ListNodes(
      const std::vector<yarn::NodeState>& states, absl::Time deadline) override {
    if (cancel_.cancelled()) return Cancelled();
    return inner_.ListNodes(states, Bound(deadline));
  }
  absl::StatusOr<std::vector<yarn::ResourceTypeInfo>> GetResourceTypes(
      absl::Time deadline) override {
    if (cancel_.cancelled()) return Cancelled();
    return inner_.GetResourceTypes(Bound(deadline));
  }
  absl::StatusOr<std::vector<yarn::QueueInfo>> ListQueues(absl::Time deadline) override {
    if (cancel_.cancelled()) return Cancelled();
    return inner_.ListQueues(Bound(deadline));
  }
  absl::StatusOr<std::vector<std::string>> SubmittableQueues(absl::Time deadline) override {
    if (cancel_.cancelled()) return Cancelled();
    return inner_.SubmittableQueues(Bound(deadline));
  }

 private:
  absl::Time Bound(absl::Time deadline) const { return std::min(deadline, deadline_); }
  absl::Status Cancelled() const { return CancelledError(what_); }

  yarn::YarnClient& inner_;
  const absl::Time deadline_;
  const Cancellation cancel_;
  const std::string what_;
};

}  // namespace

std::unique_ptr<yarn::YarnClient> BoundYarnClient(yarn::YarnClient& inner, absl::Time deadline,
                                                  Cancellation cancel, std::string what) {
  return std::make_unique<BoundedYarnClient>(inner, deadline, std::move(cancel), std::move(what));
}

}  // namespace tony::submit
