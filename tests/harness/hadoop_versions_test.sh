#!/usr/bin/env bash
# scripts/hadoop-cluster --hadoop: the version's default state directory, an unknown version
# (exit 2, naming the versions), and a state directory of one version refusing another. Starts
# no daemon: every check ends before the cluster would.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cluster="$root/scripts/hadoop-cluster"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/tony-versions-test.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
export TONY_HADOOP_BASE_PORT=${TONY_HADOOP_VERSIONS_TEST_PORT:-64900}
unset TONY_HADOOP_VERSION

# Unknown version: one line naming the known ones, exit 2.
set +e
err=$(TONY_HADOOP_HOME="$tmp/x" "$cluster" --hadoop 2.10.2 start 2>&1 >/dev/null)
rc=$?
set -e
((rc == 2)) || fail "unknown version: exit $rc, want 2 ($err)"
[[ $err == *"unknown Hadoop version '2.10.2' (--hadoop); use one of 3.5.0 3.4.3 3.3.6"* ]] ||
  fail "unknown version: $err"

# Default state directories: one per version (status of a cluster that does not run: exit 3).
for v in 3.5.0 3.3.6; do
  want="$HOME/.cache/libtony/hadoop"
  [[ $v == 3.5.0 ]] || want+="-$v"
  out=$(env -u TONY_HADOOP_HOME "$cluster" --hadoop "$v" status 2>&1 || true)
  [[ $out == *"Hadoop           $v ($want)"* ]] || fail "default state of $v: $out"
done

# A state directory remembers its version: status reports it, another version is refused.
mkdir -p "$tmp/s"
echo 3.3.6 >"$tmp/s/hadoop-version"
out=$(TONY_HADOOP_HOME="$tmp/s" "$cluster" status 2>&1 || true)
[[ $out == *"Hadoop           3.3.6 ($tmp/s)"* ]] || fail "recorded version: $out"
set +e
err=$(TONY_HADOOP_HOME="$tmp/s" "$cluster" --hadoop 3.5.0 start 2>&1 >/dev/null)
rc=$?
set -e
((rc == 1)) || fail "mixed versions: exit $rc, want 1 ($err)"
[[ $err == *"$tmp/s holds a Hadoop 3.3.6 cluster; for 3.5.0 use another TONY_HADOOP_HOME"* ]] ||
  fail "mixed versions: $err"
echo "hadoop versions test: ok"
