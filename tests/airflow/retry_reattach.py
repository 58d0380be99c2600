"""A retried TonyJobOperator re-attaches to the application of its earlier try (same tag)
instead of submitting a second one: two tries of one task instance, each deferring."""

import sys
import types

import libtony
try:
    from airflow.sdk.exceptions import TaskDeferred
except ImportError:  # Airflow 2
    from airflow.exceptions import TaskDeferred

from libtony_airflow.hooks import TonyHook
from libtony_airflow.operators import TonyJobOperator, submission_tag


class FakeTi:  # the parts of a TaskInstance the operator uses
    def __init__(self, try_number):
        self.dag_id, self.task_id, self.run_id = "libtony_retry", "train", f"manual__{sys.argv[1]}"
        self.map_index, self.try_number, self.xcom = -1, try_number, {}

    def xcom_push(self, key, value):
        self.xcom[key] = value


def one_try(try_number):
    op = TonyJobOperator(task_id="train", cluster_requirement="worker:1", memory=256,
                         command="sleep 600")
    ti = FakeTi(try_number)
    try:
        op.execute({"ti": ti})
    except TaskDeferred as deferred:
        return ti.xcom["app_id"], deferred
    raise AssertionError("the operator did not defer")


first, _ = one_try(1)
second, deferred = one_try(2)  # the first try "crashed"; its application still runs
assert first == second, (first, second)
assert deferred.trigger.app_id == first
submitter = TonyHook().get_conn()
tag = submission_tag({"ti": FakeTi(1)})
apps = submitter.list(tags=[tag], include_finished=True)
assert [a.id for a in apps] == [first], apps
submitter.open(first).kill()
print(f"retry re-attached to {first}; the ResourceManager shows one application with {tag}")
