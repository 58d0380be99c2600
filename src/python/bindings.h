// Copyright libtony authors.
//
// Shared pieces of the Python module libtony._tony (pybind11, over the public C++ API only):
// the one place absl::Status becomes a Python exception, absl::Duration <-> datetime.timedelta,
// and the Bind* functions module.cc calls in order.
//
// Everything here runs with the GIL held unless a comment says otherwise.

#ifndef TONY_PYTHON_BINDINGS_H_
#define TONY_PYTHON_BINDINGS_H_

#include <pybind11/pybind11.h>
#include <pybind11/stl_bind.h>

#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "tony/job_spec.h"

// The containers a Python user edits in place (spec.env["A"] = "1", spec.job_types.append(...))
// are bound by reference, not copied: every translation unit of the module must see this.
PYBIND11_MAKE_OPAQUE(std::map<std::string, std::string>)
PYBIND11_MAKE_OPAQUE(std::vector<std::string>)
PYBIND11_MAKE_OPAQUE(std::vector<tony::JobTypeSpec>)
PYBIND11_MAKE_OPAQUE(std::map<int, tony::Resources>)

namespace tony::python {

namespace py = pybind11;

// The exception libtony.errors makes for `status` (a TonyError subclass carrying the code).
py::object StatusToException(const absl::Status& status);
// Raises StatusToException(status); `status` must not be OK.
[[noreturn]] void ThrowStatus(const absl::Status& status);
inline void ThrowIfError(const absl::Status& status) {
  if (!status.ok()) ThrowStatus(status);
}
template <typename T>
T ValueOrThrow(absl::StatusOr<T> value) {
  if (!value.ok()) ThrowStatus(value.status());
  return *std::move(value);
}

// Sets each keyword argument as an attribute of `self` (a bound struct) through its property,
// so that the binding's own conversions apply; an unknown name or a value of the wrong type is
// a TypeError naming `type_name`.field and the expected type, a bad value a ValueError.
void SetFieldsFromKwargs(py::handle self, const char* type_name, const py::kwargs& kwargs);

void BindStatusTypes(py::module_& m);   // AppState, ApplicationStatus, ApplicationEvent, ...
void BindJobSpec(py::module_& m);       // JobSpec and its parts, YAML
void BindApplications(py::module_& m);  // Submitter, Application, ApplicationMonitor
void BindLogging(py::module_& m);       // libtony's log lines for Python's logging

}  // namespace tony::python

namespace pybind11::detail {

// absl::Duration is a datetime.timedelta in Python; None and float("inf") are an infinite
// duration, and a plain number counts seconds.
template <>
struct type_caster<absl::Duration> {
  PYBIND11_TYPE_CASTER(absl::Duration, const_name("datetime.timedelta | float | None"));

  bool load(handle src, bool convert);
  static handle cast(absl::Duration d, return_value_policy, handle);
};

}  // namespace pybind11::detail

#endif  // TONY_PYTHON_BINDINGS_H_
