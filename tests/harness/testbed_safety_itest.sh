#!/usr/bin/env bash
# Test traffic never leaves this machine, whatever order the test bed's commands run in and
# whatever a crash leaves: the documented sequences of scripts/hadoop-cluster with a plain
# (multi-host) and a secure cluster, each checked with `ip route get` (no test address may route
# through a gateway) and against each other's network, hosts block and processes.
#
#   1. plain and secure up; the secure one asked for the plain one's port block is refused;
#      stop secure: the plain one is untouched;
#   2. secure up again beside the plain one, whose bridge then goes while /etc/hosts still names
#      it: a client fails here ("No route to host"), and with TONY_ALLOWED_NETWORKS it refuses
#      before connecting; stop plain (without its bridge): the secure one is untouched;
#   3. a start killed once its network exists, then stop: nothing left, the guard route stays;
#   4. the same leftovers, then a start from another state directory on that port block: it
#      takes the block over (the owner runs nothing), replaces its network, and the dead
#      owner's later stop leaves it alone.
# The clusters are started as few times as these need (each start is six JVMs): one plain
# start serves steps 1 and 2.
#
# Own state directories and port blocks (TONY_TESTBED_TEST_PORT, default 19200, and +100), so it
# runs beside the suite's clusters. Needs root (network namespaces); skipped otherwise.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cluster="$root/scripts/hadoop-cluster"
bin=${TONY_BIN_DIR:-$root/build/bin}
plain_port=${TONY_TESTBED_TEST_PORT:-19200}
secure_port=$((plain_port + 100))
work=$(mktemp -d "${TMPDIR:-/tmp}/tony-testbed.XXXXXX")
plain_home=$work/plain
secure_home=$work/secure
export TONY_HADOOP_CDS=0 TONY_HADOOP_START_TIMEOUT=${TONY_HADOOP_START_TIMEOUT:-300}
unset TONY_HADOOP_SECURE TONY_HADOOP_BASE_PORT TONY_HADOOP_NETWORK TONY_ALLOWED_NETWORKS

if ((EUID != 0)) || ! command -v ip >/dev/null; then
  echo "SKIP: needs root and iproute2 (network namespaces)" >&2
  exit 0
fi

plain() { TONY_HADOOP_HOME=$plain_home TONY_HADOOP_BASE_PORT=$plain_port "$cluster" "$@"; }
secure() { TONY_HADOOP_HOME=$secure_home TONY_HADOOP_BASE_PORT=$secure_port "$cluster" --secure "$@"; }
cleanup() {
  secure stop >/dev/null 2>&1 || true
  plain stop >/dev/null 2>&1 || true
  [[ ! -d $work/other ]] || TONY_HADOOP_HOME=$work/other TONY_HADOOP_BASE_PORT=$plain_port "$cluster" stop >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT

fail() { echo "FAIL: $*" >&2; exit 1; }
step() { echo "== $*" >&2; }

# The main cluster's resolved classpath spares a Maven run (keyed by the pom's hash).
seed_classpath() {
  local d main=${TONY_MAIN_HADOOP_HOME:-$HOME/.cache/libtony/hadoop}
  for d in "$main"/classpath-*; do
    [[ -s $d/classpath.txt ]] || continue
    mkdir -p "$1/${d##*/}"
    cp "$d/classpath.txt" "$1/${d##*/}/" && cp -r "$d/res" "$1/${d##*/}/"
  done
}
seed_classpath "$plain_home"
seed_classpath "$secure_home"

subnet=$(printf '10.%d.%d' $((64 + plain_port / 2560)) $(((plain_port / 10) % 256)))
id="tony$plain_port"
addresses=("$subnet.1" "$subnet.2" "$subnet.3" "$subnet.4")

# No test address of the plain cluster routes off the machine: each is either on its bridge
# (or this host's own), or unreachable here. $1: "up" (must be on the bridge) or "down".
expect_routes() {
  local a out
  for a in "${addresses[@]}"; do
    out=$(ip -o route get "$a" 2>&1) || out="unreachable: $out"
    [[ $out == *" via "* ]] && fail "$a routes through a gateway: $out"
    if [[ $1 == up ]]; then
      [[ $out == local* || $out == *" dev tonybr$plain_port "* ]] || fail "$a is not on the bridge: $out"
    else
      [[ $out == unreachable* ]] || fail "$a is not unreachable with the cluster down: $out"
    fi
  done
}

# The plain cluster's network is whole: three namespaces, the bridge, the hosts block.
expect_plain_network() {
  local n
  n=$(ip netns list | grep -c "^$id-nm" || true)
  ((n == 3)) || fail "$id has $n namespaces, not 3"
  ip link show "tonybr$plain_port" >/dev/null 2>&1 || fail "bridge tonybr$plain_port is gone"
  grep -q "^# BEGIN libtony scripts/hadoop-cluster $id " /etc/hosts || fail "hosts block of $id gone"
  plain status >/dev/null || fail "the plain cluster is not fully running"
}

expect_nothing_of_plain() {
  ip netns list | grep -q "^$id-" && fail "namespaces left: $(ip netns list | grep "^$id-")"
  ip link show "tonybr$plain_port" >/dev/null 2>&1 && fail "bridge tonybr$plain_port left"
  grep -q "libtony scripts/hadoop-cluster $id " /etc/hosts && fail "hosts block of $id left"
  ip route show "$subnet.0/24" | grep -q '^unreachable' || fail "the guard route of $subnet.0/24 is gone"
  return 0
}

step "1: plain (netns, port $plain_port) and secure (port $secure_port) up"
plain start >/dev/null || fail "plain start"
[[ $(<"$plain_home/network") == netns ]] || fail "the plain cluster did not get namespaces"
expect_routes up
out=$(TONY_HADOOP_HOME=$secure_home TONY_HADOOP_BASE_PORT=$plain_port "$cluster" --secure start 2>&1) &&
  fail "a secure cluster on the plain one's port block was started"
[[ $out == *"belongs to the cluster in $plain_home"* ]] || fail "refusal does not name the owner: $out"
expect_plain_network
secure start >/dev/null || fail "secure start"
expect_plain_network
step "1: stop secure first"
secure stop 2>/dev/null || fail "secure stop"
expect_plain_network
expect_routes up

step "2: secure up again; the plain cluster's bridge gone, its hosts block still there"
secure start >/dev/null || fail "secure start (2)"
expect_plain_network
conf=$plain_home/conf
ip link del "tonybr$plain_port"
expect_routes down
if [[ -x $bin/ytf ]]; then
  out=$(HADOOP_CONF_DIR=$conf timeout 60 "$bin/ytf" list 2>&1) && fail "ytf list reached a cluster without its bridge: $out"
  [[ $out == *"No route to host"* || $out == *"unreachable"* ]] ||
    fail "ytf list did not fail locally: $out"
  out=$(HADOOP_CONF_DIR=$conf TONY_ALLOWED_NETWORKS=127.0.0.0/8 timeout 60 "$bin/ytf" list 2>&1) &&
    fail "ytf list ignored TONY_ALLOWED_NETWORKS: $out"
  [[ $out == *"TONY_ALLOWED_NETWORKS"* ]] || fail "the egress guard did not say why: $out"
fi
step "2: stop plain first (without its bridge)"
plain stop 2>/dev/null || fail "stop without a bridge"
expect_nothing_of_plain
expect_routes down
secure status >/dev/null || fail "stopping the plain cluster touched the secure one"
secure stop 2>/dev/null || fail "secure stop (2)"

# kill_start_once_networked: a 'start' of the plain cluster killed once its network exists (what
# a crash or a restarted machine leaves: namespaces, bridge, hosts block, no daemon).
kill_start_once_networked() {
  local starter i a out
  # The script itself in the background (not the function `plain`, whose subshell a kill would
  # leave the real start running under).
  env TONY_HADOOP_HOME="$plain_home" TONY_HADOOP_BASE_PORT="$plain_port" "$cluster" start >/dev/null 2>&1 &
  starter=$!
  for ((i = 0; i < 600; i++)); do
    ip link show "tonybr$plain_port" >/dev/null 2>&1 && break
    kill -0 "$starter" 2>/dev/null || break
    sleep 0.1 # polling a condition owned by another process; bounded
  done
  kill -KILL "$starter" 2>/dev/null || true
  wait "$starter" 2>/dev/null || true
  for a in "${addresses[@]}"; do
    out=$(ip -o route get "$a" 2>&1) || true
    [[ $out == *" via "* ]] && fail "after a killed start, $a routes through a gateway: $out"
  done
  return 0
}

step "3: a start killed once its network exists"
kill_start_once_networked
plain stop 2>/dev/null || fail "stop after a killed start"
expect_nothing_of_plain
expect_routes down
pgrep -f -- "-Dtony.hadoop.home=$plain_home " >/dev/null && fail "daemons of the killed start left"

step "4: another state directory takes over the block a dead cluster left"
kill_start_once_networked
other_home=$work/other
seed_classpath "$other_home"
other() { TONY_HADOOP_HOME=$other_home TONY_HADOOP_BASE_PORT=$plain_port "$cluster" "$@"; }
out=$(other start 2>&1) || fail "a start over a dead cluster's network failed: $out"
[[ $out == *"taking over port block $plain_port from $plain_home"* ]] ||
  fail "the takeover does not name the dead owner: $out"
n=$(grep -c "^# BEGIN libtony scripts/hadoop-cluster $id " /etc/hosts || true)
((n == 1)) || fail "/etc/hosts has $n blocks of $id, not 1"
expect_routes up
plain stop 2>/dev/null || fail "the dead owner's stop failed"
ip link show "tonybr$plain_port" >/dev/null 2>&1 || fail "the dead owner's stop removed the new owner's bridge"
other status >/dev/null || fail "the dead owner's stop touched the cluster that took over"
other stop 2>/dev/null || fail "stop of the cluster that took over"
expect_nothing_of_plain
expect_routes down

echo "PASS: no test address routed off the machine in any sequence" >&2
