"""TonyJobOperator: runs one libtony job and succeeds or fails with it.

Deferrable by default: once the job is submitted the worker slot is freed, and TonyJobTrigger
follows the application in the triggerer. Retries are idempotent: every submission carries a
YARN tag made from the DAG, task, run and map index (an HMAC keyed by the connection's
``reattach_secret``), and a retried task re-attaches to a still-running application of the
connection's own user with that tag instead of submitting a second one.
"""

from __future__ import annotations

import copy
import hashlib
import re
from typing import Any, Dict, List, Optional, Sequence, Union

import libtony

from libtony_airflow._compat import AirflowException, BaseOperator, BaseOperatorLink, XCom
from libtony_airflow.hooks import TonyHook, submitter_from_options
from libtony_airflow.triggers import TonyJobTrigger, status_event

_TASK_RE = re.compile(r"\b([a-z][a-z0-9_]*:[0-9]+)\b")
_MEMORY_RE = re.compile(r"^\s*([0-9]+)\s*([mMgGtT]?)[bB]?\s*$")


class TonyTrackingLink(BaseOperatorLink):
    """The application's tracking URL (YARN's proxy to the ApplicationMaster's page)."""

    name = "YARN application"

    def get_link(self, operator: BaseOperator, *, ti_key: Any) -> str:
        return XCom.get_value(ti_key=ti_key, key="tracking_url") or ""


def submission_tag(context: Dict[str, Any], secret: Optional[str] = None) -> str:
    """The YARN tag of this task's submissions: the same for every try of one task instance.
    With `secret` an HMAC of the task instance that nobody without the secret can compute;
    without, a plain hash that anyone can (then only the owner check keeps another user's
    application from being adopted)."""
    ti = context["ti"]
    key = f"{ti.dag_id}/{ti.task_id}/{ti.run_id}/{getattr(ti, 'map_index', -1)}"
    if secret:
        return libtony.reattach_tag(key, secret, prefix="airflow-")
    return "airflow-" + hashlib.sha256(key.encode()).hexdigest()[:24]


def memory_mb(value: Union[int, str], what: str) -> int:
    if isinstance(value, int) and not isinstance(value, bool) and value > 0:
        return value
    match = _MEMORY_RE.match(str(value))
    if not match or int(match.group(1)) <= 0:
        raise ValueError(f"{what}: expected megabytes or a size like '4g', got {value!r}")
    return int(match.group(1)) * {"": 1, "m": 1, "g": 1024, "t": 1024 * 1024}[
        match.group(2).lower()]


class TonyJobOperator(BaseOperator):
    """Runs a libtony job: from a JobSpec (or its keyword arguments as a dict), a YAML file, or
    ytf-submit's options as keyword arguments (which also override the first two)."""

    template_fields: Sequence[str] = ("command", "spec_yaml_path", "env", "name", "script")
    operator_extra_links = (TonyTrackingLink(),)
    ui_color = "#e9c46a"

    def __init__(self, *, spec: Union[libtony.JobSpec, Dict[str, Any], None] = None,
                 spec_yaml_path: Optional[str] = None,
                 cluster_requirement: Optional[str] = None, command: Optional[str] = None,
                 script: Optional[str] = None, framework: Optional[str] = None,
                 memory: Union[int, str, Dict[str, Union[int, str]], None] = None,
                 vcores: Optional[int] = None, env: Optional[Dict[str, str]] = None,
                 files: Optional[List[str]] = None, python_env: Optional[str] = None,
                 name: Optional[str] = None, queue: Optional[str] = None,
                 tony_conn_id: str = TonyHook.default_conn_name, deferrable: bool = True,
                 job_timeout: Optional[float] = None, log_tail_lines: int = 50,
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.spec = spec
        self.spec_yaml_path = spec_yaml_path
        self.cluster_requirement = cluster_requirement
        self.command = command
        self.script = script
        self.framework = framework
        self.memory = memory
        self.vcores = vcores
        self.env = env or {}
        self.files = files or []
        self.python_env = python_env
        self.name = name
        self.queue = queue
        self.tony_conn_id = tony_conn_id
        self.deferrable = deferrable
        self.job_timeout = job_timeout
        self.log_tail_lines = log_tail_lines
        self._app: Optional[libtony.Application] = None

    # --- the job --------------------------------------------------------------------------
    def build_spec(self) -> libtony.JobSpec:
        """The JobSpec this operator submits (ValueError/TypeError naming a bad field)."""
        if isinstance(self.spec, libtony.JobSpec):
            spec = copy.copy(self.spec)
        elif isinstance(self.spec, dict):
            spec = libtony.JobSpec(**self.spec)
        elif self.spec_yaml_path:
            spec = libtony.JobSpec.load(self.spec_yaml_path)
        else:
            spec = libtony.JobSpec()
        if self.cluster_requirement:
            for item in self.cluster_requirement.split(","):
                role, _, count = item.strip().partition(":")
                if not count.isdigit():
                    raise ValueError(f"cluster_requirement: expected 'ps:1,worker:2', got "
                                     f"{self.cluster_requirement!r}")
                found = [t for t in spec.job_types if t.name == role]
                if found:
                    found[0].instances = int(count)
                else:
                    spec.job_types.append(libtony.JobTypeSpec(role, instances=int(count)))
        self._apply_fields(spec)
        spec.validate()
        return spec

    def _apply_fields(self, spec: libtony.JobSpec) -> None:
        if self.command:
            spec.command = self.command
        if self.script:
            spec.script_file = self.script
        if self.framework:
            spec.framework = self.framework
        if self.python_env:
            spec.python_env = self.python_env
        if self.queue:
            spec.queue = self.queue
        spec.name = self.name or (spec.name if spec.name != "TensorFlow" else
                                  f"{self.dag_id}.{self.task_id}")
        for key, value in self.env.items():
            spec.env[key] = value
        for f in self.files:
            spec.files.append(f)
        if isinstance(self.memory, dict):
            for role, value in self.memory.items():
                for t in spec.job_types:
                    if t.name == role:
                        t.resources.memory_mb = memory_mb(value, f"memory[{role}]")
        elif self.memory is not None:
            spec.task_defaults.memory_mb = memory_mb(self.memory, "memory")
        if self.vcores is not None:
            spec.task_defaults.vcores = self.vcores

    # --- Airflow's entry points -----------------------------------------------------------
    def execute(self, context: Dict[str, Any]) -> Any:
        hook = TonyHook(self.tony_conn_id)
        options = hook.submitter_options()
        secret = hook.reattach_secret()
        if not secret:
            self.log.warning(
                "connection %s has no extra 'reattach_secret': this task's tag is one anyone can "
                "compute, and only the owner check guards re-attaching (set one, e.g. the output "
                "of `openssl rand -hex 32`)", self.tony_conn_id)
        submitter = submitter_from_options(options)
        tag = submission_tag(context, secret)
        app = self._reattach(submitter, tag) or self._submit(submitter, tag)
        self._app = app
        ti = context["ti"]
        ti.xcom_push(key="app_id", value=app.id)
        status = app.status(timeout=60)
        ti.xcom_push(key="tracking_url", value=status.tracking_url)
        self.log.info("%s: %s (tracking URL %s)", app.id, status.state.name,
                      status.tracking_url or "none yet")
        if self.deferrable:
            self.defer(trigger=TonyJobTrigger(app.id, options, self.job_timeout),
                       method_name="execute_complete")
        final = app.wait(timeout=self.job_timeout, on_progress=self._log_progress)
        return self._finish(submitter, status_event(app.id, final))

    def execute_complete(self, context: Dict[str, Any], event: Dict[str, Any]) -> Any:
        submitter = TonyHook(self.tony_conn_id).get_conn()
        return self._finish(submitter, event)

    def on_kill(self) -> None:
        if self._app is not None:
            self.log.info("killing %s", self._app.id)
            self._app.kill(timeout=120)

    # --- helpers --------------------------------------------------------------------------
    def _reattach(self, submitter: libtony.Submitter, tag: str) -> Optional[libtony.Application]:
        try:  # the connection's user's applications only (list's default)
            found = submitter.list(tags=[tag], timeout=60)
        except libtony.errors.UnimplementedError:  # the local backend: its jobs die with it
            return None
        me = submitter.user
        running = []
        for a in found:
            if a.state.final:
                continue
            if not me or a.user != me:  # a tag is anyone's to give: never adopt another's
                self.log.warning("not re-attaching to %s: it carries this task's tag but belongs "
                                 "to user %r, not %r", a.id, a.user, me)
                continue
            running.append(a)
        if not running:
            return None
        self.log.info("re-attaching to %s, submitted by an earlier try (tag %s)", running[0].id,
                      tag)
        return submitter.open(running[0].id, timeout=60)

    def _submit(self, submitter: libtony.Submitter, tag: str) -> libtony.Application:
        spec = self.build_spec()
        spec.tags.append(tag)
        app = submitter.submit(spec)
        self.log.info("submitted %s (tag %s)", app.id, tag)
        return app

    def _log_progress(self, status: libtony.ApplicationStatus) -> None:
        counts = ", ".join(f"{role} {p.running}/{p.total} running"
                           for role, p in sorted(status.progress.items()))
        self.log.info("%s: %s %s", status.id, status.state.name, counts)

    def _finish(self, submitter: libtony.Submitter, event: Dict[str, Any]) -> str:
        app_id, state = event["app_id"], event["state"]
        if state == "SUCCEEDED":
            self.log.info("%s SUCCEEDED", app_id)
            return app_id
        diagnostics = event.get("diagnostics") or event.get("error") or ""
        self.log.error("%s ended %s: %s", app_id, state, diagnostics)
        for task in sorted(set(_TASK_RE.findall(diagnostics))):
            try:
                text = submitter.read_log(app_id, task, "stderr", timeout=60)
            except libtony.TonyError as e:
                self.log.warning("no stderr of %s: %s", task, e)
                continue
            tail = "\n".join(text.splitlines()[-self.log_tail_lines:])
            self.log.error("stderr of %s (last %d lines):\n%s", task, self.log_tail_lines, tail)
        raise AirflowException(f"libtony job {app_id} ended {state}: {diagnostics}")
