#!/usr/bin/env python3
"""Launch latency of ytf-submit on the real single-host YARN, split into phases, beside YARN's own floor.

For each shape (default ps:1,worker:2 and ps:2,worker:8) it runs a job of trivial tasks (`true`)
several times, the client in the foreground as a user runs it, and prints, per phase, the median
time since ytf-submit was invoked (min and max beside it):

  submitted          the ResourceManager has the application (staging + submitApplication)
  am_registered      the AM registered with the ResourceManager
  all_allocated      every task's container allocated
  all_registered     every executor registered with the ClusterSpecBroker (spec published)
  all_started        every user command started
  last_task_exited   the last task's command exited (its executor saw it)
  unregistered       the AM told YARN the outcome
  client_returned    ytf-submit returned with the final state (end to end)
  yarn_finished      the ResourceManager recorded FINISHED (the AM's container exited)

Then YARN's floor, from the ResourceManager's and NodeManagers' own logs (same machine, same
clock): the time the RM took to give the AM its container, the AM container's localization and
start, the RM's allocation of the task containers after the AM asked (at registration), the task
containers' localization and start (slowest of the job). Their sum is the least any YARN
application of this shape could take to have every task running; `above YARN` is all_started
minus that sum: what libtony adds (client, AM and executor start-up, registration).

Peak RSS (VmHWM) of the AM, of the largest executor and of the client are printed too; the AM's
and the executors' from their `TONY_RSS` log lines, the client's sampled from /proc (PeakRss).

  bench/launch_latency.py [--runs 5] [--shapes ps:1,worker:2 ps:2,worker:8] [--broker_tls]
                          [--command 'sleep 1']

--broker_tls submits with TLS on the broker channel (the default on Kerberos clusters), to
compare its cost with a plaintext run. Reads logs from the test cluster's state directory (the
parent of HADOOP_CONF_DIR), so it needs the cluster of scripts/hadoop-cluster.
"""

import argparse
import glob
import os
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.environ.get("TONY_BIN_DIR", os.path.join(ROOT, "build", "bin"))
PHASES = ["submitted", "am_registered", "all_allocated", "all_registered", "all_started",
          "last_task_exited", "unregistered", "client_returned", "yarn_finished"]
FLOOR = [("rm_am_container", "RM: submission -> AM container allocated"),
         ("nm_am_localize", "NM: AM container localizing"),
         ("nm_am_launch", "NM: AM container scheduled -> running"),
         ("rm_task_containers", "RM: AM registered -> last task container allocated"),
         ("nm_task_localize", "NM: task containers localizing (slowest)"),
         ("nm_task_launch", "NM: task containers scheduled -> running (slowest)")]
LOG_TIME = re.compile(r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d),(\d{3}) ")


def log_time(line):
    m = LOG_TIME.match(line)
    if not m:
        return None
    return time.mktime(time.strptime(m.group(1), "%Y-%m-%d %H:%M:%S")) + int(m.group(2)) / 1000.0


class PeakRss:
    """The peak RSS (VmHWM, kB) of process `pid`, sampled every 5 ms on a thread until it exits.

    Not wait4()'s ru_maxrss: the kernel charges a child started by Python's subprocess (vfork or
    fork) with the parent's memory at its exec, so a client smaller than this Python process
    would be reported as large as the bench itself. The last sample before the exit misses at most the
    final 5 ms, in which a client only prints and exits.
    """

    def __init__(self, pid):
        self.kb = 0
        self._pid = pid
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()

    def _sample(self):
        while True:
            try:
                with open(f"/proc/{self._pid}/status") as f:
                    m = re.search(r"^VmHWM:\s+(\d+) kB", f.read(), re.M)
            except OSError:
                return
            if not m:  # a zombie: its memory is gone
                return
            self.kb = max(self.kb, int(m.group(1)))
            time.sleep(0.005)

    def result(self):
        """The peak, once the process has been reaped."""
        self._thread.join(timeout=1)
        return self.kb


def grep_logs(paths, needle):
    """(time, line) of every line of `paths` containing `needle`."""
    out = []
    for path in paths:
        try:
            with open(path, errors="replace") as f:
                for line in f:
                    if needle in line:
                        t = log_time(line)
                        if t is not None:
                            out.append((t, line))
        except OSError:
            pass
    return out


def yarn_floor(state, app, t0, am_registered):
    """YARN's own phases for `app`, in seconds, from the RM's and NodeManagers' logs."""
    ident = app[len("application_"):]
    rm = grep_logs([os.path.join(state, "logs", "resourcemanager.log")], ident)
    nm = grep_logs(sorted(glob.glob(os.path.join(state, "logs", "nodemanager*.log"))), ident)
    am_container = f"container_{ident}_01_000001"
    floor = {}
    times = {}
    submitted = [t for t, l in rm if "State change from NEW to NEW_SAVING" in l]
    if submitted:
        floor["submitted"] = submitted[0] - t0
    for t, l in rm:
        m = re.search(r"(container_\S+) Container Transitioned from NEW to ALLOCATED", l)
        if m:
            times.setdefault(m.group(1), {})["allocated"] = t
        if app in l and "State change from FINISHING to FINISHED" in l:
            floor["yarn_finished"] = t - t0
    for t, l in nm:
        m = re.search(r"Container (container_\S+) transitioned from (\w+) to (\w+)", l)
        if m:
            times.setdefault(m.group(1), {})[f"{m.group(2)}>{m.group(3)}"] = t
    am = times.get(am_container, {})
    if submitted and "allocated" in am:
        floor["rm_am_container"] = am["allocated"] - submitted[0]
    if "NEW>LOCALIZING" in am and "LOCALIZING>SCHEDULED" in am:
        floor["nm_am_localize"] = am["LOCALIZING>SCHEDULED"] - am["NEW>LOCALIZING"]
    elif "NEW>SCHEDULED" in am:  # nothing to localize
        floor["nm_am_localize"] = 0.0
    sched = am.get("LOCALIZING>SCHEDULED", am.get("NEW>SCHEDULED"))
    if sched is not None and "SCHEDULED>RUNNING" in am:
        floor["nm_am_launch"] = am["SCHEDULED>RUNNING"] - sched
    tasks = {c: v for c, v in times.items() if c != am_container and "SCHEDULED>RUNNING" in v}
    if tasks:
        if am_registered is not None:
            floor["rm_task_containers"] = max(v.get("allocated", 0) for v in tasks.values()) - (
                t0 + am_registered)
        floor["nm_task_localize"] = max(
            v["LOCALIZING>SCHEDULED"] - v["NEW>LOCALIZING"] if "LOCALIZING>SCHEDULED" in v else 0.0
            for v in tasks.values())
        floor["nm_task_launch"] = max(
            v["SCHEDULED>RUNNING"] - v.get("LOCALIZING>SCHEDULED", v.get("NEW>SCHEDULED", 0))
            for v in tasks.values())
    return floor


def run_once(state, shape, extra, command):
    with tempfile.TemporaryFile("w+") as out_f, tempfile.TemporaryFile("w+") as err_f:
        t0 = time.time()
        p = subprocess.Popen([os.path.join(BIN, "ytf-submit"), "--yarn", "--quiet", "-n",
                              "bench-launch", "-r", shape, "-m", "128m", "--am_memory", "256m"] +
                             extra + [command], stdout=out_f, stderr=err_f)
        peak = PeakRss(p.pid)
        _, status, _ = os.wait4(p.pid, 0)
        client_returned = time.time() - t0
        p.returncode = os.waitstatus_to_exitcode(status)
        out_f.seek(0)
        err_f.seek(0)
        out, err = out_f.read(), err_f.read()
    m = re.search(r"application_\d+_\d+", out + err)
    if p.returncode != 0 or not m:
        sys.exit(f"ytf-submit failed ({p.returncode}):\n{out}\n{err}")
    app = m.group(0)
    phases = {"client_returned": client_returned}
    rss = {"client": peak.result()}
    # The AM's and the executors' log lines, straight from the NodeManagers' log directories;
    # the AM's last line (its RSS) comes shortly after the client returned.
    deadline = time.time() + 60
    while True:
        logs = [f for f in glob.glob(os.path.join(state, "data", "nm*", "logs", app,
                                                  "container_*", "*stderr"))]
        am_text = "".join(open(f, errors="replace").read() for f in logs if "_000001/" in f)
        if "TONY_RSS am" in am_text or time.time() > deadline:
            break
        time.sleep(0.2)
    exited = []
    for f in logs:
        am = "_000001/" in f
        for text in open(f, errors="replace"):
            pm = re.search(r"TONY_PHASE (\w+) (\d+)", text)
            if pm and pm.group(1) == "task_exited" and not am:
                exited.append(int(pm.group(2)) / 1000.0 - t0)
            elif pm and am:
                phases[pm.group(1)] = int(pm.group(2)) / 1000.0 - t0
            rm = re.search(r"TONY_RSS (\w+) (\d+)", text)
            if rm:
                rss[rm.group(1)] = max(rss.get(rm.group(1), 0), int(rm.group(2)))
    if exited:
        phases["last_task_exited"] = max(exited)
    floor = {}
    deadline = time.time() + 30
    while time.time() < deadline:
        floor = yarn_floor(state, app, t0, phases.get("am_registered"))
        if "yarn_finished" in floor:
            break
        time.sleep(0.2)
    for p in ("submitted", "yarn_finished"):
        if p in floor:
            phases[p] = floor.pop(p)
    return phases, floor, rss


def line(label, samples):
    if not samples:
        return f"  {label:52s}    n/a"
    return (f"  {label:52s} {statistics.median(samples):6.2f}   "
            f"(min {min(samples):.2f}, max {max(samples):.2f})")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--shapes", nargs="+", default=["ps:1,worker:2", "ps:2,worker:8"])
    ap.add_argument("--broker_tls", action="store_true")
    ap.add_argument("--command", default="true", help="every task's command (default: true)")
    args = ap.parse_args()
    if not os.environ.get("HADOOP_CONF_DIR"):
        conf = subprocess.run([os.path.join(ROOT, "scripts", "hadoop-cluster"), "start"],
                              capture_output=True, text=True, check=True).stdout.strip()
        os.environ["HADOOP_CONF_DIR"] = conf
    state = os.path.dirname(os.path.abspath(os.environ["HADOOP_CONF_DIR"]))
    for shape in args.shapes:
        samples = {p: [] for p in PHASES}
        floors = {k: [] for k, _ in FLOOR}
        floor_sums, above, end = [], [], []
        rss = {}
        for _ in range(args.runs):
            phases, floor, r = run_once(state, shape, ["--broker_tls"] if args.broker_tls else [],
                                        args.command)
            for p in PHASES:
                if phases.get(p) is not None:
                    samples[p].append(phases[p])
            for k, _ in FLOOR:
                if k in floor:
                    floors[k].append(floor[k])
            if all(k in floor for k, _ in FLOOR):
                s = sum(floor[k] for k, _ in FLOOR)
                floor_sums.append(s)
                if phases.get("all_started") is not None:
                    above.append(phases["all_started"] - s)
            if phases.get("last_task_exited") is not None:
                end.append(phases["client_returned"] - phases["last_task_exited"])
            for k, v in r.items():
                rss.setdefault(k, []).append(v)
        tls = ", broker TLS" if args.broker_tls else ""
        print(f"launch latency, {shape}{tls}, `{args.command}`, median of {args.runs} runs "
              "(seconds since ytf-submit was invoked):")
        for p in PHASES:
            print(line(p, samples[p]))
        print("  YARN's floor (durations):")
        for k, label in FLOOR:
            print(line("  " + label, floors[k]))
        print(line("  sum: YARN's floor to every task running", floor_sums))
        print(line("all_started above YARN's floor", above))
        print(line("last task exit -> client returns", end))
        for k, v in sorted(rss.items()):
            print(f"  peak RSS {k:9s} {statistics.median(v) / 1024:6.1f} MB (median; "
                  f"max {max(v) / 1024:.1f})")


if __name__ == "__main__":
    main()
