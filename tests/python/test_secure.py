"""Two principals in one Python process, as an Airflow triggerer holds them: each trigger makes
its own Submitter from its connection (libtony_airflow.hooks.submitter_from_options ->
Submitter.yarn(principal=..., keytab=...)) and follows its application from the one asyncio
loop. Each must act as its own principal, whichever logged in last (docs/security.md,
"Tenants")."""

from __future__ import annotations

import asyncio
import os

import pytest

import libtony
import libtony.aio

pytestmark = pytest.mark.secure


def logged_in(secure_env, name):
    keytabs = os.path.dirname(secure_env["TONY_KRB5_KEYTAB"])
    return libtony.Submitter.yarn(conf_dir=secure_env["HADOOP_CONF_DIR"],
                                  principal=f"{name}@TONY.TEST",
                                  keytab=os.path.join(keytabs, f"{name}.keytab"))


def test_two_connections_in_one_process_each_act_as_their_own_principal(secure_env):
    # Both log in before either submits: a process-wide login made bob of alice.
    alice, bob = logged_in(secure_env, "alice"), logged_in(secure_env, "bob")
    assert (alice.user, bob.user) == ("alice", "bob")
    spec = dict(command="true", job_types={"worker": 1},
                task_defaults=libtony.Resources(memory_mb=128), am_memory_mb=256)
    apps = {"alice": alice.submit(libtony.JobSpec(name="py-tenants-alice", **spec)),
            "bob": bob.submit(libtony.JobSpec(name="py-tenants-bob", **spec))}

    async def triggerer():
        loop = asyncio.get_running_loop()
        # As TonyJobTrigger.run: open off the loop with a Submitter of the trigger's own, then
        # follow both from one monitor.
        opened = {name: await loop.run_in_executor(None, lambda n=name: logged_in(
            secure_env, n).open(apps[n].id)) for name in apps}
        async with libtony.aio.AsyncMonitor() as monitor:
            return dict(zip(opened, await asyncio.gather(
                *(monitor.wait(app, timeout=300) for app in opened.values()))))

    finals = asyncio.run(triggerer())
    for name, final in finals.items():
        assert final.state == libtony.AppState.SUCCEEDED, (name, final.diagnostics)
    for name, submitter in (("alice", alice), ("bob", bob)):
        listed = {a.id: a.user for a in submitter.list(all_users=True, include_finished=True)}
        assert listed.get(apps["alice"].id) == "alice", listed
        assert listed.get(apps["bob"].id) == "bob", listed
        own = {a.id for a in submitter.list(include_finished=True)}
        other = "bob" if name == "alice" else "alice"
        assert apps[name].id in own and apps[other].id not in own, (name, own)
