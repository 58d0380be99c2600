// Copyright libtony authors.
//
// TonY's job configuration as a JobSpec, so that a TonY command line or an Azkaban TonY job
// runs unchanged: tony.xml files (Hadoop XML), `key=value` settings, and TonY's client flags
// (--executes, --task_params, --python_venv, --python_binary_path, --shell_env,
// --container_env). TonY's defaults (tony-default.xml of TonY 0.4.7) apply where the
// configuration is silent: 2 GB per task, ps untracked, tensorboard a sidecar.
// docs/migrating-from-tony.md lists every key and what it became.

#ifndef TONY_CLI_TONY_CONF_H_
#define TONY_CLI_TONY_CONF_H_

#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "tony/job_spec.h"

namespace tony::cli {

struct TonyInput {
  std::vector<std::string> conf_files;                        // --tony_conf, in order
  std::vector<std::pair<std::string, std::string>> settings;  // --tony key=value, last wins
  std::string executes;             // --executes: the entry point (a .py runs with python)
  std::string task_params;          // --task_params: its arguments
  std::string python_binary_path;   // --python_binary_path; relative: inside --python_venv
  std::string python_venv;          // --python_venv: a zip of a venv
  std::vector<std::string> env;     // --shell_env / --container_env KEY=VALUE
  std::string tensorboard_log_dir;  // --sidecar_tensorboard_log_dir: a TensorBoard task reads it
  std::string src_dir;  // --src_dir: --executes is found there (the spec takes it from the flag)

  bool empty() const {
    return conf_files.empty() && settings.empty() && executes.empty() && task_params.empty() &&
           python_binary_path.empty() && python_venv.empty() && env.empty() &&
           tensorboard_log_dir.empty();
  }
};

// Replaces `spec` by the job `input` describes. InvalidArgument naming the key (with its file
// and line) for a value that does not parse, or for a setting that libtony cannot honour
// without changing the job's meaning; otherwise one warning line per key it ignores.
absl::StatusOr<std::vector<std::string>> ApplyTonyConf(const TonyInput& input, JobSpec* spec);

}  // namespace tony::cli

#endif  // TONY_CLI_TONY_CONF_H_
