"""The Python API on the local backend: types, errors, the GIL, Ctrl-C, asyncio."""

from __future__ import annotations

import asyncio
import ast
import copy
import datetime
import logging
import os
import signal
import threading
import time

import pytest

import libtony
import libtony.aio
from libtony import errors


def test_version_and_console_scripts():
    assert libtony.__version__.count(".") == 2
    import subprocess
    out = subprocess.run(["ytf-submit", "--version"], capture_output=True, text=True, check=True)
    assert libtony.__version__ in out.stdout


def test_jobspec_from_kwargs_edits_in_place():
    spec = libtony.JobSpec(command="python train.py", job_types={"ps": 1, "worker": 2},
                           framework="pytorch", env={"A": "1"})
    assert [(t.name, t.instances) for t in spec.job_types] == [("ps", 1), ("worker", 2)]
    assert spec.framework == libtony.Framework.PYTORCH
    spec.env["B"] = "2"
    spec.job_types.append(libtony.JobTypeSpec("chief", resources=libtony.Resources(gpus=0)))
    spec.job_types[1].resources.memory_mb = 2048
    spec.timeouts.job = datetime.timedelta(hours=1)
    spec.timeouts.registration = 90
    assert dict(spec.env) == {"A": "1", "B": "2"}
    assert spec.job_types[2].name == "chief"
    assert spec.job_types[1].resources.memory_mb == 2048
    assert spec.timeouts.job == datetime.timedelta(hours=1)
    assert spec.timeouts.registration == datetime.timedelta(seconds=90)
    assert libtony.JobSpec().timeouts.job is None  # infinite
    assert libtony.JobSpec().priority is None  # the queue's default
    assert libtony.JobSpec(priority=3).priority == 3
    assert spec.total_tasks() == 4
    assert [t.id for t in spec.tasks()] == ["ps:0", "worker:0", "worker:1", "chief:0"]


def test_a_kept_job_type_blocks_changes_that_would_free_it():
    # Items are references into the spec: a change that moves them is refused while one is
    # held, instead of leaving it pointing at freed memory.
    spec = libtony.JobSpec(command="x", job_types={"ps": 1, "worker": 2})
    worker = spec.job_types[1]
    resources = spec.job_types[0].resources  # a part keeps its job type alive too
    for change in (lambda: spec.job_types.append(libtony.JobTypeSpec("chief")),
                   lambda: spec.job_types.insert(0, libtony.JobTypeSpec("chief")),
                   lambda: spec.job_types.pop(), lambda: spec.job_types.clear(),
                   lambda: spec.job_types.__delitem__(0),
                   lambda: spec.job_types.extend([libtony.JobTypeSpec("chief")]),
                   lambda: setattr(spec, "job_types", {"worker": 1})):
        with pytest.raises(ValueError, match="still referenced"):
            change()
    worker.instances = 3  # the reference is still good
    resources.memory_mb = 512
    spec.job_types[0] = libtony.JobTypeSpec("ps", instances=2)  # in place: allowed
    assert spec.job_types[1].instances == 3
    kept = copy.copy(worker)
    del worker, resources
    spec.job_types.append(libtony.JobTypeSpec("chief"))
    assert [t.name for t in spec.job_types] == ["ps", "worker", "chief"]
    assert kept.instances == 3


def test_a_kept_task_resources_value_blocks_removing_its_key():
    t = libtony.JobTypeSpec("worker", instances=2)
    t.task_resources[0] = libtony.Resources(memory_mb=4096)
    t.task_resources[1] = libtony.Resources(gpus=1)
    r = t.task_resources[0]
    for change in (lambda: t.task_resources.__delitem__(0),
                   lambda: setattr(t, "task_resources", {})):
        with pytest.raises(ValueError, match="still referenced"):
            change()
    assert r.memory_mb == 4096
    del t.task_resources[1]  # not held: removed
    kept = copy.copy(r)
    del r
    del t.task_resources[0]
    assert kept.memory_mb == 4096 and len(t.task_resources) == 0


def test_a_kept_task_resources_value_blocks_replacing_its_job_type():
    # spec.job_types[i] = x assigns the item in place: its task_resources map is replaced, and
    # a value taken from the old one pointed at freed memory (ASan: heap-use-after-free).
    spec = libtony.JobSpec(command="x", job_types={"ps": 1, "worker": 2})
    spec.job_types[1].task_resources[0] = libtony.Resources(memory_mb=4096)
    r = spec.job_types[1].task_resources[0]
    for index in (1, -1):
        with pytest.raises(ValueError, match="still referenced"):
            spec.job_types[index] = libtony.JobTypeSpec("worker", instances=3)
    assert r.memory_mb == 4096
    assert spec.job_types[1].instances == 2
    spec.job_types[0] = libtony.JobTypeSpec("ps", instances=2)  # another item: allowed
    kept = copy.copy(r)
    del r
    spec.job_types[1] = libtony.JobTypeSpec("worker", instances=3)
    assert spec.job_types[1].instances == 3 and len(spec.job_types[1].task_resources) == 0
    assert kept.memory_mb == 4096
    with pytest.raises(IndexError):
        spec.job_types[5] = libtony.JobTypeSpec("worker")


def test_role_dependencies_and_linger_round_trip_through_yaml():
    spec = libtony.JobSpec(command="x", job_types={"prep": 1, "worker": 2, "evaluator": 1})
    spec.job_types[1].depends_on = [libtony.RoleDependency(role="prep")]
    spec.job_types[2].depends_on = [libtony.RoleDependency(
        role="worker", when="running", timeout=datetime.timedelta(minutes=5))]
    spec.job_types[2].linger = datetime.timedelta(minutes=10)
    again = libtony.JobSpec.from_yaml(spec.to_yaml())
    assert again == spec
    assert again.job_types[1].depends_on[0].when == libtony.DependencyCondition.FINISHED
    assert again.job_types[2].depends_on[0].timeout == datetime.timedelta(minutes=5)
    assert again.job_types[2].linger == datetime.timedelta(minutes=10)
    spec.job_types[1].anti_affinity = True
    assert libtony.JobSpec.from_yaml(spec.to_yaml()).job_types[1].anti_affinity
    elastic = libtony.JobSpec(command="torchrun t.py", framework="pytorch", job_types={"worker": 4})
    elastic.job_types[0].elastic = libtony.ElasticRange(min=2, max=4)
    elastic.validate()
    assert libtony.JobSpec.from_yaml(elastic.to_yaml()).job_types[0].elastic.min == 2


@pytest.mark.parametrize("kwargs, field", [
    ({"job_types": {"worker": "two"}}, "JobSpec.job_types"),
    ({"env": {"A": 1}}, "JobSpec.env"),
    ({"max_attempts": "3"}, "JobSpec.max_attempts"),
    ({"tags": ["a", 2]}, "JobSpec.tags"),
    ({"commnd": "x"}, "unexpected keyword argument 'commnd'"),
])
def test_wrong_type_is_a_type_error_naming_the_field(kwargs, field):
    with pytest.raises(TypeError, match=field.replace(".", r"\.")):
        libtony.JobSpec(**kwargs)


def test_wrong_value_is_a_value_error_naming_the_field():
    with pytest.raises(ValueError, match="framework"):
        libtony.JobSpec(framework="tensorflw")
    with pytest.raises(ValueError, match="instances") as e:
        libtony.JobSpec(command="true", job_types={"worker": 0})
    assert isinstance(e.value, errors.InvalidArgumentError)
    assert e.value.code == "INVALID_ARGUMENT"
    with pytest.raises(TypeError, match=r"JobTypeSpec\.instances: expected int, got str"):
        libtony.JobTypeSpec("worker", instances="two")


def test_yaml_round_trip_and_errors_with_line_numbers():
    spec = libtony.JobSpec(command="echo", job_types={"worker": 2}, tags=["a", "b"])
    again = libtony.JobSpec.from_yaml(spec.to_yaml())
    assert again == spec
    assert "summary:" in spec.to_yaml(libtony.YamlDetail.ROLE_SUMMARY)
    with pytest.raises(ValueError, match=r"job\.yaml:3:\d+: jobs\.worker\.instances"):
        libtony.JobSpec.from_yaml("jobs:\n  worker:\n    instances: two\n", "job.yaml")


def test_missing_hadoop_configuration_is_one_error_naming_it(monkeypatch, tmp_path):
    for var in ("HADOOP_CONF_DIR", "YARN_CONF_DIR", "HADOOP_HOME", "HADOOP_PREFIX"):
        monkeypatch.delenv(var, raising=False)
    with pytest.raises(errors.TonyError, match="HADOOP_CONF_DIR"):
        submitter = libtony.Submitter.yarn()
        submitter.submit(libtony.JobSpec(command="true", job_types={"worker": 1}))
    with pytest.raises(errors.TonyError, match=str(tmp_path / "nope")):
        libtony.Submitter.yarn(conf_dir=str(tmp_path / "nope")).submit(
            libtony.JobSpec(command="true", job_types={"worker": 1}))


def test_local_job_with_progress_logs_and_html(local):
    spec = libtony.JobSpec(command="echo hello from $DTF_TASK_JOB_NAME:$DTF_TASK_INDEX",
                           job_types={"worker": 2})
    app = local.submit(spec)
    seen = []
    final = app.wait(timeout=120, on_progress=seen.append)
    assert final.state == libtony.AppState.SUCCEEDED and final.final
    assert seen and seen[-1].state == final.state
    assert all(s.id == app.id for s in seen)
    assert app.logs("worker:1", "stdout").strip() == "hello from worker:1"
    with pytest.raises(LookupError, match="no task worker:7"):
        app.logs("worker:7")
    # read_task_log: the same text, and where it was read (a local job's file).
    log = local.read_task_log(app.id, "worker:1", "stdout")
    assert isinstance(log, libtony.TaskLog)
    assert log.contents == app.logs("worker:1", "stdout")
    assert log.source.startswith("in /") and log.source.endswith(f"/{app.id}/worker-1/stdout")
    assert "TaskLog(source='in /" in repr(log)
    html = final._repr_html_()
    assert "<table>" in html and "<td>worker</td>" in html and "SUCCEEDED" in html
    # Locally nothing waits for a scheduler: no reason, and str (never None) for the types.
    assert final.wait_reason == "" and final.wait_kind == ""


def test_log_lines_become_records_of_a_python_logger(local):
    records = []

    class Keep(logging.Handler):
        def emit(self, record):
            records.append(record)

    logger = logging.getLogger("libtony-test")
    logger.setLevel(logging.INFO)
    logger.propagate = False
    handler = Keep()
    logger.addHandler(handler)
    try:
        assert libtony.log_to_python(logger) is logger
        app = local.submit(libtony.JobSpec(command="true", job_types={"worker": 1}))
        assert app.wait(timeout=120).state == libtony.AppState.SUCCEEDED
        # Lines come through the drain thread a moment later.
        deadline = time.monotonic() + 30
        while (not any(f"submitted {app.id}" in r.getMessage() for r in records)
               and time.monotonic() < deadline):
            time.sleep(0.05)
        submitted = [r for r in records if f"submitted {app.id}" in r.getMessage()]
        assert submitted, [r.getMessage() for r in records]
        assert submitted[0].levelno == logging.INFO and submitted[0].name == "libtony-test"
        assert submitted[0].pathname.endswith("local_submitter.cc")
        assert submitted[0].lineno > 0
        assert not any(r.levelno < logging.INFO for r in records)  # the logger's level holds
    finally:
        libtony.log_to_stderr()
        logger.removeHandler(handler)
    count = len(records)
    local.submit(libtony.JobSpec(command="true", job_types={"worker": 1})).wait(timeout=120)
    assert len(records) == count  # back on stderr
    assert libtony.dropped_log_lines() == 0
    with pytest.raises(TypeError, match="logger must be"):
        libtony.log_to_python(42)


def test_a_failing_handler_or_one_that_ends_the_routing_does_not_break_it(local):
    seen = []

    class Flaky(logging.Handler):
        def emit(self, record):
            seen.append(record.getMessage())
            if len(seen) == 1:
                raise RuntimeError("a handler's bug")

    logger = logging.getLogger("libtony-flaky")
    logger.setLevel(logging.INFO)
    logger.propagate = False
    handler = Flaky()
    logger.addHandler(handler)
    try:
        libtony.log_to_python(logger)
        for _ in range(2):
            local.submit(libtony.JobSpec(command="true", job_types={"worker": 1})).wait(
                timeout=120)
        deadline = time.monotonic() + 30
        while sum("submitted" in m for m in seen) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert sum("submitted" in m for m in seen) >= 2, seen  # the raise ended nothing

        # A handler may end the routing itself (it runs on the drain thread).
        class Ender(logging.Filter):
            def filter(self, record):
                libtony.log_to_stderr()
                return True

        ender = Ender()
        logger.addFilter(ender)
        local.submit(libtony.JobSpec(command="true", job_types={"worker": 1})).wait(timeout=120)
        deadline = time.monotonic() + 30
        while libtony._logging._logger is not None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert libtony._logging._logger is None and libtony._logging._thread is None
        logger.removeFilter(ender)
    finally:
        libtony.log_to_stderr()
        logger.removeHandler(handler)


def test_a_log_line_that_is_not_utf8_does_not_stop_the_routing(tmp_path):
    # A line quoting bytes from outside (here a configuration directory's name) once raised
    # UnicodeDecodeError in the drain thread: that line and every later one were lost.
    messages = []

    class Keep(logging.Handler):
        def emit(self, record):
            messages.append(record.getMessage())

    def conf_dir(name):
        # A final key that a later file sets again: libtony warns, naming both files. A bad
        # hadoop.rpc.protection then ends Submitter.yarn() before it contacts anything.
        d = os.path.join(os.fsencode(str(tmp_path)), name)
        os.mkdir(d)
        for site, final in ((b"core-site.xml", b"true"), (b"yarn-site.xml", b"false")):
            with open(os.path.join(d, site), "wb") as f:
                f.write(b"<configuration><property><name>tony.test.key</name><value>" + site
                        + b"</value><final>" + final + b"</final></property><property><name>"
                        b"hadoop.rpc.protection</name><value>bogus</value></property>"
                        b"</configuration>")
        return d

    logger = logging.getLogger("libtony-bytes")
    logger.setLevel(logging.INFO)
    logger.propagate = False
    handler = Keep()
    logger.addHandler(handler)
    saved = os.environb.get(b"HADOOP_CONF_DIR")
    try:
        libtony.log_to_python(logger)
        for name in (b"conf-\xff\xfe", b"conf-plain"):
            os.environb[b"HADOOP_CONF_DIR"] = conf_dir(name)
            with pytest.raises(errors.InvalidArgumentError):
                libtony.Submitter.yarn()
        deadline = time.monotonic() + 30
        while not any("conf-plain" in m for m in messages) and time.monotonic() < deadline:
            time.sleep(0.05)
        warned = [m for m in messages if "ignoring tony.test.key" in m]
        assert any("conf-\ufffd\ufffd" in m for m in warned), messages
        assert any("conf-plain" in m for m in warned), messages  # the routing went on
    finally:
        libtony.log_to_stderr()
        logger.removeHandler(handler)
        if saved is None:
            os.environb.pop(b"HADOOP_CONF_DIR", None)
        else:
            os.environb[b"HADOOP_CONF_DIR"] = saved


def test_children_forked_while_threads_log_exit(tmp_path):
    # Airflow workers and multiprocessing fork processes that use libtony: libtony's sink and
    # this package's log queue are taken by threads that log while the main thread forks. Every
    # child, one that logs or not, must exit (a lock copied held once hung it).
    import select
    d = os.path.join(str(tmp_path), "conf")
    os.mkdir(d)
    for site, final in (("core-site.xml", "true"), ("yarn-site.xml", "false")):
        with open(os.path.join(d, site), "w") as f:
            f.write("<configuration><property><name>tony.test.key</name><value>" + site
                    + "</value><final>" + final + "</final></property><property><name>"
                    "hadoop.rpc.protection</name><value>bogus</value></property>"
                    "</configuration>")

    def warn_once():  # libtony logs "ignoring tony.test.key ..." and fails before any network
        try:
            libtony.Submitter.yarn()
        except errors.InvalidArgumentError:
            pass

    logger = logging.getLogger("libtony-fork")
    logger.setLevel(logging.INFO)
    logger.propagate = False
    logger.addHandler(logging.NullHandler())
    saved = os.environ.get("HADOOP_CONF_DIR")
    stop = threading.Event()

    def log_until_stopped():
        while not stop.is_set():
            warn_once()

    threads = [threading.Thread(target=log_until_stopped) for _ in range(4)]
    hung = failed = 0
    try:
        os.environ["HADOOP_CONF_DIR"] = d
        libtony.log_to_python(logger)
        for t in threads:
            t.start()
        for i in range(200):
            pid = os.fork()
            if pid == 0:
                try:
                    if i % 2:
                        warn_once()
                finally:
                    os._exit(0)
            fd = os.pidfd_open(pid)
            try:
                if not select.select([fd], [], [], 20)[0]:  # bounded: a hung child is killed
                    os.kill(pid, signal.SIGKILL)
                    hung += 1
                _, status = os.waitpid(pid, 0)
                failed += status != 0 and not (os.WIFSIGNALED(status)
                                               and os.WTERMSIG(status) == signal.SIGKILL)
            finally:
                os.close(fd)
    finally:
        stop.set()
        for t in threads:
            if t.is_alive():
                t.join()
        libtony.log_to_stderr()
        if saved is None:
            os.environ.pop("HADOOP_CONF_DIR", None)
        else:
            os.environ["HADOOP_CONF_DIR"] = saved
    assert hung == 0, f"{hung} of 200 children hung"
    assert failed == 0, f"{failed} of 200 children failed"


def test_a_process_routing_log_lines_exits_cleanly():
    # The drain thread waits in C++ in 0.5 s slices; CPython ending it as it woke during
    # finalization aborted the process ("terminate called without an active exception"), in
    # about 3 runs of 10 exiting 0.45 s after log_to_python, until it was stopped at exit.
    import subprocess
    import sys
    code = "import libtony, time; libtony.log_to_python(); time.sleep(0.45); print('done')"
    for _ in range(8):
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                             timeout=60)
        assert out.returncode == 0, out.stderr
        assert out.stdout.strip() == "done"


def test_failed_task_gives_diagnostics(local):
    app = local.submit(libtony.JobSpec(command="echo boom >&2; exit 3", job_types={"worker": 1}))
    final = app.wait(timeout=120)
    assert final.state == libtony.AppState.FAILED
    assert "worker:0" in final.diagnostics and "boom" in final.diagnostics


def test_wait_releases_the_gil(local):
    app = local.submit(libtony.JobSpec(command="sleep 2", job_types={"worker": 1}))
    ticks = 0
    stop = threading.Event()

    def spin():
        nonlocal ticks
        while not stop.is_set():
            ticks += 1
            time.sleep(0.01)

    spinner = threading.Thread(target=spin)
    spinner.start()
    try:
        assert app.wait(timeout=120).state == libtony.AppState.SUCCEEDED
    finally:
        stop.set()
        spinner.join()
    assert ticks > 20  # the other thread ran all along (two seconds: ~200 ticks)


def test_ctrl_c_interrupts_wait(local):
    app = local.submit(libtony.JobSpec(command="sleep 300", job_types={"worker": 1}))
    timer = threading.Timer(1.0, os.kill, (os.getpid(), signal.SIGINT))
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            app.wait(timeout=240)
    finally:
        timer.cancel()
    app.kill()
    assert app.status().state == libtony.AppState.KILLED


def test_deadline_is_a_timeout_error(local):
    app = local.submit(libtony.JobSpec(command="sleep 300", job_types={"worker": 1}))
    with pytest.raises(TimeoutError) as e:
        app.wait(timeout=0.5)
    assert e.value.code == "DEADLINE_EXCEEDED"
    app.kill()


def test_scale_refuses_a_role_that_is_not_elastic(local):
    app = local.submit(libtony.JobSpec(command="sleep 300", job_types={"worker": 1}))
    try:
        deadline = time.monotonic() + 60
        while app.status().state != libtony.AppState.RUNNING and time.monotonic() < deadline:
            time.sleep(0.2)
        with pytest.raises(errors.FailedPreconditionError, match="worker is not elastic"):
            app.scale("worker", 2)
        with pytest.raises(ValueError, match="the job has no role 'evaluator'"):
            app.scale("evaluator", 1)
    finally:
        app.kill()


def _poll(app, until, seconds=60):
    deadline = time.monotonic() + seconds
    status = app.status()
    while not until(status) and time.monotonic() < deadline:
        time.sleep(0.2)
        status = app.status()
    assert until(status), status
    return status


def test_suspend_stops_the_tasks_and_resume_starts_them_afresh(local, tmp_path):
    starts = tmp_path / "starts"
    app = local.submit(libtony.JobSpec(command=f"echo $JOB_NAME >> {starts}; exec sleep 300",
                                       job_types={"ps": 1, "worker": 2}))
    try:
        def running(n):
            return lambda s: (s.state == libtony.AppState.RUNNING
                              and sum(p.running for p in s.progress.values()) == n)
        _poll(app, running(3))
        assert app.status().suspended_since is None
        app.suspend()
        suspended = _poll(app, lambda s: s.state == libtony.AppState.SUSPENDED)
        assert suspended.suspended_since <= time.time()
        assert sum(p.running for p in suspended.progress.values()) == 0
        app.suspend()  # already suspended: nothing changes
        app.resume()
        _poll(app, running(3))
        assert sorted(starts.read_text().split()) == ["ps"] * 2 + ["worker"] * 4
    finally:
        app.kill()
    assert app.status().state == libtony.AppState.KILLED


def test_unknown_ids_are_errors_with_codes(local):
    with pytest.raises(errors.NotFoundError):
        local.open("local_1_abcd")
    with pytest.raises(errors.InvalidArgumentError):
        local.open("application_1_0001")


def test_asyncio_follows_three_jobs_and_kills_one(local):
    async def main():
        apps = [local.submit(libtony.JobSpec(command=c, job_types={"worker": 1}))
                for c in ("sleep 1", "sleep 2", "sleep 300")]
        progress = []
        async with libtony.aio.AsyncMonitor(max_poll_interval=0.2) as monitor:
            waits = [asyncio.ensure_future(monitor.wait(a, timeout=240, on_progress=progress.append))
                     for a in apps]
            done = await asyncio.gather(*waits[:2])
            assert not waits[2].done()
            loop = asyncio.get_running_loop()
            await loop.run_in_executor(None, apps[2].kill)
            killed = await waits[2]
        return done, killed, progress

    done, killed, progress = asyncio.run(main())
    assert [s.state for s in done] == [libtony.AppState.SUCCEEDED] * 2
    assert killed.state == libtony.AppState.KILLED
    assert any(s.state == libtony.AppState.RUNNING for s in progress)


def test_reattach_tag_is_an_hmac_only_the_secret_gives():
    import hashlib
    import hmac
    secret = "0123456789abcdef"
    tag = libtony.reattach_tag("dag/task/run/-1", secret, prefix="airflow-")
    assert tag == "airflow-" + hmac.new(secret.encode(), b"dag/task/run/-1",
                                        hashlib.sha256).hexdigest()
    assert len(libtony.reattach_tag("k", secret, prefix="p" * 36)) == 100  # YARN's limit
    with pytest.raises(ValueError, match="at least 16"):
        libtony.reattach_tag("k", "short")
    with pytest.raises(ValueError, match="lower-case"):
        libtony.reattach_tag("k", secret, prefix="Airflow-")


def test_submitter_user_is_whose_applications_list_shows(local):
    import pwd
    assert local.user == pwd.getpwuid(os.geteuid()).pw_name
    with pytest.raises(errors.UnimplementedError):  # local jobs belong to their process
        local.list(tags=["t"], all_users=True)


def test_type_stubs_cover_the_module():
    import libtony._tony as native
    stub = os.path.join(os.path.dirname(native.__file__), "_tony.pyi")
    tree = ast.parse(open(stub).read())
    stubbed = {n.name for n in tree.body if isinstance(n, (ast.ClassDef, ast.FunctionDef))}
    stubbed |= {t.id for n in tree.body if isinstance(n, ast.AnnAssign) for t in [n.target]}
    public = {n for n in dir(native) if n.isidentifier() and not n.startswith("_")}
    assert public <= stubbed, public - stubbed
    assert os.path.exists(os.path.join(os.path.dirname(native.__file__), "py.typed"))


def test_readme_python_example_compiles():
    source_dir = os.environ.get("TONY_SOURCE_DIR") or os.path.join(os.path.dirname(__file__),
                                                                   "..", "..")
    readme = open(os.path.join(source_dir, "README.md")).read()
    block = readme.split("```python\n", 1)[1].split("```", 1)[0]
    code = compile(block, "README.md", "exec")
    names = {n for n in code.co_names}
    assert {"JobSpec", "Resources", "Submitter"} <= names
    for name in ("JobSpec", "Resources", "Submitter"):
        assert hasattr(libtony, name)
