// Copyright libtony authors.

#include "cli/submit_args.h"

#include <algorithm>
#include <functional>
#include <iostream>
#include <sstream>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "cli/tony_conf.h"
#include "common/logging.h"
#include "common/status_macros.h"
#include "spec/parse_util.h"

namespace tony::cli {
namespace {

struct FlagDef {
  char short_name;        // 0 when none
  const char* long_name;  // without "--"
  bool takes_value;
};

// Every flag, in --help order.
constexpr FlagDef kFlags[] = {
    {'r', "cluster_requirement", true},
    {'c', "task_vcores", true},
    {'m', "task_memory", true},
    {'g', "task_gpus", true},
    {'i', "input", true},
    {'o', "output", true},
    {'s', "script", true},
    {'t', "tensorboard", false},
    {0, "tensorboard_command", true},
    {0, "python_env", true},
    {0, "docker_image", true},
    {'q', "queue", true},
    {'n', "name", true},
    {0, "client", false},
    {0, "spec", true},
    {0, "template", true},
    {0, "framework", true},
    {'e', "env", true},
    {0, "file", true},
    {0, "archive", true},
    {0, "node_label", true},
    {0, "restart", true},
    {0, "depends_on", true},
    {0, "linger", true},
    {0, "anti_affinity", true},
    {0, "node_attribute", true},
    {0, "elastic", true},
    {0, "tag", true},
    {0, "view_acls", true},
    {0, "max_attempts", true},
    {0, "exclude_nodes", true},
    {0, "max_node_failures", true},
    {0, "preemption_grace", true},
    {0, "priority", true},
    {0, "am_memory", true},
    {0, "am_node_label", true},
    {0, "registration_timeout", true},
    {0, "allocation_timeout", true},
    {0, "timeout", true},
    {0, "local", false},
    {0, "yarn", false},
    {0, "conf_dir", true},
    {0, "broker_tls", false},
    {0, "principal", true},
    {0, "keytab", true},
    {'D', "define", true},
    {0, "tony_conf", true},
    {0, "tony", true},
    {0, "executes", true},
    {0, "task_params", true},
    {0, "python_binary_path", true},
    {0, "python_venv", true},
    {0, "shell_env", true},
    {0, "container_env", true},
    {0, "src_dir", true},
    {0, "sidecar_tensorboard_log_dir", true},
    {0, "hdfs_classpath", true},
    {0, "conf_file", true},
    {0, "conf", true},
    {0, "dry-run", false},
    {0, "dry-run-tasks", false},
    {0, "show_site", false},
    {0, "detach", false},
    {0, "quiet", false},
    {'h', "help", false},
    {0, "version", false},
};

const FlagDef* FindLong(absl::string_view name) {
  for (const FlagDef& f : kFlags) {
    if (name == f.long_name) return &f;
  }
  // Accept dashes for underscores (--task-vcores) and the other way round (--dry_run).
  for (const FlagDef& f : kFlags) {
    std::string a(f.long_name), b(name);
    std::replace(a.begin(), a.end(), '-', '_');
    std::replace(b.begin(), b.end(), '-', '_');
    if (a == b) return &f;
  }
  return nullptr;
}

const FlagDef* FindShort(char c) {
  for (const FlagDef& f : kFlags) {
    if (f.short_name == c) return &f;
  }
  return nullptr;
}

std::string FlagName(const FlagDef& f) {
  if (f.short_name != 0) return absl::StrCat("-", std::string(1, f.short_name), "/--", f.long_name);
  return absl::StrCat("--", f.long_name);
}

absl::Status FlagError(const FlagDef& f, absl::string_view msg) {
  return absl::InvalidArgumentError(absl::StrCat(FlagName(f), ": ", msg));
}

struct RawFlag {
  const FlagDef* def;
  std::string value;
};

// A word as bash reads it back unchanged: as is when it has no special character, else in single
// quotes (a quote inside becomes '\'').
std::string ShellQuote(const std::string& word) {
  const bool plain = !word.empty() && std::all_of(word.begin(), word.end(), [](char c) {
    return absl::ascii_isalnum(static_cast<unsigned char>(c)) ||
           absl::string_view("_@%+=:,./-").find(c) != absl::string_view::npos;
  });
  if (plain) return word;
  return absl::StrCat("'", absl::StrReplaceAll(word, {{"'", "'\\''"}}), "'");
}

// TonY's client flags (cli/tony_conf.h), which TonY users also write with a single dash.
constexpr absl::string_view kTonyFlags[] = {
    "executes",      "task_params", "python_binary_path",          "python_venv",    "shell_env",
    "container_env", "src_dir",     "sidecar_tensorboard_log_dir", "hdfs_classpath", "conf_file",
    "conf"};

bool IsTonyFlag(absl::string_view arg) {
  if (arg.size() < 3 || arg[0] != '-' || arg[1] == '-') return false;
  absl::string_view name = arg.substr(1);
  name = name.substr(0, name.find('='));
  return std::find(std::begin(kTonyFlags), std::end(kTonyFlags), name) != std::end(kTonyFlags);
}

// Splits argv into flags (in order) and the positional task command. `*argv_form` is set when
// the command came as words after "--".
absl::Status Tokenize(const std::vector<std::string>& args, std::vector<RawFlag>* flags,
                      std::vector<std::string>* positional, bool* argv_form) {
  for (size_t i = 0; i < args.size(); ++i) {
    // TonY's client takes its long options with one dash too (-executes x.py).
    const std::string arg = IsTonyFlag(args[i]) ? "-" + args[i] : args[i];
    if (arg == "--") {
      positional->insert(positional->end(), args.begin() + i + 1, args.end());
      *argv_form = true;
      break;
    }
    const FlagDef* def = nullptr;
    std::optional<std::string> inline_value;
    if (absl::StartsWith(arg, "--")) {
      std::string name = arg.substr(2);
      if (size_t eq = name.find('='); eq != std::string::npos) {
        inline_value = name.substr(eq + 1);
        name = name.substr(0, eq);
      }
      def = FindLong(name);
      if (def == nullptr) {
        return absl::InvalidArgumentError(
            absl::StrCat("unknown option '--", name, "'; see ytf-submit --help"));
      }
    } else if (arg.size() >= 2 && arg[0] == '-' && arg[1] != '-') {
      def = FindShort(arg[1]);
      if (def == nullptr) {
        return absl::InvalidArgumentError(
            absl::StrCat("unknown option '-", std::string(1, arg[1]), "'; see ytf-submit --help"));
      }
      if (arg.size() > 2) {
        if (!def->takes_value) {
          return absl::InvalidArgumentError(
              absl::StrCat("unknown option '", arg, "'; give single-letter options separately"));
        }
        inline_value = arg.substr(2);
      }
    } else {
      positional->push_back(arg);
      continue;
    }
    if (!def->takes_value) {
      if (inline_value) return FlagError(*def, "takes no value");
      flags->push_back({def, ""});
      continue;
    }
    if (!inline_value) {
      if (i + 1 >= args.size()) return FlagError(*def, "needs a value");
      inline_value = args[++i];
    }
    flags->push_back({def, *inline_value});
  }
  return absl::OkStatus();
}

absl::Status ApplyResourceFlag(const RawFlag& flag, JobSpec* spec) {
  auto assignments = spec::ParseResourceAssignments(flag.value);
  if (!assignments.ok()) return FlagError(*flag.def, assignments.status().message());
  const std::string which = flag.def->long_name;
  for (const spec::ResourceAssignment& a : *assignments) {
    Resources parsed;
    if (which == "task_memory") {
      auto mb = spec::ParseMemoryMb(a.value);
      if (!mb.ok()) return FlagError(*flag.def, mb.status().message());
      parsed.memory_mb = *mb;
    } else if (which == "task_vcores") {
      auto v = spec::ParsePositiveInt(a.value);
      if (!v.ok()) return FlagError(*flag.def, absl::StrCat("vcores ", v.status().message()));
      parsed.vcores = *v;
    } else {
      auto v = spec::ParseNonNegativeInt(a.value);
      if (!v.ok()) return FlagError(*flag.def, absl::StrCat("gpus ", v.status().message()));
      parsed.gpus = *v;
    }
    Resources* target = &spec->task_defaults;
    if (!a.job.empty()) {
      JobTypeSpec* jt = spec->FindJobType(a.job);
      if (jt == nullptr) {
        std::vector<std::string> names;
        for (const JobTypeSpec& j : spec->job_types) names.push_back(j.name);
        return FlagError(*flag.def, absl::StrCat("unknown job '", a.job, "'; the jobs are: ",
                                                 names.empty() ? "(none: give -r first)"
                                                               : absl::StrJoin(names, ", ")));
      }
      if (a.index) {
        if (*a.index >= jt->instances) {
          return FlagError(*flag.def,
                           absl::StrCat("task ", a.job, "[", *a.index, "] does not exist; job '",
                                        a.job, "' has tasks 0..", jt->instances - 1));
        }
        target = &jt->task_resources[*a.index];
      } else {
        target = &jt->resources;
      }
    }
    if (parsed.vcores) target->vcores = parsed.vcores;
    if (parsed.memory_mb) target->memory_mb = parsed.memory_mb;
    if (parsed.gpus) target->gpus = parsed.gpus;
  }
  return absl::OkStatus();
}

absl::StatusOr<std::pair<std::string, std::string>> KeyValue(const RawFlag& flag) {
  size_t eq = flag.value.find('=');
  if (eq == std::string::npos || eq == 0) {
    return FlagError(*flag.def, absl::StrCat("'", flag.value, "' is not KEY=VALUE"));
  }
  return std::make_pair(flag.value.substr(0, eq), flag.value.substr(eq + 1));
}

// Loads --spec (a file, or "-" for stdin) into `spec`; the command line then overrides it.
absl::Status LoadSpecFlag(const std::vector<RawFlag>& flags, JobSpec* spec) {
  for (const RawFlag& f : flags) {
    if (std::string(f.def->long_name) != "spec") continue;
    if (f.value == "-") {
      // From a pipe: relative paths in it are relative to the current directory.
      std::stringstream text;
      text << std::cin.rdbuf();
      TONY_ASSIGN_OR_RETURN(*spec, ParseJobSpecYaml(text.str(), "<stdin>"));
    } else {
      TONY_ASSIGN_OR_RETURN(*spec, LoadJobSpecFile(f.value));
    }
  }
  return absl::OkStatus();
}

// TonY's configuration and client flags (cli/tony_conf.h) as the base spec, like --spec.
absl::Status LoadTonyFlags(const std::vector<RawFlag>& flags, JobSpec* spec) {
  TonyInput in;
  const RawFlag* spec_flag = nullptr;
  for (const RawFlag& f : flags) {
    const std::string name = f.def->long_name;
    if (name == "spec") spec_flag = &f;
    if (name == "tony_conf" || name == "conf_file") {
      in.conf_files.push_back(f.value);
    } else if (name == "tony" || name == "conf") {
      TONY_ASSIGN_OR_RETURN(auto kv, KeyValue(f));
      in.settings.push_back(kv);
    } else if (name == "executes") {
      in.executes = f.value;
    } else if (name == "task_params") {
      in.task_params = f.value;
    } else if (name == "python_binary_path") {
      in.python_binary_path = f.value;
    } else if (name == "python_venv") {
      in.python_venv = f.value;
    } else if (name == "shell_env" || name == "container_env") {
      in.env.push_back(f.value);
    } else if (name == "src_dir") {
      in.src_dir = f.value;  // the spec's source_dir comes with the other options
    } else if (name == "sidecar_tensorboard_log_dir") {
      in.tensorboard_log_dir = f.value;
    } else if (name == "hdfs_classpath") {
      return FlagError(*f.def,
                       "not supported: ship the jars with --file and set -e CLASSPATH=... "
                       "(docs/migrating-from-tony.md)");
    }
  }
  if (in.empty()) return absl::OkStatus();
  if (spec_flag != nullptr) {
    return FlagError(*spec_flag->def, "give either --spec or TonY's configuration, not both");
  }
  TONY_ASSIGN_OR_RETURN(std::vector<std::string> warnings, ApplyTonyConf(in, spec));
  for (const std::string& w : warnings) TONY_LOG(WARNING) << w;
  return absl::OkStatus();
}

// -r: adds or resizes jobs. Before resources, so -c/-m can name any job whatever the order.
absl::Status ApplyClusterRequirements(const std::vector<RawFlag>& flags, JobSpec* spec) {
  for (const RawFlag& f : flags) {
    if (std::string(f.def->long_name) != "cluster_requirement") continue;
    auto req = spec::ParseClusterRequirement(f.value);
    if (!req.ok()) return FlagError(*f.def, req.status().message());
    for (const auto& [job, count] : *req) {
      JobTypeSpec* jt = spec->FindJobType(job);
      if (jt == nullptr) {
        spec->job_types.push_back(JobTypeSpec{});
        jt = &spec->job_types.back();
        jt->name = job;
      }
      jt->instances = count;
      // A shrunk job loses overrides of tasks it no longer has.
      jt->task_resources.erase(jt->task_resources.lower_bound(count), jt->task_resources.end());
    }
  }
  return absl::OkStatus();
}

// Resource flags in three passes: general, then job level, then task level, so the more
// specific form wins whatever the order on the command line.
absl::Status ApplyResourceFlags(const std::vector<RawFlag>& flags, JobSpec* spec) {
  for (int level = 0; level < 3; ++level) {
    for (const RawFlag& f : flags) {
      std::string name = f.def->long_name;
      if (name != "task_vcores" && name != "task_memory" && name != "task_gpus") continue;
      auto parsed = spec::ParseResourceAssignments(f.value);
      if (!parsed.ok()) return FlagError(*f.def, parsed.status().message());
      for (const spec::ResourceAssignment& a : *parsed) {
        int a_level = a.job.empty() ? 0 : (a.index ? 2 : 1);
        if (a_level != level) continue;
        std::string one = a.job.empty()
                              ? a.value
                              : (a.index ? absl::StrCat(a.job, "[", *a.index, "]:", a.value)
                                         : absl::StrCat(a.job, ":", a.value));
        TONY_RETURN_IF_ERROR(ApplyResourceFlag({f.def, one}, spec));
      }
    }
  }
  return absl::OkStatus();
}

// Every other flag, in command-line order: a field of the job spec or of the submission.
// --depends_on <job>=<dependency> and --linger <job>=<duration>.
absl::Status ApplyRoleFlag(const RawFlag& f, JobSpec* spec) {
  const absl::string_view flag = f.def->long_name;
  const bool linger = flag == "linger";
  std::vector<std::string> parts = absl::StrSplit(f.value, absl::MaxSplits('=', 1));
  JobTypeSpec* jt = parts.size() == 2 ? spec->FindJobType(parts[0]) : nullptr;
  if (jt == nullptr) {
    return FlagError(*f.def, absl::StrCat("'", f.value, "' is not <job>=",
                                          linger              ? "<duration>"
                                          : flag == "elastic" ? "<min>:<max>"
                                                              : "<role>[:<when>[:<timeout>]]",
                                          " for a job of -r"));
  }
  if (flag == "elastic") {
    std::vector<std::string> range = absl::StrSplit(parts[1], ':');
    absl::StatusOr<int> min = spec::ParsePositiveInt(range[0]);
    absl::StatusOr<int> max =
        range.size() == 2 ? spec::ParsePositiveInt(range[1]) : absl::StatusOr<int>(0);
    if (range.size() != 2 || !min.ok() || !max.ok()) {
      return FlagError(*f.def, absl::StrCat("'", parts[1], "' is not <min>:<max>, e.g. 2:4"));
    }
    jt->elastic = ElasticRange{*min, *max};
    jt->instances = *max;
    return absl::OkStatus();
  }
  if (linger) {
    auto d = spec::ParseTimeout(parts[1]);
    if (!d.ok()) return FlagError(*f.def, d.status().message());
    jt->linger = *d;
    return absl::OkStatus();
  }
  auto d = spec::ParseDependency(parts[1]);
  if (!d.ok()) return FlagError(*f.def, d.status().message());
  jt->depends_on.push_back(*std::move(d));
  return absl::OkStatus();
}

absl::Status ApplyFlag(const RawFlag& f, JobSpec* spec, SubmitArgs* out) {
  const std::string name = f.def->long_name;
  if (name == "input") {
    spec->input_path = f.value;
  } else if (name == "output") {
    spec->output_path = f.value;
  } else if (name == "script") {
    spec->script_file = f.value;
  } else if (name == "tensorboard") {
    spec->tensorboard = true;
  } else if (name == "tensorboard_command") {
    if (f.value.empty()) return FlagError(*f.def, "must not be empty");
    spec->tensorboard_command = f.value;
  } else if (name == "python_env") {
    spec->python_env = f.value;
  } else if (name == "docker_image") {
    spec->docker_image = f.value;
  } else if (name == "queue") {
    if (f.value.empty()) return FlagError(*f.def, "must not be empty");
    spec->queue = f.value;
  } else if (name == "template") {
    if (f.value.empty()) return FlagError(*f.def, "must not be empty");
    spec->site_template = f.value;
  } else if (name == "name") {
    if (f.value.empty()) return FlagError(*f.def, "must not be empty");
    spec->name = f.value;
  } else if (name == "client") {
    spec->client_mode = true;
  } else if (name == "framework") {
    auto fw = ParseFramework(f.value);
    if (!fw.ok()) return FlagError(*f.def, fw.status().message());
    spec->framework = *fw;
  } else if (name == "env") {
    TONY_ASSIGN_OR_RETURN(auto kv, KeyValue(f));
    spec->env[kv.first] = kv.second;
  } else if (name == "file") {
    spec->files.push_back(f.value);
  } else if (name == "archive") {
    spec->archives.push_back(f.value);
  } else if (name == "src_dir") {
    spec->source_dir = f.value;
  } else if (name == "node_label") {
    std::vector<std::string> parts = absl::StrSplit(f.value, absl::MaxSplits(':', 1));
    JobTypeSpec* jt = parts.size() == 2 ? spec->FindJobType(parts[0]) : nullptr;
    if (jt == nullptr) {
      return FlagError(*f.def,
                       absl::StrCat("'", f.value, "' is not <job>:<label> for a job of -r"));
    }
    jt->node_label = parts[1];
  } else if (name == "restart") {
    size_t colon = f.value.find(':');
    JobTypeSpec* jt =
        colon == std::string::npos ? nullptr : spec->FindJobType(f.value.substr(0, colon));
    if (jt == nullptr) {
      return FlagError(*f.def,
                       absl::StrCat("'", f.value, "' does not start with <job>: for a job of -r"));
    }
    auto r = spec::ParseRestartFlag(f.value, jt->restart ? &*jt->restart : nullptr);
    if (!r.ok()) return FlagError(*f.def, r.status().message());
    jt->restart = r->second;
  } else if (name == "depends_on" || name == "linger" || name == "elastic") {
    return ApplyRoleFlag(f, spec);
  } else if (name == "anti_affinity") {
    JobTypeSpec* jt = spec->FindJobType(f.value);
    if (jt == nullptr) return FlagError(*f.def, absl::StrCat("'", f.value, "' is not a job of -r"));
    jt->anti_affinity = true;
  } else if (name == "node_attribute") {
    const size_t colon = f.value.find(':');
    JobTypeSpec* jt =
        colon == std::string::npos ? nullptr : spec->FindJobType(f.value.substr(0, colon));
    if (jt == nullptr) {
      return FlagError(*f.def, absl::StrCat("'", f.value,
                                            "' is not <job>:<attribute expression> of a job of "
                                            "-r, e.g. worker:nm.yarn.io/pool=a"));
    }
    jt->node_attribute = f.value.substr(colon + 1);
  } else if (name == "tag") {
    spec->tags.push_back(f.value);
  } else if (name == "view_acls") {
    spec->view_acls = f.value;
  } else if (name == "max_attempts") {
    auto v = spec::ParsePositiveInt(f.value);
    if (!v.ok()) return FlagError(*f.def, v.status().message());
    spec->max_attempts = *v;
  } else if (name == "exclude_nodes") {
    // Validation names a bad host; empty entries ("a,,b", a trailing comma) are dropped.
    for (absl::string_view host : absl::StrSplit(f.value, ',', absl::SkipWhitespace())) {
      spec->exclude_nodes.emplace_back(absl::StripAsciiWhitespace(host));
    }
  } else if (name == "max_node_failures") {
    auto v = spec::ParseNonNegativeInt(f.value);
    if (!v.ok()) return FlagError(*f.def, v.status().message());
    spec->max_node_failures = *v;
  } else if (name == "preemption_grace") {
    auto v = spec::ParseGrace(f.value);
    if (!v.ok()) return FlagError(*f.def, v.status().message());
    spec->preemption_grace = *v;
  } else if (name == "priority") {
    auto v = spec::ParseNonNegativeInt(f.value);
    if (!v.ok()) return FlagError(*f.def, v.status().message());
    spec->priority = *v;
  } else if (name == "am_memory") {
    auto v = spec::ParseMemoryMb(f.value);
    if (!v.ok()) return FlagError(*f.def, v.status().message());
    spec->am_memory_mb = *v;
  } else if (name == "am_node_label") {
    if (f.value.empty()) return FlagError(*f.def, "must not be empty");
    spec->am_node_label = f.value;
  } else if (name == "allocation_timeout") {
    auto v = spec::ParseTimeout(f.value);
    if (!v.ok()) return FlagError(*f.def, v.status().message());
    spec->timeouts.allocation = *v;
  } else if (name == "registration_timeout" || name == "timeout") {
    auto v = spec::ParseTimeout(f.value);
    if (!v.ok()) return FlagError(*f.def, v.status().message());
    (name == "timeout" ? spec->timeouts.job : spec->timeouts.registration) = *v;
  } else if (name == "local") {
    if (out->backend == Backend::kYarn) return FlagError(*f.def, "conflicts with --yarn");
    out->backend = Backend::kLocal;
  } else if (name == "yarn") {
    if (out->backend == Backend::kLocal) return FlagError(*f.def, "conflicts with --local");
    out->backend = Backend::kYarn;
  } else if (name == "conf_dir") {
    out->conf_dir = f.value;
  } else if (name == "broker_tls") {
    out->broker_tls = true;
  } else if (name == "principal") {
    out->principal = f.value;
  } else if (name == "keytab") {
    out->keytab = f.value;
  } else if (name == "define") {
    TONY_ASSIGN_OR_RETURN(auto kv, KeyValue(f));
    out->conf_overrides[kv.first] = kv.second;
  } else if (name == "dry-run") {
    out->dry_run = true;
  } else if (name == "dry-run-tasks") {
    out->dry_run = out->dry_run_tasks = true;
  } else if (name == "detach") {
    out->detach = true;
  } else if (name == "quiet") {
    out->quiet = true;
  }

  return absl::OkStatus();
}

// The positional words: one word is a shell command line, run as is (so ${DTF_TASK_SCRIPT}
// expands in the task); words after "--", or several words, are the command's argv, each
// reaching the task as given.
void SetCommand(const std::vector<std::string>& positional, bool argv_form, JobSpec* spec) {
  if (positional.size() == 1 && !argv_form) {
    spec->command = positional[0];
  } else if (!positional.empty()) {
    std::vector<std::string> quoted;
    for (const std::string& word : positional) quoted.push_back(ShellQuote(word));
    spec->command = absl::StrJoin(quoted, " ");
  }
}

}  // namespace

absl::StatusOr<SubmitArgs> ParseSubmitArgs(const std::vector<std::string>& args) {
  std::vector<RawFlag> flags;
  std::vector<std::string> positional;
  bool argv_form = false;
  TONY_RETURN_IF_ERROR(Tokenize(args, &flags, &positional, &argv_form));

  SubmitArgs out;
  for (const RawFlag& f : flags) {
    const std::string name = f.def->long_name;
    if (name == "help") out.help = true;
    if (name == "version") out.version = true;
    if (name == "show_site") out.show_site = true;
    if (name == "conf_dir") out.conf_dir = f.value;
  }
  if (out.help || out.version || out.show_site) return out;

  JobSpec& spec = out.spec;
  TONY_RETURN_IF_ERROR(LoadTonyFlags(flags, &spec));  // first: it refuses --spec beside it
  TONY_RETURN_IF_ERROR(LoadSpecFlag(flags, &spec));
  TONY_RETURN_IF_ERROR(ApplyClusterRequirements(flags, &spec));
  TONY_RETURN_IF_ERROR(ApplyResourceFlags(flags, &spec));
  for (const RawFlag& f : flags) TONY_RETURN_IF_ERROR(ApplyFlag(f, &spec, &out));
  SetCommand(positional, argv_form, &spec);
  // A job on a template is whole only over the site file (its roles may come from there):
  // RunSubmit validates it once the site is applied.
  if (spec.site_template.empty()) {
    TONY_RETURN_IF_ERROR(ValidateJobSpec(spec));
    for (const std::string& w : JobSpecWarnings(spec)) TONY_LOG(WARNING) << w;
  }
  if (spec.client_mode && out.detach && !out.dry_run) {
    return absl::InvalidArgumentError(
        "--client: runs the client task here until the job ends; drop --detach (or --client)");
  }
  return out;
}

std::string SubmitUsage() {
  return R"(ytf-submit - submit a distributed TensorFlow (or PyTorch, Horovod) job to Hadoop YARN

Usage: ytf-submit [OPTIONS] -r <cluster_requirement> '<task command line>'
       ytf-submit [OPTIONS] -r <cluster_requirement> -- <program> [<arg>...]
       ytf-submit [OPTIONS] --spec job.yaml ['<task command line>']

The task command runs once per task with /bin/bash -c: one quoted command line as is (so
'python3 ${DTF_TASK_SCRIPT}' expands in the task), or the words after -- each exactly as given.
Each task sees DTF_TASK_JOB_NAME, DTF_TASK_INDEX, DTF_<JOB>_HOSTS, TF_CONFIG, CLUSTER_SPEC, ...
(see README, Task environment).

Job:
  -r, --cluster_requirement <job>:<n>[,<job>:<n>...]   e.g. "ps:1,worker:4"
  -c, --task_vcores <v> | <job>:<v> | <job>[<i>]:<v>   vcores per task (default 1); repeatable
  -m, --task_memory <mb> | <job>:<mb> | <job>[<i>]:<mb>
                         memory per task in MB, or with a unit (512m, 4g) (default 8192)
  -g, --task_gpus <n> | <job>:<n> | <job>[<i>]:<n>     GPUs per task (yarn.io/gpu) (default 0)
                         The most specific form wins: task > job > general, in any order.
  -i, --input <path>     input path, given to tasks as DTF_INPUT_PATH
  -o, --output <path>    output path, given to tasks as DTF_OUTPUT_PATH
  -s, --script <file>    local script shipped to every task; its path is DTF_TASK_SCRIPT
  -t, --tensorboard      run TensorBoard on the output path (needs --output); the
                         tracking URL leads to it once it answers; if it cannot start or
                         dies, training goes on (restarted up to 3 times, then a warning)
      --tensorboard_command <cmd>   what starts TensorBoard (default `tensorboard`, from
                         --python_env's bin/ when it has one, else the node's PATH); it gets
                         --logdir, --host and --port
      --python_env <archive>   relocatable Python env (venv-pack/conda-pack .tar.gz, or a
                         .zip of a venv) unpacked in every task container, its bin/ first on
                         PATH (docs/python-env.md); cached in HDFS by content; YARN only
      --docker_image <image>  run tasks in this Docker image (YARN's Docker runtime)
  -q, --queue <queue>    YARN queue (default "default")
  -n, --name <name>      application name (default "TensorFlow")
      --client           also run the command here, as task client:0, once every
                         task registered; its exit decides the job's outcome
      --framework <f>    tensorflow (default), pytorch, jax, mpi, horovod or custom
  -e, --env KEY=VALUE    extra environment for every task; repeatable
      --file <file>      extra local file shipped to every task; repeatable
      --archive <file>   extra local archive (.tar.gz, .tgz, .tar, .zip, .jar) unpacked for
                         every task into ./<file name>/ in its working directory (e.g.
                         ./env.tar.gz/bin/python3); repeatable; YARN only
      --src_dir <dir>    a directory whose files and subdirectories every task finds in
                         its working directory under their own names (TonY's --src_dir)
      --node_label <job>:<label>   YARN node label expression for a job
      --restart <job>:<key>=<value>[,...]   restart policy of a job's tasks; keys: policy
                         (never, on-failure, exit-code), max_restarts (3), backoff (10s),
                         scope (task: relaunch just the task; job: a whole-job attempt),
                         on_address_change (fail, restart-job, accept); repeatable (see
                         docs/job-spec.md, "Restart policy")
      --depends_on <job>=<role>[:<when>[:<timeout>]]   start a job's tasks once every task of
                         <role> is registered, running or finished (default), failing the job
                         after <timeout> (30m) of waiting; repeatable (docs/job-spec.md,
                         "Dependencies")
      --elastic <job>=<min>:<max>   PyTorch: the job's tasks run under torchrun's elastic
                         agent; training starts once <min> run, grows to <max>, and lost
                         tasks are asked for again (docs/elastic.md)
      --anti_affinity <job>   at most one of the job's tasks per node (YARN placement
                         constraint; the cluster needs yarn.resourcemanager.placement-
                         constraints.handler=scheduler); repeatable
      --node_attribute <job>:<name>=<value>   the job's tasks only on nodes whose YARN node
                         attribute matches (or <name>!=<value>), e.g.
                         worker:nm.yarn.io/pool=a; same cluster setting as --anti_affinity
      --linger <job>=<duration>   an untracked job's tasks may run on this long after the
                         tracked ones finished (an evaluator's last evaluation), then stop
      --tag <tag>        YARN application tag; repeatable
      --view_acls <acl>  who else may view the job (history page, diagnostics, stderr tails;
                         the AM page through YARN): "user1,user2 group1,group2" or "*"
      --max_attempts <n> whole-job attempts: a failed job runs again from scratch up to
                         n-1 times, within the cluster's AM attempt limit (default 1)
      --exclude_nodes <host,...>   never run the job's containers on these hosts;
                         repeatable (docs/job-spec.md, "Bad nodes")
      --max_node_failures <n>   after n task failures on one node, the job's later
                         containers avoid it; 0 never (default 2)
      --preemption_grace <d>   after YARN's preemption notice, a task runs this long,
                         then the AM stops it and it is relaunched; YARN's own wait
                         still bounds it (default 0: YARN alone ends it)
      --priority <n>     YARN application priority: higher runs first within the queue,
                         capped at the cluster's yarn.cluster.max-application-priority
                         (default: the queue's default priority)
      --am_memory <mb>   ApplicationMaster memory (default 256)
      --am_node_label <label>   YARN node label for the ApplicationMaster's container
      --registration_timeout <d>   fail if tasks have not registered by then (default 10m)
      --allocation_timeout <d>   all-or-nothing: without every container by then, release
                         them all and ask again later, until the registration deadline
                         (default 2m; none: hold what was got)
      --timeout <d>      the job ends FAILED ("the job timeout of <d> passed") after this
                         long, its tasks stopped (default none)
      --spec <file>      read the job from YAML (docs/job-spec.md; '-': standard input);
                         options above override it; relative paths in the file are
                         relative to its directory
      --template <name>  build the job on a template of the cluster's site file
                         (tony-site.yaml, docs/site-settings.md): it fills what the job
                         leaves at its default

TonY's configuration (docs/migrating-from-tony.md), instead of --spec:
      --tony_conf <tony.xml>   TonY's job configuration (tony.<role>.instances, memory, ...);
                         repeatable; unsupported keys are named in warnings
      --tony key=value   one TonY key, over the files; repeatable
      --executes <entry>, --task_params <args>, --python_venv <zip>,
      --python_binary_path <path>, --shell_env k=v, --container_env k=v,
      --src_dir <dir>, --sidecar_tensorboard_log_dir <dir>,
      --conf_file <tony.xml>, --conf key=value
                         TonY's client flags (also with one dash, as TonY takes them)

Where and how:
      --local            run on this machine as local processes (the default without Hadoop config)
      --yarn             run on YARN (the default when a Hadoop configuration directory is found)
      --conf_dir <dir>   Hadoop configuration directory (default $HADOOP_CONF_DIR, else
                         $YARN_CONF_DIR, else $HADOOP_HOME/etc/hadoop)
      --broker_tls       TLS with a per-job pinned certificate between client, AM and
                         executors (always on for Kerberos clusters)
      --principal <p>    Kerberos cluster: log in as this principal from --keytab
                         (default: the ticket cache, KRB5CCNAME / kinit)
      --keytab <file>    the keytab for --principal (read in-process, never shipped)
  -D, --define key=value   override a Hadoop configuration key; repeatable
      --dry-run          print the job as YAML (accepted back by --spec) with a summary per
                         job type (resources, command, environment) and exit
      --dry-run-tasks    as --dry-run, listing every task with its whole environment
      --show_site        print the cluster's site settings (defaults, templates, limits;
                         docs/site-settings.md), each with its file and line, and exit
      --detach           return right after submission
      --quiet            no progress lines
  -h, --help             this help
      --version          print the version

Exit codes: 0 job succeeded (or --dry-run/--detach), 1 job failed or was killed,
            2 bad usage or invalid job, 3 could not submit or follow the job.
)";
}

}  // namespace tony::cli
