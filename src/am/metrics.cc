// Copyright libtony authors.

#include "am/metrics.h"

#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace tony::am {

namespace {

void Family(std::string* out, absl::string_view name, absl::string_view type,
            absl::string_view help) {
  absl::StrAppend(out, "# HELP ", name, " ", help, "\n# TYPE ", name, " ", type, "\n");
}

}  // namespace

std::string RenderPrometheusMetrics(const ApplicationStatus& status,
                                    const std::map<std::string, TaskUsagePoint>& usage) {
  std::string out;
  Family(&out, "tony_job_state", "gauge", "1 for the job's current state, 0 for the others.");
  for (AppState s :
       {AppState::kSubmitted, AppState::kAccepted, AppState::kRunning, AppState::kSucceeded,
        AppState::kFailed, AppState::kKilled, AppState::kSuspended}) {
    absl::StrAppend(&out, "tony_job_state{state=\"", AppStateName(s), "\"} ",
                    status.state == s ? 1 : 0, "\n");
  }
  Family(&out, "tony_job_attempt", "gauge", "The ApplicationMaster's attempt, 1 for the first.");
  absl::StrAppend(&out, "tony_job_attempt ", status.attempt, "\n");
  Family(&out, "tony_job_waiting_for_containers", "gauge",
         "1 while the job waits for containers YARN has not granted.");
  absl::StrAppend(&out, "tony_job_waiting_for_containers ", status.pending.empty() ? 0 : 1, "\n");
  Family(&out, "tony_tasks", "gauge",
         "Tasks of a job type by phase (as `ytf status` counts them).");
  for (const auto& [job, p] : status.progress) {
    const std::string label = PrometheusLabel(job);
    const std::vector<std::pair<const char*, int>> phases = {
        {"total", p.total},     {"allocated", p.allocated}, {"registered", p.registered},
        {"running", p.running}, {"succeeded", p.succeeded}, {"failed", p.failed}};
    for (const auto& [phase, n] : phases) {
      absl::StrAppend(&out, "tony_tasks{job=\"", label, "\",phase=\"", phase, "\"} ", n, "\n");
    }
  }
  Family(&out, "tony_task_restarts_total", "counter",
         "Task restarts of a job type since the job started (this attempt's view).");
  for (const auto& [job, p] : status.progress) {
    absl::StrAppend(&out, "tony_task_restarts_total{job=\"", PrometheusLabel(job), "\"} ",
                    p.restarts, "\n");
  }
  Family(&out, "tony_task_memory_rss_bytes", "gauge",
         "Resident memory of a task's processes, as its executor last sampled it.");
  for (const auto& [task, p] : usage) {
    absl::StrAppend(&out, "tony_task_memory_rss_bytes{task=\"", PrometheusLabel(task), "\"} ",
                    p.rss_bytes, "\n");
  }
  Family(&out, "tony_task_cpu_seconds_total", "counter",
         "CPU time a task's processes used (a relaunched task starts again from 0).");
  for (const auto& [task, p] : usage) {
    absl::StrAppend(&out, "tony_task_cpu_seconds_total{task=\"", PrometheusLabel(task), "\"} ",
                    absl::StrFormat("%.3f", p.cpu_seconds), "\n");
  }
  Family(&out, "tony_task_cpu_cores", "gauge",
         "Cores a task's processes kept busy between its last two samples.");
  for (const auto& [task, p] : usage) {
    absl::StrAppend(&out, "tony_task_cpu_cores{task=\"", PrometheusLabel(task), "\"} ",
                    absl::StrFormat("%.3f", p.cpu_cores), "\n");
  }
  Family(&out, "tony_tensorboard_up", "gauge", "1 once TensorBoard answers at its URL.");
  absl::StrAppend(&out, "tony_tensorboard_up ", status.tensorboard_url.empty() ? 0 : 1, "\n");
  return out;
}

}  // namespace tony::am
