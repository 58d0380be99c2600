// Copyright libtony authors.

#include "spec/jax_env.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

namespace tony {

namespace {

// Registered first: libtony started this process, whatever else the node's environment
// suggests (a stray SLURM_* variable). Any failure (a JAX without this interface) leaves
// initialize() as JAX has it.
constexpr char kSource[] = R"py(# Written by libtony's executor (src/spec/jax_env.h): lets
# jax.distributed.initialize() find the process count and id of a libtony task.
import os as _os
import pkgutil as _pkgutil

__path__ = _pkgutil.extend_path(__path__, __name__)


def _register():
    from jax._src import clusters

    class LibtonyCluster(clusters.ClusterEnv):
        name = "libtony"

        @classmethod
        def is_env_present(cls):
            return "JAX_NUM_PROCESSES" in _os.environ and "JAX_PROCESS_ID" in _os.environ

        @classmethod
        def get_coordinator_address(cls, timeout_secs=None, override_coordinator_port=None):
            return _os.environ["JAX_COORDINATOR_ADDRESS"]

        @classmethod
        def get_process_count(cls):
            return int(_os.environ["JAX_NUM_PROCESSES"])

        @classmethod
        def get_process_id(cls):
            return int(_os.environ["JAX_PROCESS_ID"])

    found = clusters.ClusterEnv._cluster_types
    found.insert(0, found.pop(found.index(LibtonyCluster)))


try:
    _register()
except Exception:
    pass
)py";

}  // namespace

absl::string_view JaxPluginSource() { return kSource; }

void ApplyJaxPlugin(const std::string& plugin_dir, std::map<std::string, std::string>* env) {
  auto path = env->find("PYTHONPATH");
  (*env)["PYTHONPATH"] = path == env->end() || path->second.empty()
                             ? plugin_dir
                             : absl::StrCat(plugin_dir, ":", path->second);
  auto cuda = env->find("CUDA_VISIBLE_DEVICES");
  if (cuda == env->end() || cuda->second.empty() || env->count("JAX_LOCAL_DEVICE_IDS") > 0) return;
  std::vector<std::string> ids;
  const int n = static_cast<int>(
      std::vector<absl::string_view>(absl::StrSplit(cuda->second, ',', absl::SkipEmpty())).size());
  for (int i = 0; i < n; ++i) ids.push_back(std::to_string(i));
  (*env)["JAX_LOCAL_DEVICE_IDS"] = absl::StrJoin(ids, ",");
}

}  // namespace tony
