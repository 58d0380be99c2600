#!/usr/bin/env python3
"""scripts/check-task-env-doc finds what it promises to, on a small tree written here."""

import os
import subprocess
import sys
import tempfile

CHECK = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts",
                     "check-task-env-doc")

FILES = {
    "src/spec/task_env.cc": '  env["SHOWN"] = x;\n  env["NOT_SHOWN"] = y;\n'
                            '  // env["IN_A_COMMENT"] = z;\n  if (env["COMPARED"] == v) {}\n',
    "src/spec/python_env.cc": '  (*env)["WITH_VALUE"] = d;\n',
    "src/spec/jax_env.cc": '  (*env)["SHOWN"] = p;\n',
    "src/spec/mpi_env.cc": '  (*env)["SHOWN"] = h;\n',
    "src/executor/gpu_devices.cc": '  env->emplace("EMPLACED", "1");\n',
    "src/spec/job_spec.cc": '  const std::map<std::string, std::string> m = {\n'
                            '      {"FROM_MAP", "1"},\n  };\n',
    "src/executor/executor.h": 'inline constexpr char kMarkEnv[] = "BY_CONSTANT";\n',
    "src/executor/executor.cc": '  (*task_env)[kMarkEnv] = instance;\n  env[kUnknown] = 1;\n',
    "docs/task-environment.md": "| `SHOWN` | `WITH_VALUE=...` | `FROM_MAP` |\n",
}


def run(files):
    with tempfile.TemporaryDirectory() as root:
        for name, text in files.items():
            os.makedirs(os.path.dirname(os.path.join(root, name)), exist_ok=True)
            with open(os.path.join(root, name), "w", encoding="utf-8") as f:
                f.write(text)
        return subprocess.run([sys.executable, CHECK, root], capture_output=True, text=True)


def main():
    r = run(FILES)
    page = "docs/task-environment.md"
    want = [
        "check-task-env-doc: src/executor/executor.cc:2: kUnknown: no such constant",
        f"check-task-env-doc: src/executor/executor.cc:1: sets BY_CONSTANT, which {page} does not"
        " name (add it as `BY_CONSTANT`)",
        f"check-task-env-doc: src/executor/gpu_devices.cc:1: sets EMPLACED, which {page} does not"
        " name (add it as `EMPLACED`)",
        f"check-task-env-doc: src/spec/task_env.cc:2: sets NOT_SHOWN, which {page} does not name"
        " (add it as `NOT_SHOWN`)",
    ]
    got = r.stdout.splitlines()
    if r.returncode != 1 or got != want:
        print(f"exit {r.returncode}, output:\n{r.stdout}{r.stderr}\nwanted:\n" + "\n".join(want))
        return 1
    # A source that sets nothing any more (moved or reshaped) is a failure, not a silent pass.
    r = run({**FILES, "src/spec/job_spec.cc": "// nothing here\n"})
    if r.returncode != 1 or "src/spec/job_spec.cc: sets no variable any more" not in r.stdout:
        print(f"an emptied source: exit {r.returncode}, output:\n{r.stdout}{r.stderr}")
        return 1
    print("check-task-env-doc: found exactly the unnamed variables, the unknown constant and the emptied source")
    return 0


if __name__ == "__main__":
    sys.exit(main())
