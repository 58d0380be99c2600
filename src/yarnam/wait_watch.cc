// Copyright libtony authors.

#include "yarnam/wait_watch.h"

#include <utility>

#include "submit/wait_facts.h"
#include "yarn/records.h"

namespace tony::yarnam {

WaitWatch::WaitWatch(WaitWatchOptions options) : options_(std::move(options)) {}

WaitWatch::~WaitWatch() { Stop(); }

void WaitWatch::Start() {
  absl::MutexLock lock(&mu_);
  if (thread_.joinable() || stopping_) return;
  thread_ = std::thread([this] { Loop(); });
}

void WaitWatch::Stop() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  if (thread_.joinable()) thread_.join();
}

submit::WaitReason WaitWatch::Reason() const {
  absl::MutexLock lock(&mu_);
  return reason_;
}

void WaitWatch::Refresh() {
  std::vector<submit::PendingAsk> asks = options_.pending();
  submit::WaitReason why;
  if (!asks.empty() && !options_.rm_web_urls.empty()) {
    // The AM has no ApplicationClientProtocol client: the nodes come from the REST API too,
    // and its own application is running (its AM is this process).
    submit::WaitSources sources;
    sources.http = &http_;
    sources.rm_web_urls = options_.rm_web_urls;
    yarn::ApplicationReport self;
    self.state = yarn::YarnApplicationState::kRunning;
    self.queue = options_.queue;
    self.user = options_.user;
    if (auto id = yarn::ParseApplicationId(options_.app_id); id.ok()) self.id = *id;
    submit::WaitFacts facts =
        submit::GatherWaitFacts(sources, self, std::move(asks), absl::Now() + options_.budget);
    // The nodes unknown (the scheduler is then not asked either): no reason at all rather than
    // "unknown", which would claim the scheduler simply has not placed the containers yet.
    if (facts.nodes_known) why = submit::ClassifyWait(facts);
  }
  absl::MutexLock lock(&mu_);
  reason_ = std::move(why);
}

void WaitWatch::Loop() {
  while (true) {
    Refresh();
    absl::MutexLock lock(&mu_);
    // Wakes at Stop() or after the interval: a pace, not a decision.
    mu_.AwaitWithTimeout(absl::Condition(&stopping_), options_.interval);
    if (stopping_) return;
  }
}

}  // namespace tony::yarnam
