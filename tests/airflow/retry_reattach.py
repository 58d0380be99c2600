"""A retried TonyJobOperator re-attaches to the application of its earlier try (same tag)
instead of submitting a second one: two tries of one task instance, each deferring. An
application another user ("mallory", SIMPLE authentication's user name) submitted with the
task's tag before the first try is never adopted, though she knew the tag."""

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


hook = TonyHook()
secret = hook.reattach_secret()
assert secret, "run_airflow_itest.sh gives the connection a reattach_secret"
tag = submission_tag({"ti": FakeTi(1)}, secret)
assert tag == tag.lower() and len(tag) <= 100 and tag.startswith("airflow-"), tag
assert tag != submission_tag({"ti": FakeTi(1)}), "the secret does not change the tag"

# mallory submits first with the task's tag (as if she had the secret: the owner check alone
# must keep the operator from adopting hers).
options = dict(hook.submitter_options(), user="mallory")
options.pop("backend", None)
mallory = libtony.Submitter.yarn(**options)
assert mallory.user == "mallory"
squat_spec = libtony.JobSpec(name="libtony_retry.squat", command="sleep 600",
                             job_types={"worker": 1}, am_memory_mb=256,
                             task_defaults=libtony.Resources(memory_mb=256))
squat_spec.tags.append(tag)
squat = mallory.submit(squat_spec)
try:
    first, _ = one_try(1)
    assert first != squat.id, f"the first try adopted mallory's {squat.id}"
    second, deferred = one_try(2)  # the first try "crashed"; its application still runs
    assert first == second, (first, second)
    assert deferred.trigger.app_id == first
    submitter = hook.get_conn()
    apps = submitter.list(tags=[tag], include_finished=True)
    assert [a.id for a in apps] == [first], apps
    assert apps[0].user == submitter.user, (apps[0].user, submitter.user)
    everyone = submitter.list(tags=[tag], include_finished=True, all_users=True)
    assert sorted(a.id for a in everyone) == sorted([first, squat.id]), everyone
    submitter.open(first).kill()
finally:
    squat.kill()
print(f"retry re-attached to {first}, not to mallory's {squat.id}; the ResourceManager shows "
      f"one application of this user with {tag}")
