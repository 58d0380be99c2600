"""Elastic data-parallel training on CPU (gloo), for libtony's elastic roles (docs/elastic.md).

Run under torchrun's elastic agent (`-s` ships this script with the job; `-m` because the
default of 8 GB per task is more than small nodes, the test cluster's included, can give three):

  ytf-submit --framework pytorch -r worker:3 --elastic worker=2:3 -m 1g -s elastic_ddp.py \\
    'python3 -m torch.distributed.run ${DTF_TASK_SCRIPT} --checkpoint DIR'

libtony supplies the rendezvous (PET_* variables). What makes it elastic:
  - every restart (a member lost or joining) starts this script afresh in each agent, so it
    resumes from the last checkpoint, which rank 0 writes atomically after each step to a
    directory every task can read (HDFS, NFS; here the test cluster's shared disk);
  - each step's result does not depend on the world size: every rank computes the gradient of
    the same full batch, which DDP averages, so the model equals a single process's.
Without torchrun (no RANK in the environment) it trains alone: the reference result.
`--stop-file PATH` ends the training early, at the step after PATH appears (rank 0 looks and
tells the others, so every rank stops at the same step): a stand-in for a job's own test of
convergence, and how the tests end a run once they saw what they wait for.
"""

import argparse
import os
import time

import torch
import torch.distributed as dist


def stop_requested(path, rank, distributed):
    """Whether rank 0 saw `path`; the same answer on every rank."""
    if not path:
        return False
    seen = torch.tensor([1 if rank == 0 and os.path.exists(path) else 0])
    if distributed:
        dist.broadcast(seen, src=0)
    return bool(seen.item())


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=200)
    p.add_argument("--checkpoint", required=True, help="directory shared by every task")
    p.add_argument("--step-seconds", type=float, default=0.05)
    p.add_argument("--stop-file", help="end at the next step once this file exists")
    a = p.parse_args()
    distributed = "RANK" in os.environ
    if distributed:
        dist.init_process_group("gloo")
    rank = dist.get_rank() if distributed else 0
    world = dist.get_world_size() if distributed else 1

    torch.manual_seed(0)
    x = torch.randn(256, 8)
    y = x @ torch.arange(8.0)
    model = torch.nn.Linear(8, 1, bias=False)
    with torch.no_grad():
        model.weight.zero_()
    step = 0
    ckpt = os.path.join(a.checkpoint, "ckpt.pt")
    if os.path.exists(ckpt):
        state = torch.load(ckpt)
        model.load_state_dict(state["model"])
        step = state["step"]
    net = torch.nn.parallel.DistributedDataParallel(model) if distributed else model
    opt = torch.optim.SGD(net.parameters(), lr=0.05)
    print(f"rank {rank} of {world} resumes at step {step}", flush=True)
    while step < a.steps:
        opt.zero_grad()
        loss = ((net(x).squeeze(1) - y) ** 2).mean()
        loss.backward()
        opt.step()
        step += 1
        if stop_requested(a.stop_file, rank, distributed):
            a.steps = step
        if rank == 0:
            tmp = f"{ckpt}.tmp"
            torch.save({"model": model.state_dict(), "step": step}, tmp)
            os.replace(tmp, ckpt)
            with open(os.path.join(a.checkpoint, "progress"), "w") as f:
                f.write(f"{step} {world} {time.time():.3f}\n")
        time.sleep(a.step_seconds)
    if distributed:
        dist.barrier()
    if rank == 0:
        weights = " ".join(f"{v:.6f}" for v in model.weight.detach().squeeze(0).tolist())
        print(f"final weights {weights}", flush=True)
        with open(os.path.join(a.checkpoint, "final"), "w") as f:
            f.write(weights + "\n")
    if distributed:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
