#!/usr/bin/env bash
# Installs the wheel in WHEEL_DIR into a fresh venv outside the build tree (no PYTHONPATH, no
# TONY_BIN_DIR: the package's own binaries) and runs pytest on this directory's tests.
#
#   tests/python/run_pytest.sh WHEEL_DIR [pytest args...]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
wheel=$(ls "$1"/libtony-*.whl)
shift
venv=$(mktemp -d /tmp/libtony-wheel-test.XXXXXX)
trap 'rm -rf "$venv"' EXIT
python3 -m venv "$venv"
"$venv/bin/pip" install --quiet --disable-pip-version-check "$wheel" "pytest==8.*" >&2
cd "$venv"
env -u PYTHONPATH -u TONY_BIN_DIR -u TONY_RUNTIME_BUNDLE PATH="$venv/bin:$PATH" \
  TONY_SOURCE_DIR="${TONY_SOURCE_DIR:-$(cd "$here/../.." && pwd)}" \
  "$venv/bin/python" -m pytest -p no:cacheprovider --import-mode=importlib --rootdir "$here" -v "$here" "$@"
