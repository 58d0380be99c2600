#!/usr/bin/env python3
"""First and second submission of a job shipping the project's TensorFlow env (--python_env).

Packs scripts/python-env's venv with scripts/python-env-archive (cached), then submits the same
job twice into a fresh HDFS cache directory (-D tony.cache.dir=...), so the first submission
uploads the env and every NodeManager unpacks it, and the second finds both done. Prints per
submission, in seconds since ytf-submit started:

  submitted      ytf-submit returned (--detach): archive inspected, uploaded if new, job staged
  worker_running the worker's command runs (the env localized and unpacked on its node)

The worker runs on the node labelled --node_label (default gpu, the test cluster's labelled
node) both times, so the second finds the env unpacked there. The task is
`python -c 'import tensorflow'` then a sleep, on the single-host test cluster
(scripts/hadoop-cluster; HADOOP_CONF_DIR from `scripts/hadoop-cluster env`). The bench cache
directory is removed at the end (the NodeManagers' copies age out of their cache by YARN's
rules).

  bench/python_env_submit.py [--runs 1]
"""

import argparse
import json
import os
import re
import subprocess
import sys
import time
import urllib.request
import uuid
import xml.etree.ElementTree as ET

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.environ.get("TONY_BIN_DIR", os.path.join(ROOT, "build", "bin"))


def remove_from_hdfs(path, user):
    """WebHDFS DELETE through the NameNode of $HADOOP_CONF_DIR (no Hadoop client needed)."""
    site = os.path.join(os.environ.get("HADOOP_CONF_DIR", ""), "hdfs-site.xml")
    address = None
    for prop in ET.parse(site).getroot().iter("property"):
        if prop.findtext("name") == "dfs.namenode.http-address":
            address = prop.findtext("value")
    if address:
        req = urllib.request.Request(f"http://{address}/webhdfs/v1{path}?op=DELETE&recursive=true"
                                     f"&user.name={user}", method="DELETE")
        urllib.request.urlopen(req, timeout=30).read()


def ytf(*args):
    return subprocess.run([os.path.join(BIN, "ytf"), *args], capture_output=True, text=True,
                          timeout=120)


def submit(archive, cache_dir, node_label):
    t0 = time.time()
    p = subprocess.run([os.path.join(BIN, "ytf-submit"), "--yarn", "--detach", "-n",
                        "bench-python-env", "-D", f"tony.cache.dir={cache_dir}", "--python_env",
                        archive, "-e", "PATH=/usr/bin:/bin", "-r", "worker:1", "-m", "1g",
                        *(["--node_label", f"worker:{node_label}"] if node_label else []),
                        "python -c 'import tensorflow' && exec sleep 600"],
                       capture_output=True, text=True, timeout=1800,
                       env=dict(os.environ, TONY_LOG_DEBUG="1"))  # shows the upload line
    submitted = time.time() - t0
    m = re.search(r"application_\d+_\d+", p.stdout)
    if p.returncode != 0 or not m:
        sys.exit(f"ytf-submit failed ({p.returncode}):\n{p.stdout}\n{p.stderr}")
    app = m.group(0)
    running = None
    deadline = time.time() + 1800
    while time.time() < deadline:
        st = ytf("status", app, "--json")
        try:
            s = json.loads(st.stdout)
        except ValueError:
            s = {}
        if s.get("progress", {}).get("worker", {}).get("running", 0) >= 1:
            running = time.time() - t0
            break
        if s.get("state") in ("SUCCEEDED", "FAILED", "KILLED"):
            sys.exit(f"{app} ended {s.get('state')}: {s.get('diagnostics')}")
        time.sleep(0.2)
    ytf("kill", app)
    uploaded = "uploaded the Python env" in p.stderr
    return submitted, running, uploaded


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=1)
    # Both submissions' worker on one node, so the second finds the env unpacked there (YARN
    # unpacks it once per node): the test cluster's one labelled node.
    ap.add_argument("--node_label", default="gpu")
    args = ap.parse_args()
    archive = subprocess.run([os.path.join(ROOT, "scripts", "python-env-archive")],
                             capture_output=True, text=True, check=True).stdout.strip()
    size_mb = os.path.getsize(archive) / 2**20
    user = os.environ.get("HADOOP_USER_NAME") or os.environ.get("USER") or "root"
    print(f"env archive: {archive} ({size_mb:.0f} MB)")
    print(f"{'run':>4} {'submission':>11} {'submitted s':>12} {'worker_running s':>17} uploaded")
    for run in range(args.runs):
        cache_dir = f"/user/{user}/.tony-cache-bench-{uuid.uuid4().hex[:8]}"
        try:
            for which in ("first", "second"):
                submitted, running, uploaded = submit(archive, cache_dir, args.node_label)
                print(f"{run + 1:>4} {which:>11} {submitted:>12.2f} "
                      f"{running if running is not None else float('nan'):>17.2f} "
                      f"{'yes' if uploaded else 'no'}", flush=True)
        finally:
            remove_from_hdfs(cache_dir, user)


if __name__ == "__main__":
    main()
