// Copyright libtony authors.
//
// What a job's status looks like from Python: read-only values copied out of the C++ structs.

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "python/bindings.h"
#include "tony/submitter.h"

namespace tony::python {
namespace {

std::string ProgressRepr(const JobTypeProgress& p) {
  return absl::StrCat("JobTypeProgress(total=", p.total, ", allocated=", p.allocated,
                      ", registered=", p.registered, ", running=", p.running,
                      ", succeeded=", p.succeeded, ", failed=", p.failed, ", restarts=", p.restarts,
                      ")");
}

std::string StatusRepr(const ApplicationStatus& s) {
  std::string tasks = absl::StrJoin(s.progress, ", ", [](std::string* out, const auto& entry) {
    absl::StrAppend(out, entry.first, " ", entry.second.running, "/", entry.second.total,
                    " running");
  });
  return absl::StrCat("ApplicationStatus(id='", s.id, "', state=", AppStateName(s.state),
                      tasks.empty() ? "" : ", ", tasks, ")");
}

void BindProgress(py::module_& m) {
  py::class_<JobTypeProgress>(m, "JobTypeProgress",
                              "Task counts of one job type, as the ApplicationMaster sees them.")
      .def_readonly("total", &JobTypeProgress::total)
      .def_readonly("allocated", &JobTypeProgress::allocated, "containers obtained")
      .def_readonly("registered", &JobTypeProgress::registered,
                    "executors registered with the broker")
      .def_readonly("running", &JobTypeProgress::running)
      .def_readonly("succeeded", &JobTypeProgress::succeeded)
      .def_readonly("failed", &JobTypeProgress::failed)
      .def_readonly("restarts", &JobTypeProgress::restarts)
      .def(
          "__eq__", [](const JobTypeProgress& a, const JobTypeProgress& b) { return a == b; },
          py::is_operator())
      .def("__repr__", &ProgressRepr);
}

void BindStatus(py::module_& m) {
  py::class_<ApplicationStatus>(m, "ApplicationStatus", "One snapshot of an application.")
      .def_readonly("id", &ApplicationStatus::id)
      .def_readonly("state", &ApplicationStatus::state)
      .def_readonly("tracking_url", &ApplicationStatus::tracking_url)
      .def_readonly("diagnostics", &ApplicationStatus::diagnostics,
                    "why it failed: task, exit code, tail of its stderr")
      .def_readonly("progress", &ApplicationStatus::progress,
                    "task counts by job type; empty until the ApplicationMaster reports")
      .def_readonly("log_dir", &ApplicationStatus::log_dir)
      .def_readonly("tensorboard_url", &ApplicationStatus::tensorboard_url)
      .def_readonly("pending", &ApplicationStatus::pending,
                    "while waiting for containers: what is pending and why")
      .def_readonly("wait_reason", &ApplicationStatus::wait_reason,
                    "while waiting: why, in the scheduler's terms, with the queue's numbers; "
                    "'' otherwise")
      .def_readonly("wait_kind", &ApplicationStatus::wait_kind,
                    "wait_reason's kind: 'queue-at-capacity', 'user-limit', 'apps-ahead', "
                    "'label-no-active-node', 'gang-never-fits', 'am-not-launched', 'unknown'; "
                    "'' when not waiting")
      .def_readonly("attempt", &ApplicationStatus::attempt)
      .def_readonly("max_attempts", &ApplicationStatus::max_attempts)
      .def_property_readonly(
          "suspended_since",
          [](const ApplicationStatus& s) -> py::object {
            if (s.state != AppState::kSuspended) return py::none();
            return py::float_(absl::ToDoubleSeconds(s.suspended_since - absl::UnixEpoch()));
          },
          "SUSPENDED: since when, in seconds since the epoch (time.time()); None otherwise")
      .def_property_readonly("final", [](const ApplicationStatus& s) { return IsFinal(s.state); })
      .def(
          "__eq__", [](const ApplicationStatus& a, const ApplicationStatus& b) { return a == b; },
          py::is_operator())
      .def("__repr__", &StatusRepr);
}

void BindSummary(py::module_& m) {
  py::class_<ApplicationSummary>(m, "ApplicationSummary", "One application as a listing shows it.")
      .def_readonly("id", &ApplicationSummary::id)
      .def_readonly("state", &ApplicationSummary::state)
      .def_readonly("user", &ApplicationSummary::user)
      .def_readonly("queue", &ApplicationSummary::queue)
      .def_readonly("name", &ApplicationSummary::name)
      .def_readonly("type", &ApplicationSummary::type)
      .def_readonly("tags", &ApplicationSummary::tags)
      .def("__repr__", [](const ApplicationSummary& s) {
        return absl::StrCat("ApplicationSummary(id='", s.id, "', state=", AppStateName(s.state),
                            ", name='", s.name, "')");
      });
}

}  // namespace

void BindStatusTypes(py::module_& m) {
  py::enum_<AppState>(m, "AppState")
      .value("SUBMITTED", AppState::kSubmitted)
      .value("ACCEPTED", AppState::kAccepted)
      .value("RUNNING", AppState::kRunning)
      .value("SUCCEEDED", AppState::kSucceeded)
      .value("FAILED", AppState::kFailed)
      .value("KILLED", AppState::kKilled)
      .value("SUSPENDED", AppState::kSuspended)
      .def_property_readonly("final", [](AppState s) { return IsFinal(s); });
  BindProgress(m);
  BindStatus(m);
  BindSummary(m);
}

}  // namespace tony::python
