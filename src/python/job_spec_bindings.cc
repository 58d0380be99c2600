// Copyright libtony authors.
//
// JobSpec and its parts in Python: mutable structs with keyword constructors, YAML both ways.

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <pybind11/stl_bind.h>

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "python/bindings.h"
#include "tony/job_spec.h"

namespace tony::python {
namespace {

using StringMap = std::map<std::string, std::string>;
using StringList = std::vector<std::string>;
using JobTypeList = std::vector<JobTypeSpec>;
using ResourcesByTask = std::map<int, Resources>;

// An enum that also takes its documented name ("on-failure"), so kwargs and YAML read alike.
template <typename E>
void BindEnum(py::module_& m, const char* name, absl::string_view (*name_of)(E),
              std::vector<std::pair<const char*, E>> values) {
  py::enum_<E> e(m, name);
  for (const auto& [python_name, value] : values) e.value(python_name, value);
  e.def(py::init([name, name_of, values](const std::string& text) {
    std::vector<std::string> names;
    for (const auto& entry : values) {
      if (name_of(entry.second) == text) return entry.second;
      names.emplace_back(name_of(entry.second));
    }
    throw py::value_error(absl::StrCat("unknown ", name, " '", text,
                                       "'; expected one of: ", absl::StrJoin(names, ", ")));
  }));
  e.def_property_readonly("text", [name_of](E v) { return std::string(name_of(v)); });
  py::implicitly_convertible<py::str, E>();
}

void BindEnums(py::module_& m) {
  BindEnum<Framework>(m, "Framework", &FrameworkName,
                      {{"TENSORFLOW", Framework::kTensorFlow},
                       {"PYTORCH", Framework::kPyTorch},
                       {"HOROVOD", Framework::kHorovod},
                       {"CUSTOM", Framework::kCustom},
                       {"JAX", Framework::kJax},
                       {"MPI", Framework::kMpi}});
  BindEnum<RestartPolicy>(m, "RestartPolicy", &RestartPolicyName,
                          {{"NEVER", RestartPolicy::kNever},
                           {"ON_FAILURE", RestartPolicy::kOnFailure},
                           {"EXIT_CODE", RestartPolicy::kExitCode}});
  BindEnum<RestartScope>(m, "RestartScope", &RestartScopeName,
                         {{"TASK", RestartScope::kTask}, {"JOB", RestartScope::kJob}});
  BindEnum<AddressChange>(m, "AddressChange", &AddressChangeName,
                          {{"FAIL", AddressChange::kFail},
                           {"RESTART_JOB", AddressChange::kRestartJob},
                           {"ACCEPT", AddressChange::kAccept}});
  BindEnum<DependencyCondition>(m, "DependencyCondition", &DependencyConditionName,
                                {{"REGISTERED", DependencyCondition::kRegistered},
                                 {"RUNNING", DependencyCondition::kRunning},
                                 {"FINISHED", DependencyCondition::kFinished}});
  py::enum_<YamlDetail>(m, "YamlDetail")
      .value("SPEC", YamlDetail::kSpec)
      .value("ROLE_SUMMARY", YamlDetail::kRoleSummary)
      .value("EVERY_TASK", YamlDetail::kEveryTask);
}

template <typename Map>
Map MapFromDict(const py::dict& d) {
  Map out;
  for (const auto& [k, v] : d) {
    out.emplace(k.template cast<typename Map::key_type>(),
                v.template cast<typename Map::mapped_type>());
  }
  return out;
}

// {"ps": 1, "worker": {"instances": 2, "command": "..."}} as a list of job types.
JobTypeList JobTypesFromDict(const py::dict& d) {
  JobTypeList out;
  for (const auto& [k, v] : d) {
    JobTypeSpec t;
    t.name = k.cast<std::string>();
    if (py::isinstance<py::dict>(v)) {
      SetFieldsFromKwargs(py::cast(&t, py::return_value_policy::reference), "JobTypeSpec",
                          v.cast<py::kwargs>());
    } else {
      t.instances = v.cast<int>();
    }
    out.push_back(std::move(t));
  }
  return out;
}

// Items of a JobTypeList are references into the vector (spec.job_types[0].instances = 2 edits
// the spec). A change that moves or frees items would leave such a reference pointing at freed
// memory, so it is refused while any item (or a part of one, which keeps its item alive) is
// referenced from Python.
void CheckNoItemReferenced(const JobTypeList& types, const char* what) {
  const py::detail::type_info* info = py::detail::get_type_info(typeid(JobTypeSpec));
  for (const JobTypeSpec& t : types) {
    if (info != nullptr && py::detail::get_object_handle(&t, info)) {
      throw py::value_error(absl::StrCat(
          "JobSpec.job_types.", what, ": the JobTypeSpec '", t.name,
          "' taken from this list is still referenced (e.g. t = spec.job_types[0]); changing "
          "the list would leave it pointing at freed memory: drop it (del t) or keep a copy "
          "(copy.copy(t)) first"));
    }
  }
}

// Values of a ResourcesByTask are references into the map too (r = t.task_resources[0]);
// removing a key frees its value, so that is refused while the value is referenced.
void CheckNoValueReferenced(const ResourcesByTask& map, std::optional<int> only_key,
                            const char* what) {
  const py::detail::type_info* info = py::detail::get_type_info(typeid(Resources));
  if (info == nullptr) return;
  for (const auto& [index, resources] : map) {
    if (only_key && index != *only_key) continue;
    if (py::detail::get_object_handle(&resources, info)) {
      throw py::value_error(absl::StrCat(
          "JobTypeSpec.task_resources.", what, ": the Resources of task ", index,
          " taken from this map is still referenced (e.g. r = t.task_resources[", index,
          "]); removing it would leave it pointing at freed memory: drop it (del r) or keep a "
          "copy (copy.copy(r)) first"));
    }
  }
}

// Wraps the list's method `name` so that it first checks for referenced items (always, or only
// when its first argument is a slice). With slices_only (__setitem__), an index assigns the
// item in place, which keeps the item but replaces its task_resources map: refused while a
// value of that map is referenced (r = spec.job_types[0].task_resources[0]).
void GuardListMethod(const py::object& cls, const char* name, bool slices_only = false) {
  py::object original = cls.attr(name);
  cls.attr(name) = py::cpp_function(
      [original, name, slices_only](py::object self, py::args args) {
        const auto& types = self.cast<const JobTypeList&>();
        if (!slices_only || (args.size() > 0 && py::isinstance<py::slice>(args[0]))) {
          CheckNoItemReferenced(types, name);
        } else if (args.size() > 0 && py::isinstance<py::int_>(args[0])) {
          const auto size = static_cast<py::ssize_t>(types.size());
          py::ssize_t i = args[0].cast<py::ssize_t>();
          if (i < 0) i += size;
          if (i >= 0 && i < size) {
            CheckNoValueReferenced(types[static_cast<size_t>(i)].task_resources, std::nullopt,
                                   "replacing its JobTypeSpec");
          }
        }
        return original(self, *args);
      },
      py::name(name), py::is_method(cls));
}

void BindContainers(py::module_& m) {
  py::bind_map<StringMap>(m, "StringMap").def(py::init(&MapFromDict<StringMap>));
  py::implicitly_convertible<py::dict, StringMap>();
  py::bind_vector<StringList>(m, "StringList");
  py::implicitly_convertible<py::list, StringList>();
  py::implicitly_convertible<py::tuple, StringList>();
  auto resources_map = py::bind_map<ResourcesByTask>(m, "ResourcesByTask")
                           .def(py::init(&MapFromDict<ResourcesByTask>));
  py::implicitly_convertible<py::dict, ResourcesByTask>();
  py::object delitem = resources_map.attr("__delitem__");
  resources_map.attr("__delitem__") = py::cpp_function(
      [delitem](py::object self, py::object key) {
        if (py::isinstance<py::int_>(key)) {
          CheckNoValueReferenced(self.cast<const ResourcesByTask&>(), key.cast<int>(),
                                 "__delitem__");
        }
        return delitem(self, key);
      },
      py::name("__delitem__"), py::is_method(resources_map));
  auto job_types = py::bind_vector<JobTypeList>(m, "JobTypeList")
                       .def(py::init(&JobTypesFromDict), py::prepend());
  for (const char* method :
       {"append", "extend", "insert", "pop", "clear", "remove", "__delitem__"}) {
    GuardListMethod(job_types, method);
  }
  GuardListMethod(job_types, "__setitem__", /*slices_only=*/true);  // an index assigns in place
  job_types.def("__repr__", [](const JobTypeList& types) {
    return absl::StrCat("[",
                        absl::StrJoin(types, ", ",
                                      [](std::string* out, const auto& t) {
                                        absl::StrAppend(out, t.name, ":", t.instances);
                                      }),
                        "]");
  });
  py::implicitly_convertible<py::list, JobTypeList>();
  py::implicitly_convertible<py::dict, JobTypeList>();
}

std::string ResourcesRepr(const Resources& r) {
  std::vector<std::string> parts;
  if (r.vcores) parts.push_back(absl::StrCat("vcores=", *r.vcores));
  if (r.memory_mb) parts.push_back(absl::StrCat("memory_mb=", *r.memory_mb));
  if (r.gpus) parts.push_back(absl::StrCat("gpus=", *r.gpus));
  return absl::StrCat("Resources(", absl::StrJoin(parts, ", "), ")");
}

// T(**kwargs) through the properties, so that errors name the field.
template <typename T>
std::unique_ptr<T> FromKwargs(const char* type_name, const py::kwargs& kwargs) {
  auto value = std::make_unique<T>();
  SetFieldsFromKwargs(py::cast(value.get(), py::return_value_policy::reference), type_name, kwargs);
  return value;
}

void BindParts(py::module_& m) {
  py::class_<Resources>(m, "Resources", "A partially specified resource set (None: inherited).")
      .def(py::init([](const py::kwargs& kw) { return FromKwargs<Resources>("Resources", kw); }))
      .def_readwrite("vcores", &Resources::vcores)
      .def_readwrite("memory_mb", &Resources::memory_mb)
      .def_readwrite("gpus", &Resources::gpus)
      .def("__copy__", [](const Resources& r) { return Resources(r); })
      .def(
          "__eq__", [](const Resources& a, const Resources& b) { return a == b; },
          py::is_operator())
      .def("__repr__", &ResourcesRepr);
  py::class_<RestartSpec>(m, "RestartSpec", "What happens when a task of a job type fails.")
      .def(
          py::init([](const py::kwargs& kw) { return FromKwargs<RestartSpec>("RestartSpec", kw); }))
      .def_readwrite("policy", &RestartSpec::policy)
      .def_readwrite("max_restarts", &RestartSpec::max_restarts)
      .def_readwrite("backoff", &RestartSpec::backoff)
      .def_readwrite("scope", &RestartSpec::scope)
      .def_readwrite("on_address_change", &RestartSpec::on_address_change)
      .def(
          "__eq__", [](const RestartSpec& a, const RestartSpec& b) { return a == b; },
          py::is_operator());
  py::class_<RoleDependency>(m, "RoleDependency",
                             "A role starting once every task of `role` is registered, running "
                             "or finished (the default); `timeout` bounds the wait.")
      .def(py::init(
          [](const py::kwargs& kw) { return FromKwargs<RoleDependency>("RoleDependency", kw); }))
      .def_readwrite("role", &RoleDependency::role)
      .def_readwrite("when", &RoleDependency::when)
      .def_readwrite("timeout", &RoleDependency::timeout)
      .def(
          "__eq__", [](const RoleDependency& a, const RoleDependency& b) { return a == b; },
          py::is_operator())
      .def("__repr__", [](const RoleDependency& d) {
        return absl::StrCat("RoleDependency(role='", d.role, "', when='",
                            DependencyConditionName(d.when), "')");
      });
  py::class_<ElasticRange>(m, "ElasticRange",
                           "An elastic role's size: trains with `min` to `max` tasks (PyTorch).")
      .def(py::init(
          [](const py::kwargs& kw) { return FromKwargs<ElasticRange>("ElasticRange", kw); }))
      .def_readwrite("min", &ElasticRange::min)
      .def_readwrite("max", &ElasticRange::max)
      .def(
          "__eq__", [](const ElasticRange& a, const ElasticRange& b) { return a == b; },
          py::is_operator())
      .def("__repr__", [](const ElasticRange& e) {
        return absl::StrCat("ElasticRange(min=", e.min, ", max=", e.max, ")");
      });
  py::class_<JobTimeouts>(m, "JobTimeouts", "Every deadline of a job (None: none).")
      .def(
          py::init([](const py::kwargs& kw) { return FromKwargs<JobTimeouts>("JobTimeouts", kw); }))
      .def_readwrite("registration", &JobTimeouts::registration)
      .def_readwrite("job", &JobTimeouts::job)
      .def_readwrite("stop_grace", &JobTimeouts::stop_grace)
      .def_readwrite("am_unreachable", &JobTimeouts::am_unreachable)
      .def_readwrite("allocation", &JobTimeouts::allocation);
}

void BindJobType(py::module_& m) {
  py::class_<JobTypeSpec>(m, "JobTypeSpec",
                          "One role (ps, worker, chief, ...) of `instances` tasks.")
      .def(py::init([](const py::object& name, py::kwargs kw) {
             if (!name.is_none()) kw["name"] = name;
             return FromKwargs<JobTypeSpec>("JobTypeSpec", kw);
           }),
           py::arg("name") = py::none())
      .def_readwrite("name", &JobTypeSpec::name)
      .def_readwrite("instances", &JobTypeSpec::instances)
      .def_readwrite("resources", &JobTypeSpec::resources)
      .def_property(
          "task_resources", [](JobTypeSpec& t) -> ResourcesByTask& { return t.task_resources; },
          [](JobTypeSpec& t, const ResourcesByTask& map) {
            CheckNoValueReferenced(t.task_resources, std::nullopt, "assignment");
            t.task_resources = map;
          },
          py::return_value_policy::reference_internal)
      .def_readwrite("node_label", &JobTypeSpec::node_label)
      .def_readwrite("docker_image", &JobTypeSpec::docker_image)
      .def_readwrite("command", &JobTypeSpec::command)
      .def_readwrite("env", &JobTypeSpec::env)
      .def_readwrite("tracked", &JobTypeSpec::tracked)
      .def_readwrite("restart", &JobTypeSpec::restart)
      .def_readwrite("depends_on", &JobTypeSpec::depends_on,
                     "A list (a copy: assign a new list to change it).")
      .def_readwrite("linger", &JobTypeSpec::linger)
      .def_readwrite("elastic", &JobTypeSpec::elastic)
      .def_readwrite("anti_affinity", &JobTypeSpec::anti_affinity)
      .def_readwrite("node_attribute", &JobTypeSpec::node_attribute)
      .def(
          "__eq__", [](const JobTypeSpec& a, const JobTypeSpec& b) { return a == b; },
          py::is_operator())
      .def("__copy__", [](const JobTypeSpec& t) { return JobTypeSpec(t); })
      .def("__deepcopy__", [](const JobTypeSpec& t, py::dict) { return JobTypeSpec(t); })
      .def("__repr__", [](const JobTypeSpec& t) {
        return absl::StrCat("JobTypeSpec('", t.name, "', instances=", t.instances, ")");
      });
  py::class_<TaskSpec>(m, "TaskSpec", "One task with everything resolved.")
      .def_readonly("job_name", &TaskSpec::job_name)
      .def_readonly("index", &TaskSpec::index)
      .def_readonly("vcores", &TaskSpec::vcores)
      .def_readonly("memory_mb", &TaskSpec::memory_mb)
      .def_readonly("gpus", &TaskSpec::gpus)
      .def_readonly("node_label", &TaskSpec::node_label)
      .def_readonly("docker_image", &TaskSpec::docker_image)
      .def_readonly("command", &TaskSpec::command)
      .def_readonly("env", &TaskSpec::env)
      .def_readonly("tracked", &TaskSpec::tracked)
      .def_readonly("anti_affinity", &TaskSpec::anti_affinity)
      .def_readonly("node_attribute", &TaskSpec::node_attribute)
      .def_property_readonly("id", &TaskSpec::id);
}

std::unique_ptr<JobSpec> JobSpecFromKwargs(const py::kwargs& kwargs) {
  auto spec = FromKwargs<JobSpec>("JobSpec", kwargs);
  // A spec given its job types is complete: check it now, naming the field.
  if (kwargs.contains("job_types")) ThrowIfError(ValidateJobSpec(*spec));
  return spec;
}

void BindJobSpecFields(py::class_<JobSpec>& c) {
  c.def_readwrite("name", &JobSpec::name)
      .def_readwrite("queue", &JobSpec::queue)
      .def_readwrite("tags", &JobSpec::tags)
      .def_readwrite("application_type", &JobSpec::application_type)
      .def_readwrite("view_acls", &JobSpec::view_acls)
      .def_readwrite("max_attempts", &JobSpec::max_attempts)
      .def_readwrite("priority", &JobSpec::priority)
      .def_readwrite("work_preserving_restart", &JobSpec::work_preserving_restart)
      .def_readwrite("framework", &JobSpec::framework)
      .def_property(
          "job_types", [](JobSpec& s) -> JobTypeList& { return s.job_types; },
          [](JobSpec& s, const JobTypeList& types) {
            CheckNoItemReferenced(s.job_types, "assignment");
            s.job_types = types;
          },
          py::return_value_policy::reference_internal)
      .def_readwrite("task_defaults", &JobSpec::task_defaults)
      .def_readwrite("command", &JobSpec::command)
      .def_readwrite("env", &JobSpec::env)
      .def_readwrite("docker_image", &JobSpec::docker_image)
      .def_readwrite("input_path", &JobSpec::input_path)
      .def_readwrite("output_path", &JobSpec::output_path)
      .def_readwrite("script_file", &JobSpec::script_file)
      .def_readwrite("files", &JobSpec::files)
      .def_readwrite("archives", &JobSpec::archives)
      .def_readwrite("tensorboard", &JobSpec::tensorboard)
      .def_readwrite("tensorboard_command", &JobSpec::tensorboard_command)
      .def_readwrite("python_env", &JobSpec::python_env)
      .def_readwrite("site_template", &JobSpec::site_template)
      .def_readwrite("client_mode", &JobSpec::client_mode)
      .def_readwrite("am_vcores", &JobSpec::am_vcores)
      .def_readwrite("am_memory_mb", &JobSpec::am_memory_mb)
      .def_readwrite("am_node_label", &JobSpec::am_node_label)
      .def_readwrite("timeouts", &JobSpec::timeouts);
}

void BindJobSpecClass(py::module_& m) {
  py::class_<JobSpec> c(m, "JobSpec", "A complete, backend-independent distributed job.");
  c.def(py::init(&JobSpecFromKwargs));
  BindJobSpecFields(c);
  c.def_static(
       "from_yaml",
       [](const std::string& yaml, const std::string& source_name) {
         return ValueOrThrow(ParseJobSpecYaml(yaml, source_name));
       },
       py::arg("yaml"), py::arg("source_name") = "<string>")
      .def_static(
          "load", [](const std::string& path) { return ValueOrThrow(LoadJobSpecFile(path)); },
          py::arg("path"))
      .def("to_yaml", &JobSpecToYaml, py::arg("detail") = YamlDetail::kSpec)
      .def("validate", [](const JobSpec& s) { ThrowIfError(ValidateJobSpec(s)); })
      .def("warnings", &JobSpecWarnings)
      .def("tasks",
           [](const JobSpec& s) {
             ThrowIfError(ValidateJobSpec(s));
             return ResolveTasks(s);
           })
      .def("total_tasks", &JobSpec::TotalTasks)
      .def(
          "__eq__", [](const JobSpec& a, const JobSpec& b) { return a == b; }, py::is_operator())
      .def("__copy__", [](const JobSpec& s) { return JobSpec(s); })
      .def("__deepcopy__", [](const JobSpec& s, py::dict) { return JobSpec(s); })
      .def("__repr__", [](const JobSpec& s) {
        return absl::StrCat("JobSpec(name='", s.name, "', framework=", FrameworkName(s.framework),
                            ", job_types=[",
                            absl::StrJoin(s.job_types, ", ",
                                          [](std::string* out, const auto& t) {
                                            absl::StrAppend(out, t.name, ":", t.instances);
                                          }),
                            "])");
      });
}

}  // namespace

void BindJobSpec(py::module_& m) {
  BindEnums(m);
  BindContainers(m);
  BindParts(m);
  BindJobType(m);
  BindJobSpecClass(m);
}

}  // namespace tony::python
