// Copyright libtony authors.
//
// Submitter, Application and ApplicationMonitor in Python. Every call that may block runs
// with the GIL released; the long ones (wait, status, kill) run through the C++ async twins
// while the calling thread waits in short slices, so that Ctrl-C raises KeyboardInterrupt at
// once and progress callbacks run on the caller's thread, as in the C++ Wait.

#include <pybind11/functional.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "python/bindings.h"
#include "tony/application_monitor.h"
#include "tony/submitter.h"

namespace tony::python {
namespace {

// Destroys a libtony object without holding the GIL: destructors join threads and wait for
// calls in flight, which must not stall every other Python thread. Safe on any thread.
template <typename T>
struct GilFreeDelete {
  void operator()(T* p) const {
    if (Py_IsInitialized() && PyGILState_Check()) {
      py::gil_scoped_release release;
      delete p;
    } else {
      delete p;
    }
  }
};

template <typename T>
std::shared_ptr<T> Share(std::unique_ptr<T> p) {
  return std::shared_ptr<T>(p.release(), GilFreeDelete<T>());
}

CallOptions Limits(absl::Duration timeout) { return CallOptions{.timeout = timeout}; }

// The outcome of one async call, filled on a libtony thread and read on the caller's.
// Thread-safe.
class PendingCall {
 public:
  void Progress(const ApplicationStatus& s) {
    absl::MutexLock lock(&mu_);
    progress_.push_back(s);
  }
  void Finish(absl::StatusOr<ApplicationStatus> result) {
    absl::MutexLock lock(&mu_);
    result_ = std::move(result);
  }

  // GIL held. Waits with the GIL released, 100 ms at a time; between slices hands the progress
  // to `on_progress` and checks for signals. A KeyboardInterrupt (or an exception of
  // `on_progress`) cancels `cancel` and propagates.
  absl::StatusOr<ApplicationStatus> Await(const py::object& on_progress, Cancellation cancel) {
    for (;;) {
      std::vector<ApplicationStatus> batch;
      std::optional<absl::StatusOr<ApplicationStatus>> result;
      {
        py::gil_scoped_release release;
        absl::MutexLock lock(&mu_);
        auto ready = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
          return !progress_.empty() || result_.has_value();
        };
        mu_.AwaitWithTimeout(absl::Condition(&ready), absl::Milliseconds(100));
        batch.swap(progress_);
        result = result_;
      }
      try {
        for (const ApplicationStatus& s : batch) {
          if (!on_progress.is_none()) on_progress(s);
        }
        if (PyErr_CheckSignals() != 0) throw py::error_already_set();
      } catch (...) {
        cancel.Cancel();
        throw;
      }
      if (result) return *std::move(result);
    }
  }

 private:
  absl::Mutex mu_;
  std::vector<ApplicationStatus> progress_ ABSL_GUARDED_BY(mu_);
  std::optional<absl::StatusOr<ApplicationStatus>> result_ ABSL_GUARDED_BY(mu_);
};

// Logs are whatever the task wrote: invalid UTF-8 is replaced, never an error.
py::str DecodeLog(const std::string& bytes) {
  return py::reinterpret_steal<py::str>(
      PyUnicode_DecodeUTF8(bytes.data(), static_cast<Py_ssize_t>(bytes.size()), "replace"));
}

// Submitter.read_task_log's answer: the text decoded as Application.logs decodes it.
struct PyTaskLog {
  py::str contents;
  std::string source;
};

// An application and the submitter it came from (its logs are the submitter's to read).
struct PyApplication {
  std::shared_ptr<Submitter> submitter;
  std::shared_ptr<Application> app;

  ApplicationStatus Status(absl::Duration timeout) {
    auto call = std::make_shared<PendingCall>();
    app->StatusAsync(Limits(timeout), [call](auto r) { call->Finish(std::move(r)); });
    return ValueOrThrow(call->Await(py::none(), Cancellation()));
  }
  ApplicationStatus Wait(absl::Duration timeout, const py::object& on_progress) {
    auto call = std::make_shared<PendingCall>();
    Cancellation cancel;
    app->WaitAsync(
        timeout, [call](const ApplicationStatus& s) { call->Progress(s); },
        [call](auto r) { call->Finish(std::move(r)); }, cancel);
    return ValueOrThrow(call->Await(on_progress, cancel));
  }
  // Runs an async call that ends with a bare status (`start` gets its DoneCallback) and waits
  // for it as Wait does: the GIL released, Ctrl-C honoured; an error is raised.
  template <typename Start>
  void AwaitDone(Start start) {
    auto call = std::make_shared<PendingCall>();
    start([call](absl::Status s) {
      call->Finish(s.ok() ? absl::StatusOr<ApplicationStatus>(ApplicationStatus())
                          : absl::StatusOr<ApplicationStatus>(s));
    });
    ThrowIfError(call->Await(py::none(), Cancellation()).status());
  }
  void Kill(absl::Duration timeout) {
    AwaitDone(
        [&](Application::DoneCallback done) { app->KillAsync(Limits(timeout), std::move(done)); });
  }
  void Scale(const std::string& role, int tasks, absl::Duration timeout) {
    AwaitDone([&](Application::DoneCallback done) {
      app->ScaleAsync(role, tasks, Limits(timeout), std::move(done));
    });
  }
  void Suspend(bool suspend, absl::Duration timeout) {
    AwaitDone([&](Application::DoneCallback done) {
      if (suspend) {
        app->SuspendAsync(Limits(timeout), std::move(done));
      } else {
        app->ResumeAsync(Limits(timeout), std::move(done));
      }
    });
  }
  py::str Logs(const std::string& task, const std::string& file, absl::Duration timeout) {
    absl::StatusOr<std::string> text;
    {
      py::gil_scoped_release release;
      text = submitter->ReadLog(app->id(), task, file, Limits(timeout));
    }
    return DecodeLog(ValueOrThrow(std::move(text)));
  }
};

// Submitter options default the binaries to the package's own (libtony/bin next to _tony).
std::string PackageBinDir() {
  py::object os_path = py::module_::import("os.path");
  py::object here = os_path.attr("dirname")(py::module_::import("libtony._tony").attr("__file__"));
  py::object bin = os_path.attr("join")(here, "bin");
  if (os_path.attr("exists")(os_path.attr("join")(bin, "tony-am")).cast<bool>()) {
    return bin.cast<std::string>();
  }
  return "";  // a build tree: TONY_BIN_DIR, else the library's own default
}

std::shared_ptr<Submitter> NewYarn(std::optional<std::string> conf_dir,
                                   std::map<std::string, std::string> conf_overrides,
                                   std::optional<std::string> user,
                                   std::optional<std::string> principal,
                                   std::optional<std::string> keytab, bool broker_tls,
                                   std::optional<std::string> bin_dir) {
  YarnSubmitterOptions o;
  o.conf_dir = conf_dir.value_or("");
  o.conf_overrides = std::move(conf_overrides);
  o.user = user.value_or("");
  o.principal = principal.value_or("");
  o.keytab = keytab.value_or("");
  o.broker_tls = broker_tls;
  o.bin_dir = bin_dir ? *bin_dir : PackageBinDir();
  absl::StatusOr<std::unique_ptr<Submitter>> s;
  {
    py::gil_scoped_release release;
    s = NewYarnSubmitter(o);
  }
  return Share(ValueOrThrow(std::move(s)));
}

std::shared_ptr<Submitter> NewLocal(std::optional<std::string> work_root,
                                    std::vector<std::string> pass_environment,
                                    std::optional<std::string> bin_dir) {
  LocalSubmitterOptions o;
  o.work_root = work_root.value_or("");
  o.pass_environment = std::move(pass_environment);
  o.bin_dir = bin_dir ? *bin_dir : PackageBinDir();
  return Share(NewLocalSubmitter(o));
}

PyApplication Submit(const std::shared_ptr<Submitter>& s, const JobSpec& input) {
  const JobSpec spec = input;  // another Python thread may edit it while the GIL is released
  absl::StatusOr<std::unique_ptr<Application>> app;
  {
    py::gil_scoped_release release;
    app = s->Submit(spec);
  }
  return PyApplication{s, Share(ValueOrThrow(std::move(app)))};
}

PyApplication Open(const std::shared_ptr<Submitter>& s, const std::string& id,
                   absl::Duration timeout) {
  absl::StatusOr<std::unique_ptr<Application>> app;
  {
    py::gil_scoped_release release;
    app = s->Open(id, Limits(timeout));
  }
  return PyApplication{s, Share(ValueOrThrow(std::move(app)))};
}

void BindSubmitter(py::module_& m) {
  py::class_<Submitter, std::shared_ptr<Submitter>>(
      m, "Submitter", "Runs JobSpecs on a backend: YARN, or local processes.")
      .def_static("yarn", &NewYarn, py::arg("conf_dir") = py::none(),
                  py::arg("conf_overrides") = std::map<std::string, std::string>(),
                  py::arg("user") = py::none(), py::arg("principal") = py::none(),
                  py::arg("keytab") = py::none(), py::arg("broker_tls") = false,
                  py::arg("bin_dir") = py::none())
      .def_static("local", &NewLocal, py::arg("work_root") = py::none(),
                  py::arg("pass_environment") = std::vector<std::string>(),
                  py::arg("bin_dir") = py::none())
      .def("submit", &Submit, py::arg("spec"))
      .def("open", &Open, py::arg("id"), py::arg("timeout") = py::none())
      .def(
          "list",
          [](Submitter& s, bool include_finished, std::vector<std::string> tags,
             absl::Duration timeout, bool all_users) {
            absl::StatusOr<std::vector<ApplicationSummary>> apps;
            {
              py::gil_scoped_release release;
              apps = s.List({.include_finished = include_finished,
                             .tags = std::move(tags),
                             .all_users = all_users},
                            Limits(timeout));
            }
            return ValueOrThrow(std::move(apps));
          },
          py::arg("include_finished") = false, py::arg("tags") = std::vector<std::string>(),
          py::arg("timeout") = py::none(), py::kw_only(), py::arg("all_users") = false)
      .def_property_readonly("user", &Submitter::user)
      .def(
          "read_log",
          [](const std::shared_ptr<Submitter>& s, const std::string& id, const std::string& task,
             const std::string& file, absl::Duration timeout) {
            absl::StatusOr<std::string> text;
            {
              py::gil_scoped_release release;
              text = s->ReadLog(id, task, file, Limits(timeout));
            }
            return DecodeLog(ValueOrThrow(std::move(text)));
          },
          py::arg("id"), py::arg("task"), py::arg("file") = "stderr",
          py::arg("timeout") = py::none())
      .def(
          "read_task_log",
          [](const std::shared_ptr<Submitter>& s, const std::string& id, const std::string& task,
             const std::string& file, absl::Duration timeout) {
            absl::StatusOr<TaskLog> log;
            {
              py::gil_scoped_release release;
              log = s->ReadTaskLog(id, task, file, Limits(timeout));
            }
            TaskLog got = ValueOrThrow(std::move(log));
            return PyTaskLog{DecodeLog(got.contents), std::move(got.source)};
          },
          py::arg("id"), py::arg("task"), py::arg("file") = "stderr",
          py::arg("timeout") = py::none(),
          "read_log's text and where it was read: source is \"on <NodeManager>\", \"from the "
          "aggregated logs in hdfs://...\" or, locally, \"in <path>\".");
  py::class_<PyTaskLog>(m, "TaskLog", "One log file of one task and where it was read.")
      .def_readonly("contents", &PyTaskLog::contents)
      .def_readonly("source", &PyTaskLog::source)
      .def("__repr__", [](const PyTaskLog& l) {
        return py::str("TaskLog(source={!r}, {} characters)").format(l.source, py::len(l.contents));
      });
}

void BindReattachTag(py::module_& m) {
  m.def(
      "reattach_tag",
      [](const std::string& key, const std::string& secret, const std::string& prefix) {
        return ValueOrThrow(ReattachTag(key, secret, prefix));
      },
      py::arg("key"), py::arg("secret"), py::arg("prefix") = "",
      "The YARN tag a scheduler re-attaches by: prefix + hex HMAC-SHA256 of key keyed by secret.");
}

void BindApplication(py::module_& m) {
  py::class_<PyApplication>(m, "Application", "One application of a Submitter.")
      .def_property_readonly("id", [](const PyApplication& a) { return a.app->id(); })
      .def("status", &PyApplication::Status, py::arg("timeout") = py::none())
      .def("wait", &PyApplication::Wait, py::arg("timeout") = py::none(),
           py::arg("on_progress") = py::none())
      .def("kill", &PyApplication::Kill, py::arg("timeout") = py::none())
      .def("scale", &PyApplication::Scale, py::arg("role"), py::arg("tasks"),
           py::arg("timeout") = py::none(),
           "Asks for the elastic role `role` to have `tasks` tasks from now on: "
           "InvalidArgumentError (a ValueError) outside its range, FailedPreconditionError for "
           "a role that is not elastic or a job that is over.")
      .def(
          "suspend", [](PyApplication& a, absl::Duration timeout) { a.Suspend(true, timeout); },
          py::arg("timeout") = py::none(),
          "Stops every task that has not finished and releases its container; the job stays "
          "(status SUSPENDED once all stopped) until resume(). FailedPreconditionError for a "
          "job that is over, not running yet, finishing, or in client mode.")
      .def(
          "resume", [](PyApplication& a, absl::Duration timeout) { a.Suspend(false, timeout); },
          py::arg("timeout") = py::none(),
          "Asks for the suspended tasks again; they start afresh (from their checkpoints).")
      .def("logs", &PyApplication::Logs, py::arg("task"), py::arg("file") = "stderr",
           py::arg("timeout") = py::none())
      .def("__repr__", [](const PyApplication& a) { return "Application('" + a.app->id() + "')"; });
}

// One event of ApplicationMonitor, with the error as the exception libtony.errors makes.
struct PyEvent {
  std::string id;
  std::optional<ApplicationStatus> status;
  py::object error;
  bool last = false;
};

std::vector<PyEvent> TakeEvents(ApplicationMonitor& monitor) {
  std::vector<ApplicationEvent> events;
  {
    py::gil_scoped_release release;
    events = monitor.TakeEvents();
  }
  std::vector<PyEvent> out;
  for (ApplicationEvent& e : events) {
    PyEvent p{e.id, std::nullopt, py::none(), e.last};
    if (e.status.ok()) {
      p.status = *std::move(e.status);
    } else {
      p.error = StatusToException(e.status.status());
    }
    out.push_back(std::move(p));
  }
  return out;
}

using MonitorPtr = std::unique_ptr<ApplicationMonitor, GilFreeDelete<ApplicationMonitor>>;

void BindMonitor(py::module_& m) {
  py::class_<PyEvent>(m, "ApplicationEvent", "A change of a followed application.")
      .def_readonly("id", &PyEvent::id)
      .def_readonly("status", &PyEvent::status, "the status after the change, or None on error")
      .def_readonly("error", &PyEvent::error, "why following ended (a TonyError), else None")
      .def_readonly("last", &PyEvent::last, "nothing follows for this application");
  py::class_<ApplicationMonitor, MonitorPtr>(
      m, "ApplicationMonitor", "Follows many applications from one library-owned thread.")
      .def(py::init(
               [](absl::Duration max_poll_interval, absl::Duration long_poll, int max_failures) {
                 return MonitorPtr(new ApplicationMonitor({.max_poll_interval = max_poll_interval,
                                                           .long_poll = long_poll,
                                                           .max_failures = max_failures}));
               }),
           py::arg("max_poll_interval") = absl::Seconds(1),
           py::arg("long_poll") = absl::Seconds(20), py::arg("max_failures") = 5)
      .def("start", [](ApplicationMonitor& mon) { ThrowIfError(mon.Start()); })
      .def("stop", &ApplicationMonitor::Stop, py::call_guard<py::gil_scoped_release>())
      .def(
          "follow",
          [](ApplicationMonitor& mon, const PyApplication& app, absl::Duration timeout) {
            ThrowIfError(mon.Follow(app.app, timeout));
          },
          py::arg("app"), py::arg("timeout") = py::none())
      .def(
          "unfollow", [](ApplicationMonitor& mon, const std::string& id) { mon.Unfollow(id); },
          py::arg("id"), py::call_guard<py::gil_scoped_release>())
      .def("__len__", &ApplicationMonitor::size)
      .def("fileno", &ApplicationMonitor::fd)
      .def("take_events", &TakeEvents);
}

}  // namespace

void BindApplications(py::module_& m) {
  BindSubmitter(m);
  BindReattachTag(m);
  BindApplication(m);
  BindMonitor(m);
}

}  // namespace tony::python
