// Copyright libtony authors.
//
// The event log's entries that follow from the AM core's inputs and outputs alone (the ones
// that need a decision's reason are made where it is decided, in job_state*.cc).

#include <utility>

#include "absl/time/time.h"
#include "am/job_state.h"

namespace tony::am {

namespace {

JobRecord Of(std::string event, const TaskId& task,
             nlohmann::json fields = nlohmann::json::object()) {
  return {std::move(event), task.job.empty() ? "" : task.ToString(), std::move(fields)};
}

}  // namespace

std::optional<JobRecord> RecordOf(const JobEvent& e) {
  using Kind = JobEvent::Kind;
  switch (e.kind) {
    case Kind::kAllocated: {
      JobRecord r = Of("task_allocated", e.task, {{"container", e.container}, {"node", e.node}});
      if (!e.node_http.empty()) r.fields["node_http"] = e.node_http;
      return r;
    }
    case Kind::kLaunchFailed:
      return Of("task_launch_failed", e.task, {{"reason", e.text}});
    case Kind::kCompleted:
      return Of("container_completed", e.task,
                {{"container", e.container}, {"exit_status", e.code}, {"diagnostics", e.text}});
    case Kind::kBackendFailed:
      return Of("backend_failed", e.task, {{"reason", e.text}});
    case Kind::kBackendGone:
      return Of("backend_gone", e.task, {{"reason", e.text}});
    case Kind::kToldJobOver:
      return Of("told_job_over", e.task);
    case Kind::kRegistered:
      return Of("task_registered", e.task, {{"address", e.text}});
    case Kind::kPublished:
      return Of("cluster_spec_published", e.task);
    case Kind::kStarted:
      return Of("task_started", e.task);
    case Kind::kRestarted:
      return Of("task_restarted_in_place", e.task,
                {{"restart", e.restart}, {"exit_code", e.code}, {"stderr_tail", e.text}});
    case Kind::kExited:
      return Of("task_exited", e.task, {{"exit_code", e.code}, {"stderr_tail", e.text}});
    case Kind::kRegistrationTimeout:
      return Of("registration_deadline_passed", e.task, {{"missing", e.missing}});
    case Kind::kHeartbeatTimeout:
      return Of("heartbeat_timeout", e.task);
    case Kind::kKill:
      return Of("kill_requested", e.task, {{"reason", e.text}});
    case Kind::kTensorBoardListening:
      return Of("tensorboard_listening", e.task, {{"url", e.text}});
    case Kind::kScale:
      return JobRecord{"role_scaled", "", {{"role", e.task.job}, {"tasks", e.code}}};
    case Kind::kSuspend:
      return Of("suspend_requested", e.task);
    case Kind::kResume:
      return Of("resume_requested", e.task);
    case Kind::kNodeState:  // what it changes is node_excluded's
    case Kind::kClusterNodes:
    case Kind::kPreemptNotice:  // task_preempt_notice, once per container, from the decision
      return std::nullopt;
  }
  return std::nullopt;
}

std::vector<JobRecord> ActionRecords(const JobActions& a) {
  std::vector<JobRecord> out;
  for (const TaskSpec& t : a.requests) {
    out.push_back(Of("task_requested", TaskId::Of(t),
                     {{"memory_mb", t.memory_mb},
                      {"vcores", t.vcores},
                      {"gpus", t.gpus},
                      {"node_label", t.node_label}}));
  }
  for (const JobActions::Relaunch& r : a.relaunches) {
    out.push_back(Of("task_relaunch_requested", TaskId::Of(r.spec),
                     {{"preferred_host", r.host}, {"port", r.port}}));
  }
  for (const auto& [id, grace] : a.kills) {
    out.push_back(Of("task_stop_requested", id, {{"grace_ms", absl::ToInt64Milliseconds(grace)}}));
  }
  return out;
}

}  // namespace tony::am
