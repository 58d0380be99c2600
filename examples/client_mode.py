#!/usr/bin/env python3
"""Client mode (the seed design's "Client-mode"): in-graph replication driven from your machine.

The ps and worker tasks only serve; the client task, which `ytf-submit --client` runs on the
submitting machine once every task has registered, builds one graph whose variables live on the
parameter server and whose training steps run on the workers in turn, and drives it through a
session on worker 0. The client's exit decides the job's outcome; the servers are then stopped.

  ytf-submit --client -r ps:1,worker:2 -m 1g -s client_mode.py 'python3 ${DTF_TASK_SCRIPT}'
"""

import argparse
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import tensorflow as tf  # noqa: E402

tf1 = tf.compat.v1


def cluster_from_env():
    jobs = {}
    for name in ("ps", "worker"):
        hosts = os.environ.get(f"DTF_{name.upper()}_HOSTS", "")
        if hosts:
            jobs[name] = hosts.split(",")
    return jobs


def serve(cluster, job, index):
    server = tf.distribute.Server(tf.train.ClusterSpec(cluster), job_name=job, task_index=index)
    print(f"{job} {index} serving at {cluster[job][index]}", flush=True)
    server.join()  # until the ApplicationMaster stops the task


def drive(cluster, steps):
    tf1.disable_eager_execution()
    # y = 3x + 2 learned from generated data: the variables on ps 0, the steps on every worker.
    with tf.device("/job:ps/task:0"):
        w = tf1.get_variable("w", initializer=0.0)
        b = tf1.get_variable("b", initializer=0.0)
    train_ops = []
    for i in range(len(cluster["worker"])):
        with tf.device(f"/job:worker/task:{i}"):
            x = tf.random.uniform([256])
            y = 3.0 * x + 2.0 + tf.random.normal([256], stddev=0.05)
            loss = tf.reduce_mean(tf.square(w * x + b - y))
            train_ops.append((loss, tf1.train.GradientDescentOptimizer(0.5).minimize(loss)))
    first = None
    with tf1.Session(f"grpc://{cluster['worker'][0]}") as sess:
        sess.run(tf1.global_variables_initializer())
        for step in range(steps):
            loss_value, _ = sess.run(train_ops[step % len(train_ops)])
            first = loss_value if first is None else first
            if step % 50 == 0:
                print(f"client step {step}: loss {loss_value:.4f}", flush=True)
        w_value, b_value = sess.run([w, b])
    print(f"client done: loss {first:.4f} -> {loss_value:.4f}, w {w_value:.2f}, b {b_value:.2f}",
          flush=True)
    return 0 if loss_value < first else 1


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--steps", type=int, default=200)
    args = parser.parse_args()
    cluster = cluster_from_env()
    job = os.environ["DTF_TASK_JOB_NAME"]
    if job == "client":
        return drive(cluster, args.steps)
    serve(cluster, job, int(os.environ["DTF_TASK_INDEX"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
