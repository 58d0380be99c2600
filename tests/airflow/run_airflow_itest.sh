#!/usr/bin/env bash
# The Airflow provider with a real Airflow from PyPI (its own venv, SQLite metadata, no web
# server) on the real test cluster: `airflow dags test` of a DAG running a TensorFlow job then a
# PyTorch job (each deferred, then resumed by its trigger), of a DAG whose job fails (the task
# fails and the failed task's stderr is in the Airflow log), and a retried task re-attaching
# to its earlier try's application and never to another user's with its tag.
#
#   tests/airflow/run_airflow_itest.sh WHEEL_DIR
#   tests/airflow/run_airflow_itest.sh --install-only   # Airflow's venv alone (scripts/test
#                                                      # makes it while the build runs)
#   tests/airflow/run_airflow_itest.sh --prepare WHEEL_DIR HOME  # what needs no cluster
#   tests/airflow/run_airflow_itest.sh WHEEL_DIR HOME              # the rest, from HOME
#
# ctest runs the last two as airflow_prepare and airflow_itest: installing libtony and the
# provider, Airflow's metadata database and the provider check take ~30 s, which no longer
# hold a cluster slot.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
mode=itest home=""
case ${1:-} in
  --install-only) mode=install ;;
  --prepare) mode=prepare wheel=$(ls "$2"/libtony-*.whl) home=$3 ;;
  *) wheel=$(ls "$1"/libtony-*.whl) home=${2:-} ;;
esac
airflow_version=${TONY_AIRFLOW_VERSION:-3.3.2}

# Airflow's venv is kept between runs (it is large); libtony and the provider are installed
# afresh into it every time.
cache=${XDG_CACHE_HOME:-$HOME/.cache}/libtony
venv=$cache/airflow-$airflow_version
mkdir -p "$cache"
exec 9>"$cache/airflow.lock"
flock 9
if ! "$venv/bin/python" -c "import airflow" 2>/dev/null; then
  echo "airflow_itest: installing apache-airflow==$airflow_version into $venv" >&2
  rm -rf "$venv"
  python3 -m venv "$venv"
  # --no-compile: the modules a run imports are compiled then, not all of Airflow's up front.
  "$venv/bin/pip" install --quiet --disable-pip-version-check --no-compile \
    "apache-airflow==$airflow_version"
fi
[[ $mode == install ]] && exit 0

check() {  # check WHAT FILE PATTERN
  if ! grep -qE -- "$3" "$2"; then
    echo "airflow_itest: $1: no '$3' in the output:" >&2
    tail -n 80 "$2" >&2
    exit 1
  fi
  echo "airflow_itest: $1: ok"
}

# prepare: libtony and the provider into the venv, a metadata database in $home, the provider
# registered, and the operator's re-attach rules (no cluster).
prepare() {
  "$venv/bin/pip" install --quiet --disable-pip-version-check --force-reinstall --no-deps "$wheel"
  # From a copy: setuptools writes build/ and *.egg-info beside the sources it builds.
  local provider
  provider=$(mktemp -d /tmp/libtony-airflow-provider.XXXXXX)
  cp -r "$root/src/python/airflow_provider/." "$provider/"
  "$venv/bin/pip" install --quiet --disable-pip-version-check --force-reinstall --no-deps \
    "$provider"
  rm -rf "$provider"
  airflow db migrate >/dev/null
  airflow providers list >"$home/providers.txt" 2>&1
  check "provider registered" "$home/providers.txt" "libtony-airflow"
  python "$here/reattach_unit.py"
  touch "$home/prepared"
}

export AIRFLOW__CORE__DAGS_FOLDER=$here/dags
export AIRFLOW__CORE__LOAD_EXAMPLES=False AIRFLOW__LOGGING__LOGGING_LEVEL=INFO
PATH=$venv/bin:$PATH
if [[ $mode == prepare ]]; then
  rm -rf "$home" && mkdir -p "$home"
elif [[ -z $home ]]; then
  home=$(mktemp -d /tmp/libtony-airflow.XXXXXX)
  trap 'rm -rf "$home"' EXIT
elif [[ ! -e $home/prepared ]]; then
  echo "airflow_itest: $home was not prepared (run this script with --prepare first)" >&2
  exit 1
fi
export AIRFLOW_HOME=$home AIRFLOW__DATABASE__SQL_ALCHEMY_CONN=sqlite:///$home/airflow.db
cd "$home"
# A run without HOME prepares its temporary one here; ctest's airflow_prepare did it otherwise.
if [[ $mode == prepare || ! -e $home/prepared ]]; then
  prepare
  [[ $mode == prepare ]] && exit 0
fi

# Test traffic stays on this machine: `env` checks every cluster address is local first.
eval "$("$root/scripts/hadoop-cluster" env)"
task_python=$("$root/scripts/python-env")/python
export TONY_EXAMPLES=$root/examples TONY_TASK_PYTHON=$task_python
# reattach_secret: the key of the tags retries re-attach by (docs/airflow.md).
reattach_secret=$(openssl rand -hex 16)
export AIRFLOW_CONN_TONY_DEFAULT="{\"conn_type\": \"tony\", \"extra\": {\"conf_dir\": \"$HADOOP_CONF_DIR\", \"reattach_secret\": \"$reattach_secret\"}}"

airflow dags test libtony_tf_then_pytorch >"$home/ok.txt" 2>&1 || true
check "the jobs were deferred" "$home/ok.txt" "new_state=deferred"
check "and resumed by their trigger" "$home/ok.txt" "Trigger completed"
check "TF then PyTorch succeeded" "$home/ok.txt" "application_[0-9_]+ SUCCEEDED"
[[ $(grep -cE "application_[0-9_]+ SUCCEEDED" "$home/ok.txt") -ge 2 ]] ||
  check "both jobs succeeded" "$home/ok.txt" "two SUCCEEDED lines"
check "DAG run succeeded" "$home/ok.txt" "DagRun Finished: .* state=success"
# libtony's C++ log lines as records of the Python logger "libtony" (written to fd 2 they
# would bypass the task log), with the C++ file and line.
check "libtony's own lines in the task log" "$home/ok.txt" \
  "submitted application_[0-9_]+ to queue default \[libtony\] loc=yarn_submitter\.cc:[0-9]+"

airflow dags test libtony_failing >"$home/fail.txt" 2>&1 || true
check "failed job fails the task" "$home/fail.txt" "ended FAILED"
check "and the DAG run" "$home/fail.txt" "DagRun Finished: .* state=failed"
check "failed task's stderr in the Airflow log" "$home/fail.txt" "libtony-airflow-boom"

python "$here/retry_reattach.py" "$(date +%s%N)"
