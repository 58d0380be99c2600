// Copyright libtony authors.
//
// JobState's suspend and resume (job_state.h, docs/elastic.md "Suspend and resume"): a
// suspension stops every task that has not finished, without failure, and holds the job's
// deadlines; a resume asks for the stopped tasks again as one gang.

#include "absl/strings/str_cat.h"
#include "am/job_state.h"

namespace tony::am {

absl::Status JobState::CheckSuspendRequest(bool suspend) const {
  if (outcome_) return absl::FailedPreconditionError("the job is over");
  if (!suspend) return absl::OkStatus();  // resuming a running job changes nothing
  if (options_.spec.client_mode) {
    return absl::FailedPreconditionError(
        "a client-mode job cannot be suspended: its client task runs in ytf-submit --client");
  }
  if (!published_) {
    return absl::FailedPreconditionError(
        "the job is not running yet (its tasks are still registering); suspend it once it "
        "runs, or kill it");
  }
  if (tracked_done_) {
    return absl::FailedPreconditionError("the job is finishing: its tracked tasks are done");
  }
  return absl::OkStatus();
}

void JobState::Suspend(absl::Time now, JobActions* out) {
  if (suspension_ != Suspension::kNone) {
    resume_requested_ = false;  // suspend, resume, suspend: it stays suspended
    return;
  }
  suspension_ = Suspension::kSuspending;
  recount_all_ = true;  // a stopped task counts differently while suspended
  suspend_requested_at_ = now;
  gang_.Settle();
  elastic_start_by_.reset();
  std::vector<std::string> stopping;
  for (const auto& [id, task] : order_) {
    Task& t = *task;
    if (t.outside || t.scaled_down || t.phase == TaskPhase::kBlocked ||
        t.phase == TaskPhase::kEnded || t.phase == TaskPhase::kStopped) {
      continue;  // finished tasks stay finished; blocked roles wait for their dependencies
    }
    out->reopen.push_back(id);  // the broker watches its heartbeats no more
    StopQuietly(t, id, out);
    stopping.push_back(id.ToString());
  }
  if (!tensorboard_url_.empty()) {
    tensorboard_url_.clear();
    out->tensorboard_url = "";  // the tracking URL goes back to the AM's page
  }
  tensorboard_address_.clear();  // probed again once it registers after the resume
  TONY_DEFER_LOG(out->log, INFO) << "suspending: stopping " << SummarizeTasks(stopping);
  out->records.push_back({"job_suspending", "", {{"tasks", SummarizeTasks(stopping)}}});
}

void JobState::CheckSuspended(absl::Time now, JobActions* out) {
  if (suspension_ != Suspension::kSuspending || outcome_) return;
  for (const auto& [id, t] : tasks_) {
    if (!t.outside && !t.container_ended) return;
  }
  suspension_ = Suspension::kSuspended;
  recount_all_ = true;  // a stopped task counts differently while suspended
  suspended_since_ = now;
  TONY_DEFER_LOG(out->log, INFO) << "suspended: every task stopped, its container released";
  out->records.push_back({"job_suspended", "", {}});
  if (std::exchange(resume_requested_, false)) Resume(now, out);
}

void JobState::Resume(absl::Time now, JobActions* out) {
  if (suspension_ == Suspension::kNone) return;
  if (suspension_ == Suspension::kSuspending) {
    resume_requested_ = true;  // once every task has stopped
    return;
  }
  // The time suspended does not count against the job's deadlines.
  const absl::Duration paused = now - suspend_requested_at_;
  if (job_deadline_ != absl::InfiniteFuture()) job_deadline_ += paused;
  for (auto& [role, asked] : asked_at_) asked += paused;
  suspension_ = Suspension::kNone;
  recount_all_ = true;  // a stopped task counts differently while suspended
  std::vector<std::string> asked;
  bool elastic = false;
  bool gang = false;
  for (const auto& [id, task] : order_) {
    Task& t = *task;
    if (t.outside || t.scaled_down || t.phase != TaskPhase::kStopped) continue;
    Renew(t, TaskPhase::kWaiting, out);
    if (ElasticOf(t.spec) != nullptr) {
      elastic = true;
      out->reopen.push_back(id);  // elastic tasks join the rendezvous one by one
    } else {
      out->rejoin.push_back(id);
      t.register_by = now + options_.spec.timeouts.registration;
      t.asked_again = "was resumed";
      Watch(t);
      gang = true;
    }
    out->requests.push_back(t.spec);
    asked.push_back(id.ToString());
  }
  // All or nothing for the gang (settled by its publication); elastic tasks come as they can.
  if (gang) gang_.Renew(now);
  if (elastic) elastic_start_by_ = now + options_.spec.timeouts.registration;
  TONY_DEFER_LOG(out->log, INFO) << "resuming: asking for " << SummarizeTasks(asked);
  out->records.push_back({"job_resumed",
                          "",
                          {{"tasks", SummarizeTasks(asked)},
                           {"suspended_ms", absl::ToInt64Milliseconds(now - suspended_since_)}}});
}

}  // namespace tony::am
