"""libtony.run and libtony.aio.run: a Python function as a job, on the local backend (the tasks
run under this venv's Python, which has the wheel's cloudpickle) and on the real cluster.

The functions are defined inside the tests: cloudpickle ships those by value (a module-level one
would be pickled by reference to this test module, which the tasks cannot import)."""

from __future__ import annotations

import asyncio
import base64
import os
import pickle
import subprocess
import sys
import threading

import pytest

import libtony
import libtony.aio
from libtony import errors


class NoSubmitter:
    """Fails the test if anything is submitted."""

    def submit(self, spec):
        raise AssertionError("submitted")


def test_run_returns_every_tasks_value_by_task_id(local, capsys):
    scale = 10  # a closure variable travels with the function

    def fn(a, b=0):
        return (os.environ["DTF_TASK_JOB_NAME"], int(os.environ["TASK_INDEX"]) * scale + a + b,
                "TF_CONFIG" in os.environ)

    results = libtony.run(fn, 1, kwargs={"b": 100}, job_types={"worker": 2}, submitter=local,
                          python=sys.executable, env={"X": "1"})
    assert results == {"worker:0": ("worker", 101, True), "worker:1": ("worker", 111, True)}
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("libtony.run: submitted local_") and "(2 tasks)" in lines[0]
    assert "SUCCEEDED" in lines[-1] and "worker (2): 2 succeeded" in lines[-1]
    assert all(a != b for a, b in zip(lines, lines[1:])), lines  # one line per change


def test_a_raising_task_is_a_task_error_with_its_traceback(local):
    def fn():
        if os.environ["TASK_INDEX"] == "1":
            raise ValueError("boom from the task")
        return "fine"

    with pytest.raises(errors.TaskError) as e:
        local.run(fn, job_types={"worker": 2}, python=sys.executable, progress=False)
    assert e.value.task == "worker:1" and e.value.exit_code == 1
    assert e.value.error == "ValueError: boom from the task"
    # The task has not the client's source: file, line and function, no source lines.
    assert ", in fn\nValueError: boom from the task" in e.value.remote_traceback
    assert e.value.app_id.startswith("local_")
    assert "worker:1 of local_" in str(e.value) and "(exit code 1)" in str(e.value)
    assert isinstance(e.value, errors.TonyError)


def test_sys_exit_in_the_function(local):
    def fn():
        sys.exit(int(os.environ["TASK_INDEX"]) * 3)  # worker:0 exits 0: its value is None

    with pytest.raises(errors.TaskError, match=r"sys\.exit\(3\)") as e:
        local.run(fn, job_types={"worker": 2}, python=sys.executable, progress=False)
    assert e.value.task == "worker:1" and e.value.exit_code == 3


def test_a_task_killed_by_a_signal_is_named_with_its_exit_code_and_stderr(local):
    def fn():
        import signal
        print("about to die", file=sys.stderr, flush=True)
        os.kill(os.getpid(), signal.SIGKILL)

    with pytest.raises(errors.TaskError) as e:
        local.run(fn, job_types={"worker": 1}, python=sys.executable, progress=False)
    assert e.value.task == "worker:0" and e.value.exit_code == 128 + 9
    assert e.value.error == "ended without a result"
    assert "about to die" in e.value.remote_traceback  # the stderr's last lines


def sleeper():
    def sleep_long():  # nested: shipped by value, as the module docstring says
        import time
        time.sleep(600)
    return sleep_long


def killed_by_the_client(local, app_id):
    # The broker logs the request when it receives it, before kill() returns.
    return "kill requested by the client" in local.read_log(app_id, "am", "stderr")


def test_the_wait_timeout_kills_the_job_and_raises(local):
    seen = []
    with pytest.raises(errors.DeadlineExceededError):
        local.run(sleeper(), job_types={"worker": 1}, python=sys.executable,
                  progress=seen.append, timeout=1)
    assert killed_by_the_client(local, seen[0].id)


def test_cancelling_aio_run_kills_the_job(local):
    seen = []

    async def main():
        running = asyncio.Event()

        def on_progress(status):
            seen.append(status)
            if status.progress.get("worker") and status.progress["worker"].running:
                running.set()

        task = asyncio.ensure_future(libtony.aio.run(sleeper(), submitter=local,
                                                     python=sys.executable,
                                                     progress=on_progress))
        await running.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(main())
    assert killed_by_the_client(local, seen[0].id)


def test_unpicklable_function_or_argument_is_named_before_anything_is_submitted():
    lock = threading.Lock()

    def uses_lock():
        return lock.locked()

    with pytest.raises(TypeError, match=r"cannot pickle the function .*uses_lock: .*lock"):
        libtony.run(uses_lock, submitter=NoSubmitter())
    with pytest.raises(TypeError, match=r"cannot pickle argument 1 \(lock\) of len"):
        libtony.run(len, "a", lock, submitter=NoSubmitter())
    with pytest.raises(TypeError, match=r"keyword argument 'k' \(lock\)"):
        libtony.run(len, kwargs={"k": lock}, submitter=NoSubmitter())
    with pytest.raises(TypeError, match="fn must be callable, got int"):
        libtony.run(3, submitter=NoSubmitter())
    with pytest.raises(ValueError, match="command: libtony.run sets the command"):
        libtony.run(len, command="python x.py", submitter=NoSubmitter())
    with pytest.raises(ValueError, match=r"job_types\.worker\.command"):
        libtony.run(len, job_types={"worker": {"instances": 1, "command": "x"}},
                    submitter=NoSubmitter())


class Plant:
    """Unpickling it creates a file: what a forged record would make the client run."""

    def __init__(self, path):
        self.path = path

    def __reduce__(self):
        return (open, (self.path, "w"))


def test_a_record_not_signed_by_the_runs_key_is_refused_unpickled(tmp_path):
    from libtony import _run, _run_fn
    key, other = b"k" * _run_fn.KEY_BYTES, b"o" * _run_fn.KEY_BYTES
    good = {"ok": True, "value": b"x"}
    assert _run.open_record(key, "worker:0", _run_fn.sign(key, pickle.dumps(good))) == good
    planted = tmp_path / "planted"
    evil = pickle.dumps(Plant(str(planted)))
    for text in (_run_fn.sign(other, evil),                          # another key
                 "0" * 64 + " " + _run_fn.sign(key, evil).split()[1],  # no signature
                 base64.b64encode(evil).decode(),                    # the bare pickle
                 "\ufffd" + _run_fn.sign(key, evil)[1:]):             # bytes that were not UTF-8
        with pytest.raises(errors.DataLossError, match="worker:1 is not signed by this run"):
            _run.open_record(key, "worker:1", text)
    assert not planted.exists()


def test_a_task_python_without_cloudpickle_fails_naming_it_and_the_fix(local, tmp_path):
    bare = tmp_path / "bare"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(bare)], check=True)
    python = str(bare / "bin" / "python")
    with pytest.raises(errors.TaskError) as e:
        local.run(lambda: 1, job_types={"worker": 1}, python=python, progress=False)
    assert e.value.task == "worker:0" and e.value.exit_code == 2
    assert "has no cloudpickle" in str(e.value) and "pip install cloudpickle" in str(e.value)
    assert python in str(e.value)


def test_progress_callable_gets_every_status(local):
    seen = []
    results = local.run(lambda: 7, job_types={"worker": 1}, python=sys.executable,
                        progress=seen.append)
    assert results == {"worker:0": 7}
    assert seen and seen[-1].state == libtony.AppState.SUCCEEDED


def test_aio_run_is_the_async_twin(local):
    async def main():
        async with libtony.aio.AsyncMonitor() as monitor:
            return await asyncio.gather(
                libtony.aio.run(lambda x: x * 2, 21, job_types={"worker": 1}, submitter=local,
                                python=sys.executable, progress=False, monitor=monitor),
                libtony.aio.run(lambda: os.environ["TASK_INDEX"], job_types={"worker": 2},
                                submitter=local, python=sys.executable, progress=False))

    assert asyncio.run(main()) == [{"worker:0": 42}, {"worker:0": "0", "worker:1": "1"}]


@pytest.fixture(scope="module")
def yarn(cluster_env):
    return libtony.Submitter.yarn(conf_dir=cluster_env["HADOOP_CONF_DIR"])


def small(**fields):
    return dict(task_defaults=libtony.Resources(memory_mb=512), am_memory_mb=256, **fields)


@pytest.mark.cluster
def test_run_on_yarn_returns_each_workers_task_index(yarn, task_python):
    def fn():
        return int(os.environ["TASK_INDEX"])

    results = libtony.run(fn, job_types={"worker": 2}, submitter=yarn, python=task_python,
                          timeout=600, **small(name="python-run-index"))
    assert results == {"worker:0": 0, "worker:1": 1}


@pytest.mark.cluster
def test_run_on_yarn_raises_the_failing_workers_traceback(yarn, task_python):
    def fn():
        if os.environ["TASK_INDEX"] == "1":
            raise RuntimeError("worker 1 gives up")
        return "done"

    with pytest.raises(errors.TaskError) as e:
        libtony.run(fn, job_types={"worker": 2}, submitter=yarn, python=task_python,
                    timeout=600, progress=False, **small(name="python-run-raise"))
    assert e.value.task == "worker:1" and e.value.exit_code == 1
    assert e.value.error == "RuntimeError: worker 1 gives up"
    assert ", in fn\nRuntimeError: worker 1 gives up" in e.value.remote_traceback
    assert e.value.app_id.startswith("application_")


def docs_function(name):
    """The function `name` as docs/python.md defines it in its code blocks (so that the examples
    there are the ones tested), defined outside any importable module: cloudpickle ships it by
    value, as it would from a notebook."""
    source_dir = os.environ.get("TONY_SOURCE_DIR") or os.path.join(os.path.dirname(__file__),
                                                                   "..", "..")
    text = open(os.path.join(source_dir, "docs", "python.md")).read()
    for block in text.split("```python\n")[1:]:
        code = block.split("```", 1)[0]
        if f"def {name}(" in code:
            lines = code[code.index(f"def {name}("):].split("\n")
            end = next((i for i, line in enumerate(lines[1:], 1)
                        if line and not line.startswith(" ")), len(lines))
            definition = "\n".join(lines[:end])
            namespace = {"__name__": "docs_python_md"}
            exec(compile(definition, "docs/python.md", "exec"), namespace)
            return namespace[name]
    raise AssertionError(f"docs/python.md defines no {name}")


@pytest.mark.cluster
def test_docs_pytorch_ddp_example_on_yarn(yarn, task_python):
    by_task = libtony.run(docs_function("train_ddp"), 100, job_types={"worker": 2},
                          framework="pytorch", submitter=yarn, python=task_python, timeout=600,
                          progress=False, task_defaults=libtony.Resources(memory_mb=1536),
                          name="python-run-ddp")
    assert sorted(by_task) == ["worker:0", "worker:1"]
    assert [by_task[t][0] for t in ("worker:0", "worker:1")] == [0, 1]
    assert by_task["worker:0"][1] == by_task["worker:1"][1]  # DDP kept the replicas equal


@pytest.mark.cluster
def test_docs_tensorflow_example_on_yarn(yarn, task_python):
    by_task = libtony.run(docs_function("train_tf"), 100, job_types={"worker": 2},
                          framework="tensorflow", submitter=yarn, python=task_python,
                          timeout=600, progress=False,
                          task_defaults=libtony.Resources(memory_mb=1536), name="python-run-tf")
    assert sorted(by_task) == ["worker:0", "worker:1"]
    (loss0, w0), (loss1, w1) = by_task["worker:0"], by_task["worker:1"]
    assert w0 == w1  # the all-reduce gave both workers the same update
    assert loss0 == loss1 and loss0 < 0.01
