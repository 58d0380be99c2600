// Copyright libtony authors.

#include "cli/tony_conf.h"

#include <algorithm>
#include <map>
#include <set>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/status_macros.h"
#include "conf/configuration.h"
#include "spec/parse_util.h"

namespace tony::cli {
namespace {

// Second components of tony.* keys that are not roles.
const std::set<std::string, std::less<>> kNotRoles = {
    "application",     "am",      "task",         "yarn",   "containers", "execution",
    "docker",          "history", "portal",       "keytab", "https",      "http",
    "secret",          "horovod", "version-info", "other",  "container",  "gpu-exec-path",
    "python-exec-path"};

// Keys (or prefixes, ending in '.') libtony has no use for, and why; each one set gets a warning.
const std::map<std::string, std::string, std::less<>> kIgnored = {
    {"tony.task.", "libtony's executors are native processes with their own heartbeats"},
    {"tony.history.", "libtony keeps its own event log (tony.history.dir, docs/events.md)"},
    {"tony.portal.", "TonY's portal; `ytf events` and the AM's status page replace it"},
    {"tony.https.", "TonY's portal"},
    {"tony.http.", "TonY's portal"},
    {"tony.secret.", "TonY's portal"},
    {"tony.keytab.", "TonY's portal; ytf-submit takes --principal and --keytab"},
    {"tony.horovod.", "test switches of TonY's Horovod driver"},
    {"tony.version-info.", "TonY's build information"},
    {"tony.other.namenodes", "libtony gets delegation tokens for its staging file system only"},
    {"tony.application.num-client-rm-connect-retries", "libtony's RM client retries on its own"},
    {"tony.application.hdfs-conf-path", "tasks find the configuration in HADOOP_CONF_DIR"},
    {"tony.application.yarn-conf-path", "tasks find the configuration in HADOOP_CONF_DIR"},
    {"tony.application.mapred-conf-path", "tasks find the configuration in HADOOP_CONF_DIR"},
    {"tony.application.hadoop.", "tasks find the configuration in HADOOP_CONF_DIR"},
    {"tony.application.fail-on-worker-failure-enabled",
     "libtony fails the job at the first failure of a tracked task"},
    {"tony.containers.command", "the command comes from tony.<role>.command or --executes"},
    {"tony.docker.containers.mount", "mounts are the NodeManager's Docker runtime settings"},
    {"tony.gpu-exec-path", "libtony does not sample GPUs"},
    {"tony.python-exec-path", "set by TonY's client from --python_binary_path"},
};

// Keys whose TonY meaning libtony has anyway: no warning.
const std::set<std::string, std::less<>> kImplied = {
    "tony.application.security.enabled",          // Kerberos follows hadoop.security.authentication
    "tony.application.stop-on-failure-jobtypes",  // any tracked or ps failure ends the job
};

class Translator {
 public:
  Translator(const conf::Configuration& c, JobSpec* spec) : c_(c), spec_(spec) {}

  absl::StatusOr<std::vector<std::string>> Run();

 private:
  absl::Status Bad(absl::string_view key, absl::string_view what) const {
    std::string source = c_.Source(key);
    return absl::InvalidArgumentError(
        absl::StrCat(key, source.empty() ? "" : absl::StrCat(" (", source, ")"), ": ", what));
  }
  std::optional<std::string> Value(absl::string_view key) {
    used_.insert(std::string(key));
    if (!c_.IsSet(key)) return std::nullopt;
    absl::StatusOr<std::string> v = c_.Get(key);
    return v.ok() ? std::optional<std::string>(*v) : std::nullopt;
  }
  std::vector<std::string> List(absl::string_view key) {
    used_.insert(std::string(key));
    absl::StatusOr<std::vector<std::string>> items = c_.GetStrings(key);
    return items.ok() ? *items : std::vector<std::string>();
  }

  absl::Status Roles();
  absl::Status Role(JobTypeSpec* t);
  absl::Status Application();
  absl::Status Tracking();
  absl::Status Containers();
  void Leftovers();

  const conf::Configuration& c_;
  JobSpec* spec_;
  std::set<std::string> used_;
  std::vector<std::string> warnings_;
};

// Roles in TonY's usual order (chief, ps, worker, evaluator), then by name.
int RoleRank(const std::string& name) {
  static const char* kOrder[] = {"chief", "ps", "worker", "evaluator"};
  for (int i = 0; i < 4; ++i) {
    if (name == kOrder[i]) return i;
  }
  return 4;
}

absl::Status Translator::Roles() {
  std::set<std::string> names;
  for (const std::string& key : c_.Keys()) {
    std::vector<std::string> parts = absl::StrSplit(key, absl::MaxSplits('.', 2));
    if (parts.size() == 3 && parts[0] == "tony" && !kNotRoles.count(parts[1])) {
      names.insert(parts[1]);
    }
  }
  std::vector<std::string> order(names.begin(), names.end());
  std::stable_sort(order.begin(), order.end(), [](const std::string& a, const std::string& b) {
    return RoleRank(a) < RoleRank(b);
  });
  for (const std::string& name : order) {
    const std::string key = absl::StrCat("tony.", name, ".instances");
    std::optional<std::string> n = Value(key);
    if (!n) continue;  // TonY runs a role only when its instances are set
    absl::StatusOr<int> count = spec::ParseNonNegativeInt(*n);
    if (!count.ok()) return Bad(key, count.status().message());
    if (*count == 0) continue;
    JobTypeSpec t;
    t.name = name;
    t.instances = *count;
    TONY_RETURN_IF_ERROR(Role(&t));
    spec_->job_types.push_back(std::move(t));
  }
  return absl::OkStatus();
}

absl::Status Translator::Role(JobTypeSpec* t) {
  const std::string p = absl::StrCat("tony.", t->name, ".");
  // TonY's defaults, where libtony's differ: 2 GB and 1 vcore per task.
  std::string memory = Value(p + "memory").value_or("2g");
  absl::StatusOr<int64_t> mb = spec::ParseMemoryMb(memory);
  if (!mb.ok()) return Bad(p + "memory", mb.status().message());
  t->resources.memory_mb = *mb;
  for (const char* what : {"vcores", "gpus"}) {
    std::optional<std::string> v = Value(p + what);
    if (!v) continue;
    absl::StatusOr<int> n = spec::ParseNonNegativeInt(*v);
    if (!n.ok()) return Bad(p + what, n.status().message());
    (std::string(what) == "vcores" ? t->resources.vcores : t->resources.gpus) = *n;
  }
  if (!t->resources.vcores) t->resources.vcores = 1;
  if (auto v = Value(p + "command")) t->command = *v;
  if (auto v = Value(p + "node-label")) t->node_label = *v;
  if (auto v = Value(absl::StrCat("tony.docker.", t->name, ".image"))) t->docker_image = *v;
  if (auto v = Value(p + "depends-on")) {
    // TonY's roles start once those they depend on finished (a preparation stage).
    for (absl::string_view role : absl::StrSplit(*v, ',', absl::SkipWhitespace())) {
      absl::StatusOr<RoleDependency> d = spec::ParseDependency(absl::StripAsciiWhitespace(role));
      if (!d.ok()) return Bad(p + "depends-on", d.status().message());
      t->depends_on.push_back(*std::move(d));
    }
  }
  for (const char* what : {"resources", "max-instances", "timeout"}) {
    if (auto v = Value(p + what)) {
      warnings_.push_back(absl::StrCat(p, what, ": ignored, libtony has no per-role ", what));
    }
  }
  return absl::OkStatus();
}

absl::Status Translator::Application() {
  if (auto v = Value("tony.application.name")) spec_->name = *v;
  if (auto v = Value("tony.application.type")) spec_->application_type = *v;
  if (auto v = Value("tony.yarn.queue")) spec_->queue = *v;
  for (std::string& tag : List("tony.application.tags")) spec_->tags.push_back(tag);
  if (auto v = Value("tony.application.framework")) {
    absl::StatusOr<Framework> fw = ParseFramework(*v);
    if (!fw.ok()) return Bad("tony.application.framework", fw.status().message());
    spec_->framework = *fw;
  }
  // TonY's application label is YARN's default for the AM and every container.
  if (auto v = Value("tony.application.node-label")) {
    spec_->am_node_label = *v;
    for (JobTypeSpec& t : spec_->job_types) {
      if (t.node_label.empty()) t.node_label = *v;
    }
  }
  if (c_.IsSet("tony.application.timeout")) {
    absl::StatusOr<int64_t> ms = c_.GetInt("tony.application.timeout", 0);
    used_.insert("tony.application.timeout");
    if (!ms.ok() || *ms < 0) return Bad("tony.application.timeout", "expected milliseconds");
    if (*ms > 0) spec_->timeouts.job = absl::Milliseconds(*ms);
  }
  if (c_.IsSet("tony.container.allocation.timeout")) {
    absl::StatusOr<int64_t> ms = c_.GetInt("tony.container.allocation.timeout", -1);
    used_.insert("tony.container.allocation.timeout");
    if (!ms.ok()) return Bad("tony.container.allocation.timeout", "expected milliseconds");
    if (*ms > 0) spec_->timeouts.registration = absl::Milliseconds(*ms);
  }
  if (auto v = Value("tony.am.memory")) {
    absl::StatusOr<int64_t> mb = spec::ParseMemoryMb(*v);
    if (!mb.ok()) return Bad("tony.am.memory", mb.status().message());
    spec_->am_memory_mb = *mb;
  }
  if (auto v = Value("tony.am.vcores")) {
    absl::StatusOr<int> n = spec::ParsePositiveInt(*v);
    if (!n.ok()) return Bad("tony.am.vcores", n.status().message());
    spec_->am_vcores = *n;
  }
  if (auto v = Value("tony.am.retry-count")) {
    absl::StatusOr<int> n = spec::ParseNonNegativeInt(*v);
    if (!n.ok()) return Bad("tony.am.retry-count", n.status().message());
    spec_->max_attempts = *n + 1;
  }
  if (auto v = Value("tony.am.gpus"); v && *v != "0") {
    warnings_.push_back("tony.am.gpus: ignored, libtony's ApplicationMaster needs no GPU");
  }
  return absl::OkStatus();
}

// TonY tracks every role but the untracked and sidecar ones (defaults: ps; tensorboard).
absl::Status Translator::Tracking() {
  std::set<std::string> untracked = {"ps"}, sidecars = {"tensorboard"};
  if (c_.IsSet("tony.application.untracked.jobtypes")) {
    auto list = List("tony.application.untracked.jobtypes");
    untracked = {list.begin(), list.end()};
  }
  if (c_.IsSet("tony.application.sidecar.jobtypes")) {
    auto list = List("tony.application.sidecar.jobtypes");
    sidecars = {list.begin(), list.end()};
  }
  for (JobTypeSpec& t : spec_->job_types) {
    t.tracked = !untracked.count(t.name) && !sidecars.count(t.name);
    if (sidecars.count(t.name) && t.name != kTensorBoardJobName) {
      warnings_.push_back(absl::StrCat(
          "tony.application.sidecar.jobtypes: ", t.name,
          " is untracked; unlike TonY, libtony fails the job if it dies before the end"));
    }
  }
  if (auto mode = Value("tony.application.distributed-mode"); mode && *mode != "GANG") {
    warnings_.push_back(absl::StrCat("tony.application.distributed-mode=", *mode,
                                     ": ignored, libtony always allocates the gang"));
  }
  for (const char* key : {"tony.application.enable-preprocess", "tony.application.prepare-stage",
                          "tony.application.training-stage"}) {
    if (auto v = Value(key); v && *v != "false" && !v->empty()) {
      return Bad(key,
                 "TonY's preprocessing stages are not supported by libtony; run the "
                 "preparation as a job of its own before this one");
    }
  }
  return absl::OkStatus();
}

absl::Status Translator::Containers() {
  for (const char* key : {"tony.containers.envs", "tony.execution.envs"}) {
    for (const std::string& item : List(key)) {
      auto kv = conf::Configuration::ParseOverride(item);
      if (!kv.ok()) return Bad(key, absl::StrCat("'", item, "' is not KEY=VALUE"));
      spec_->env[kv->first] = kv->second;
    }
  }
  for (const std::string& item : List("tony.containers.resources")) {
    absl::string_view path = item;
    const bool archive = absl::ConsumeSuffix(&path, "#archive");
    if (absl::StrContains(path, "://")) {
      return Bad("tony.containers.resources",
                 absl::StrCat("'", path, "': libtony ships local files; copy it here first"));
    }
    (archive ? spec_->archives : spec_->files).emplace_back(path);
  }
  std::optional<std::string> docker = Value("tony.docker.enabled");
  std::optional<std::string> image = Value("tony.docker.containers.image");
  if (docker == "true" && image) spec_->docker_image = *image;
  return absl::OkStatus();
}

// Every other tony.* key: a warning naming it (known ones with the reason).
void Translator::Leftovers() {
  for (const std::string& key : c_.Keys()) {
    if (!absl::StartsWith(key, "tony.") || used_.count(key) || kImplied.count(key)) continue;
    std::string why = "not a TonY key libtony knows";
    for (const auto& [prefix, reason] : kIgnored) {
      if (key == prefix || (absl::EndsWith(prefix, ".") && absl::StartsWith(key, prefix))) {
        why = reason;
      }
    }
    warnings_.push_back(absl::StrCat(key, ": ignored, ", why));
  }
}

absl::StatusOr<std::vector<std::string>> Translator::Run() {
  TONY_RETURN_IF_ERROR(Roles());
  TONY_RETURN_IF_ERROR(Application());
  TONY_RETURN_IF_ERROR(Tracking());
  TONY_RETURN_IF_ERROR(Containers());
  Leftovers();
  return warnings_;
}

// TonY's command: --executes (python for a .py, with the venv's interpreter) + --task_params.
std::string Command(const TonyInput& in, JobSpec* spec) {
  if (in.executes.empty()) return "";
  std::string python = in.python_binary_path;
  if (!python.empty() && python[0] != '/' && !in.python_venv.empty()) {
    python = "tony-python-env/" + python;  // where the env is unpacked in a container
  }
  if (python.empty()) python = "python";
  std::string cmd =
      absl::EndsWith(in.executes, ".py") ? absl::StrCat(python, " ", in.executes) : in.executes;
  if (!in.task_params.empty()) absl::StrAppend(&cmd, " ", in.task_params);
  // A local script is shipped with the job, as TonY does; with --src_dir it is one of the sources.
  if (in.src_dir.empty() && absl::EndsWith(in.executes, ".py") &&
      !absl::StrContains(in.executes, "/")) {
    spec->files.push_back(in.executes);
  }
  return cmd;
}

}  // namespace

absl::StatusOr<std::vector<std::string>> ApplyTonyConf(const TonyInput& input, JobSpec* spec) {
  conf::Configuration c;
  for (const std::string& file : input.conf_files) {
    absl::Status s = c.AddResourceFile(file);
    if (!s.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("--tony_conf ", file, ": ", s.message()));
    }
  }
  for (const auto& [key, value] : input.settings) c.Set(key, value, "--tony");
  *spec = JobSpec();
  spec->name = "TensorFlowApplication";  // TonY's default name
  Translator t(c, spec);
  TONY_ASSIGN_OR_RETURN(std::vector<std::string> warnings, t.Run());
  for (const std::string& item : input.env) {
    auto kv = conf::Configuration::ParseOverride(item);
    if (!kv.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--shell_env/--container_env: '", item, "' is not KEY=VALUE"));
    }
    spec->env[kv->first] = kv->second;
  }
  if (!input.python_venv.empty()) spec->python_env = input.python_venv;
  if (!input.tensorboard_log_dir.empty()) {
    // TonY's sidecar TensorBoard reads this directory; libtony's reads the job's output.
    spec->tensorboard = true;
    spec->output_path = input.tensorboard_log_dir;
  }
  spec->command = Command(input, spec);
  return warnings;
}

}  // namespace tony::cli
