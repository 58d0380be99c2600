# Copyright libtony authors.
#
# A cross-process JAX collective on CPU (gloo), one process per task:
#
#   ytf-submit --framework jax -r worker:2 -m 2g -s examples/jax_allreduce.py \
#     'python3 ${DTF_TASK_SCRIPT}'
#
# jax.distributed.initialize() takes no argument: libtony sets the coordinator (process 0's
# address), the process count and this process's id (docs/task-environment.md#jax). At every
# step each process contributes 10 ** process_id * (step + 1) to a sum over all processes, so
# the decimal digits of the result show that every process took part; the running total must
# come out as every step's sum added up, else the script exits 1.
#
# With --checkpoint_dir (default: $DTF_OUTPUT_PATH, a directory every task can reach) process 0
# records the total after each step; a task restarted after a whole-job restart (TONY_RESUMED
# is set) goes on from there. --crash_at_step N makes the last process SIGKILL itself at step
# N in the first attempt only: a test of that restart.
import argparse
import json
import os
import signal
import socket
import sys

import jax

jax.config.update("jax_cpu_collectives_implementation", "gloo")

import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from jax.sharding import Mesh, NamedSharding, PartitionSpec  # noqa: E402


def global_sum(mesh, local_value):
    """The sum over processes of each one's `local_value`, through an XLA all-reduce."""
    sharding = NamedSharding(mesh, PartitionSpec("p"))
    local = [jax.device_put(np.array([local_value], dtype=np.int64), d)
             for d in jax.local_devices()[:1]]
    global_array = jax.make_array_from_single_device_arrays(
        (jax.process_count(),), sharding, local)
    replicated = NamedSharding(mesh, PartitionSpec())
    total = jax.jit(jnp.sum, out_shardings=replicated)(global_array)
    return int(total.addressable_data(0))


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except FileNotFoundError:
        return {"step": 0, "total": 0}


def save(path, state):
    tmp = f"{path}.tmp"
    with open(tmp, "w") as f:
        json.dump(state, f)
    os.replace(tmp, path)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=3)
    p.add_argument("--checkpoint_dir", default=os.environ.get("DTF_OUTPUT_PATH", ""))
    p.add_argument("--crash_at_step", type=int, default=-1)
    args = p.parse_args()

    jax.config.update("jax_enable_x64", True)
    jax.distributed.initialize()
    pid, count = jax.process_index(), jax.process_count()
    node = os.environ.get("NM_HOST", socket.gethostname())
    resumed = os.environ.get("TONY_RESUMED", "")
    print(f"jax_allreduce: process {pid}/{count} on {node}, coordinator "
          f"{os.environ.get('JAX_COORDINATOR_ADDRESS')}, TONY_RESUMED={resumed or '-'}",
          flush=True)
    # One CPU device per process: the mesh's axis runs over the processes.
    mesh = Mesh(np.array([d for d in jax.devices() if d.platform == "cpu"][:count]), ("p",))

    ckpt = os.path.join(args.checkpoint_dir, "jax_allreduce.json") if args.checkpoint_dir else ""
    state = load(ckpt) if ckpt and resumed else {"step": 0, "total": 0}
    if state["step"]:
        print(f"jax_allreduce: resumed from step {state['step']}", flush=True)
    for step in range(state["step"], args.steps):
        if step == args.crash_at_step and not resumed and pid == count - 1:
            print(f"jax_allreduce: process {pid} kills itself at step {step}", flush=True)
            os.kill(os.getpid(), signal.SIGKILL)
        got = global_sum(mesh, 10 ** pid * (step + 1))
        state = {"step": step + 1, "total": state["total"] + got}
        if ckpt and pid == 0:
            save(ckpt, state)
        print(f"jax_allreduce: step {step} sum {got}", flush=True)

    ones = sum(10 ** i for i in range(count))
    want = ones * args.steps * (args.steps + 1) // 2
    ok = state["total"] == want
    print(f"jax_allreduce {'done' if ok else 'FAILED'}: process {pid}/{count} "
          f"total {state['total']} (want {want})", flush=True)
    jax.distributed.shutdown()
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
