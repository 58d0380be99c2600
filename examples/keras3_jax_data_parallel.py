# Copyright libtony authors.
#
# Keras 3 on the JAX backend, data parallel across processes (one per task, CPU, gloo):
#
#   ytf-submit --framework jax -r worker:2 -m 2g -s examples/keras3_jax_data_parallel.py \
#     'python3 ${DTF_TASK_SCRIPT}'
#
# keras.distribution.initialize() takes no argument: it reads KERAS_DISTRIBUTION_JOB_ADDRESSES,
# _NUM_PROCESSES and _PROCESS_ID, which libtony sets for jax jobs (docs/task-environment.md#jax).
# keras.distribution.DataParallel replicates the model over every process's devices and splits
# each global batch between them: each process feeds its own shard of generated data (no
# download), the gradients are averaged across processes. Exits 1 unless the loss falls below
# --target_loss and the weights every process ends with agree.
import argparse
import os
import socket
import sys

os.environ.setdefault("KERAS_BACKEND", "jax")

import jax  # noqa: E402

jax.config.update("jax_cpu_collectives_implementation", "gloo")

import keras  # noqa: E402
import numpy as np  # noqa: E402
from jax.experimental import multihost_utils  # noqa: E402

TRUE_W = np.array([[2.0], [-3.0], [0.5]], dtype="float32")
TRUE_B = 1.0


def shard(process_id, n):
    rng = np.random.default_rng(1234 + process_id)
    x = rng.normal(size=(n, TRUE_W.shape[0])).astype("float32")
    y = x @ TRUE_W + TRUE_B + 0.01 * rng.normal(size=(n, 1)).astype("float32")
    return x, y


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--epochs", type=int, default=20)
    p.add_argument("--target_loss", type=float, default=0.01)
    args = p.parse_args()

    keras.distribution.initialize()
    pid, count = jax.process_index(), jax.process_count()
    node = os.environ.get("NM_HOST", socket.gethostname())
    devices = keras.distribution.list_devices()
    print(f"keras3_jax: process {pid}/{count} on {node}, {len(devices)} devices: {devices}",
          flush=True)
    # Each process already has its own shard (below): Keras must not split it again.
    keras.distribution.set_distribution(
        keras.distribution.DataParallel(devices=devices, auto_shard_dataset=False))

    keras.utils.set_random_seed(0)  # the same initial weights in every process
    model = keras.Sequential([keras.Input(shape=(TRUE_W.shape[0],)), keras.layers.Dense(1)])
    model.compile(optimizer=keras.optimizers.SGD(learning_rate=0.1), loss="mse")
    # Each process's batch of 32 is its part of the global batch (32 * count rows).
    x, y = shard(pid, 256)
    history = model.fit(x, y, batch_size=32, epochs=args.epochs, shuffle=False, verbose=0)
    loss = float(history.history["loss"][-1])

    kernel = np.asarray(model.layers[0].kernel.value).ravel()
    every = multihost_utils.process_allgather(kernel)
    agree = bool(np.allclose(every, every[0], atol=1e-6))
    ok = loss < args.target_loss and agree
    print(f"keras3_jax {'done' if ok else 'FAILED'}: process {pid}/{count} loss {loss:.5f} "
          f"weights {np.round(kernel, 3).tolist()} agree {agree}", flush=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
