#!/usr/bin/env python3
"""scripts/check-include-graph finds what it promises to, on small trees written here."""

import os
import subprocess
import sys
import tempfile

CHECK = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts",
                     "check-include-graph")

# A tree that follows the rules: `credentials` lives in ipc/ beside `ipc` and owns what its
# SOURCES name (token.h too), so hdfs may include ipc/token.h with credentials in its DEPS.
CLEAN = {
    "src/common/CMakeLists.txt": "tony_concern(\n    common LIBS absl::status)\n",
    "src/common/log.h": "#include <string>\n#include \"absl/strings/str_cat.h\"\n",
    "src/proto/CMakeLists.txt": "tony_concern(proto NO_WARNINGS SOURCES ${gen}/x.cc)\n",
    "src/ipc/CMakeLists.txt":
        "# comment (with a parenthesis)\n"
        "tony_concern(credentials DEPS common proto\n"
        "  SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/credentials.cc ${CMAKE_CURRENT_SOURCE_DIR}/token.h)\n"
        "tony_concern(ipc DEPS common credentials SOURCES ${ipc_sources})\n",
    "src/ipc/token.h": "#include \"common/log.h\"\n",
    "src/ipc/credentials.cc": "#include \"ipc/token.h\"\n#include \"hadoop/Security.pb.h\"\n",
    "src/ipc/rpc.cc": "#include \"ipc/token.h\"\n#include \"tony/job_spec.h\"\n",
    "src/conf/CMakeLists.txt": "tony_concern(conf DEPS common)\n",
    "src/conf/keys.h": "#include \"common/log.h\"\n",
    "src/hdfs/CMakeLists.txt": "tony_concern(hdfs DEPS conf credentials)\n",
    "src/hdfs/client.h": "#include \"ipc/token.h\"\n#include \"common/log.h\"\n",
    "src/am/CMakeLists.txt": "tony_concern(am DEPS common)\n",
    "src/am/page.h": "#include \"common/log.h\"\n",
    "src/submit/CMakeLists.txt": "tony_concern(submit DEPS hdfs ipc)\n",
    "src/submit/submitter.cc": "#include \"conf/keys.h\"\n#include \"hdfs/client.h\"\n",
    "src/cli/CMakeLists.txt": "tony_concern(cli DEPS submit local)\n",
    "src/cli/main.cc": "#include \"local/local_am.h\"\n",
    "src/local/CMakeLists.txt": "tony_concern(local DEPS am)\n",
    "src/local/local_am.h": "#include \"am/page.h\"\n",
}

# What each breakage adds to (or replaces in) CLEAN, and the lines the checker must print.
BROKEN = {
    "src/submit/submitter.cc": "#include \"conf/keys.h\"\n  #  include \"am/page.h\"\n",
    "src/cli/main.cc": "#include \"local/local_am.h\"\n#include \"am/page.h\"\n",
    "src/conf/keys.h": "#include \"common/log.h\"\n#include \"ipc/token.h\"\n",
    "src/hdfs/CMakeLists.txt": "tony_concern(hdfs DEPS conf credentials am)\n",
    "src/common/CMakeLists.txt": "tony_concern(common DEPS proto)\n",
    "src/proto/CMakeLists.txt": "tony_concern(proto DEPS common)\n",
}
WANT = [
    "src/*/CMakeLists.txt: DEPS cycle common -> proto -> common",
    "src/submit/CMakeLists.txt: the client (submit) depends on AM code (am) through its DEPS",
    "src/hdfs/CMakeLists.txt: the client (hdfs) depends on AM code (am) through its DEPS",
    "src/cli/main.cc:2: #include \"am/page.h\": the client (cli) includes AM code (am)",
    "src/conf/keys.h:2: #include \"ipc/token.h\": credentials is not in the DEPS of conf; add it"
    " to tony_concern(conf DEPS ...) or include a header of a lower concern",
    "src/submit/submitter.cc:2: #include \"am/page.h\": the client (submit) includes AM code (am)",
]


def run(files):
    with tempfile.TemporaryDirectory() as root:
        for name, text in files.items():
            os.makedirs(os.path.dirname(os.path.join(root, name)), exist_ok=True)
            with open(os.path.join(root, name), "w", encoding="utf-8") as f:
                f.write(text)
        r = subprocess.run([sys.executable, CHECK, "--graph", root], capture_output=True,
                           text=True)
    return r.returncode, r.stdout, r.stderr


def main():
    code, out, err = run(CLEAN)
    if code != 0 or "5 floors: cli -> submit -> ipc -> credentials -> proto" not in out:
        print(f"clean tree: exit {code}, output:\n{out}{err}")
        return 1
    code, out, err = run({**CLEAN, **BROKEN})
    got = [l for l in out.splitlines() if not l.startswith(("floor", "known:"))]
    if code != 1 or got != WANT:
        print(f"broken tree: exit {code}, output:\n{out}{err}\nwanted:\n" + "\n".join(WANT))
        return 1
    print("check-include-graph: passes the clean tree, finds exactly each broken arrow")
    return 0


if __name__ == "__main__":
    sys.exit(main())
