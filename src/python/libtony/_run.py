"""libtony.run: a Python function as a job. The function and its arguments are pickled with
cloudpickle into a file shipped with the job; every task runs _run_fn.py (shipped too) under the
task's Python, which calls the function and leaves its return value in the task's log directory
as the file ``libtony-run-result``, read back here through Application.logs.

Not thread-safe per call (each call has its own state); calls in different threads are fine.
"""

from __future__ import annotations

import os
import pickle
import re
import shlex
import shutil
import tempfile
from typing import Any, Callable, Dict, Optional, Sequence, Union

from libtony import _run_fn, errors
from libtony._tony import Application, ApplicationStatus, AppState, JobSpec, Submitter

BOOTSTRAP = "libtony_run_fn.py"
PAYLOAD = "libtony_run_fn.pkl"
Progress = Union[bool, Callable[[ApplicationStatus], None], None]


class Prepared:
    """A job ready to submit: its spec, the directory holding the files it ships (kept until
    the job is over: the local backend copies them when a task starts) and the key its tasks
    sign their records with."""

    def __init__(self, spec: JobSpec, workdir: str, key: bytes) -> None:
        self.spec = spec
        self.workdir = workdir
        self.key = key

    def close(self) -> None:
        shutil.rmtree(self.workdir, ignore_errors=True)


def _dumps(what: str, obj: Any) -> bytes:
    import cloudpickle
    try:
        return cloudpickle.dumps(obj)
    except Exception as e:
        raise TypeError(f"libtony.run: cannot pickle {what}: {type(e).__name__}: {e}") from e


def _pickle_payload(fn: Callable, args: Sequence, kwargs: Dict[str, Any]) -> bytes:
    """The payload; a part that cannot be pickled is named (TypeError) before any submission."""
    if not callable(fn):
        raise TypeError(f"libtony.run: fn must be callable, got {type(fn).__name__}")
    name = getattr(fn, "__qualname__", repr(fn))
    try:
        return _dumps(f"the call of {name}", (fn, tuple(args), dict(kwargs)))
    except TypeError:
        # Which part: pickled one by one only now, so that a large argument is pickled once.
        _dumps(f"the function {name}", fn)
        for i, a in enumerate(args):
            _dumps(f"argument {i} ({type(a).__name__}) of {name}", a)
        for k, v in kwargs.items():
            _dumps(f"keyword argument {k!r} ({type(v).__name__}) of {name}", v)
        raise


def prepare(fn: Callable, args: Sequence, kwargs: Dict[str, Any], job_types: Any,
            framework: Optional[str], python: str, spec_fields: Dict[str, Any]) -> Prepared:
    if "command" in spec_fields:
        raise ValueError("libtony.run: command: libtony.run sets the command (it runs fn); "
                         "choose the interpreter with python=")
    payload = _pickle_payload(fn, args, kwargs)
    fields = dict(spec_fields)
    fn_name = re.sub(r"[^\w.-]", "_", getattr(fn, "__name__", "fn"))
    fields.setdefault("name", f"libtony-run-{fn_name}")
    if framework is not None:
        fields["framework"] = framework
    workdir = tempfile.mkdtemp(prefix="libtony-run-")
    try:
        bootstrap = os.path.join(workdir, BOOTSTRAP)
        shutil.copyfile(_run_fn.__file__, bootstrap)
        key = os.urandom(_run_fn.KEY_BYTES)
        with open(os.path.join(workdir, PAYLOAD), "wb") as f:
            os.fchmod(f.fileno(), 0o600)  # the key: the job's user's only
            f.write(key + payload)
        fields["files"] = list(fields.get("files", [])) + [bootstrap, f.name]
        fields["command"] = f"{shlex.quote(python)} {BOOTSTRAP} {PAYLOAD}"
        spec = JobSpec(job_types=job_types if job_types is not None else {"worker": 1}, **fields)
        for t in spec.job_types:
            if t.command:
                raise ValueError(f"libtony.run: job_types.{t.name}.command: libtony.run runs fn "
                                 "in every task; leave the job type's command unset")
        return Prepared(spec, workdir, key)
    except BaseException:
        shutil.rmtree(workdir, ignore_errors=True)
        raise


class ProgressPrinter:
    """One line per change of state or task counts (a notebook's output, not a flood); or every
    status to the caller's callable."""

    def __init__(self, progress: Progress) -> None:
        self._callback = progress if callable(progress) else None
        self._printing = bool(progress) and self._callback is None
        self._last = None

    @staticmethod
    def line(status: ApplicationStatus) -> str:
        roles = []
        for role, p in sorted(status.progress.items()):
            parts = [f"{n} {what}" for what, n in (("running", p.running),
                                                   ("succeeded", p.succeeded),
                                                   ("failed", p.failed),
                                                   ("restarts", p.restarts)) if n]
            roles.append(f"{role} ({p.total}): " + (", ".join(parts) if parts else "waiting"))
        return f"{status.id} {status.state.name}" + ("; " + "; ".join(roles) if roles else "")

    def submitted(self, app: Application, spec: JobSpec) -> None:
        if self._printing:
            print(f"libtony.run: submitted {app.id} ({spec.total_tasks()} tasks)", flush=True)

    def __call__(self, status: ApplicationStatus) -> None:
        if self._callback is not None:
            self._callback(status)
        elif self._printing:
            line = self.line(status)
            if line != self._last:
                self._last = line
                print(line, flush=True)


def open_record(key: bytes, task: str, text: str) -> dict:
    """The record a task wrote; DataLossError, with nothing unpickled, unless it is signed with
    this run's key (the NodeManager serves it over plain HTTP)."""
    data = _run_fn.verify(key, text)
    if data is None:
        raise errors.DataLossError(
            f"libtony.run: the result file of {task} is not signed by this run's tasks: refused "
            "unread (altered on the way, or written by something else)")
    return pickle.loads(data)


def _read_record(app: Application, key: bytes, task: str) -> Optional[dict]:
    try:
        text = app.logs(task, _run_fn.RESULT_FILE)
    except errors.TonyError:  # no such file (the task never got there), node gone...
        return None
    return open_record(key, task, text)


def _value(task: str, data: bytes) -> Any:
    try:
        return pickle.loads(data)
    except Exception as e:  # e.g. a tensor of a framework this Python lacks
        raise errors.FailedPreconditionError(
            f"libtony.run: cannot unpickle the value {task} returned: {type(e).__name__}: {e} "
            "(return plain Python values, or install what the value needs here)") from e


def _exit_code(task: str, diagnostics: str) -> Optional[int]:
    m = re.search(re.escape(task) + r"(?: \(untracked\))? (?:failed with exit code|"
                  r"exited with code|died with exit code) (-?\d+)", diagnostics)
    return int(m.group(1)) if m else None


def _position(task: str, diagnostics: str) -> float:
    m = re.search(re.escape(task) + r"\b", diagnostics)
    return m.start() if m else float("inf")


def _stderr_tail(app: Application, task: str, lines: int = 30) -> str:
    try:
        return "\n".join(app.logs(task, "stderr").splitlines()[-lines:])
    except errors.TonyError:
        return ""


def collect(app: Application, prepared: Prepared, final: ApplicationStatus) -> Dict[str, Any]:
    """The return value of every task that has one, by task id; raises TaskError for the task
    that failed (or AbortedError for a job that ended without a task failing)."""
    results: Dict[str, Any] = {}
    failed: Dict[str, dict] = {}
    missing = []
    for task in prepared.spec.tasks():
        record = _read_record(app, prepared.key, task.id)
        if record is None:
            if task.tracked:
                missing.append(task.id)
        elif record.get("ok"):
            results[task.id] = _value(task.id, record["value"])
        else:
            failed[task.id] = record
    if failed:
        # The task the AM named first failed first; the others may have failed because of it
        # (a collective whose peer died).
        first = min(failed, key=lambda t: (_position(t, final.diagnostics), list(failed).index(t)))
        record = failed[first]
        raise errors.TaskError(app.id, first, record.get("exit_code"), record.get("error", ""),
                               record.get("traceback", ""), final.diagnostics)
    if final.state == AppState.SUCCEEDED and not missing:
        return results
    for task in missing:  # died without a record: a signal, the OOM killer, a lost node...
        code = _exit_code(task, final.diagnostics)
        if code is not None:
            raise errors.TaskError(app.id, task, code, "ended without a result",
                                   _stderr_tail(app, task), final.diagnostics)
    raise errors.AbortedError(
        f"{app.id} ended {final.state.name} without a result from "
        f"{', '.join(missing) or 'its tasks'}: {final.diagnostics or 'no diagnostics'}")


def run(fn: Callable, *args: Any, job_types: Any = None, framework: Optional[str] = None,
        submitter: Optional[Submitter] = None, python: str = "python3",
        kwargs: Optional[Dict[str, Any]] = None, timeout: Any = None,
        progress: Progress = True, **spec_fields: Any) -> Dict[str, Any]:
    """Runs ``fn(*args, **kwargs)`` in every task of a job and returns each task's return value
    by task id ({"worker:0": ..., "worker:1": ...}). See docs/python.md."""
    prepared = prepare(fn, args, kwargs or {}, job_types, framework, python, spec_fields)
    try:
        if submitter is None:
            submitter = Submitter.yarn()
        printer = ProgressPrinter(progress)
        app = submitter.submit(prepared.spec)
        printer.submitted(app, prepared.spec)
        try:
            final = app.wait(timeout=timeout, on_progress=printer)
        except BaseException:  # Ctrl-C, the timeout: nobody could collect the results
            kill_quietly(app)
            raise
        return collect(app, prepared, final)
    finally:
        prepared.close()


def kill_quietly(app: Application) -> None:
    try:
        app.kill()
    except errors.TonyError:
        pass


def submitter_run(self: Submitter, fn: Callable, *args: Any, **options: Any) -> Dict[str, Any]:
    """``libtony.run(fn, *args, submitter=self, ...)``."""
    return run(fn, *args, submitter=self, **options)

