// Copyright libtony authors.
//
// What a JAX task (--framework jax, docs/task-environment.md#jax) gets besides its variables.
// JAX 0.10 reads only the coordinator's address from the environment; the number of processes
// and this process's id come from a "cluster detector" (a jax._src.clusters.ClusterEnv subclass)
// or from initialize()'s arguments. So that jax.distributed.initialize() needs none, the
// executor writes a detector into the container as the package `jax_plugins` (which `import
// jax` imports, extending its namespace so JAX's own plugins stay found) and puts it first on
// PYTHONPATH.
//
// Thread-safe: free functions.

#ifndef TONY_SPEC_JAX_ENV_H_
#define TONY_SPEC_JAX_ENV_H_

#include <map>
#include <string>

#include "absl/strings/string_view.h"

namespace tony {

// The directory, in a task container's working directory, that goes on PYTHONPATH.
inline constexpr char kJaxPluginDir[] = "tony-jax";

// The detector's source: the file `<kJaxPluginDir>/jax_plugins/__init__.py`.
absl::string_view JaxPluginSource();

// What a JAX task's environment (given whole) gets once the detector is at `plugin_dir`:
// plugin_dir first on PYTHONPATH (before the task's own entries), and, when CUDA_VISIBLE_DEVICES
// lists the GPUs YARN assigned, JAX_LOCAL_DEVICE_IDS 0..n-1 (the ids JAX sees under that
// mask), unless the task set it.
void ApplyJaxPlugin(const std::string& plugin_dir, std::map<std::string, std::string>* env);

}  // namespace tony

#endif  // TONY_SPEC_JAX_ENV_H_
