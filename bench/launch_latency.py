#!/usr/bin/env python3
"""Launch latency of ytf-submit on the real single-host YARN, split into phases.

For each shape (default ps:1,worker:2 and ps:2,worker:8) it submits a job whose tasks run
`sleep 2` several times and prints, per phase, the median time since the submission started:

  submitted        ytf-submit has the application id (staging + submitApplication done)
  am_registered    the AM registered with the ResourceManager
  all_allocated    every task's container allocated
  all_registered   every executor registered with the ClusterSpecBroker (spec published)
  all_started      every user command started

The AM's phases come from the `TONY_PHASE <name> <unix ms>` lines of its log (ytf logs --task
am); the machine's clock is shared, since the single-host cluster runs here. Also prints the
peak RSS (VmHWM) of the AM and of an executor, from the same log lines.

  bench/launch_latency.py [--runs 5] [--shapes ps:1,worker:2 ps:2,worker:8] [--broker_tls]

--broker_tls submits with TLS on the broker channel (the default on Kerberos clusters), to
compare its cost with a plaintext run.
"""

import argparse
import os
import re
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.environ.get("TONY_BIN_DIR", os.path.join(ROOT, "build", "bin"))
PHASES = ["submitted", "am_registered", "all_allocated", "all_registered", "all_started"]


def run_once(shape, extra):
    t0 = time.time()
    p = subprocess.run([os.path.join(BIN, "ytf-submit"), "--yarn", "--detach", "--quiet", "-n",
                        "bench-launch", "-r", shape, "-m", "128m", "--am_memory", "256m"] + extra +
                       ["sleep 2"], capture_output=True, text=True, timeout=600)
    submitted = time.time() - t0
    m = re.search(r"application_\d+_\d+", p.stdout)
    if p.returncode != 0 or not m:
        sys.exit(f"ytf-submit failed ({p.returncode}):\n{p.stdout}\n{p.stderr}")
    app = m.group(0)
    deadline = time.time() + 600
    while time.time() < deadline:
        st = subprocess.run([os.path.join(BIN, "ytf"), "status", app], capture_output=True,
                            text=True, timeout=60).stdout
        if re.search(r"SUCCEEDED|FAILED|KILLED", st.splitlines()[0] if st else ""):
            break
        time.sleep(0.5)
    logs = subprocess.run([os.path.join(BIN, "ytf"), "logs", app, "--task", "am", "--file",
                           "tony-am.stderr"], capture_output=True, text=True, timeout=60).stdout
    phases = {"submitted": submitted}
    rss = {}
    for line in logs.splitlines():
        pm = re.search(r"TONY_PHASE (\w+) (\d+)", line)
        if pm:
            phases[pm.group(1)] = int(pm.group(2)) / 1000.0 - t0
        rm = re.search(r"TONY_RSS (\w+) (\d+)", line)
        if rm:
            rss[rm.group(1)] = int(rm.group(2))
    return phases, rss


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--shapes", nargs="+", default=["ps:1,worker:2", "ps:2,worker:8"])
    ap.add_argument("--broker_tls", action="store_true")
    args = ap.parse_args()
    if not os.environ.get("HADOOP_CONF_DIR"):
        conf = subprocess.run([os.path.join(ROOT, "scripts", "hadoop-cluster"), "start"],
                              capture_output=True, text=True, check=True).stdout.strip()
        os.environ["HADOOP_CONF_DIR"] = conf
    for shape in args.shapes:
        samples = {p: [] for p in PHASES}
        rss = {}
        for _ in range(args.runs):
            phases, r = run_once(shape, ["--broker_tls"] if args.broker_tls else [])
            for p in PHASES:
                if phases.get(p) is not None:
                    samples[p].append(phases[p])
            for k, v in r.items():
                rss.setdefault(k, []).append(v)
        tls = ", broker TLS" if args.broker_tls else ""
        print(f"launch latency, {shape}{tls}, median of {args.runs} runs "
              "(seconds since submission):")
        for p in PHASES:
            s = samples[p]
            if s:
                print(f"  {p:15s} {statistics.median(s):6.2f}   (min {min(s):.2f}, max {max(s):.2f})")
            else:
                print(f"  {p:15s}    n/a")
        for k, v in sorted(rss.items()):
            print(f"  peak RSS {k:9s} {statistics.median(v) / 1024:6.1f} MB (median)")


if __name__ == "__main__":
    main()
