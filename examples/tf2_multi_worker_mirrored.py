#!/usr/bin/env python3
"""TensorFlow 2 MultiWorkerMirroredStrategy driven by TF_CONFIG, as libtony sets it.

Every worker holds a copy of the model and trains on its own shard of generated data (no
download); each step all-reduces the gradients over the workers (collective ops over gRPC), so
the copies stay equal. Exits 1 unless the loss averaged over the workers falls below
--target_loss.

  ytf-submit -r worker:2 -m 1g -s tf2_multi_worker_mirrored.py 'python3 ${DTF_TASK_SCRIPT}'
"""

import argparse
import json
import os
import socket
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import tensorflow as tf  # noqa: E402


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--steps", type=int, default=200)
    p.add_argument("--lr", type=float, default=0.1)
    p.add_argument("--target_loss", type=float, default=0.01)
    args = p.parse_args()

    if "TF_CONFIG" not in os.environ:
        print("tf2_multi_worker_mirrored: TF_CONFIG is not set (run with ytf-submit)",
              file=sys.stderr)
        return 2
    task = json.loads(os.environ["TF_CONFIG"])["task"]
    strategy = tf.distribute.MultiWorkerMirroredStrategy()
    workers = strategy.num_replicas_in_sync
    print(f"{task['type']} {task['index']} on {os.environ.get('NM_HOST', socket.gethostname())}: "
          f"{workers} replicas in sync", flush=True)

    with strategy.scope():
        w = tf.Variable(tf.zeros([10, 1]), name="w")
        b = tf.Variable(tf.zeros([1]), name="b")
    w_true = tf.reshape(tf.linspace(-1.0, 1.0, 10), [10, 1])
    # This worker's shard: y = x . w_true + 0.3 + noise, seeded by the task.
    seed = 7 + task["index"]
    x = tf.random.stateless_normal([512, 10], seed=[seed, 1])
    y = tf.matmul(x, w_true) + 0.3 + 0.01 * tf.random.stateless_normal([512, 1], seed=[seed, 2])

    @tf.function
    def train_step():
        def replica_fn():
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(tf.square(tf.matmul(x, w) + b - y))
            gw, gb = tape.gradient(loss, [w, b])
            return loss, gw, gb

        loss, gw, gb = strategy.run(replica_fn)
        # Collective all-reduces over every worker: the same update everywhere.
        loss = strategy.reduce(tf.distribute.ReduceOp.MEAN, loss, axis=None)
        gw = strategy.reduce(tf.distribute.ReduceOp.MEAN, gw, axis=None)
        gb = strategy.reduce(tf.distribute.ReduceOp.MEAN, gb, axis=None)
        w.assign_sub(args.lr * gw)
        b.assign_sub(args.lr * gb)
        return loss

    loss = float("inf")
    for step in range(args.steps):
        loss = float(train_step())
        if step % 50 == 0:
            print(f"step {step} loss {loss:.5f}", flush=True)

    if not loss < args.target_loss:
        print(f"tf2_multi_worker_mirrored: loss {loss:.5f} did not reach {args.target_loss}",
              file=sys.stderr)
        return 1
    print(f"tf2_multi_worker_mirrored done: {task['type']} {task['index']} of {workers}, "
          f"loss {loss:.5f} < {args.target_loss}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
