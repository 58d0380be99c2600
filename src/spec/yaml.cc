// Copyright libtony authors.
//
// The YAML form of JobSpec (docs/job-spec.md). Here and in site_config.cc yaml-cpp's exceptions
// become absl::Status: nothing outside spec/ sees a yaml-cpp type.

#include <fstream>
#include <sstream>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/file_util.h"
#include "common/status_macros.h"
#include "spec/limits.h"
#include "spec/parse_util.h"
#include "spec/task_env.h"
#include "spec/yaml_reader.h"
#include "tony/job_spec.h"
#include "yaml-cpp/yaml.h"

namespace tony {
namespace {

using Reader = spec::YamlReader;

// "prep", ["prep", "ps:running"], or maps {role, when, timeout}; a single item needs no list.
absl::StatusOr<std::vector<RoleDependency>> DependenciesFrom(const Reader& r,
                                                             const std::string& key,
                                                             const YAML::Node& n) {
  std::vector<RoleDependency> out;
  std::vector<YAML::Node> items;
  if (n.IsSequence()) {
    for (const YAML::Node& item : n) items.push_back(item);
  } else {
    items.push_back(n);
  }
  for (const YAML::Node& item : items) {
    std::string text;
    if (item.IsMap()) {
      TONY_RETURN_IF_ERROR(r.CheckKeys(item, key, {"role", "when", "timeout"}));
      if (!item["role"]) return r.Error(item, key, "names no role; add role: <job type>");
      TONY_ASSIGN_OR_RETURN(text, r.String(item["role"], key + ".role"));
      for (const char* field : {"when", "timeout"}) {
        std::string value = "finished";
        if (item[field]) {
          TONY_ASSIGN_OR_RETURN(value, r.String(item[field], absl::StrCat(key, ".", field)));
        } else if (std::string(field) == "timeout") {
          value = spec::FormatTimeout(RoleDependency{}.timeout);
        }
        absl::StrAppend(&text, ":", value);
      }
    } else {
      TONY_ASSIGN_OR_RETURN(text, r.String(item, key));
    }
    absl::StatusOr<RoleDependency> d = spec::ParseDependency(text);
    if (!d.ok()) return r.Error(item, key, d.status().message());
    out.push_back(*std::move(d));
  }
  return out;
}

// preemption: {grace: 30s}, at `key` (the job's or a role's).
absl::StatusOr<absl::Duration> PreemptionGraceFrom(const Reader& r, const std::string& key,
                                                   const YAML::Node& n) {
  TONY_RETURN_IF_ERROR(r.CheckKeys(n, key, {"grace"}));
  if (!n["grace"]) return r.Error(n, key, "needs grace, e.g. {grace: 30s}");
  return r.Parsed<absl::Duration>(n["grace"], key + ".grace", spec::ParseGrace);
}

absl::StatusOr<JobTypeSpec> JobTypeFrom(const Reader& r, const std::string& name,
                                        const YAML::Node& n) {
  std::string key = absl::StrCat("jobs.", name);
  JobTypeSpec jt;
  jt.name = name;
  if (n.IsNull()) return jt;
  TONY_RETURN_IF_ERROR(
      r.CheckKeys(n, key,
                  {"instances", "vcores", "memory", "gpus", "node_label", "docker_image", "command",
                   "env", "tracked", "tasks", "restart", "depends_on", "linger", "elastic",
                   "anti_affinity", "node_attribute", "preemption"}));
  if (n["instances"]) {
    TONY_ASSIGN_OR_RETURN(
        jt.instances, r.Parsed<int>(n["instances"], key + ".instances", spec::ParsePositiveInt));
  }
  YAML::Node resources(YAML::NodeType::Map);
  for (const char* k : {"vcores", "memory", "gpus"}) {
    if (n[k]) resources[k] = n[k];
  }
  TONY_RETURN_IF_ERROR(
      r.ResourcesFrom(resources, key, &jt.resources, {"vcores", "memory", "gpus"}));
  if (n["node_label"]) {
    TONY_ASSIGN_OR_RETURN(jt.node_label, r.String(n["node_label"], key + ".node_label"));
  }
  if (n["docker_image"]) {
    TONY_ASSIGN_OR_RETURN(jt.docker_image, r.String(n["docker_image"], key + ".docker_image"));
  }
  if (n["command"]) {
    TONY_ASSIGN_OR_RETURN(jt.command, r.String(n["command"], key + ".command"));
  }
  if (n["env"]) {
    TONY_ASSIGN_OR_RETURN(jt.env, r.StringMap(n["env"], key + ".env"));
  }
  if (n["tracked"]) {
    TONY_ASSIGN_OR_RETURN(jt.tracked, r.Bool(n["tracked"], key + ".tracked"));
  }
  if (const YAML::Node restart = n["restart"]) {
    const std::string rkey = key + ".restart";
    TONY_RETURN_IF_ERROR(r.CheckKeys(
        restart, rkey, {"policy", "max_restarts", "backoff", "scope", "on_address_change"}));
    RestartSpec spec;
    for (absl::string_view field : spec::kRestartKeys) {
      const YAML::Node v = restart[std::string(field)];
      if (!v) continue;
      const std::string fkey = absl::StrCat(rkey, ".", field);
      TONY_ASSIGN_OR_RETURN(std::string text, r.String(v, fkey));
      if (absl::Status s = spec::ParseRestartField(field, text, &spec); !s.ok()) {
        return r.Error(v, fkey, s.message());
      }
    }
    jt.restart = spec;
  }
  if (const YAML::Node deps = n["depends_on"]) {
    TONY_ASSIGN_OR_RETURN(jt.depends_on, DependenciesFrom(r, key + ".depends_on", deps));
  }
  if (const YAML::Node e = n["elastic"]) {
    const std::string ekey = key + ".elastic";
    TONY_RETURN_IF_ERROR(r.CheckKeys(e, ekey, {"min", "max"}));
    if (!e["min"] || !e["max"]) return r.Error(e, ekey, "needs min and max, e.g. {min: 2, max: 4}");
    ElasticRange range;
    TONY_ASSIGN_OR_RETURN(range.min,
                          r.Parsed<int>(e["min"], ekey + ".min", spec::ParsePositiveInt));
    TONY_ASSIGN_OR_RETURN(range.max,
                          r.Parsed<int>(e["max"], ekey + ".max", spec::ParsePositiveInt));
    jt.elastic = range;
    if (!n["instances"]) jt.instances = range.max;
  }
  if (n["anti_affinity"]) {
    TONY_ASSIGN_OR_RETURN(jt.anti_affinity, r.Bool(n["anti_affinity"], key + ".anti_affinity"));
  }
  if (n["node_attribute"]) {
    TONY_ASSIGN_OR_RETURN(jt.node_attribute,
                          r.String(n["node_attribute"], key + ".node_attribute"));
  }
  if (n["preemption"]) {
    TONY_ASSIGN_OR_RETURN(jt.preemption_grace,
                          PreemptionGraceFrom(r, key + ".preemption", n["preemption"]));
  }
  if (n["linger"]) {
    TONY_ASSIGN_OR_RETURN(std::string text, r.String(n["linger"], key + ".linger"));
    absl::StatusOr<absl::Duration> d = spec::ParseTimeout(text);
    if (!d.ok()) return r.Error(n["linger"], key + ".linger", d.status().message());
    jt.linger = *d;
  }
  if (const YAML::Node tasks = n["tasks"]) {
    if (!tasks.IsMap())
      return r.Error(tasks, key + ".tasks", "expected a map of task index to resources");
    for (const auto& kv : tasks) {
      TONY_ASSIGN_OR_RETURN(int index,
                            r.Parsed<int>(kv.first, key + ".tasks", spec::ParseNonNegativeInt));
      Resources res;
      TONY_RETURN_IF_ERROR(r.ResourcesFrom(kv.second, absl::StrCat(key, ".tasks.", index), &res,
                                           {"vcores", "memory", "gpus"}));
      jt.task_resources[index] = res;
    }
  }
  return jt;
}

absl::StatusOr<JobSpec> SpecFrom(const Reader& r, const YAML::Node& root) {
  JobSpec spec;
  if (root.IsNull()) return r.Error(root, "(document)", "is empty; see docs/job-spec.md");
  TONY_RETURN_IF_ERROR(r.CheckKeys(root, "",
                                   {"name",
                                    "queue",
                                    "tags",
                                    "application_type",
                                    "view_acls",
                                    "max_attempts",
                                    "max_node_failures",
                                    "exclude_nodes",
                                    "preemption",
                                    "priority",
                                    "framework",
                                    "command",
                                    "env",
                                    "docker_image",
                                    "input",
                                    "output",
                                    "script",
                                    "files",
                                    "archives",
                                    "source_dir",
                                    "tensorboard",
                                    "tensorboard_command",
                                    "python_env",
                                    "template",
                                    "client",
                                    "am",
                                    "timeouts",
                                    "defaults",
                                    "jobs",
                                    "resolved",
                                    "summary"}));
  if (root["name"]) {
    TONY_ASSIGN_OR_RETURN(spec.name, r.String(root["name"], "name"));
  }
  if (root["queue"]) {
    TONY_ASSIGN_OR_RETURN(spec.queue, r.String(root["queue"], "queue"));
  }
  if (root["tags"]) {
    TONY_ASSIGN_OR_RETURN(spec.tags, r.StringList(root["tags"], "tags"));
  }
  if (root["application_type"]) {
    TONY_ASSIGN_OR_RETURN(spec.application_type,
                          r.String(root["application_type"], "application_type"));
  }
  if (root["view_acls"]) {
    TONY_ASSIGN_OR_RETURN(spec.view_acls, r.String(root["view_acls"], "view_acls"));
  }
  if (root["max_attempts"]) {
    TONY_ASSIGN_OR_RETURN(spec.max_attempts, r.Parsed<int>(root["max_attempts"], "max_attempts",
                                                           spec::ParsePositiveInt));
  }
  if (root["max_node_failures"]) {
    TONY_ASSIGN_OR_RETURN(
        spec.max_node_failures,
        r.Parsed<int>(root["max_node_failures"], "max_node_failures", spec::ParseNonNegativeInt));
  }
  if (root["exclude_nodes"]) {
    TONY_ASSIGN_OR_RETURN(spec.exclude_nodes, r.StringList(root["exclude_nodes"], "exclude_nodes"));
  }
  if (root["preemption"]) {
    TONY_ASSIGN_OR_RETURN(spec.preemption_grace,
                          PreemptionGraceFrom(r, "preemption", root["preemption"]));
  }
  if (root["priority"]) {
    TONY_ASSIGN_OR_RETURN(spec.priority,
                          r.Parsed<int>(root["priority"], "priority", spec::ParseNonNegativeInt));
  }
  if (root["framework"]) {
    TONY_ASSIGN_OR_RETURN(spec.framework,
                          r.Parsed<Framework>(root["framework"], "framework", ParseFramework));
  }
  if (root["command"]) {
    TONY_ASSIGN_OR_RETURN(spec.command, r.String(root["command"], "command"));
  }
  if (root["env"]) {
    TONY_ASSIGN_OR_RETURN(spec.env, r.StringMap(root["env"], "env"));
  }
  if (root["docker_image"]) {
    TONY_ASSIGN_OR_RETURN(spec.docker_image, r.String(root["docker_image"], "docker_image"));
  }
  if (root["input"]) {
    TONY_ASSIGN_OR_RETURN(spec.input_path, r.String(root["input"], "input"));
  }
  if (root["output"]) {
    TONY_ASSIGN_OR_RETURN(spec.output_path, r.String(root["output"], "output"));
  }
  if (root["script"]) {
    TONY_ASSIGN_OR_RETURN(spec.script_file, r.String(root["script"], "script"));
  }
  if (root["files"]) {
    TONY_ASSIGN_OR_RETURN(spec.files, r.StringList(root["files"], "files"));
  }
  if (root["archives"]) {
    TONY_ASSIGN_OR_RETURN(spec.archives, r.StringList(root["archives"], "archives"));
  }
  if (root["source_dir"]) {
    TONY_ASSIGN_OR_RETURN(spec.source_dir, r.String(root["source_dir"], "source_dir"));
  }
  if (root["tensorboard"]) {
    TONY_ASSIGN_OR_RETURN(spec.tensorboard, r.Bool(root["tensorboard"], "tensorboard"));
  }
  if (root["tensorboard_command"]) {
    TONY_ASSIGN_OR_RETURN(spec.tensorboard_command,
                          r.String(root["tensorboard_command"], "tensorboard_command"));
  }
  if (root["python_env"]) {
    TONY_ASSIGN_OR_RETURN(spec.python_env, r.String(root["python_env"], "python_env"));
  }
  if (root["template"]) {
    TONY_ASSIGN_OR_RETURN(spec.site_template, r.String(root["template"], "template"));
  }
  if (root["client"]) {
    TONY_ASSIGN_OR_RETURN(spec.client_mode, r.Bool(root["client"], "client"));
  }
  if (const YAML::Node am = root["am"]) {
    TONY_RETURN_IF_ERROR(
        r.CheckKeys(am, "am", {"vcores", "memory", "node_label", "work_preserving_restart"}));
    if (am["work_preserving_restart"]) {
      TONY_ASSIGN_OR_RETURN(spec.work_preserving_restart,
                            r.Bool(am["work_preserving_restart"], "am.work_preserving_restart"));
    }
    if (am["node_label"]) {
      TONY_ASSIGN_OR_RETURN(spec.am_node_label, r.String(am["node_label"], "am.node_label"));
    }
    if (am["vcores"]) {
      TONY_ASSIGN_OR_RETURN(spec.am_vcores,
                            r.Parsed<int>(am["vcores"], "am.vcores", spec::ParsePositiveInt));
    }
    if (am["memory"]) {
      TONY_ASSIGN_OR_RETURN(spec.am_memory_mb,
                            r.Parsed<int64_t>(am["memory"], "am.memory", spec::ParseMemoryMb));
    }
  }
  if (const YAML::Node t = root["timeouts"]) {
    TONY_RETURN_IF_ERROR(r.CheckKeys(
        t, "timeouts", {"registration", "job", "stop_grace", "am_unreachable", "allocation"}));
    if (t["allocation"]) {
      TONY_ASSIGN_OR_RETURN(
          spec.timeouts.allocation,
          r.Parsed<absl::Duration>(t["allocation"], "timeouts.allocation", spec::ParseTimeout));
    }
    if (t["registration"]) {
      TONY_ASSIGN_OR_RETURN(
          spec.timeouts.registration,
          r.Parsed<absl::Duration>(t["registration"], "timeouts.registration", spec::ParseTimeout));
    }
    if (t["job"]) {
      TONY_ASSIGN_OR_RETURN(spec.timeouts.job,
                            r.Parsed<absl::Duration>(t["job"], "timeouts.job", spec::ParseTimeout));
    }
    if (t["stop_grace"]) {
      TONY_ASSIGN_OR_RETURN(
          spec.timeouts.stop_grace,
          r.Parsed<absl::Duration>(t["stop_grace"], "timeouts.stop_grace", spec::ParseTimeout));
    }
    if (t["am_unreachable"]) {
      TONY_ASSIGN_OR_RETURN(spec.timeouts.am_unreachable,
                            r.Parsed<absl::Duration>(t["am_unreachable"], "timeouts.am_unreachable",
                                                     spec::ParseTimeout));
    }
  }
  if (const YAML::Node d = root["defaults"]) {
    TONY_RETURN_IF_ERROR(
        r.ResourcesFrom(d, "defaults", &spec.task_defaults, {"vcores", "memory", "gpus"}));
  }
  if (const YAML::Node jobs = root["jobs"]) {
    if (!jobs.IsMap()) {
      return r.Error(jobs, "jobs",
                     "expected a map of job name to settings, e.g. `worker: {instances: 2}`");
    }
    for (const auto& kv : jobs) {
      TONY_ASSIGN_OR_RETURN(std::string name, r.String(kv.first, "jobs"));
      if (!spec::IsValidJobName(name)) {
        return r.Error(kv.first, "jobs",
                       absl::StrCat("'", name,
                                    "' is not a job name; use lower-case letters, "
                                    "digits, '_' or '-', starting with a letter"));
      }
      if (spec.FindJobType(name) != nullptr) {
        return r.Error(kv.first, "jobs", absl::StrCat("job '", name, "' appears twice"));
      }
      TONY_ASSIGN_OR_RETURN(JobTypeSpec jt, JobTypeFrom(r, name, kv.second));
      spec.job_types.push_back(std::move(jt));
    }
  }
  return spec;
}

void EmitResources(YAML::Emitter& out, const Resources& r) {
  if (r.vcores) out << YAML::Key << "vcores" << YAML::Value << *r.vcores;
  if (r.memory_mb) out << YAML::Key << "memory" << YAML::Value << *r.memory_mb;
  if (r.gpus) out << YAML::Key << "gpus" << YAML::Value << *r.gpus;
}

void EmitStringMap(YAML::Emitter& out, const std::map<std::string, std::string>& m) {
  out << YAML::BeginMap;
  for (const auto& [k, v] : m) out << YAML::Key << k << YAML::Value << YAML::DoubleQuoted << v;
  out << YAML::EndMap;
}

void EmitStringList(YAML::Emitter& out, const std::vector<std::string>& v) {
  out << YAML::Flow << YAML::BeginSeq;
  for (const std::string& s : v) out << YAML::DoubleQuoted << s;
  out << YAML::EndSeq;
}

}  // namespace

absl::StatusOr<JobSpec> spec::JobSpecFromYamlNode(const YAML::Node& node,
                                                  absl::string_view source) {
  return SpecFrom(Reader(source), node);
}

absl::StatusOr<JobSpec> ParseJobSpecYaml(absl::string_view yaml, absl::string_view source_name) {
  if (static_cast<int64_t>(yaml.size()) > spec::kMaxSpecFileBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat(source_name, ": larger than ", spec::kMaxSpecFileBytes, " bytes"));
  }
  Reader reader(source_name);
  try {
    YAML::Node root = YAML::Load(std::string(yaml));
    return SpecFrom(reader, root);
  } catch (const YAML::Exception& e) {
    if (e.mark.is_null()) {
      return absl::InvalidArgumentError(absl::StrCat(source_name, ": ", e.msg));
    }
    return absl::InvalidArgumentError(
        absl::StrCat(source_name, ":", e.mark.line + 1, ":", e.mark.column + 1, ": ", e.msg));
  }
}

namespace {

// A file's relative local paths name files next to it, wherever the command runs.
void ResolveAgainstDirectoryOf(const std::string& file, JobSpec* spec) {
  const size_t slash = file.rfind('/');
  if (slash == std::string::npos) return;  // the current directory already
  const std::string dir = file.substr(0, slash + 1);
  auto resolve = [&](std::string& path) {
    if (!path.empty() && path[0] != '/' && path.find("://") == std::string::npos) {
      path = dir + path;
    }
  };
  resolve(spec->script_file);
  for (std::string& f : spec->files) resolve(f);
  for (std::string& a : spec->archives) resolve(a);
  resolve(spec->python_env);
  resolve(spec->source_dir);
}

}  // namespace

absl::StatusOr<JobSpec> LoadJobSpecFile(const std::string& path) {
  absl::StatusOr<std::string> yaml = ReadRegularFile(path, spec::kMaxSpecFileBytes);
  if (!yaml.ok()) {
    switch (yaml.status().code()) {
      case absl::StatusCode::kOutOfRange:
        return absl::InvalidArgumentError(absl::StrCat("job spec file '", path, "' is larger than ",
                                                       spec::kMaxSpecFileBytes,
                                                       " bytes; a job spec is a few KB of YAML"));
      case absl::StatusCode::kFailedPrecondition:
        return absl::InvalidArgumentError(
            absl::StrCat("job spec file '", path, "' is not a regular file; give a YAML file"));
      default:
        return absl::InvalidArgumentError(
            absl::StrCat("cannot read job spec file '", path, "'; check the path and permissions"));
    }
  }
  absl::StatusOr<JobSpec> spec = ParseJobSpecYaml(*yaml, path);
  if (spec.ok()) ResolveAgainstDirectoryOf(path, &*spec);
  return spec;
}

// Output only (ignored on input): per job type, what its tasks get, in space linear in the
// number of tasks: resources with the tasks that differ, and the first task's environment with
// long values (host lists of large jobs) shortened.
void EmitRoleSummary(YAML::Emitter& out, const JobSpec& spec) {
  constexpr size_t kShownChars = 120;
  std::vector<TaskSpec> tasks = ResolveTasks(spec);
  out << YAML::Key << "summary" << YAML::Value << YAML::BeginSeq;
  for (size_t first = 0; first < tasks.size();) {
    const TaskSpec& t = tasks[first];
    size_t end = first;
    while (end < tasks.size() && tasks[end].job_name == t.job_name) ++end;
    out << YAML::BeginMap;
    out << YAML::Key << "job" << YAML::Value << t.job_name;
    out << YAML::Key << "tasks" << YAML::Value << (end - first);
    out << YAML::Key << "vcores" << YAML::Value << t.vcores;
    out << YAML::Key << "memory" << YAML::Value << t.memory_mb;
    out << YAML::Key << "gpus" << YAML::Value << t.gpus;
    std::vector<std::string> differing;
    for (size_t i = first + 1; i < end; ++i) {
      const TaskSpec& o = tasks[i];
      if (o.vcores != t.vcores || o.memory_mb != t.memory_mb || o.gpus != t.gpus) {
        differing.push_back(absl::StrCat(o.id(), ": vcores ", o.vcores, ", memory ", o.memory_mb,
                                         ", gpus ", o.gpus));
      }
    }
    if (!differing.empty()) {
      out << YAML::Key << "differing" << YAML::Value;
      EmitStringList(out, differing);
    }
    out << YAML::Key << "tracked" << YAML::Value << t.tracked;
    if (!t.node_label.empty()) out << YAML::Key << "node_label" << YAML::Value << t.node_label;
    out << YAML::Key << "command" << YAML::Value << YAML::DoubleQuoted << t.command;
    std::map<std::string, std::string> env = BuildTaskEnvironment(spec, t, nullptr);
    for (auto& [name, value] : env) {
      if (value.size() > kShownChars + 40) {
        value = absl::StrCat(value.substr(0, kShownChars), "... (", value.size(),
                             " characters; --dry-run-tasks shows every task whole)");
      }
    }
    out << YAML::Key << absl::StrCat("env of ", t.id()) << YAML::Value;
    EmitStringMap(out, env);
    out << YAML::EndMap;
    first = end;
  }
  out << YAML::EndSeq;
}

void EmitPreemption(YAML::Emitter& out, absl::Duration grace) {
  out << YAML::Key << "preemption" << YAML::Value << YAML::Flow << YAML::BeginMap;
  out << YAML::Key << "grace" << YAML::Value << absl::FormatDuration(grace);
  out << YAML::EndMap;
}

std::string JobSpecToYaml(const JobSpec& spec, YamlDetail detail) {
  YAML::Emitter out;
  out << YAML::BeginMap;
  out << YAML::Key << "name" << YAML::Value << YAML::DoubleQuoted << spec.name;
  out << YAML::Key << "queue" << YAML::Value << YAML::DoubleQuoted << spec.queue;
  out << YAML::Key << "tags" << YAML::Value;
  EmitStringList(out, spec.tags);
  out << YAML::Key << "application_type" << YAML::Value << YAML::DoubleQuoted
      << spec.application_type;
  if (!spec.view_acls.empty()) {
    out << YAML::Key << "view_acls" << YAML::Value << YAML::DoubleQuoted << spec.view_acls;
  }
  out << YAML::Key << "max_attempts" << YAML::Value << spec.max_attempts;
  if (spec.max_node_failures != JobSpec{}.max_node_failures) {
    out << YAML::Key << "max_node_failures" << YAML::Value << spec.max_node_failures;
  }
  if (!spec.exclude_nodes.empty()) {
    out << YAML::Key << "exclude_nodes" << YAML::Value;
    EmitStringList(out, spec.exclude_nodes);
  }
  if (spec.preemption_grace != absl::ZeroDuration()) {
    EmitPreemption(out, spec.preemption_grace);
  }
  if (spec.priority) out << YAML::Key << "priority" << YAML::Value << *spec.priority;
  out << YAML::Key << "framework" << YAML::Value << std::string(FrameworkName(spec.framework));
  out << YAML::Key << "command" << YAML::Value << YAML::DoubleQuoted << spec.command;
  out << YAML::Key << "env" << YAML::Value;
  EmitStringMap(out, spec.env);
  out << YAML::Key << "docker_image" << YAML::Value << YAML::DoubleQuoted << spec.docker_image;
  out << YAML::Key << "input" << YAML::Value << YAML::DoubleQuoted << spec.input_path;
  out << YAML::Key << "output" << YAML::Value << YAML::DoubleQuoted << spec.output_path;
  out << YAML::Key << "script" << YAML::Value << YAML::DoubleQuoted << spec.script_file;
  out << YAML::Key << "files" << YAML::Value;
  EmitStringList(out, spec.files);
  out << YAML::Key << "archives" << YAML::Value;
  EmitStringList(out, spec.archives);
  if (!spec.source_dir.empty()) {
    out << YAML::Key << "source_dir" << YAML::Value << YAML::DoubleQuoted << spec.source_dir;
  }
  out << YAML::Key << "tensorboard" << YAML::Value << spec.tensorboard;
  if (!spec.tensorboard_command.empty()) {
    out << YAML::Key << "tensorboard_command" << YAML::Value << YAML::DoubleQuoted
        << spec.tensorboard_command;
  }
  if (!spec.python_env.empty()) {
    out << YAML::Key << "python_env" << YAML::Value << YAML::DoubleQuoted << spec.python_env;
  }
  if (!spec.site_template.empty()) {
    out << YAML::Key << "template" << YAML::Value << YAML::DoubleQuoted << spec.site_template;
  }
  out << YAML::Key << "client" << YAML::Value << spec.client_mode;
  out << YAML::Key << "am" << YAML::Value << YAML::BeginMap << YAML::Key << "vcores" << YAML::Value
      << spec.am_vcores << YAML::Key << "memory" << YAML::Value << spec.am_memory_mb;
  if (!spec.work_preserving_restart) {
    out << YAML::Key << "work_preserving_restart" << YAML::Value << false;
  }
  if (!spec.am_node_label.empty()) {
    out << YAML::Key << "node_label" << YAML::Value << YAML::DoubleQuoted << spec.am_node_label;
  }
  out << YAML::EndMap;
  out << YAML::Key << "timeouts" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "registration" << YAML::Value
      << spec::FormatTimeout(spec.timeouts.registration);
  out << YAML::Key << "job" << YAML::Value << spec::FormatTimeout(spec.timeouts.job);
  out << YAML::Key << "stop_grace" << YAML::Value << spec::FormatTimeout(spec.timeouts.stop_grace);
  out << YAML::Key << "am_unreachable" << YAML::Value
      << spec::FormatTimeout(spec.timeouts.am_unreachable);
  out << YAML::Key << "allocation" << YAML::Value << spec::FormatTimeout(spec.timeouts.allocation);
  out << YAML::EndMap;
  out << YAML::Key << "defaults" << YAML::Value << YAML::BeginMap;
  EmitResources(out, spec.task_defaults);
  out << YAML::EndMap;
  out << YAML::Key << "jobs" << YAML::Value << YAML::BeginMap;
  for (const JobTypeSpec& jt : spec.job_types) {
    out << YAML::Key << jt.name << YAML::Value << YAML::BeginMap;
    out << YAML::Key << "instances" << YAML::Value << jt.instances;
    EmitResources(out, jt.resources);
    if (!jt.node_label.empty()) {
      out << YAML::Key << "node_label" << YAML::Value << YAML::DoubleQuoted << jt.node_label;
    }
    if (!jt.docker_image.empty()) {
      out << YAML::Key << "docker_image" << YAML::Value << YAML::DoubleQuoted << jt.docker_image;
    }
    if (!jt.command.empty()) {
      out << YAML::Key << "command" << YAML::Value << YAML::DoubleQuoted << jt.command;
    }
    if (!jt.env.empty()) {
      out << YAML::Key << "env" << YAML::Value;
      EmitStringMap(out, jt.env);
    }
    if (jt.tracked) out << YAML::Key << "tracked" << YAML::Value << *jt.tracked;
    if (jt.restart) {
      const RestartSpec& rs = *jt.restart;
      out << YAML::Key << "restart" << YAML::Value << YAML::Flow << YAML::BeginMap;
      out << YAML::Key << "policy" << YAML::Value << std::string(RestartPolicyName(rs.policy));
      out << YAML::Key << "max_restarts" << YAML::Value << rs.max_restarts;
      out << YAML::Key << "backoff" << YAML::Value << spec::FormatTimeout(rs.backoff);
      out << YAML::Key << "scope" << YAML::Value << std::string(RestartScopeName(rs.scope));
      out << YAML::Key << "on_address_change" << YAML::Value
          << std::string(AddressChangeName(rs.on_address_change));
      out << YAML::EndMap;
    }
    if (!jt.depends_on.empty()) {
      out << YAML::Key << "depends_on" << YAML::Value << YAML::BeginSeq;
      for (const RoleDependency& d : jt.depends_on) {
        out << YAML::Flow << YAML::BeginMap;
        out << YAML::Key << "role" << YAML::Value << d.role;
        out << YAML::Key << "when" << YAML::Value << std::string(DependencyConditionName(d.when));
        out << YAML::Key << "timeout" << YAML::Value << spec::FormatTimeout(d.timeout);
        out << YAML::EndMap;
      }
      out << YAML::EndSeq;
    }
    if (jt.elastic) {
      out << YAML::Key << "elastic" << YAML::Value << YAML::Flow << YAML::BeginMap;
      out << YAML::Key << "min" << YAML::Value << jt.elastic->min;
      out << YAML::Key << "max" << YAML::Value << jt.elastic->max;
      out << YAML::EndMap;
    }
    if (jt.linger > absl::ZeroDuration()) {
      out << YAML::Key << "linger" << YAML::Value << spec::FormatTimeout(jt.linger);
    }
    if (jt.preemption_grace) EmitPreemption(out, *jt.preemption_grace);
    if (jt.anti_affinity) out << YAML::Key << "anti_affinity" << YAML::Value << true;
    if (!jt.node_attribute.empty()) {
      out << YAML::Key << "node_attribute" << YAML::Value << jt.node_attribute;
    }
    if (!jt.task_resources.empty()) {
      out << YAML::Key << "tasks" << YAML::Value << YAML::BeginMap;
      for (const auto& [index, r] : jt.task_resources) {
        out << YAML::Key << index << YAML::Value << YAML::Flow << YAML::BeginMap;
        EmitResources(out, r);
        out << YAML::EndMap;
      }
      out << YAML::EndMap;
    }
    out << YAML::EndMap;
  }
  out << YAML::EndMap;
  if (detail == YamlDetail::kRoleSummary) EmitRoleSummary(out, spec);
  if (detail == YamlDetail::kEveryTask) {
    // Output only (ignored on input): what each task gets, after every override.
    out << YAML::Key << "resolved" << YAML::Value << YAML::BeginSeq;
    for (const TaskSpec& t : ResolveTasks(spec)) {
      out << YAML::BeginMap;
      out << YAML::Key << "task" << YAML::Value << t.id();
      out << YAML::Key << "vcores" << YAML::Value << t.vcores;
      out << YAML::Key << "memory" << YAML::Value << t.memory_mb;
      out << YAML::Key << "gpus" << YAML::Value << t.gpus;
      out << YAML::Key << "tracked" << YAML::Value << t.tracked;
      if (!t.node_label.empty()) out << YAML::Key << "node_label" << YAML::Value << t.node_label;
      out << YAML::Key << "command" << YAML::Value << YAML::DoubleQuoted << t.command;
      out << YAML::Key << "env" << YAML::Value;
      EmitStringMap(out, BuildTaskEnvironment(spec, t, nullptr));
      out << YAML::EndMap;
    }
    out << YAML::EndSeq;
  }
  out << YAML::EndMap;
  return std::string(out.c_str()) + "\n";
}

}  // namespace tony
