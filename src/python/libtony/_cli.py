"""Console entry points: ``ytf-submit`` and ``ytf`` run the binaries packaged with libtony."""

from __future__ import annotations

import os
import sys


def _exec(name: str) -> None:
    binary = os.path.join(os.path.dirname(os.path.abspath(__file__)), "bin", name)
    if not os.access(binary, os.X_OK):
        sys.stderr.write(f"{name}: the packaged binary {binary} is missing; reinstall libtony\n")
        sys.exit(2)
    os.execv(binary, [name, *sys.argv[1:]])


def ytf_submit() -> None:
    _exec("ytf-submit")


def ytf() -> None:
    _exec("ytf")
