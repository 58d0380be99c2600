"""DAGs of airflow_itest: a TensorFlow job then a PyTorch job on the real cluster (both
deferred), and a job that fails. TONY_EXAMPLES and TONY_TASK_PYTHON come from the test."""

import datetime
import os

from airflow import DAG

from libtony_airflow.operators import TonyJobOperator

EXAMPLES = os.environ.get("TONY_EXAMPLES", "/nonexistent")
PYTHON = os.environ.get("TONY_TASK_PYTHON", "python3")
START = datetime.datetime(2026, 1, 1)

with DAG("libtony_tf_then_pytorch", schedule=None, start_date=START, catchup=False):
    tf = TonyJobOperator(
        task_id="tensorflow", cluster_requirement="ps:1,worker:1", memory="1536m",
        script=os.path.join(EXAMPLES, "classic_ps_worker.py"),
        command=PYTHON + " $DTF_TASK_SCRIPT --steps 50", env={"ITEST": "airflow"})
    torch = TonyJobOperator(
        task_id="pytorch", framework="pytorch", cluster_requirement="worker:2",
        memory="1536m", script=os.path.join(EXAMPLES, "pytorch_ddp.py"),
        command=PYTHON + " $DTF_TASK_SCRIPT")
    tf >> torch

with DAG("libtony_failing", schedule=None, start_date=START, catchup=False):
    TonyJobOperator(task_id="fails", cluster_requirement="worker:1", memory=256,
                    command="echo 'libtony-airflow-boom' >&2; exit 3")
