#!/usr/bin/env python3
"""The seed design's classic distributed TensorFlow job: between-graph replication.

Parameter servers hold the variables; every worker trains on its own generated data and worker 0
(the chief) writes checkpoints and TensorBoard summaries. Flags default to the DTF_* variables
that libtony's executor sets, so both of these work:

  ytf-submit -r ps:1,worker:2 -m 1g -s classic_ps_worker.py -o /tmp/out 'python3 ${DTF_TASK_SCRIPT}'
  ytf-submit -r ps:1,worker:2 -m 1g -s classic_ps_worker.py -o /tmp/out \\
    'python3 ${DTF_TASK_SCRIPT} --job_name ${DTF_TASK_JOB_NAME} --task_index ${DTF_TASK_INDEX} \\
     --ps_hosts ${DTF_PS_HOSTS} --worker_hosts ${DTF_WORKER_HOSTS} --train_dir ${DTF_OUTPUT_PATH}'
"""

import argparse
import os
import sys

import numpy as np

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import tensorflow as tf  # noqa: E402

tf1 = tf.compat.v1


def _poll_chief_every_second():
    # Non-chief workers wait for the chief to initialise the variables; TF1 checks every 30 s,
    # which would dominate a short job.
    from tensorflow.python.training import session_manager
    init = session_manager.SessionManager.__init__

    def patched(self, *args, **kwargs):
        kwargs["recovery_wait_secs"] = 1
        init(self, *args, **kwargs)
    session_manager.SessionManager.__init__ = patched


def parse_args():
    env = os.environ.get
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--job_name", default=env("DTF_TASK_JOB_NAME"))
    p.add_argument("--task_index", type=int, default=int(env("DTF_TASK_INDEX", "0")))
    p.add_argument("--ps_hosts", default=env("DTF_PS_HOSTS"))
    p.add_argument("--worker_hosts", default=env("DTF_WORKER_HOSTS"))
    p.add_argument("--train_dir", default=env("DTF_OUTPUT_PATH"))
    p.add_argument("--steps", type=int, default=200, help="global steps to train")
    args = p.parse_args()
    for name in ("job_name", "ps_hosts", "worker_hosts"):
        if not getattr(args, name):
            p.error(f"--{name} is required (or run under libtony, which sets DTF_*)")
    return args


def main():
    args = parse_args()
    cluster = tf.train.ClusterSpec(
        {"ps": args.ps_hosts.split(","), "worker": args.worker_hosts.split(",")})
    server = tf.distribute.Server(cluster, job_name=args.job_name, task_index=args.task_index)
    if args.job_name == "ps":
        print(f"ps {args.task_index} serving on {cluster.task_address('ps', args.task_index)}",
              flush=True)
        server.join()  # libtony stops untracked ps tasks once the workers are done
        return 0

    tf1.disable_eager_execution()
    _poll_chief_every_second()
    is_chief = args.task_index == 0
    # Generated data (no download): y = x . w_true + 0.3 + noise, a different slice per worker.
    rng = np.random.default_rng(seed=args.task_index)
    w_true = np.linspace(-1.0, 1.0, 10, dtype=np.float32).reshape(10, 1)
    x_data = rng.normal(size=(4096, 10)).astype(np.float32)
    y_data = x_data @ w_true + 0.3 + 0.01 * rng.normal(size=(4096, 1)).astype(np.float32)

    worker_device = f"/job:worker/task:{args.task_index}"
    with tf1.device(tf1.train.replica_device_setter(worker_device=worker_device, cluster=cluster)):
        global_step = tf1.train.get_or_create_global_step()
        x = tf1.placeholder(tf.float32, [None, 10])
        y = tf1.placeholder(tf.float32, [None, 1])
        w = tf1.get_variable("w", [10, 1], initializer=tf1.zeros_initializer())
        b = tf1.get_variable("b", [1], initializer=tf1.zeros_initializer())
        loss = tf.reduce_mean(tf.square(tf.matmul(x, w) + b - y))
        tf1.summary.scalar("loss", loss)
        train_op = tf1.train.GradientDescentOptimizer(0.05).minimize(loss, global_step=global_step)

    config = tf1.ConfigProto(device_filters=["/job:ps", worker_device])
    hooks = [tf1.train.StopAtStepHook(last_step=args.steps)]
    first_loss = last_loss = None
    with tf1.train.MonitoredTrainingSession(
            master=server.target, is_chief=is_chief, config=config, hooks=hooks,
            checkpoint_dir=args.train_dir if is_chief else None,
            save_checkpoint_steps=50, save_summaries_steps=10) as sess:
        i = 0
        while not sess.should_stop():
            lo = (i * 64) % len(x_data)
            _, step, last_loss = sess.run([train_op, global_step, loss],
                                          {x: x_data[lo:lo + 64], y: y_data[lo:lo + 64]})
            if first_loss is None:
                first_loss = last_loss
            if i % 25 == 0:
                print(f"worker {args.task_index}: global step {step}, loss {last_loss:.4f}",
                      flush=True)
            i += 1
    print(f"worker {args.task_index} done: loss {first_loss:.4f} -> {last_loss:.4f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
