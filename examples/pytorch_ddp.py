# Copyright libtony authors.
#
# PyTorch DistributedDataParallel on CPU (gloo), one process per task:
#
#   ytf-submit --framework pytorch -r worker:2 -m 1g -s examples/pytorch_ddp.py \
#     'python3 ${DTF_TASK_SCRIPT}'
#
# The rendezvous comes from the variables libtony sets for PyTorch jobs (MASTER_ADDR, MASTER_PORT,
# RANK, WORLD_SIZE: init_method "env://"). Each rank trains a small linear model on its own shard
# of generated data (no download); DDP averages the gradients, so every rank ends with the same
# weights. Exits 1 unless the loss averaged over all ranks falls below --target_loss and the
# ranks' weights agree.
import argparse
import datetime
import os
import socket
import sys

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

TRUE_W = [2.0, -3.0, 0.5]
TRUE_B = 1.0


def shard(rank, n):
    g = torch.Generator().manual_seed(1234 + rank)
    x = torch.randn(n, len(TRUE_W), generator=g)
    y = x @ torch.tensor(TRUE_W).unsqueeze(1) + TRUE_B + 0.01 * torch.randn(n, 1, generator=g)
    return x, y


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=200)
    p.add_argument("--lr", type=float, default=0.05)
    p.add_argument("--target_loss", type=float, default=0.01)
    p.add_argument("--timeout_s", type=int, default=300)
    args = p.parse_args()

    for v in ("MASTER_ADDR", "MASTER_PORT", "RANK", "WORLD_SIZE"):
        if v not in os.environ:
            print(f"pytorch_ddp: {v} is not set (run with ytf-submit --framework pytorch)",
                  file=sys.stderr)
            return 2
    dist.init_process_group("gloo", init_method="env://",
                            timeout=datetime.timedelta(seconds=args.timeout_s))
    rank, world = dist.get_rank(), dist.get_world_size()
    node = os.environ.get("NM_HOST", socket.gethostname())
    print(f"rank {rank}/{world} on {node}, rendezvous at "
          f"{os.environ['MASTER_ADDR']}:{os.environ['MASTER_PORT']}", flush=True)

    torch.manual_seed(0)  # the same initial weights everywhere (DDP also broadcasts rank 0's)
    model = DDP(torch.nn.Linear(len(TRUE_W), 1))
    opt = torch.optim.SGD(model.parameters(), lr=args.lr)
    x, y = shard(rank, 256)
    loss = torch.tensor(0.0)
    for step in range(args.steps):
        opt.zero_grad()
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()  # DDP all-reduces the gradients here
        opt.step()
        if step % 50 == 0:
            print(f"rank {rank} step {step} loss {loss.item():.5f}", flush=True)

    # The loss over every rank's shard, and whether the ranks' weights agree.
    mean_loss = loss.detach().clone()
    dist.all_reduce(mean_loss)
    mean_loss /= world
    flat = torch.cat([q.detach().flatten() for q in model.parameters()])
    lo, hi = flat.clone(), flat.clone()
    dist.all_reduce(lo, op=dist.ReduceOp.MIN)
    dist.all_reduce(hi, op=dist.ReduceOp.MAX)
    spread = (hi - lo).abs().max().item()
    dist.barrier()
    dist.destroy_process_group()

    print(f"rank {rank} weights {[round(v, 3) for v in flat.tolist()]}", flush=True)
    if spread > 1e-5:
        print(f"pytorch_ddp: ranks disagree on the weights (spread {spread})", file=sys.stderr)
        return 1
    if not mean_loss.item() < args.target_loss:
        print(f"pytorch_ddp: loss {mean_loss.item():.5f} did not reach {args.target_loss}",
              file=sys.stderr)
        return 1
    print(f"pytorch_ddp done: rank {rank}/{world} loss {mean_loss.item():.5f} < "
          f"{args.target_loss}", flush=True)
    return 0


if __name__ == "__main__":
    code = main()
    # The work is done and the process group destroyed, yet torch's C++ teardown can abort the
    # interpreter's exit ("terminate called without an active exception": gloo's threads; about
    # 1 exit in 25 on the test cluster with torch 2.15), turning a trained rank into exit 134
    # and the job into FAILED. Leave without running C++ static destructors.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
