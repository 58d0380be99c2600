#!/usr/bin/env python3
"""Checkpoints when YARN announces a preemption, and resumes from it when relaunched.

Trains y = 3x + 2 by SGD in plain Python (no framework needed), one small step at a time. The
executor tells the task of a preemption notice twice: it sends TONY_PREEMPT_SIGNAL (SIGUSR1
unless the job sets another) to the processes that catch it, and writes the notice file at
TONY_PREEMPT_NOTICE. Either makes this script write its checkpoint at once and carry on; YARN
then takes the container, the restart policy relaunches the task, and the new run resumes from
the checkpoint (docs/task-environment.md, "Preemption notice").

The checkpoint must outlive the container: give a directory every node reaches (HDFS mounted, a
shared file system), e.g. with -o (DTF_OUTPUT_PATH) or --checkpoint_dir.

  ytf-submit -r worker:1 -m 1g -o /shared/ckpt \\
    --restart worker:policy=on-failure,max_restarts=3,scope=task \\
    -s examples/preempt_checkpoint.py 'python3 ${DTF_TASK_SCRIPT} --steps 600'
"""

import argparse
import json
import os
import random
import signal
import sys
import time


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--checkpoint_dir", default=os.environ.get("DTF_OUTPUT_PATH", "checkpoints"))
    p.add_argument("--steps", type=int, default=600)
    p.add_argument("--step_seconds", type=float, default=0.1)
    return p.parse_args()


def checkpoint_path(directory):
    task = "{}-{}".format(os.environ.get("DTF_TASK_JOB_NAME", "task"),
                          os.environ.get("DTF_TASK_INDEX", "0"))
    return os.path.join(directory, task + ".json")


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except FileNotFoundError:
        return None


def save(path, state):
    # Whole or not at all: a reader (the next run) never sees a part.
    tmp = "{}.tmp.{}".format(path, os.getpid())
    with open(tmp, "w") as f:
        json.dump(state, f)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def main():
    args = parse_args()
    os.makedirs(args.checkpoint_dir, exist_ok=True)
    path = checkpoint_path(args.checkpoint_dir)
    state = load(path) or {"step": 0, "w": 0.0, "b": 0.0, "checkpoints": 0}
    if state["step"] > 0:
        print("resumed from step {} (TONY_RESUMED={}, restart {})".format(
            state["step"], os.environ.get("TONY_RESUMED", "-"),
            os.environ.get("TONY_TASK_RESTARTS", "-")), flush=True)

    noticed = {"flag": False}
    sig_name = os.environ.get("TONY_PREEMPT_SIGNAL", "SIGUSR1")
    if sig_name != "none":
        # Catching it is what makes the executor send it: a process that does not is left alone.
        signal.signal(getattr(signal, sig_name, signal.SIGUSR1),
                      lambda signum, frame: noticed.update(flag=True))
    notice_file = os.environ.get("TONY_PREEMPT_NOTICE", "")
    handled_notice = None

    rng = random.Random(state["step"])
    while state["step"] < args.steps:
        x = rng.uniform(-1, 1)
        err = state["w"] * x + state["b"] - (3 * x + 2)
        state["w"] -= 0.05 * err * x
        state["b"] -= 0.05 * err
        state["step"] += 1
        notice = None
        if notice_file and os.path.exists(notice_file):
            with open(notice_file) as f:
                notice = json.load(f).get("container")
        if noticed["flag"] or (notice is not None and notice != handled_notice):
            noticed["flag"] = False
            handled_notice = notice
            state["checkpoints"] += 1
            state["checkpointed_at_ms"] = int(time.time() * 1000)
            save(path, state)
            print("preemption notice: checkpoint written at step {} ({})".format(
                state["step"], path), flush=True)
        time.sleep(args.step_seconds)

    save(path, state)
    print("done: step {}, w={:.3f} b={:.3f}".format(state["step"], state["w"], state["b"]),
          flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
