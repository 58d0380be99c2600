"""libtony: distributed TensorFlow and PyTorch jobs on Apache Hadoop YARN, from Python.

    import libtony
    spec = libtony.JobSpec(command="python train.py", job_types={"ps": 1, "worker": 2},
                           script_file="train.py")
    app = libtony.Submitter.yarn().submit(spec)
    print(app.wait(on_progress=print))

    results = libtony.run(train, 0.01, job_types={"worker": 2})  # fn in every task

The classes are bindings of libtony's C++ API (include/tony/); errors are libtony.errors'
exceptions, which carry the status code. Blocking calls release the GIL, and Ctrl-C ends a
``wait``. ``libtony.aio`` follows many applications from one asyncio loop. ``libtony.run``
runs a Python function in every task of a job and returns what each returned.
"""

from __future__ import annotations

import html as _html

from libtony import errors
from libtony._logging import dropped_log_lines, log_to_python, log_to_stderr
from libtony._run import run, submitter_run
from libtony._tony import (AddressChange, Application, ApplicationEvent, ApplicationMonitor,
                           ApplicationStatus, ApplicationSummary, AppState,
                           DependencyCondition, ElasticRange, Framework, JobSpec, JobTimeouts,
                           JobTypeProgress, JobTypeSpec, Resources, RestartPolicy, RestartScope,
                           RestartSpec, RoleDependency, Submitter, TaskLog, TaskSpec,
                           YamlDetail, __version__, reattach_tag)
from libtony.errors import TaskError, TonyError

__all__ = [
    "AddressChange", "Application", "ApplicationEvent", "ApplicationMonitor",
    "ApplicationStatus", "ApplicationSummary", "AppState", "DependencyCondition", "ElasticRange",
    "Framework", "JobSpec", "JobTimeouts", "JobTypeProgress", "JobTypeSpec", "Resources",
    "RestartPolicy", "RestartScope", "RestartSpec", "RoleDependency", "Submitter", "TaskLog",
    "TaskSpec", "TaskError", "TonyError", "YamlDetail", "dropped_log_lines", "errors",
    "log_to_python", "log_to_stderr", "reattach_tag", "run", "__version__",
]

_COLUMNS = ("total", "allocated", "registered", "running", "succeeded", "failed", "restarts")


def _status_html(status: ApplicationStatus) -> str:
    """A notebook's view of a status: the state line, then one row of task counts per role."""
    e = _html.escape
    head = f"<b>{e(status.id)}</b> {e(status.state.name)}"
    if status.tracking_url:
        head += f' (<a href="{e(status.tracking_url)}" target="_blank">tracking UI</a>)'
    rows = "".join(
        "<tr><td>" + e(role) + "</td>" +
        "".join(f"<td>{getattr(p, c)}</td>" for c in _COLUMNS) + "</tr>"
        for role, p in sorted(status.progress.items()))
    table = ("<table><tr><th>role</th>" + "".join(f"<th>{c}</th>" for c in _COLUMNS) +
             "</tr>" + rows + "</table>") if rows else ""
    extra = ""
    if status.pending:
        extra += f"<div>pending: {e(status.pending)}</div>"
    if status.wait_reason:
        extra += f"<div>why: {e(status.wait_reason)}</div>"
    if status.diagnostics:
        extra += f"<pre>{e(status.diagnostics)}</pre>"
    return f"<div>{head}{table}{extra}</div>"


ApplicationStatus._repr_html_ = _status_html
Submitter.run = submitter_run
