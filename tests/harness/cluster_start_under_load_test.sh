#!/usr/bin/env bash
# scripts/hadoop-cluster start, status and stop of a second, throw-away cluster while CPU burners
# keep every core busy (a daemon then takes seconds to exec its JVM, which 'start' once took for
# a crash). Then stop must leave no daemon, namespace, veth, bridge or /etc/hosts entry behind.
#
#   tests/harness/cluster_start_under_load_test.sh [ROUNDS]
#
# Uses its own state directory and TONY_HADOOP_LOAD_TEST_PORT (default: TONY_HADOOP_BASE_PORT
# + 300, i.e. 19100; 18900 is the secure suite's), so it runs beside the clusters the other tests
# use.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
rounds=${1:-1}
base=${TONY_HADOOP_BASE_PORT:-18800}
main_state=${TONY_HADOOP_HOME:-$HOME/.cache/libtony/hadoop}
# Versions other than the default have their own default state directory (scripts/hadoop-cluster).
if [[ -z ${TONY_HADOOP_HOME:-} && ${TONY_HADOOP_VERSION:-3.5.0} != 3.5.0 ]]; then
  main_state+="-$TONY_HADOOP_VERSION"
fi
export TONY_HADOOP_BASE_PORT=${TONY_HADOOP_LOAD_TEST_PORT:-$((base + 300))}
export TONY_HADOOP_HOME
TONY_HADOOP_HOME=$(mktemp -d "${TMPDIR:-/tmp}/tony-load-test.XXXXXX")
export TONY_HADOOP_CDS=0  # no class-data archives to record for a one-off cluster
# Besides the burners, every daemon idles 3 s before exec-ing its JVM: the liveness check must
# take that for a start, whatever the load.
export TONY_HADOOP_TEST_EXEC_DELAY=3
cluster="$root/scripts/hadoop-cluster"
# The main cluster's resolved classpath spares a Maven run (it is keyed by the pom's hash).
for d in "$main_state"/classpath-*; do
  [[ -s $d/classpath.txt ]] || continue
  mkdir -p "$TONY_HADOOP_HOME/${d##*/}"
  cp "$d/classpath.txt" "$TONY_HADOOP_HOME/${d##*/}/" && cp -r "$d/res" "$TONY_HADOOP_HOME/${d##*/}/"
done

burners=()
cleanup() {
  ((${#burners[@]} > 0)) && kill "${burners[@]}" 2>/dev/null
  "$cluster" stop >/dev/null 2>&1 || true
  rm -rf "$TONY_HADOOP_HOME"
}
trap cleanup EXIT

fail() { echo "FAIL: $*" >&2; exit 1; }

# A burner per core: the daemons' start-up competes with them for every core.
for ((i = 0; i < $(nproc); i++)); do
  (while :; do :; done) &
  burners+=($!)
done

for ((r = 1; r <= rounds; r++)); do
  echo "round $r: start under load (${#burners[@]} CPU burners)" >&2
  "$cluster" start >/dev/null || fail "start under load failed (round $r)"
  "$cluster" status >&2 || fail "status after start is not 0 (round $r)"
  net=$(<"$TONY_HADOOP_HOME/network")
  "$cluster" stop 2>/dev/null || fail "stop failed (round $r)"
  "$cluster" status >/dev/null 2>&1 && fail "status after stop is 0 (round $r)"
  # Nothing of the cluster may be left.
  id="tony$TONY_HADOOP_BASE_PORT"
  if [[ $net == netns ]]; then
    if ip netns list | grep -q "^$id-"; then fail "namespaces left: $(ip netns list | grep "^$id-")"; fi
    if ip -br link | grep -q "^tony\(br\)\?$TONY_HADOOP_BASE_PORT"; then
      fail "links left: $(ip -br link | grep "tony\(br\)\?$TONY_HADOOP_BASE_PORT")"
    fi
    if grep -q "$id" /etc/hosts; then fail "/etc/hosts still names $id"; fi
  fi
  # The brackets keep grep from matching its own command line.
  left=$(grep -lsa -- "tony[.]hadoop[.]home=$TONY_HADOOP_HOME" /proc/[0-9]*/cmdline || true)
  [[ -z $left ]] || fail "daemons left: $left"
done
echo "PASS: $rounds start(s) under load, nothing left after stop ($net network)" >&2
