// Copyright libtony authors.
//
// libtony._tony: the Python module (the package libtony re-exports it, src/python/libtony/).

#include <pybind11/pybind11.h>

#include <cmath>
#include <regex>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "python/bindings.h"
#include "tony/version.h"

namespace tony::python {

py::object StatusToException(const absl::Status& status) {
  py::object errors = py::module_::import("libtony.errors");
  // Messages may quote bytes from anywhere (paths, HTTP bodies): invalid UTF-8 is replaced.
  py::object message = py::reinterpret_steal<py::object>(PyUnicode_DecodeUTF8(
      status.message().data(), static_cast<Py_ssize_t>(status.message().size()), "replace"));
  return errors.attr("from_status")(static_cast<int>(status.code()), message);
}

void ThrowStatus(const absl::Status& status) {
  py::object exception = StatusToException(status);
  PyErr_SetObject(reinterpret_cast<PyObject*>(Py_TYPE(exception.ptr())), exception.ptr());
  throw py::error_already_set();
}

namespace {

// The type a pybind11 setter expects, from its "incompatible function arguments" message
// ("(self: libtony._tony.JobSpec, arg0: int) -> None"), in the words a Python user writes.
std::string ExpectedType(const std::string& message) {
  static const std::regex kArg("arg0: ([^)]*)\\)");
  std::smatch match;
  if (!std::regex_search(message, match, kArg)) return "another type";
  return absl::StrReplaceAll(match[1].str(), {{"libtony._tony.", ""},
                                              {"StringMap", "dict[str, str]"},
                                              {"StringList", "list[str]"},
                                              {"JobTypeList", "list[JobTypeSpec]"},
                                              {"ResourcesByTask", "dict[int, Resources]"},
                                              {"datetime.timedelta | float | None", "timedelta"},
                                              {"Optional[", "optional["}});
}

bool IsProperty(py::handle type, const std::string& name) {
  if (name.empty() || name[0] == '_' || !py::hasattr(type, name.c_str())) return false;
  return py::isinstance(
      type.attr(name.c_str()),
      py::reinterpret_borrow<py::object>(reinterpret_cast<PyObject*>(&PyProperty_Type)));
}

const char* TypeName(py::handle value) { return Py_TYPE(value.ptr())->tp_name; }

// The value's type, and for a container the first element that is not a str (the containers
// bound here hold str, or are keyed by it).
std::string Describe(py::handle value) {
  if (py::isinstance<py::dict>(value)) {
    for (const auto& [k, v] : py::reinterpret_borrow<py::dict>(value)) {
      if (!py::isinstance<py::str>(v)) {
        return absl::StrCat("dict with ", TypeName(v), " value ", py::repr(v).cast<std::string>(),
                            " for key ", py::repr(k).cast<std::string>());
      }
    }
  } else if (py::isinstance<py::list>(value) || py::isinstance<py::tuple>(value)) {
    for (py::handle item : value) {
      if (!py::isinstance<py::str>(item)) {
        return absl::StrCat(TypeName(value), " with ", TypeName(item), " item ",
                            py::repr(item).cast<std::string>());
      }
    }
  }
  return TypeName(value);
}

}  // namespace

void SetFieldsFromKwargs(py::handle self, const char* type_name, const py::kwargs& kwargs) {
  py::handle type = py::type::handle_of(self);
  for (const auto& [key, value] : kwargs) {
    const std::string name = py::str(key);
    if (!IsProperty(type, name)) {
      throw py::type_error(
          absl::StrCat(type_name, "() got an unexpected keyword argument '", name, "'"));
    }
    try {
      py::setattr(self, name.c_str(), value);
    } catch (py::error_already_set& e) {
      if (!e.matches(PyExc_TypeError)) throw;
      // A string for an enum field: its constructor names the values it accepts.
      py::object current = self.attr(name.c_str());
      if (py::isinstance<py::str>(value) && py::hasattr(current, "__members__")) {
        try {
          py::type::of(current)(value);
        } catch (py::error_already_set& inner) {
          throw py::value_error(
              absl::StrCat(type_name, ".", name, ": ", py::str(inner.value()).cast<std::string>()));
        }
      }
      throw py::type_error(absl::StrCat(type_name, ".", name, ": expected ", ExpectedType(e.what()),
                                        ", got ", Describe(value)));
    }
  }
}

}  // namespace tony::python

namespace pybind11::detail {

bool type_caster<absl::Duration>::load(handle src, bool convert) {
  if (src.is_none()) {
    value = absl::InfiniteDuration();
    return true;
  }
  // Imported per call (a dictionary lookup once loaded): a static initialised under the GIL
  // could deadlock with another thread waiting on its guard.
  object timedelta = module_::import("datetime").attr("timedelta");
  double seconds = 0;
  if (isinstance(src, timedelta)) {
    seconds = src.attr("total_seconds")().cast<double>();
  } else if ((PyFloat_Check(src.ptr()) || PyLong_Check(src.ptr())) && !PyBool_Check(src.ptr())) {
    seconds = PyFloat_AsDouble(src.ptr());
    if (PyErr_Occurred()) {
      PyErr_Clear();
      return false;
    }
  } else {
    return false;
  }
  if (std::isnan(seconds)) return false;
  value = std::isinf(seconds) ? (seconds > 0 ? absl::InfiniteDuration() : -absl::InfiniteDuration())
                              : absl::Seconds(seconds);
  return true;
}

handle type_caster<absl::Duration>::cast(absl::Duration d, return_value_policy, handle) {
  if (d == absl::InfiniteDuration()) return none().release();
  object timedelta = module_::import("datetime").attr("timedelta");
  return timedelta(arg("microseconds") = absl::ToInt64Microseconds(d)).release();
}

}  // namespace pybind11::detail

PYBIND11_MODULE(_tony, m) {
  namespace py = pybind11;
  m.doc() = "libtony's C++ API (the package libtony is the documented entry point).";
  m.attr("__version__") = std::string(tony::VersionString());
  tony::python::BindStatusTypes(m);
  tony::python::BindJobSpec(m);
  tony::python::BindApplications(m);
  tony::python::BindLogging(m);
}
