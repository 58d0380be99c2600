# Copyright libtony authors.
#
# An mpi4py allreduce over the ranks of an MPI job, one rank per task, started by mpirun in the
# launcher task with no SSH (docs/mpi.md):
#
#   ytf-submit --framework mpi -r launcher:1,worker:2 -m 2g -s examples/mpi_allreduce.py \
#     'mpirun python3 ${DTF_TASK_SCRIPT}'
#
# mpirun needs no --host or -np: libtony gives it the workers (TONY_MPI_HOSTS, one slot each).
# Each rank contributes 10 ** rank, so the decimal digits of the sum show that every rank took
# part; a wrong sum exits 1. --kill_rank R makes rank R SIGKILL itself before the allreduce: a
# test that a lost rank fails the job.
import argparse
import os
import signal
import socket
import sys

from mpi4py import MPI


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--kill_rank", type=int, default=-1)
    args = parser.parse_args()
    comm = MPI.COMM_WORLD
    rank, size = comm.Get_rank(), comm.Get_size()
    task = f"{os.environ.get('DTF_TASK_JOB_NAME')}:{os.environ.get('DTF_TASK_INDEX')}"
    node = os.environ.get("NM_HOST", socket.gethostname())
    print(f"mpi_allreduce: rank {rank}/{size} on {node}, task {task}", flush=True)
    if rank == args.kill_rank:
        print(f"mpi_allreduce: rank {rank} kills itself", flush=True)
        os.kill(os.getpid(), signal.SIGKILL)
    total = comm.allreduce(10**rank, op=MPI.SUM)
    want = sum(10**r for r in range(size))
    print(f"mpi_allreduce done: rank {rank}/{size} total {total} (want {want})", flush=True)
    return 0 if total == want else 1


if __name__ == "__main__":
    sys.exit(main())
