// Copyright libtony authors.
//
// Semantic checks of a complete JobSpec. Each message names the YAML key and, where one exists,
// the ytf-submit flag, then says how to fix it.

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "spec/access_control.h"
#include "spec/limits.h"
#include "spec/parse_util.h"
#include "tony/job_spec.h"

namespace tony {
namespace {

absl::Status Invalid(absl::string_view key, absl::string_view flag, absl::string_view problem) {
  if (flag.empty()) return absl::InvalidArgumentError(absl::StrCat(key, ": ", problem));
  return absl::InvalidArgumentError(absl::StrCat(key, " (", flag, "): ", problem));
}

// A preemption grace: finite, not negative.
absl::Status CheckGrace(absl::Duration grace, absl::string_view key) {
  if (grace < absl::ZeroDuration() || grace == absl::InfiniteDuration()) {
    return Invalid(key, "", "must be 0 (none) or a finite duration such as 30s");
  }
  return absl::OkStatus();
}

// A host of exclude_nodes: as YARN names nodes (no port, no spaces, no list separators).
absl::Status CheckHostName(absl::string_view host) {
  bool ok = !host.empty() && host.size() <= 255;
  for (char c : host) {
    ok = ok &&
         (absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '_');
  }
  if (ok) return absl::OkStatus();
  return Invalid("exclude_nodes", "--exclude_nodes",
                 absl::StrCat("\"", absl::CHexEscape(host),
                              "\" is not a host name; give host names without ports, comma-"
                              "separated (e.g. node1.example.com,node2.example.com)"));
}

bool IsEnvName(absl::string_view name) {
  if (name.empty() || absl::ascii_isdigit(static_cast<unsigned char>(name[0]))) return false;
  for (char c : name) {
    if (!absl::ascii_isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  }
  return true;
}

absl::Status CheckLength(absl::string_view value, int64_t max, absl::string_view key,
                         absl::string_view flag) {
  if (static_cast<int64_t>(value.size()) <= max) return absl::OkStatus();
  return Invalid(
      key, flag,
      absl::StrCat("is ", value.size(), " characters long; at most ", max, " are allowed"));
}

absl::Status CheckEnv(const std::map<std::string, std::string>& env, absl::string_view key) {
  for (const auto& [name, value] : env) {
    if (!IsEnvName(name)) {
      return Invalid(
          key, "",
          absl::StrCat("'", name, "' is not a variable name; use letters, digits and '_'"));
    }
    if (auto s =
            CheckLength(value, spec::kMaxEnvValueBytes, absl::StrCat(key, ".", name), "-e/--env");
        !s.ok()) {
      return s;
    }
  }
  return absl::OkStatus();
}

absl::Status CheckResources(const Resources& r, absl::string_view key) {
  if (r.vcores && *r.vcores < 1) {
    return Invalid(absl::StrCat(key, ".vcores"), "-c/--task_vcores", "must be at least 1");
  }
  if (r.memory_mb && *r.memory_mb < 1) {
    return Invalid(absl::StrCat(key, ".memory"), "-m/--task_memory", "must be more than 0 MB");
  }
  if (r.gpus && *r.gpus < 0) return Invalid(absl::StrCat(key, ".gpus"), "", "must be 0 or more");
  return absl::OkStatus();
}

// A local file that will be shipped: it must exist, be a regular file (not a directory, FIFO or
// device, whose reading would never end or block) within `max_bytes`, and be readable. stat()
// only: opening a FIFO would block.
absl::Status CheckLocalFile(const std::string& path, absl::string_view key, absl::string_view flag,
                            int64_t max_bytes) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    return Invalid(key, flag,
                   absl::StrCat("cannot read '", path, "': ", strerror(errno),
                                "; give an existing local file"));
  }
  if (!S_ISREG(st.st_mode)) {
    return Invalid(
        key, flag,
        absl::StrCat(
            "'", path, "' is ", S_ISDIR(st.st_mode) ? "a directory" : "not a regular file",
            "; give a regular file",
            S_ISDIR(st.st_mode) ? " (pack a directory with tar or zip and use --archive)" : ""));
  }
  if (st.st_size > max_bytes) {
    return Invalid(key, flag,
                   absl::StrCat("'", path, "' has ", st.st_size, " bytes, more than the ",
                                max_bytes, " allowed (see docs/job-spec.md, Limits)"));
  }
  if (access(path.c_str(), R_OK) != 0) {
    return Invalid(key, flag, absl::StrCat("cannot read '", path, "'; check its permissions"));
  }
  return absl::OkStatus();
}

absl::Status CheckLocalDirectory(const std::string& path, absl::string_view key,
                                 absl::string_view flag) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    return Invalid(key, flag,
                   absl::StrCat("cannot read '", path, "': ", strerror(errno),
                                "; give an existing local directory"));
  }
  if (!S_ISDIR(st.st_mode)) {
    return Invalid(key, flag,
                   absl::StrCat("'", path,
                                "' is not a directory; give the directory of the "
                                "sources (a single file goes with --file)"));
  }
  if (access(path.c_str(), R_OK | X_OK) != 0) {
    return Invalid(key, flag, absl::StrCat("cannot read '", path, "'; check its permissions"));
  }
  return absl::OkStatus();
}

// YAML carries only UTF-8, and the spec reaches the ApplicationMaster as YAML: other bytes would
// arrive as U+FFFD.
absl::Status CheckText(absl::string_view value, absl::string_view key, absl::string_view flag) {
  if (spec::IsValidUtf8(value)) return absl::OkStatus();
  return Invalid(key, flag, "is not valid UTF-8; give the text in UTF-8");
}

absl::Status CheckEnvText(const std::map<std::string, std::string>& env, absl::string_view key) {
  for (const auto& [name, value] : env) {
    if (auto s = CheckText(value, absl::StrCat(key, ".", name), "-e/--env"); !s.ok()) return s;
  }
  return absl::OkStatus();
}

// Every free-text field, in the order of docs/job-spec.md.
absl::Status CheckAllText(const JobSpec& spec) {
  const std::pair<const std::string*, std::pair<const char*, const char*>> fields[] = {
      {&spec.name, {"name", "-n/--name"}},
      {&spec.queue, {"queue", "-q/--queue"}},
      {&spec.application_type, {"application_type", ""}},
      {&spec.command, {"command", "<task_command>"}},
      {&spec.docker_image, {"docker_image", "--docker_image"}},
      {&spec.input_path, {"input", "-i/--input"}},
      {&spec.output_path, {"output", "-o/--output"}},
      {&spec.script_file, {"script", "-s/--script"}},
      {&spec.tensorboard_command, {"tensorboard_command", "--tensorboard_command"}},
      {&spec.python_env, {"python_env", "--python_env"}},
  };
  for (const auto& [value, names] : fields) {
    if (auto s = CheckText(*value, names.first, names.second); !s.ok()) return s;
  }
  for (const std::string& tag : spec.tags) {
    if (auto s = CheckText(tag, "tags", "--tag"); !s.ok()) return s;
  }
  if (auto s = CheckEnvText(spec.env, "env"); !s.ok()) return s;
  for (const std::string& f : spec.files) {
    if (auto s = CheckText(f, "files", "--file"); !s.ok()) return s;
  }
  for (const std::string& f : spec.archives) {
    if (auto s = CheckText(f, "archives", "--archive"); !s.ok()) return s;
  }
  if (auto s = CheckText(spec.source_dir, "source_dir", "--src_dir"); !s.ok()) return s;
  for (const JobTypeSpec& jt : spec.job_types) {
    const std::string key = absl::StrCat("jobs.", jt.name);
    if (auto s = CheckText(jt.node_label, key + ".node_label", "--node_label"); !s.ok()) return s;
    if (auto s = CheckText(jt.docker_image, key + ".docker_image", ""); !s.ok()) return s;
    if (auto s = CheckText(jt.command, key + ".command", ""); !s.ok()) return s;
    if (auto s = CheckEnvText(jt.env, key + ".env"); !s.ok()) return s;
  }
  return absl::OkStatus();
}

absl::Status CheckTimeout(absl::Duration d, absl::string_view key) {
  if (d <= absl::ZeroDuration()) return Invalid(key, "", "must be more than 0 (or none)");
  return absl::OkStatus();
}

// Known roles, no role depending on itself, no cycle; linger only where it can apply.
absl::Status CheckDependencies(const JobSpec& spec) {
  std::map<std::string, std::vector<std::string>> edges;
  for (const JobTypeSpec& jt : spec.job_types) {
    const std::string key = absl::StrCat("jobs.", jt.name, ".depends_on");
    for (const RoleDependency& d : jt.depends_on) {
      if (d.role == jt.name) return Invalid(key, "--depends_on", "a role cannot depend on itself");
      if (spec.FindJobType(d.role) == nullptr) {
        return Invalid(key, "--depends_on",
                       absl::StrCat("names '", d.role, "', which is no job type of this job"));
      }
      if (d.timeout <= absl::ZeroDuration()) {
        return Invalid(key, "--depends_on", "the timeout must be more than 0 (or none)");
      }
      edges[jt.name].push_back(d.role);
    }
    if (jt.linger > absl::ZeroDuration() &&
        jt.tracked.value_or(IsTrackedByDefault(spec, jt.name))) {
      return Invalid(absl::StrCat("jobs.", jt.name, ".linger"), "--linger",
                     "applies to untracked roles (ps, evaluator, or tracked: false); the job "
                     "waits for a tracked role anyway");
    }
  }
  // Depth-first search; `path` holds the roles on the current chain.
  std::map<std::string, int> state;  // 1 on the chain, 2 done
  std::vector<std::string> path;
  std::function<absl::Status(const std::string&)> visit = [&](const std::string& role) {
    state[role] = 1;
    path.push_back(role);
    for (const std::string& next : edges[role]) {
      if (state[next] == 1) {
        auto from = std::find(path.begin(), path.end(), next);
        std::vector<std::string> cycle(from, path.end());
        cycle.push_back(next);
        return Invalid(absl::StrCat("jobs.", role, ".depends_on"), "--depends_on",
                       absl::StrCat("dependency cycle ", absl::StrJoin(cycle, " -> "),
                                    "; no role could ever start"));
      }
      if (state[next] == 0) {
        if (absl::Status s = visit(next); !s.ok()) return s;
      }
    }
    path.pop_back();
    state[role] = 2;
    return absl::OkStatus();
  };
  for (const JobTypeSpec& jt : spec.job_types) {
    if (state[jt.name] == 0) {
      if (absl::Status s = visit(jt.name); !s.ok()) return s;
    }
  }
  return absl::OkStatus();
}

// One elastic role, of a PyTorch job, with 1 <= min <= max = instances.
absl::Status CheckElastic(const JobSpec& spec) {
  const JobTypeSpec* elastic = nullptr;
  for (const JobTypeSpec& jt : spec.job_types) {
    if (!jt.elastic) continue;
    const std::string key = absl::StrCat("jobs.", jt.name, ".elastic");
    if (elastic != nullptr) {
      return Invalid(key, "--elastic",
                     absl::StrCat("one elastic role per job; ", elastic->name, " is one already"));
    }
    elastic = &jt;
    if (spec.framework != Framework::kPyTorch) {
      return Invalid(key, "--elastic",
                     absl::StrCat("needs --framework pytorch (torchrun's elastic agent); ",
                                  FrameworkName(spec.framework), " jobs cannot change size"));
    }
    if (jt.elastic->min < 1) return Invalid(key, "--elastic", "min must be at least 1");
    if (jt.elastic->min > jt.elastic->max) {
      return Invalid(key, "--elastic",
                     absl::StrCat("min ", jt.elastic->min, " is more than max ", jt.elastic->max));
    }
    if (jt.instances != jt.elastic->max) {
      return Invalid(absl::StrCat("jobs.", jt.name, ".instances"), "--elastic",
                     absl::StrCat("an elastic role has elastic.max tasks (", jt.elastic->max,
                                  "), not ", jt.instances));
    }
    if (jt.restart && jt.restart->policy != RestartPolicy::kNever &&
        jt.restart->scope == RestartScope::kJob) {
      return Invalid(absl::StrCat("jobs.", jt.name, ".restart.scope"), "--restart",
                     "an elastic role relaunches lost tasks itself; use scope task");
    }
    if (jt.name == kRendezvousJobName) {
      return Invalid(key, "--elastic",
                     absl::StrCat("'", kRendezvousJobName,
                                  "' hosts the elastic rendezvous; "
                                  "name the elastic role otherwise"));
    }
  }
  return absl::OkStatus();
}

// An MPI job: one launcher task runs mpirun, the other roles' tasks run its daemons (ranks).
absl::Status CheckMpi(const JobSpec& spec) {
  if (spec.framework != Framework::kMpi) return absl::OkStatus();
  constexpr absl::string_view kFlag = "-r/--cluster_requirement";
  const JobTypeSpec* launcher = spec.FindJobType(kMpiLauncherJobName);
  if (launcher == nullptr) {
    return Invalid("jobs", kFlag,
                   "an MPI job needs a 'launcher' role of 1 task to run mpirun; add it, e.g. "
                   "-r launcher:1,worker:2");
  }
  if (launcher->instances != 1) {
    return Invalid(absl::StrCat("jobs.", kMpiLauncherJobName, ".instances"), kFlag,
                   absl::StrCat("an MPI job has one launcher (mpirun), not ", launcher->instances,
                                "; use launcher:1"));
  }
  int ranks = 0;
  for (const JobTypeSpec& jt : spec.job_types) {
    if (jt.name != kMpiLauncherJobName) ranks += jt.instances;
  }
  if (ranks == 0) {
    return Invalid("jobs", kFlag,
                   "an MPI job needs a role whose tasks host the ranks besides the launcher; add "
                   "one, e.g. -r launcher:1,worker:2");
  }
  if (spec.client_mode) {
    return Invalid("client_mode", "--client",
                   "an MPI job's launcher task runs mpirun in the cluster; drop --client");
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ValidateJobSpec(const JobSpec& spec) {
  if (spec.name.empty()) return Invalid("name", "-n/--name", "must not be empty");
  if (spec.queue.empty()) return Invalid("queue", "-q/--queue", "must not be empty");
  if (auto s = CheckLength(spec.name, spec::kMaxNameLength, "name", "-n/--name"); !s.ok()) {
    return s;
  }
  if (auto s = CheckLength(spec.queue, spec::kMaxNameLength, "queue", "-q/--queue"); !s.ok()) {
    return s;
  }
  if (static_cast<int>(spec.tags.size()) > spec::kMaxTags) {
    return Invalid("tags", "--tag",
                   absl::StrCat(spec.tags.size(), " tags; YARN takes at most ", spec::kMaxTags));
  }
  for (const std::string& tag : spec.tags) {
    if (auto s = CheckLength(tag, spec::kMaxTagLength, "tags", "--tag"); !s.ok()) return s;
  }
  if (auto acl = spec::ParseAccessControlList(spec.view_acls, "view_acls (--view_acls)");
      !acl.ok()) {
    return acl.status();
  }
  if (auto s = CheckLength(spec.command, spec::kMaxCommandBytes, "command", "<task_command>");
      !s.ok()) {
    return s;
  }
  if (spec.max_attempts < 1) return Invalid("max_attempts", "", "must be at least 1");
  if (spec.max_node_failures < 0) {
    return Invalid("max_node_failures", "", "must be 0 (never exclude a node) or more");
  }
  for (const std::string& host : spec.exclude_nodes) {
    if (auto s = CheckHostName(host); !s.ok()) return s;
  }
  if (auto s = CheckGrace(spec.preemption_grace, "preemption.grace"); !s.ok()) return s;
  for (const JobTypeSpec& jt : spec.job_types) {
    if (!jt.preemption_grace) continue;
    const std::string key = absl::StrCat("jobs.", jt.name, ".preemption.grace");
    if (auto s = CheckGrace(*jt.preemption_grace, key); !s.ok()) return s;
  }
  for (const JobTypeSpec& jt : spec.job_types) {
    if (!jt.node_attribute.empty()) {
      const std::string key = absl::StrCat("jobs.", jt.name, ".node_attribute");
      if (auto a = spec::ParseNodeAttribute(jt.node_attribute); !a.ok()) {
        return Invalid(key, "--node_attribute", a.status().message());
      }
      if (jt.anti_affinity) {
        return Invalid(key, "--node_attribute",
                       "not with anti_affinity on the same role yet (YARN's scheduler takes one "
                       "placement constraint per request); drop one");
      }
      if (!jt.node_label.empty()) {
        return Invalid(key, "--node_attribute",
                       "not with a node label yet (a placement constraint's partition); drop one");
      }
    }
    if (jt.anti_affinity && !jt.node_label.empty()) {
      return Invalid(absl::StrCat("jobs.", jt.name, ".anti_affinity"), "--anti_affinity",
                     "not with a node label yet (a placement constraint's partition); drop one");
    }
  }
  if (spec.priority && *spec.priority < 0) {
    return Invalid("priority", "--priority", "must be 0 or more (higher runs first)");
  }
  if (spec.am_vcores < 1) return Invalid("am.vcores", "", "must be at least 1");
  if (spec.am_memory_mb < 1) return Invalid("am.memory", "", "must be more than 0 MB");
  if (spec.job_types.empty()) {
    return Invalid("jobs", "-r/--cluster_requirement",
                   "no job types; give e.g. -r \"ps:1,worker:2\" or a `jobs:` map in the spec");
  }
  std::set<std::string> names;
  int64_t total_tasks = 0;
  for (const JobTypeSpec& jt : spec.job_types) {
    std::string key = absl::StrCat("jobs.", jt.name);
    if (!spec::IsValidJobName(jt.name)) {
      return Invalid("jobs", "-r/--cluster_requirement",
                     absl::StrCat("'", jt.name,
                                  "' is not a job name; use lower-case letters, digits, '_' or "
                                  "'-', starting with a letter"));
    }
    if (!names.insert(jt.name).second) {
      return Invalid("jobs", "-r/--cluster_requirement",
                     absl::StrCat("job '", jt.name, "' appears twice; give each job once"));
    }
    if (jt.instances < 1) {
      return Invalid(absl::StrCat(key, ".instances"), "-r/--cluster_requirement",
                     "must be at least 1");
    }
    total_tasks += jt.instances;
    if (total_tasks > spec::kMaxTotalTasks) {
      return Invalid(absl::StrCat(key, ".instances"), "-r/--cluster_requirement",
                     absl::StrCat("the job would have more than ", spec::kMaxTotalTasks,
                                  " tasks in all; ask for fewer instances"));
    }
    if (auto s = CheckResources(jt.resources, key); !s.ok()) return s;
    for (const auto& [index, r] : jt.task_resources) {
      std::string task_key = absl::StrCat(key, ".tasks.", index);
      if (index < 0 || index >= jt.instances) {
        return Invalid(task_key, "-c/-m <job>[<index>]:<value>",
                       absl::StrCat("task index ", index, " is out of range; job '", jt.name,
                                    "' has tasks 0..", jt.instances - 1));
      }
      if (auto s = CheckResources(r, task_key); !s.ok()) return s;
    }
    if (auto s = CheckEnv(jt.env, absl::StrCat(key, ".env")); !s.ok()) return s;
    if (auto s = CheckLength(jt.command, spec::kMaxCommandBytes, absl::StrCat(key, ".command"), "");
        !s.ok()) {
      return s;
    }
    if (jt.restart && jt.restart->policy != RestartPolicy::kNever) {
      const RestartSpec& r = *jt.restart;
      const std::string rkey = absl::StrCat(key, ".restart");
      if (r.max_restarts < 0) {
        return Invalid(rkey + ".max_restarts", "--restart", "must be 0 or more");
      }
      if (r.scope == RestartScope::kTask && jt.name == "ps" &&
          spec.framework == Framework::kTensorFlow && spec.FindJobType("chief") == nullptr) {
        return Invalid(rkey + ".scope", "--restart",
                       "a TF1 (between-graph) ps holds the model's variables and its workers do "
                       "not reconnect to a new one; use scope job for ps");
      }
      if (r.scope == RestartScope::kJob && r.max_restarts >= spec.max_attempts) {
        return Invalid(
            rkey + ".max_restarts", "--restart",
            absl::StrCat("scope job restarts the whole job as a new YARN attempt; set "
                         "max_attempts to at least ",
                         static_cast<int64_t>(r.max_restarts) + 1, " (--max_attempts ",
                         static_cast<int64_t>(r.max_restarts) + 1, ") or use scope task"));
      }
    }
    if (spec.command.empty() && jt.command.empty()) {
      return Invalid("command", "<task_command>",
                     absl::StrCat("no task command for job '", jt.name,
                                  "'; give the command as the last argument, e.g. "
                                  "'python train.py'"));
    }
  }
  if (auto s = CheckDependencies(spec); !s.ok()) return s;
  if (auto s = CheckElastic(spec); !s.ok()) return s;
  if (auto s = CheckMpi(spec); !s.ok()) return s;
  if (auto s = CheckResources(spec.task_defaults, "defaults"); !s.ok()) return s;
  if (auto s = CheckEnv(spec.env, "env"); !s.ok()) return s;
  if (auto s = CheckAllText(spec); !s.ok()) return s;
  if (spec.client_mode) {
    if (spec.FindJobType(kClientJobName) != nullptr) {
      return Invalid("jobs.client", "--client",
                     "a job type named 'client' conflicts with client mode; rename the job type "
                     "or drop --client");
    }
    if (spec.command.empty()) {
      return Invalid("command", "--client",
                     "the client task runs the job's command; give it as the last argument");
    }
    if (spec.max_attempts > 1) {
      return Invalid("max_attempts", "--max_attempts",
                     "a restarted job would need a new client; with --client keep it at 1");
    }
  }
  if (spec.tensorboard && spec.output_path.empty()) {
    return Invalid("tensorboard", "-t/--tensorboard",
                   "needs an output path; add -o/--output <dir> (TensorBoard reads it)");
  }
  if (!spec.script_file.empty()) {
    if (auto s = CheckLocalFile(spec.script_file, "script", "-s/--script", spec::kMaxScriptBytes);
        !s.ok()) {
      return s;
    }
  }
  for (const std::string& f : spec.files) {
    if (auto s = CheckLocalFile(f, "files", "--file", spec::kMaxFileBytes); !s.ok()) return s;
  }
  for (const std::string& f : spec.archives) {
    if (auto s = CheckLocalFile(f, "archives", "--archive", spec::kMaxArchiveBytes); !s.ok()) {
      return s;
    }
  }
  if (!spec.source_dir.empty()) {
    if (auto s = CheckLocalDirectory(spec.source_dir, "source_dir", "--src_dir"); !s.ok()) {
      return s;
    }
  }
  if (!spec.python_env.empty()) {
    if (auto s =
            CheckLocalFile(spec.python_env, "python_env", "--python_env", spec::kMaxArchiveBytes);
        !s.ok()) {
      return s;
    }
  }
  if (auto s = CheckTimeout(spec.timeouts.registration, "timeouts.registration"); !s.ok()) return s;
  if (auto s = CheckTimeout(spec.timeouts.job, "timeouts.job"); !s.ok()) return s;
  if (auto s = CheckTimeout(spec.timeouts.stop_grace, "timeouts.stop_grace"); !s.ok()) return s;
  if (auto s = CheckTimeout(spec.timeouts.allocation, "timeouts.allocation"); !s.ok()) return s;
  if (auto s = CheckTimeout(spec.timeouts.am_unreachable, "timeouts.am_unreachable"); !s.ok()) {
    return s;
  }
  return absl::OkStatus();
}

}  // namespace tony
