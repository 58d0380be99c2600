#!/usr/bin/env bash
# The ctest fixtures "hadoop_cluster" and "secure_cluster": one test cluster for every test that
# needs it, started before the first and stopped after the last -- only if the fixture started
# it (a cluster that was already up, e.g. started by scripts/test while it built, is reused and
# left as it was).
#
#   cluster_fixture.sh start|stop MARKER   # MARKER: file recording whether 'start' started it
#
# The secure cluster: TONY_HADOOP_SECURE=1 in the environment (the ctest entry sets it, with its
# base port and state directory as the harness takes them).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cluster="$root/scripts/hadoop-cluster"
action=${1:?start or stop}
marker=${2:?marker file}
if [[ ${TONY_HADOOP_SECURE:-0} == 1 ]]; then
  export TONY_HADOOP_BASE_PORT=${TONY_SECURE_HADOOP_BASE_PORT:-18900}
  if [[ -n ${TONY_SECURE_HADOOP_HOME:-} ]]; then export TONY_HADOOP_HOME=$TONY_SECURE_HADOOP_HOME; else unset TONY_HADOOP_HOME; fi
  # It lives for one run: recording class-data archives would only add their dump to its stop.
  export TONY_HADOOP_CDS=${TONY_HADOOP_CDS:-0}
else
  # Log aggregation on, the NodeManagers' local copies kept (as scripts/test starts it):
  # aggregated_logs_itest reads HDFS, the tests that look into the NodeManagers' directories
  # after a job still find them. Only a start writes it: a running cluster is taken as it is.
  export TONY_HADOOP_LOG_AGGREGATION=${TONY_HADOOP_LOG_AGGREGATION:-keep}
fi

case $action in
  start)
    if "$cluster" status >/dev/null 2>&1; then
      # ctest --repeat runs the setup again while the cluster an earlier round started still
      # runs: it stays this run's to stop.
      [[ $(cat "$marker" 2>/dev/null) == started ]] || echo reused >"$marker"
      echo "cluster_fixture: reusing the running cluster ($(cat "$marker"))" >&2
    else
      # Partly up (a crash): start repairs it, and it is ours to stop like a fresh one.
      echo started >"$marker"
      "$cluster" start >/dev/null
    fi
    # The addresses every test will be given route nowhere but here.
    "$cluster" env >/dev/null
    ;;
  stop)
    if [[ $(cat "$marker" 2>/dev/null) == started ]]; then
      "$cluster" stop
    fi
    rm -f "$marker"
    ;;
  *) echo "usage: $0 start|stop MARKER" >&2; exit 2 ;;
esac
