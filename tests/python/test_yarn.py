"""The Python API on the real test cluster: a TensorFlow job, a PyTorch DDP job, and three jobs
followed from one asyncio loop. Every address is checked local first (cluster_env)."""

from __future__ import annotations

import asyncio
import os
import shutil
import time

import pytest

import libtony
import libtony.aio

pytestmark = pytest.mark.cluster


@pytest.fixture(scope="module")
def yarn(cluster_env):
    return libtony.Submitter.yarn(conf_dir=cluster_env["HADOOP_CONF_DIR"])


def example(name):
    source_dir = os.environ.get("TONY_SOURCE_DIR") or os.path.join(os.path.dirname(__file__), "..", "..")
    return os.path.abspath(os.path.join(source_dir, "examples", name))


def test_tensorflow_ps_job(yarn, task_python, tmp_path):
    spec = libtony.JobSpec(
        name="python-api-tf", command=f"{task_python} $DTF_TASK_SCRIPT --steps 50",
        script_file=example("classic_ps_worker.py"), output_path=str(tmp_path),
        job_types={"ps": 1, "worker": 1}, task_defaults=libtony.Resources(memory_mb=1536))
    app = yarn.submit(spec)
    assert app.id.startswith("application_")
    final = app.wait(timeout=600)
    assert final.state == libtony.AppState.SUCCEEDED, final.diagnostics
    assert final.progress["worker"].succeeded == 1
    assert "worker 0 done" in app.logs("worker:0", "stdout")
    # Re-attached by id, as another process would.
    assert yarn.open(app.id).status().state == libtony.AppState.SUCCEEDED


def test_pytorch_ddp_job(yarn, task_python):
    spec = libtony.JobSpec(
        name="python-api-pytorch", framework="pytorch",
        command=f"{task_python} $DTF_TASK_SCRIPT", script_file=example("pytorch_ddp.py"),
        job_types={"worker": 2}, task_defaults=libtony.Resources(memory_mb=1536))
    app = yarn.submit(spec)
    final = app.wait(timeout=600)
    assert final.state == libtony.AppState.SUCCEEDED, final.diagnostics
    for rank in range(2):
        assert f"pytorch_ddp done: rank {rank}/2" in app.logs(f"worker:{rank}", "stdout")


def test_status_says_why_a_job_waits(yarn):
    # Three 7168 MB workers on the default partition's two 8192 MB nodes: one node each for two,
    # the third waits for room the queue does not have, and the status says so with the numbers.
    spec = libtony.JobSpec(name="python-api-waits", command="sleep 600", job_types={"worker": 3},
                           task_defaults=libtony.Resources(memory_mb=7168), am_memory_mb=256)
    app = yarn.submit(spec)
    try:
        status = app.status()
        for _ in range(360):  # polls, 0.5 s apart: the condition ends the wait
            if status.wait_kind == "queue-at-capacity" or status.final:
                break
            time.sleep(0.5)
            status = app.status()
        assert status.wait_kind == "queue-at-capacity", (status.wait_kind, status.wait_reason,
                                                         status.pending)
        assert "root.default uses" in status.wait_reason
        assert "the next container <7168 MB, 1 vcore>" in status.wait_reason
        assert "why: " in status._repr_html_()
    finally:
        app.kill()


def test_asyncio_follows_three_yarn_jobs_and_kills_one(yarn):
    def small(name, command):
        return libtony.JobSpec(name=name, command=command, job_types={"worker": 1},
                               task_defaults=libtony.Resources(memory_mb=256), am_memory_mb=256)

    async def main():
        apps = [yarn.submit(small("python-api-async-1", "sleep 2")),
                yarn.submit(small("python-api-async-2", "sleep 4")),
                yarn.submit(small("python-api-async-3", "sleep 600"))]
        running = asyncio.Event()

        def on_third(status):
            if status.progress.get("worker") and status.progress["worker"].running:
                running.set()

        async with libtony.aio.AsyncMonitor() as monitor:
            first = [asyncio.ensure_future(monitor.wait(a, timeout=480)) for a in apps[:2]]
            third = asyncio.ensure_future(monitor.wait(apps[2], timeout=480, on_progress=on_third))
            done = await asyncio.gather(*first)
            await asyncio.wait_for(running.wait(), 300)
            await asyncio.get_running_loop().run_in_executor(None, apps[2].kill)
            killed = await third
        return apps, done, killed

    apps, done, killed = asyncio.run(main())
    assert [s.state for s in done] == [libtony.AppState.SUCCEEDED] * 2
    assert killed.state == libtony.AppState.KILLED
    listed = {a.id: a.state for a in yarn.list(include_finished=True)}
    assert listed[apps[2].id] == libtony.AppState.KILLED


def test_tony_xml_runs_unchanged_through_the_wheels_ytf_submit(cluster_env, task_python,
                                                               tmp_path):
    """A TonY job as its users write it: tony.xml and TonY's client flags, run by the wheel's
    ytf-submit console script on the real cluster."""
    import subprocess
    conf = tmp_path / "tony.xml"
    props = {
        "tony.application.name": "python-api-tony-xml",
        "tony.ps.instances": "1",
        "tony.worker.instances": "2",
        "tony.ps.memory": "1g",
        "tony.worker.memory": "1536m",
        "tony.application.untracked.jobtypes": "ps",
        "tony.task.executor.jvm.opts": "-Xmx1g",  # TonY-only: named in a warning
    }
    conf.write_text("<configuration>" + "".join(
        f"<property><name>{k}</name><value>{v}</value></property>" for k, v in props.items())
        + "</configuration>")
    out = subprocess.run(
        ["ytf-submit", "--yarn", "--conf_dir", cluster_env["HADOOP_CONF_DIR"], "-conf_file",
         str(conf), "-executes", "classic_ps_worker.py", "-task_params", "--steps 50",
         "-python_binary_path", task_python, "-o", str(tmp_path)],
        cwd=os.path.dirname(example("classic_ps_worker.py")), capture_output=True, text=True,
        timeout=600)
    assert out.returncode == 0, out.stderr
    assert "tony.task.executor.jvm.opts: ignored" in out.stderr
    assert "SUCCEEDED" in out.stderr


def test_site_limit_refuses_and_template_applies(cluster_env, tmp_path, monkeypatch):
    """The cluster's tony-site.yaml (docs/site-settings.md) binds Python's Submitter too: a
    limit refuses before anything is sent, naming the limit and the file; a template applies."""
    conf = tmp_path / "conf"
    shutil.copytree(cluster_env["HADOOP_CONF_DIR"], conf)
    (conf / "tony-site.yaml").write_text(
        "templates:\n  small:\n    env: {SITE_MARK: from-template}\n"
        "limits:\n  max_tasks_per_job: 1\n")
    monkeypatch.setenv("TONY_SITE_FILE", "")
    submitter = libtony.Submitter.yarn(conf_dir=str(conf))
    spec = libtony.JobSpec(name="python-site-refused", command="true", job_types={"worker": 2},
                           task_defaults=libtony.Resources(memory_mb=256), am_memory_mb=256)
    with pytest.raises(ValueError, match=r"^limits\.max_tasks_per_job is 1 \(.*/tony-site\.yaml:5\)"):
        submitter.submit(spec)

    spec = libtony.JobSpec(name="python-site-template", command='echo "mark=$SITE_MARK"',
                           job_types={"worker": 1}, task_defaults=libtony.Resources(memory_mb=256),
                           am_memory_mb=256)
    spec.site_template = "small"
    app = submitter.submit(spec)
    final = app.wait(timeout=600)
    assert final.state == libtony.AppState.SUCCEEDED, final.diagnostics
    assert "mark=from-template" in app.logs("worker:0", "stdout")
