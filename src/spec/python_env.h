// Copyright libtony authors.
//
// Python environments shipped with a job (--python_env, docs/python-env.md): a relocatable venv
// or conda env packed as .tar.gz (venv-pack, conda-pack) or .zip. The client inspects the
// archive before anything is submitted; every task container (the AM's excepted) gets it
// unpacked as ./tony-python-env, and its executor puts the env first on the task's PATH.
//
// Thread-safe: free functions; InspectPythonEnv's memo is mutex-guarded.

#ifndef TONY_SPEC_PYTHON_ENV_H_
#define TONY_SPEC_PYTHON_ENV_H_

#include <map>
#include <string>

#include "absl/status/statusor.h"

namespace tony {

// The link name of the unpacked environment in a task container's working directory; in the
// job spec a container reads, JobSpec::python_env names it.
inline constexpr char kPythonEnvLink[] = "tony-python-env";

struct PythonEnvArchive {
  enum class Format { kTarGz, kZip };
  Format format = Format::kTarGz;
  // Where the env's bin/ is inside the archive: "" (at the top, as venv-pack and conda-pack
  // write) or "<dir>/" (a zip of the venv's directory).
  std::string root;
  bool conda = false;       // has conda-meta/
  std::string content_key;  // common/content_key.h of the archive's bytes
};

// Reads the whole archive once. InvalidArgument, one line naming python_env (--python_env) and
// the fix, when it is missing, not a regular file, neither gzip'd tar nor zip, has no bin/python,
// or is not relocatable: a script in bin/ whose first line (or pip's "'''exec'" second line)
// runs an interpreter by absolute path, which on the nodes is not this env's. Remembered per
// file identity (device, inode, size, modification time) for the process and, for archives that
// passed, across runs in ~/.tony/python-env-inspections: a client submitting the same multi-GB
// archive again does not read it again.
absl::StatusOr<PythonEnvArchive> InspectPythonEnv(const std::string& path);

// In a task container: the directory of the env unpacked at `unpacked` (the archive's top, or
// its single top-level directory that holds bin/python). NotFound without bin/python.
absl::StatusOr<std::string> FindPythonEnvDir(const std::string& unpacked);

// What an env at `env_dir` changes in a task's environment (given whole, PATH included):
// VIRTUAL_ENV=env_dir (CONDA_PREFIX too for a conda env), env_dir/bin first on PATH (before the
// node's, or the task's own -e PATH), PYTHONHOME unset (it would point the env's interpreter at
// another installation's standard library).
void ApplyPythonEnv(const std::string& env_dir, bool conda,
                    std::map<std::string, std::string>* env);

}  // namespace tony

#endif  // TONY_SPEC_PYTHON_ENV_H_
