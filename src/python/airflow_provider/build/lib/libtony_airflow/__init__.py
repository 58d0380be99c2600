"""Apache Airflow provider for libtony: run distributed TensorFlow and PyTorch jobs on YARN.

    from libtony_airflow.operators import TonyJobOperator

    train = TonyJobOperator(task_id="train", cluster_requirement="ps:1,worker:2",
                            command="python3 $DTF_TASK_SCRIPT", script="train.py")
"""

__version__ = "0.1.0"


def get_provider_info():
    """What Airflow's provider manager reads (entry point apache_airflow_provider)."""
    return {
        "package-name": "libtony-airflow",
        "name": "libtony",
        "description": "Distributed TensorFlow and PyTorch jobs on Apache Hadoop YARN (libtony).",
        "versions": [__version__],
        "connection-types": [{
            "hook-class-name": "libtony_airflow.hooks.TonyHook",
            "connection-type": "tony",
        }],
        "extra-links": ["libtony_airflow.operators.TonyTrackingLink"],
    }
