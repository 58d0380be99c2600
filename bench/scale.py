#!/usr/bin/env python3
"""Scale: one job of many tasks on NodeManagers that declare a large capacity.

Starts its own test cluster (scripts/hadoop-cluster, own state directory and ports) whose
NodeManagers offer 256 GB and 256 vcores each — YARN only schedules, the tasks are `sleep` — and
submits `worker:N` (default 500, 128 MB each), then prints, per run, the seconds since ytf-submit
was invoked at which the AM registered, had every container, every executor registered and
every task started, YARN's own figure (the NodeManagers had started the last task container's
process, from their logs), when the last executor was up (its first log line), the AM's peak
RSS and CPU time (user + system) once every task had started, where the host's CPU went until
then, the executors' RSS, and the host's load. Then it kills the job and, unless --keep,
stops the cluster.

Our share (issue 46): from YARN's last task container RUNNING to every task started, with the
latest of each step after it (the last launch script forked, executor up, the spec published,
delivered, the task's command exec'd) and, per task, each step's gap from the RM's, the
NodeManagers', the AM's and the executors' logs: the AM's allocation processing and start
calls (queued behind the launch threads, then the NodeManager's answer), YARN's localization and
launch, the executor's start, its registration and wait for the spec, the exec. Every log is on
this machine: one clock. YARN's RUNNING comes before the NodeManager forks the container's
launch script (under load, tens of seconds before), so "ours after YARN forked the last launch
script" is the part the AM, broker and executors own.

  bench/scale.py [--tasks 200,500] [--runs 3] [--keep]

It takes a few minutes per run on a 2-core machine (the NodeManagers start every container).
"""

import argparse
import glob
import json
import os
import re
import statistics
import subprocess
import sys
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from launch_latency import grep_logs  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.environ.get("TONY_BIN_DIR", os.path.join(ROOT, "build", "bin"))
PHASES = ["am_registered", "all_allocated", "all_registered", "all_started"]
# From the logs: YARN's own, when the NodeManagers had started the last task container's process
# (its SCHEDULED -> RUNNING), whatever runs in it; and when the last executor was up.
YARN_PHASES = ["yarn_all_running", "executors_up"]


def cluster_env():
    env = dict(os.environ)
    env.setdefault("TONY_HADOOP_HOME",
                   os.path.join(os.path.expanduser("~"), ".cache", "libtony", "hadoop-scale"))
    env.setdefault("TONY_HADOOP_BASE_PORT", "19100")
    env["TONY_HADOOP_NM_MEMORY_MB"] = str(256 * 1024)
    # 256, not 128: the test cluster's scheduler (DominantResourceCalculator) and ytf-submit's
    # can-never-fit check count vcores, one per task.
    env["TONY_HADOOP_NM_VCORES"] = "256"
    # YARN's container monitor walks every process of the host for each container every 3 s:
    # with hundreds of containers on one host it alone keeps the cores busy (TONY_HADOOP_NM_MONITOR=1
    # to measure with it).
    env.setdefault("TONY_HADOOP_NM_MONITOR", "0")
    return env


def processes_of(ident, binary):
    """pid -> /proc/pid/status text of `binary` processes in containers of application `ident`."""
    out = {}
    for d in glob.glob("/proc/[0-9]*"):
        try:
            with open(d + "/cmdline", "rb") as f:
                argv0 = f.read().split(b"\0")[0].decode(errors="replace")
            if not argv0.endswith(binary):
                continue
            with open(d + "/environ", "rb") as f:
                if f"container_{ident}_".encode() not in f.read():
                    continue
            with open(d + "/status") as f:
                out[int(d[6:])] = f.read()
        except OSError:
            pass
    return out


def status_kb(text, field):
    m = re.search(rf"^{field}:\s+(\d+) kB", text, re.M)
    return int(m.group(1)) if m else 0


def cpu_seconds(pid, children=False):
    """User + system CPU of `pid`, or with `children` of its children it has waited for."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    at = 13 if children else 11
    return (int(fields[at]) + int(fields[at + 1])) / os.sysconf("SC_CLK_TCK")


def daemon_cpu(state):
    """name -> CPU seconds so far, for each Hadoop daemon of the cluster at `state` and, as
    "<name> children", the processes it has started and waited for."""
    out = {}
    for f in glob.glob(os.path.join(state, "pids", "*.pid")):
        try:
            pid = int(open(f).read().strip())
            out[os.path.basename(f)[:-4]] = cpu_seconds(pid)
            out[os.path.basename(f)[:-4] + " children"] = cpu_seconds(pid, children=True)
        except (OSError, ValueError):
            pass
    return out


def host_cpu():
    """CPU seconds the whole host has spent busy (not idle or waiting) since boot."""
    with open("/proc/stat") as f:
        ticks = [int(x) for x in f.readline().split()[1:]]
    return (sum(ticks) - ticks[3] - ticks[4]) / os.sysconf("SC_CLK_TCK")


class RunFailed(Exception):
    """A run's job ended, or stalled, before every task started (on this loaded host, e.g. a
    NodeManager YARN lost): reported, and the next run goes on."""


def wait_idle(conf_dir, timeout=600):
    """Waits until the ResourceManager holds no container (the previous run's kill is over:
    its containers would take the next job's vcores and stretch its allocation)."""
    with open(os.path.join(conf_dir, "yarn-site.xml")) as f:
        m = re.search(r"<name>yarn\.resourcemanager\.webapp\.address</name><value>([^<]+)<",
                      f.read())
    if not m:
        return
    url = f"http://{m.group(1)}/ws/v1/cluster/metrics"
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            with urllib.request.urlopen(url, timeout=10) as r:
                if json.load(r)["clusterMetrics"]["containersAllocated"] == 0:
                    return
        except (OSError, ValueError, KeyError):
            pass
        time.sleep(2)
    print(f"warning: the cluster still holds containers after {timeout} s", flush=True)


def run_once(state, env, tasks):
    wait_idle(env["HADOOP_CONF_DIR"])
    cpu0, host0 = daemon_cpu(state), host_cpu()
    t0 = time.time()
    p = subprocess.run([os.path.join(BIN, "ytf-submit"), "--yarn", "--detach", "--quiet", "-n",
                        "bench-scale", "-r", f"worker:{tasks}", "-m", "128m", "--am_memory", "512m",
                        "sleep 600"], capture_output=True, text=True, env=env, timeout=600)
    m = re.search(r"application_(\d+_\d+)", p.stdout + p.stderr)
    if p.returncode != 0 or not m:
        sys.exit(f"ytf-submit failed ({p.returncode}):\n{p.stdout}\n{p.stderr}")
    app, ident = m.group(0), m.group(1)
    phases, am_rss, am_cpu, executors = {}, None, None, []
    cpu = {}
    deadline = time.time() + 900
    try:
        while time.time() < deadline:
            text = ""
            for f in glob.glob(os.path.join(state, "data", "nm*", "logs", app,
                                            f"container_{ident}_01_000001", "*stderr")):
                text += open(f, errors="replace").read()
            for pm in re.finditer(r"TONY_PHASE (\w+) (\d+)", text):
                phases.setdefault(pm.group(1), int(pm.group(2)) / 1000.0 - t0)
            if "all_started" in phases:
                am = processes_of(ident, "tony-am")
                for pid, st in am.items():
                    am_rss = status_kb(st, "VmHWM")
                    am_cpu = cpu_seconds(pid)
                execs = processes_of(ident, "tony-executor")
                executors = [status_kb(st, "VmRSS") for st in execs.values()]
                # Where the host's CPU went until every task had started: ours (the AM and
                # the executors), YARN's and HDFS's daemons and the processes they started and
                # waited for, and the rest (the container launch shells still running as their
                # container's parent, the kernel, anything else on the host).
                cpu["host"] = host_cpu() - host0
                cpu["executors"] = sum(cpu_seconds(pid) for pid in execs)
                cpu["AM"] = am_cpu or 0.0
                for d, c in daemon_cpu(state).items():
                    if d in cpu0 and c - cpu0[d] >= 0.05:
                        cpu[d] = c - cpu0[d]
                break
            if re.search(r"job \S+ (FAILED|KILLED)", text):
                raise RunFailed(f"{app} ended before every task started:\n{text[-3000:]}")
            time.sleep(0.5)
        else:
            raise RunFailed(f"{app}: not every task started within 15 minutes: {phases}")
    finally:
        subprocess.run([os.path.join(BIN, "ytf"), "kill", app], capture_output=True, env=env,
                       timeout=300)
    nm = grep_logs(sorted(glob.glob(os.path.join(state, "logs", "nodemanager*.log"))),
                   f"container_{ident}_")
    running = [t for t, line in nm if "transitioned from SCHEDULED to RUNNING" in line
               and f"container_{ident}_01_000001 " not in line]
    if len(running) >= tasks:
        phases["yarn_all_running"] = max(running) - t0
    # The executors' own first line (port reserved, about to register): how long after YARN's
    # RUNNING our process was up. Their log times carry no year: take t0's date.
    day = time.strftime("%Y-%m-%d", time.localtime(t0))
    up = []
    for f in glob.glob(os.path.join(state, "data", "nm*", "logs", app, f"container_{ident}_*",
                                    "stderr")):
        if f"container_{ident}_01_000001" in f:
            continue
        with open(f, errors="replace") as lines:
            for line in lines:
                m = re.match(r"I\d{4} (\d\d:\d\d:\d\d)\.(\d{3}) .*: reserved port", line)
                if m:
                    up.append(time.mktime(time.strptime(f"{day} {m.group(1)}", "%Y-%m-%d %H:%M:%S"))
                              + int(m.group(2)) / 1000.0)
                    break
    if len(up) >= tasks:
        phases["executors_up"] = max(up) - t0
    share = our_share(state, app, ident, t0, tasks, phases)
    return phases, am_rss, am_cpu, executors, os.getloadavg()[0], cpu, share


OUR_LOG = re.compile(r"[IWE](\d\d)(\d\d) (\d\d:\d\d:\d\d)\.(\d{3}) ")


def our_log_time(line, year):
    """Seconds since the epoch of one of our log lines (they carry no year: `year`'s)."""
    m = OUR_LOG.match(line)
    if not m:
        return None
    day = f"{year}-{m.group(1)}-{m.group(2)} {m.group(3)}"
    return time.mktime(time.strptime(day, "%Y-%m-%d %H:%M:%S")) + int(m.group(4)) / 1000.0


def container_times(state, app, ident, year):
    """container -> {step: time} of every task container, from YARN's logs (the RM handed it to
    the AM: acquired; the NM handled its start call: start_request, ran it: running, forked its
    launch script: forked), the AM's log (allocated: it took the allocation; start_called and
    start_returned: its start call and the NM's answer) and the executor's (up: its first line; spec: it got the cluster
    spec; started: it exec'd the task's command). One machine: one clock."""
    times = {}
    am_cid = f"container_{ident}_01_000001"

    def put(cid, step, t):
        if cid != am_cid and t is not None:
            times.setdefault(cid, {}).setdefault(step, t)

    for t, line in grep_logs([os.path.join(state, "logs", "resourcemanager.log")], ident):
        m = re.search(r"(container_\S+) Container Transitioned from ALLOCATED to ACQUIRED", line)
        if m:
            put(m.group(1), "acquired", t)
    nm_logs = sorted(glob.glob(os.path.join(state, "logs", "nodemanager*.log")))
    for t, line in grep_logs(nm_logs, f"container_{ident}_"):
        m = re.search(r"Start request for (container_\S+)", line)
        if m:
            put(m.group(1), "start_request", t)
        m = re.search(r"Container (container_\S+) transitioned from SCHEDULED to RUNNING", line)
        if m:
            put(m.group(1), "running", t)
        m = re.search(r"launchContainer: .*/(container_[0-9_]+)/default_container_executor\.sh", line)
        if m:
            put(m.group(1), "forked", t)
    container_logs = os.path.join(state, "data", "nm*", "logs", app)
    for f in glob.glob(os.path.join(container_logs, am_cid, "*stderr")):
        with open(f, errors="replace") as lines:
            for line in lines:
                m = re.search(r"\] allocated (container_\S+) on", line)
                if m:
                    put(m.group(1), "allocated", our_log_time(line, year))
                m = re.search(r"\] started (container_\S+) for \S+ in (\d+) ms", line)
                if m:
                    returned = our_log_time(line, year)
                    put(m.group(1), "start_returned", returned)
                    put(m.group(1), "start_called", returned - int(m.group(2)) / 1000.0)
    steps = [(": reserved port", "up"), (": got the cluster spec", "spec"),
             (": task started, pid", "started")]
    for f in glob.glob(os.path.join(container_logs, f"container_{ident}_*", "stderr")):
        cid = os.path.basename(os.path.dirname(f))
        with open(f, errors="replace") as lines:
            for line in lines:
                for needle, step in steps:
                    if needle in line:
                        put(cid, step, our_log_time(line, year))
    return times


# Per task, from one step to the next: (name, from, to); what each gap is.
GAPS = [
    ("am_alloc", "acquired", "allocated", "AM: the RM's answer to the AM's log of the allocation"),
    ("am_queue", "allocated", "start_called", "AM: allocation to its start call (queued)"),
    ("start_call", "start_called", "start_returned", "AM: its start call to the NM's answer"),
    ("nm_call", "start_called", "start_request", "NM: the start call to its handling"),
    ("nm_run", "start_request", "running", "YARN: start call to RUNNING (localization)"),
    ("nm_fork", "running", "forked", "YARN: RUNNING to the launch script forked"),
    ("exec_up", "forked", "up", "ours: launch script forked to the executor up"),
    ("spec_wait", "up", "spec", "ours: registered and waited for the spec"),
    ("exec_task", "spec", "started", "ours: the spec to the task's command exec'd"),
]


def our_share(state, app, ident, t0, tasks, phases):
    """Where the time went from YARN's last task container RUNNING to all tasks started: the
    latest of each step over the tasks, and each step's gap per task (median, max), in seconds;
    also the AM's steps before that last container's RUNNING (they delay YARN's figure)."""
    year = time.localtime(t0).tm_year
    times = container_times(state, app, ident, year)
    full = [v for v in times.values() if "running" in v]
    if len(full) < tasks:
        return {}
    last = max(full, key=lambda v: v["running"])
    y = last["running"]
    out = {"last_running": y - t0}
    for step in ["forked", "up", "spec", "started"]:
        got = [v[step] for v in times.values() if step in v]
        if len(got) >= tasks:
            out[f"last_{step}"] = max(got) - y
    for name in ["all_registered", "all_started"]:
        if name in phases:
            out[name] = phases[name] + t0 - y
    if "all_started" in out and "last_forked" in out:
        out["after_fork"] = out["all_started"] - out["last_forked"]
    for name, a, b, _ in GAPS:
        gaps = [v[b] - v[a] for v in times.values() if a in v and b in v]
        if gaps:
            out[f"{name}_median"] = statistics.median(gaps)
            out[f"{name}_max"] = max(gaps)
        if a in last and b in last:
            out[f"{name}_lastc"] = last[b] - last[a]
    return out


SHARE_ROWS = [("all_started", "our share: YARN's last task container RUNNING -> all started"),
              ("last_forked", "  last launch script forked (YARN)"),
              ("last_up", "  last executor up"),
              ("all_registered", "  all registered (AM), the spec published"),
              ("last_spec", "  last executor got the spec"),
              ("last_started", "  last task command exec'd"),
              ("after_fork", "ours after YARN forked the last launch script")]


def print_share(shares):
    """The medians of our_share's figures over the runs."""
    print("  from YARN's last task container RUNNING (s, median over runs):")
    for key, text in SHARE_ROWS:
        s = [x[key] for x in shares if key in x]
        if s:
            print(f"    {text:62s} {statistics.median(s):7.2f}")
    print("  per task (s, median over runs of: median over tasks / max over tasks / "
          "the last RUNNING container's):")
    for name, _, _, text in GAPS:
        cols = []
        for suffix in ["median", "max", "lastc"]:
            s = [x[f"{name}_{suffix}"] for x in shares if f"{name}_{suffix}" in x]
            cols.append(f"{statistics.median(s):7.3f}" if s else "    n/a")
        print(f"    {name:10s} {' '.join(cols)}  {text}")


def bench(state, env, tasks, runs):
    """`runs` runs of worker:`tasks`; prints each and their medians."""
    samples = {p: [] for p in PHASES + YARN_PHASES}
    rss, cpu, execs, shares = [], [], [], []
    done = 0
    for i in range(runs):
        try:
            phases, am_rss, am_cpu, executors, load, cpu_use, share = run_once(state, env, tasks)
        except RunFailed as e:
            print(f"run {i + 1} failed (left out): {str(e)[-600:]}", flush=True)
            continue
        done += 1
        print(f"run {i + 1}: " + ", ".join(f"{p} {phases.get(p, float('nan')):.2f}"
                                           for p in PHASES + YARN_PHASES) +
              f"; AM peak RSS {am_rss / 1024 if am_rss else float('nan'):.1f} MB, "
              f"AM CPU {am_cpu if am_cpu is not None else float('nan'):.2f} s; "
              f"{len(executors)} executors; load {load:.1f}; our share "
              f"{share.get('all_started', float('nan')):.2f}", flush=True)
        if cpu_use:
            known = sum(v for k, v in cpu_use.items() if k != "host")
            print("  CPU seconds to all started: " +
                  ", ".join(f"{k} {v:.1f}" for k, v in cpu_use.items()) +
                  f", rest of the host {cpu_use['host'] - known:.1f}", flush=True)
        for p in PHASES + YARN_PHASES:
            if p in phases:
                samples[p].append(phases[p])
        if am_rss:
            rss.append(am_rss / 1024)
        if am_cpu is not None:
            cpu.append(am_cpu)
        execs += executors
        if share:
            shares.append(share)
    print(f"scale, worker:{tasks} (128 MB each), median of {done} runs "
          "(seconds since ytf-submit was invoked):")
    for p in PHASES + YARN_PHASES:
        s = samples[p]
        print(f"  {p:15s} " + (f"{statistics.median(s):7.2f}" if s else "    n/a"))
    if rss:
        print(f"  AM peak RSS     {statistics.median(rss):7.1f} MB")
    if cpu:
        print(f"  AM CPU          {statistics.median(cpu):7.2f} s (user + system, to all started)")
    if execs:
        print(f"  executor RSS    {statistics.median(execs) / 1024:7.1f} MB median, "
              f"{max(execs) / 1024:.1f} MB max")
    if shares:
        print_share(shares)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tasks", default="500", help="job sizes, comma-separated (200,500)")
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument("--keep", action="store_true", help="leave the scale cluster running")
    args = ap.parse_args()
    env = cluster_env()
    script = os.path.join(ROOT, "scripts", "hadoop-cluster")
    started = subprocess.run([script, "status"], env=env, capture_output=True).returncode != 0
    conf = subprocess.run([script, "start"], env=env, capture_output=True, text=True)
    if conf.returncode != 0:
        sys.exit(f"scripts/hadoop-cluster start failed:\n{conf.stderr}")
    env["HADOOP_CONF_DIR"] = conf.stdout.strip()
    state = os.path.dirname(env["HADOOP_CONF_DIR"])
    try:
        for tasks in [int(t) for t in args.tasks.split(",")]:
            bench(state, env, tasks, args.runs)
    finally:
        if started and not args.keep:
            subprocess.run([script, "stop"], env=env, capture_output=True)


if __name__ == "__main__":
    main()
