"""The operator's re-attach rules without a cluster: it adopts only a running application of
the connection's own user (even when a listing hands it another user's), and its tag is the
HMAC of the task instance keyed by the connection's reattach_secret (a short one is refused)."""

import hashlib
import hmac
import json
import os
import types

import libtony

from libtony_airflow.hooks import TonyHook
from libtony_airflow.operators import TonyJobOperator, submission_tag

RUNNING = libtony.AppState.RUNNING


class FakeSubmitter:  # list() answers as a ResourceManager that ignored the user filter
    def __init__(self, user, apps):
        self.user, self.apps, self.opened = user, apps, []

    def list(self, tags=(), timeout=None, all_users=False):
        assert not all_users, "the operator asked for every user's applications"
        return [a for a in self.apps if set(tags) <= set(a.tags)]

    def open(self, app_id, timeout=None):
        self.opened.append(app_id)
        return types.SimpleNamespace(id=app_id)


def app(app_id, user, tag, state=RUNNING):
    return types.SimpleNamespace(id=app_id, user=user, tags=[tag], state=state)


op = TonyJobOperator(task_id="train", command="true")
mallorys = app("application_1_0001", "mallory", "airflow-x")
s = FakeSubmitter("alice", [mallorys])
assert op._reattach(s, "airflow-x") is None and not s.opened, s.opened
s = FakeSubmitter("alice", [mallorys, app("application_1_0002", "alice", "airflow-x")])
assert op._reattach(s, "airflow-x").id == "application_1_0002"
s = FakeSubmitter("", [app("application_1_0003", "", "airflow-x")])  # user unknown: adopt none
assert op._reattach(s, "airflow-x") is None

ti = types.SimpleNamespace(dag_id="d", task_id="t", run_id="r", map_index=-1)
secret = "0123456789abcdef0123456789abcdef"
want = "airflow-" + hmac.new(secret.encode(), b"d/t/r/-1", hashlib.sha256).hexdigest()
assert submission_tag({"ti": ti}, secret) == want, submission_tag({"ti": ti}, secret)
assert submission_tag({"ti": ti}, "another secret of 32 characters.") != want
try:
    libtony.reattach_tag("d/t/r/-1", "short")
    raise AssertionError("a short secret was taken")
except ValueError as e:
    assert "at least 16" in str(e), e
# A short secret in the connection is refused, naming the extra, before anything is submitted.
os.environ["AIRFLOW_CONN_TONY_SHORT_SECRET"] = json.dumps(
    {"conn_type": "tony", "extra": {"reattach_secret": "short"}})
try:
    TonyHook("tony_short_secret").reattach_secret()
    raise AssertionError("a short reattach_secret was taken")
except ValueError as e:
    assert "extra reattach_secret" in str(e) and "at least 16" in str(e), e
print("reattach_unit: ok")
