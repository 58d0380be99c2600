// Copyright libtony authors.

#include "spec/site_config.h"

#include <sys/stat.h>

#include <algorithm>
#include <cstdlib>
#include <set>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/file_util.h"
#include "common/status_macros.h"
#include "spec/limits.h"
#include "spec/parse_util.h"
#include "spec/yaml_reader.h"
#include "yaml-cpp/yaml.h"

namespace tony::spec {
namespace {

bool Exists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

int LineOf(const YAML::Node& n) { return n.Mark().is_null() ? 0 : n.Mark().line + 1; }

// Every leaf of the document with its line, for --show_site, and the line of every key, for
// the limits' messages.
void Flatten(const YAML::Node& n, const std::string& key, int line, SiteConfig* site) {
  if (!key.empty()) site->key_lines.emplace(key, line);
  if (n.IsMap()) {
    for (const auto& kv : n) {
      const std::string name = kv.first.IsScalar() ? kv.first.Scalar() : "?";
      Flatten(kv.second, key.empty() ? name : absl::StrCat(key, ".", name), LineOf(kv.first), site);
    }
    return;
  }
  if (n.IsSequence()) {
    std::vector<std::string> items;
    bool scalars = true;
    for (const YAML::Node& item : n) {
      scalars = scalars && item.IsScalar();
      if (item.IsScalar()) items.push_back(item.Scalar());
    }
    if (scalars) {
      site->settings.push_back({key, absl::StrJoin(items, ", "), line});
      return;
    }
    int i = 0;
    for (const YAML::Node& item : n) {
      Flatten(item, absl::StrCat(key, "[", i++, "]"), LineOf(item), site);
    }
    return;
  }
  site->settings.push_back({key, n.IsScalar() ? n.Scalar() : "", line});
}

// YAML lets a map name a key twice and yaml-cpp reads the first: a second limit would be lost.
absl::Status CheckNoDuplicateKeys(const YamlReader& r, const YAML::Node& n,
                                  const std::string& key) {
  if (n.IsSequence()) {
    for (const YAML::Node& item : n) TONY_RETURN_IF_ERROR(CheckNoDuplicateKeys(r, item, key));
  }
  if (!n.IsMap()) return absl::OkStatus();
  std::set<std::string> seen;
  for (const auto& kv : n) {
    const std::string name = kv.first.IsScalar() ? kv.first.Scalar() : "?";
    const std::string path = key.empty() ? name : absl::StrCat(key, ".", name);
    if (!seen.insert(name).second) return r.Error(kv.first, path, "appears twice");
    TONY_RETURN_IF_ERROR(CheckNoDuplicateKeys(r, kv.second, path));
  }
  return absl::OkStatus();
}

// A job-spec fragment: the keys of a job spec but those that make no sense shared.
absl::StatusOr<JobSpec> FragmentFrom(const YamlReader& r, const YAML::Node& n,
                                     const std::string& key, bool roles_allowed) {
  if (n.IsNull()) return JobSpec();
  if (!n.IsMap()) return r.Error(n, key, "expected a map of job-spec keys (docs/job-spec.md)");
  for (const auto& kv : n) {
    const std::string name = kv.first.IsScalar() ? kv.first.Scalar() : "";
    if (name == "template" || name == "resolved" || name == "summary" ||
        (name == "jobs" && !roles_allowed)) {
      return r.Error(kv.first, absl::StrCat(key, ".", name),
                     name == "jobs" ? "roles belong in a template, not in defaults"
                                    : "not allowed in the site file");
    }
  }
  return JobSpecFromYamlNode(n, r.source());
}

absl::Status StringListsFrom(const YamlReader& r, const YAML::Node& n, const std::string& key,
                             std::map<std::string, std::vector<std::string>>* out) {
  if (n.IsNull()) return absl::OkStatus();
  if (!n.IsMap()) return r.Error(n, key, "expected a map of name to a list of queues");
  for (const auto& kv : n) {
    TONY_ASSIGN_OR_RETURN(std::string name, r.String(kv.first, key));
    TONY_ASSIGN_OR_RETURN((*out)[name], r.StringList(kv.second, absl::StrCat(key, ".", name)));
  }
  return absl::OkStatus();
}

absl::Status QueuesFrom(const YamlReader& r, const YAML::Node& n, SiteLimits* limits) {
  const std::string key = "limits.allowed_queues";
  TONY_RETURN_IF_ERROR(r.CheckKeys(n, key, {"users", "groups", "everyone"}));
  limits->queues_restricted = true;
  if (n["users"]) {
    TONY_RETURN_IF_ERROR(StringListsFrom(r, n["users"], key + ".users", &limits->queues_by_user));
  }
  if (n["groups"]) {
    TONY_RETURN_IF_ERROR(
        StringListsFrom(r, n["groups"], key + ".groups", &limits->queues_by_group));
  }
  if (n["everyone"]) {
    TONY_ASSIGN_OR_RETURN(limits->queues_for_everyone,
                          r.StringList(n["everyone"], key + ".everyone"));
  }
  return absl::OkStatus();
}

absl::Status LimitsFrom(const YamlReader& r, const YAML::Node& n, SiteLimits* limits) {
  if (n.IsNull()) return absl::OkStatus();
  TONY_RETURN_IF_ERROR(r.CheckKeys(
      n, "limits",
      {"max_tasks_per_job", "max_memory_mb_per_task", "max_vcores_per_task", "max_gpus_per_task",
       "max_memory_mb_per_job", "max_vcores_per_job", "max_gpus_per_job", "max_job_timeout",
       "allowed_queues", "gpu_node_label", "allowed_docker_image_prefixes"}));
  auto count = [&](const char* name, std::optional<int>* field) -> absl::Status {
    if (!n[name]) return absl::OkStatus();
    TONY_ASSIGN_OR_RETURN(
        *field, r.Parsed<int>(n[name], absl::StrCat("limits.", name), ParseNonNegativeInt));
    return absl::OkStatus();
  };
  auto memory = [&](const char* name, std::optional<int64_t>* field) -> absl::Status {
    if (!n[name]) return absl::OkStatus();
    TONY_ASSIGN_OR_RETURN(*field,
                          r.Parsed<int64_t>(n[name], absl::StrCat("limits.", name), ParseMemoryMb));
    return absl::OkStatus();
  };
  TONY_RETURN_IF_ERROR(count("max_tasks_per_job", &limits->max_tasks_per_job));
  TONY_RETURN_IF_ERROR(count("max_vcores_per_task", &limits->max_vcores_per_task));
  TONY_RETURN_IF_ERROR(count("max_gpus_per_task", &limits->max_gpus_per_task));
  TONY_RETURN_IF_ERROR(count("max_vcores_per_job", &limits->max_vcores_per_job));
  TONY_RETURN_IF_ERROR(count("max_gpus_per_job", &limits->max_gpus_per_job));
  TONY_RETURN_IF_ERROR(memory("max_memory_mb_per_task", &limits->max_memory_mb_per_task));
  TONY_RETURN_IF_ERROR(memory("max_memory_mb_per_job", &limits->max_memory_mb_per_job));
  if (n["max_job_timeout"]) {
    TONY_ASSIGN_OR_RETURN(
        limits->max_job_timeout,
        r.Parsed<absl::Duration>(n["max_job_timeout"], "limits.max_job_timeout", ParseTimeout));
  }
  if (n["gpu_node_label"]) {
    TONY_ASSIGN_OR_RETURN(limits->gpu_node_label,
                          r.String(n["gpu_node_label"], "limits.gpu_node_label"));
  }
  if (n["allowed_docker_image_prefixes"]) {
    TONY_ASSIGN_OR_RETURN(
        limits->docker_image_prefixes,
        r.StringList(n["allowed_docker_image_prefixes"], "limits.allowed_docker_image_prefixes"));
  }
  if (n["allowed_queues"]) TONY_RETURN_IF_ERROR(QueuesFrom(r, n["allowed_queues"], limits));
  return absl::OkStatus();
}

absl::StatusOr<SiteConfig> SiteFrom(const YamlReader& r, const YAML::Node& root,
                                    absl::string_view path) {
  SiteConfig site;
  site.path = std::string(path);
  if (root.IsNull()) return site;
  TONY_RETURN_IF_ERROR(r.CheckKeys(root, "", {"defaults", "templates", "limits"}));
  TONY_RETURN_IF_ERROR(CheckNoDuplicateKeys(r, root, ""));
  if (root["defaults"]) {
    TONY_ASSIGN_OR_RETURN(site.defaults, FragmentFrom(r, root["defaults"], "defaults", false));
  }
  if (const YAML::Node t = root["templates"]; t && !t.IsNull()) {
    if (!t.IsMap()) return r.Error(t, "templates", "expected a map of template name to settings");
    for (const auto& kv : t) {
      TONY_ASSIGN_OR_RETURN(std::string name, r.String(kv.first, "templates"));
      if (name.empty() || name.size() > static_cast<size_t>(kMaxJobNameLength)) {
        return r.Error(kv.first, "templates", "a template needs a name of 1 to 64 characters");
      }
      TONY_ASSIGN_OR_RETURN(site.templates[name],
                            FragmentFrom(r, kv.second, absl::StrCat("templates.", name), true));
    }
  }
  if (root["limits"]) TONY_RETURN_IF_ERROR(LimitsFrom(r, root["limits"], &site.limits));
  Flatten(root, "", 0, &site);
  return site;
}

// Fills `field` from `base` when it holds the built-in default.
template <typename T>
void Fill(T& field, const T& base, const T& builtin) {
  if (field == builtin && !(base == builtin)) field = base;
}

void FillEnv(std::map<std::string, std::string>& env,
             const std::map<std::string, std::string>& base) {
  for (const auto& [k, v] : base) env.emplace(k, v);  // the job's own value wins
}

void FillResources(Resources& r, const Resources& base) {
  Fill(r.vcores, base.vcores, {});
  Fill(r.memory_mb, base.memory_mb, {});
  Fill(r.gpus, base.gpus, {});
}

void FillJobType(JobTypeSpec& s, const JobTypeSpec& b) {
  static const JobTypeSpec d;
  Fill(s.instances, b.instances, d.instances);
  FillResources(s.resources, b.resources);
  for (const auto& [index, r] : b.task_resources) FillResources(s.task_resources[index], r);
  Fill(s.node_label, b.node_label, d.node_label);
  Fill(s.docker_image, b.docker_image, d.docker_image);
  Fill(s.command, b.command, d.command);
  FillEnv(s.env, b.env);
  Fill(s.tracked, b.tracked, d.tracked);
  Fill(s.restart, b.restart, d.restart);
  Fill(s.depends_on, b.depends_on, d.depends_on);
  Fill(s.linger, b.linger, d.linger);
  Fill(s.elastic, b.elastic, d.elastic);
  Fill(s.anti_affinity, b.anti_affinity, d.anti_affinity);
  Fill(s.node_attribute, b.node_attribute, d.node_attribute);
  Fill(s.preemption_grace, b.preemption_grace, d.preemption_grace);
}

// The base's roles first, in its order (the order containers are asked for), then the job's.
void FillJobTypes(std::vector<JobTypeSpec>& roles, const std::vector<JobTypeSpec>& base) {
  if (base.empty()) return;
  std::vector<JobTypeSpec> out;
  for (const JobTypeSpec& b : base) {
    auto it = std::find_if(roles.begin(), roles.end(),
                           [&](const JobTypeSpec& r) { return r.name == b.name; });
    if (it == roles.end()) {
      out.push_back(b);
    } else {
      FillJobType(*it, b);
      out.push_back(*it);
    }
  }
  for (const JobTypeSpec& r : roles) {
    if (std::none_of(base.begin(), base.end(),
                     [&](const JobTypeSpec& b) { return b.name == r.name; }))
      out.push_back(r);
  }
  roles = std::move(out);
}

void FillSpec(JobSpec& s, const JobSpec& b) {
  static const JobSpec d;
  Fill(s.name, b.name, d.name);
  Fill(s.queue, b.queue, d.queue);
  Fill(s.tags, b.tags, d.tags);
  Fill(s.application_type, b.application_type, d.application_type);
  Fill(s.view_acls, b.view_acls, d.view_acls);
  Fill(s.max_attempts, b.max_attempts, d.max_attempts);
  Fill(s.priority, b.priority, d.priority);
  Fill(s.work_preserving_restart, b.work_preserving_restart, d.work_preserving_restart);
  Fill(s.max_node_failures, b.max_node_failures, d.max_node_failures);
  Fill(s.exclude_nodes, b.exclude_nodes, d.exclude_nodes);
  Fill(s.preemption_grace, b.preemption_grace, d.preemption_grace);
  Fill(s.framework, b.framework, d.framework);
  FillJobTypes(s.job_types, b.job_types);
  FillResources(s.task_defaults, b.task_defaults);
  Fill(s.command, b.command, d.command);
  FillEnv(s.env, b.env);
  Fill(s.docker_image, b.docker_image, d.docker_image);
  Fill(s.input_path, b.input_path, d.input_path);
  Fill(s.output_path, b.output_path, d.output_path);
  Fill(s.script_file, b.script_file, d.script_file);
  Fill(s.files, b.files, d.files);
  Fill(s.archives, b.archives, d.archives);
  Fill(s.source_dir, b.source_dir, d.source_dir);
  Fill(s.tensorboard, b.tensorboard, d.tensorboard);
  Fill(s.tensorboard_command, b.tensorboard_command, d.tensorboard_command);
  Fill(s.python_env, b.python_env, d.python_env);
  Fill(s.client_mode, b.client_mode, d.client_mode);
  Fill(s.am_vcores, b.am_vcores, d.am_vcores);
  Fill(s.am_memory_mb, b.am_memory_mb, d.am_memory_mb);
  Fill(s.am_node_label, b.am_node_label, d.am_node_label);
  Fill(s.timeouts.registration, b.timeouts.registration, d.timeouts.registration);
  Fill(s.timeouts.job, b.timeouts.job, d.timeouts.job);
  Fill(s.timeouts.stop_grace, b.timeouts.stop_grace, d.timeouts.stop_grace);
  Fill(s.timeouts.am_unreachable, b.timeouts.am_unreachable, d.timeouts.am_unreachable);
  Fill(s.timeouts.allocation, b.timeouts.allocation, d.timeouts.allocation);
}

// "limits.max_gpus_per_task is 4 (/etc/hadoop/tony-site.yaml:7): <what>"
absl::Status Broken(const SiteConfig& site, absl::string_view limit, absl::string_view value,
                    absl::string_view what) {
  const int line = site.LineOf(limit);
  return absl::InvalidArgumentError(
      absl::StrCat(limit, " is ", value, " (", site.path, line > 0 ? absl::StrCat(":", line) : "",
                   "): ", what, "; ask for less or ask the cluster's admins"));
}

absl::Status CheckTask(const TaskSpec& t, const SiteConfig& site) {
  const SiteLimits& l = site.limits;
  if (l.max_memory_mb_per_task && t.memory_mb > *l.max_memory_mb_per_task) {
    return Broken(site, "limits.max_memory_mb_per_task", absl::StrCat(*l.max_memory_mb_per_task),
                  absl::StrCat("task ", t.id(), " asks for ", t.memory_mb, " MB"));
  }
  if (l.max_vcores_per_task && t.vcores > *l.max_vcores_per_task) {
    return Broken(site, "limits.max_vcores_per_task", absl::StrCat(*l.max_vcores_per_task),
                  absl::StrCat("task ", t.id(), " asks for ", t.vcores, " vcores"));
  }
  if (l.max_gpus_per_task && t.gpus > *l.max_gpus_per_task) {
    return Broken(site, "limits.max_gpus_per_task", absl::StrCat(*l.max_gpus_per_task),
                  absl::StrCat("task ", t.id(), " asks for ", t.gpus, " GPUs"));
  }
  if (!l.gpu_node_label.empty() && t.gpus > 0 && t.node_label != l.gpu_node_label) {
    return Broken(site, "limits.gpu_node_label", absl::StrCat("'", l.gpu_node_label, "'"),
                  absl::StrCat("task ", t.id(), " asks for GPUs on node label '", t.node_label,
                               "'; set --node_label ", t.job_name, "=", l.gpu_node_label,
                               " (YAML jobs.", t.job_name, ".node_label)"));
  }
  if (!l.docker_image_prefixes.empty() && !t.docker_image.empty() &&
      std::none_of(l.docker_image_prefixes.begin(), l.docker_image_prefixes.end(),
                   [&](const std::string& p) { return absl::StartsWith(t.docker_image, p); })) {
    return Broken(site, "limits.allowed_docker_image_prefixes",
                  absl::StrJoin(l.docker_image_prefixes, ", "),
                  absl::StrCat("task ", t.id(), " uses image '", t.docker_image, "'"));
  }
  return absl::OkStatus();
}

absl::Status CheckTotals(const std::vector<TaskSpec>& tasks, const SiteConfig& site) {
  const SiteLimits& l = site.limits;
  int64_t memory = 0, vcores = 0, gpus = 0;
  for (const TaskSpec& t : tasks) {
    memory += t.memory_mb;
    vcores += t.vcores;
    gpus += t.gpus;
  }
  if (l.max_tasks_per_job && static_cast<int64_t>(tasks.size()) > *l.max_tasks_per_job) {
    return Broken(site, "limits.max_tasks_per_job", absl::StrCat(*l.max_tasks_per_job),
                  absl::StrCat("the job has ", tasks.size(), " tasks"));
  }
  if (l.max_memory_mb_per_job && memory > *l.max_memory_mb_per_job) {
    return Broken(site, "limits.max_memory_mb_per_job", absl::StrCat(*l.max_memory_mb_per_job),
                  absl::StrCat("the job's tasks ask for ", memory, " MB in all"));
  }
  if (l.max_vcores_per_job && vcores > *l.max_vcores_per_job) {
    return Broken(site, "limits.max_vcores_per_job", absl::StrCat(*l.max_vcores_per_job),
                  absl::StrCat("the job's tasks ask for ", vcores, " vcores in all"));
  }
  if (l.max_gpus_per_job && gpus > *l.max_gpus_per_job) {
    return Broken(site, "limits.max_gpus_per_job", absl::StrCat(*l.max_gpus_per_job),
                  absl::StrCat("the job's tasks ask for ", gpus, " GPUs in all"));
  }
  return absl::OkStatus();
}

absl::Status CheckQueue(const JobSpec& spec, const SiteConfig& site, const SiteUser& user) {
  const SiteLimits& l = site.limits;
  if (!l.queues_restricted) return absl::OkStatus();
  std::set<std::string> allowed(l.queues_for_everyone.begin(), l.queues_for_everyone.end());
  if (auto it = l.queues_by_user.find(user.name); it != l.queues_by_user.end()) {
    allowed.insert(it->second.begin(), it->second.end());
  }
  for (const std::string& g : user.groups) {
    if (auto it = l.queues_by_group.find(g); it != l.queues_by_group.end()) {
      allowed.insert(it->second.begin(), it->second.end());
    }
  }
  if (allowed.count(spec.queue) > 0) return absl::OkStatus();
  return Broken(
      site, "limits.allowed_queues",
      allowed.empty() ? absl::StrCat("no queue for user ", user.name)
                      : absl::StrCat("[", absl::StrJoin(allowed, ", "), "] for user ", user.name),
      absl::StrCat("the job asks for queue '", spec.queue, "'; pick one of them with -q"));
}

}  // namespace

int SiteConfig::LineOf(absl::string_view key) const {
  auto it = key_lines.find(std::string(key));
  return it == key_lines.end() ? 0 : it->second;
}

absl::StatusOr<SiteConfig> ParseSiteConfig(absl::string_view yaml, absl::string_view path) {
  YamlReader reader(path);
  try {
    return SiteFrom(reader, YAML::Load(std::string(yaml)), path);
  } catch (const YAML::Exception& e) {
    if (e.mark.is_null()) return absl::InvalidArgumentError(absl::StrCat(path, ": ", e.msg));
    return absl::InvalidArgumentError(
        absl::StrCat(path, ":", e.mark.line + 1, ":", e.mark.column + 1, ": ", e.msg));
  }
}

std::string FindSiteFile(const std::vector<std::string>& conf_dirs) {
  for (const std::string& dir : conf_dirs) {
    const std::string path = absl::StrCat(dir, "/", kSiteFileName);
    if (Exists(path)) return path;
  }
  if (const char* env = std::getenv(kSiteFileEnv); env != nullptr) {
    return *env != '\0' && Exists(env) ? env : "";
  }
  return Exists(kDefaultSiteFile) ? kDefaultSiteFile : "";
}

absl::StatusOr<SiteConfig> LoadSiteConfig(const std::vector<std::string>& conf_dirs) {
  const std::string path = FindSiteFile(conf_dirs);
  if (path.empty()) return SiteConfig();
  absl::StatusOr<std::string> yaml = ReadRegularFile(path, kMaxSpecFileBytes);
  if (!yaml.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("site file ", path, ": ", yaml.status().message(),
                     "; nothing is submitted without it (ask the cluster's admins)"));
  }
  return ParseSiteConfig(*yaml, path);
}

absl::StatusOr<JobSpec> ApplySite(const JobSpec& spec, const SiteConfig& site) {
  JobSpec out = spec;
  if (!spec.site_template.empty()) {
    auto it = site.templates.find(spec.site_template);
    if (it == site.templates.end()) {
      std::vector<std::string> known;
      for (const auto& [name, t] : site.templates) known.push_back(name);
      return absl::InvalidArgumentError(absl::StrCat(
          "--template/template: '", spec.site_template, "' is unknown; ",
          site.path.empty() ? "there is no site file (docs/site-settings.md)"
          : known.empty()   ? absl::StrCat(site.path, " defines no templates")
                            : absl::StrCat(site.path, " defines: ", absl::StrJoin(known, ", "))));
    }
    FillSpec(out, it->second);
  }
  FillSpec(out, site.defaults);
  return out;
}

absl::Status CheckSiteLimits(const JobSpec& spec, const SiteConfig& site, const SiteUser& user) {
  if (site.path.empty()) return absl::OkStatus();
  const SiteLimits& l = site.limits;
  TONY_RETURN_IF_ERROR(CheckQueue(spec, site, user));
  if (l.max_job_timeout && spec.timeouts.job > *l.max_job_timeout) {
    return Broken(
        site, "limits.max_job_timeout", absl::FormatDuration(*l.max_job_timeout),
        spec.timeouts.job == absl::InfiniteDuration()
            ? std::string("the job has no timeout; set one with --timeout")
            : absl::StrCat("the job's timeout is ", absl::FormatDuration(spec.timeouts.job)));
  }
  const std::vector<TaskSpec> tasks = ResolveTasks(ExpandElastic(spec));
  for (const TaskSpec& t : tasks) TONY_RETURN_IF_ERROR(CheckTask(t, site));
  return CheckTotals(tasks, site);
}

absl::StatusOr<JobSpec> ApplyAndCheckSite(const JobSpec& spec, const SiteConfig& site,
                                          const SiteUser& user) {
  TONY_ASSIGN_OR_RETURN(JobSpec applied, ApplySite(spec, site));
  TONY_RETURN_IF_ERROR(ValidateJobSpec(applied));
  TONY_RETURN_IF_ERROR(CheckSiteLimits(applied, site, user));
  return applied;
}

std::string DescribeSite(const SiteConfig& site) {
  if (site.path.empty()) return "no site file: no defaults, templates or limits apply\n";
  std::string out = absl::StrCat("site file: ", site.path, "\n");
  if (site.settings.empty()) absl::StrAppend(&out, "  (empty: nothing applies)\n");
  for (const SiteSetting& s : site.settings) {
    absl::StrAppend(&out, "  ", s.key, ": ", s.value, "  (line ", s.line, ")\n");
  }
  return out;
}

}  // namespace tony::spec
