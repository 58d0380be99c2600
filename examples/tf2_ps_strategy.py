#!/usr/bin/env python3
"""TensorFlow 2 ParameterServerStrategy driven by TF_CONFIG, as libtony sets it.

ps and worker tasks run tf.distribute servers; the chief is the coordinator: it schedules
training steps onto the workers, writes checkpoints and TensorBoard summaries under
DTF_OUTPUT_PATH (or --output) and exits, after which libtony stops the servers.

  ytf-submit -r ps:1,worker:2,chief:1 -m 1g -s tf2_ps_strategy.py -o /tmp/out \\
    'python3 ${DTF_TASK_SCRIPT}'
"""

import argparse
import json
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import tensorflow as tf  # noqa: E402


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--output", default=os.environ.get("DTF_OUTPUT_PATH"))
    p.add_argument("--steps", type=int, default=200)
    p.add_argument("--batch", type=int, default=64)
    return p.parse_args()


def serve(resolver):
    # Fail fast on a lost peer instead of retrying forever.
    os.environ["GRPC_FAIL_FAST"] = "use_caller"
    server = tf.distribute.Server(resolver.cluster_spec(), job_name=resolver.task_type,
                                  task_index=resolver.task_id,
                                  protocol=resolver.rpc_layer or "grpc", start=True)
    print(f"{resolver.task_type} {resolver.task_id} serving", flush=True)
    server.join()


def coordinate(resolver, args):
    strategy = tf.distribute.ParameterServerStrategy(resolver)
    coordinator = tf.distribute.coordinator.ClusterCoordinator(strategy)
    with strategy.scope():
        w = tf.Variable(tf.zeros([10, 1]), name="w")
        b = tf.Variable(tf.zeros([1]), name="b")
        step = tf.Variable(0, dtype=tf.int64, name="step")
    w_true = tf.reshape(tf.linspace(-1.0, 1.0, 10), [10, 1])

    def dataset_fn():
        # Generated data (no download): y = x . w_true + 0.3 + noise.
        x = tf.random.stateless_normal([8192, 10], seed=[1, 2])
        y = tf.matmul(x, w_true) + 0.3 + 0.01 * tf.random.stateless_normal([8192, 1], seed=[3, 4])
        return tf.data.Dataset.from_tensor_slices((x, y)).shuffle(8192).repeat().batch(args.batch)

    iterator = iter(coordinator.create_per_worker_dataset(dataset_fn))

    @tf.function
    def train_step(it):
        def replica_fn(batch):
            x, y = batch
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(tf.square(tf.matmul(x, w) + b - y))
            gw, gb = tape.gradient(loss, [w, b])
            w.assign_sub(0.05 * gw)
            b.assign_sub(0.05 * gb)
            step.assign_add(1)
            return loss
        return strategy.run(replica_fn, args=(next(it),))

    out = args.output or "."
    os.makedirs(out, exist_ok=True)
    writer = tf.summary.create_file_writer(os.path.join(out, "tensorboard"))
    checkpoint = tf.train.Checkpoint(w=w, b=b, step=step)
    manager = tf.train.CheckpointManager(checkpoint, os.path.join(out, "checkpoints"), 3)
    # A job resumed (ytf resume) or relaunched goes on from its last checkpoint.
    start = 0
    if manager.latest_checkpoint:
        checkpoint.restore(manager.latest_checkpoint)
        start = int(step.numpy())
        print(f"chief: resumed from {manager.latest_checkpoint} at step {start}", flush=True)
    first = last = None
    for i in range(start, args.steps):
        result = coordinator.schedule(train_step, args=(iterator,))
        if (i + 1) % 25 == 0 or i == 0:
            coordinator.join()
            last = float(result.fetch())
            first = last if first is None else first
            with writer.as_default():
                tf.summary.scalar("loss", last, step=i + 1)
            print(f"chief: step {i + 1}, loss {last:.4f}", flush=True)
        if (i + 1) % 100 == 0:
            manager.save(checkpoint_number=i + 1)
    coordinator.join()
    if start >= args.steps:
        print(f"chief done: the checkpoint is at step {start} already", flush=True)
        return 0
    manager.save(checkpoint_number=args.steps)
    writer.flush()
    losses = f"loss {first:.4f} -> {last:.4f}" if last is not None else "no loss printed"
    print(f"chief done: {losses}; checkpoints in {os.path.join(out, 'checkpoints')}",
          flush=True)
    return 0


def main():
    args = parse_args()
    if "TF_CONFIG" not in os.environ:
        sys.exit("TF_CONFIG is not set: run this under libtony (ytf-submit)")
    resolver = tf.distribute.cluster_resolver.TFConfigClusterResolver()
    print("TF_CONFIG task:", json.loads(os.environ["TF_CONFIG"])["task"], flush=True)
    if resolver.task_type in ("ps", "worker"):
        serve(resolver)
        return 0
    return coordinate(resolver, args)


if __name__ == "__main__":
    sys.exit(main())
