"""Fixtures of the Python package's tests. They run against an installed wheel (run_pytest.sh
makes a fresh venv outside the build tree), never against the source tree."""

from __future__ import annotations

import os
import shlex
import subprocess

import pytest

SOURCE_DIR = os.environ.get("TONY_SOURCE_DIR") or os.path.abspath(
    os.path.join(os.path.dirname(__file__), "..", ".."))


def pytest_configure(config):
    config.addinivalue_line("markers", "cluster: needs the real test Hadoop cluster")
    config.addinivalue_line("markers", "secure: needs the Kerberos test cluster")


def hadoop_cluster_env(environ):
    """What `hadoop-cluster env` exports, run in `environ`; it fails unless every address of the
    cluster is local."""
    script = os.path.join(SOURCE_DIR, "scripts", "hadoop-cluster")
    out = subprocess.run([script, "env"], check=True, capture_output=True, text=True,
                         timeout=120, env=dict(environ)).stdout
    settings = {}
    for line in out.splitlines():
        if line.startswith("export "):
            key, _, value = line[len("export "):].partition("=")
            settings[key] = shlex.split(value)[0] if value else ""
    assert settings.get("TONY_ALLOWED_NETWORKS"), "hadoop-cluster env printed no allowed networks"
    return settings


@pytest.fixture(scope="session")
def cluster_env():
    """The test cluster's client settings (HADOOP_CONF_DIR, TONY_ALLOWED_NETWORKS, ...).

    `hadoop-cluster env` first checks that every address of the cluster is local (no route
    through a gateway) and fails otherwise; TONY_ALLOWED_NETWORKS then makes libtony itself
    refuse any other address."""
    env = hadoop_cluster_env(os.environ)
    os.environ.update(env)
    return env


@pytest.fixture(scope="session")
def secure_env():
    """The Kerberos test cluster's client settings (HADOOP_CONF_DIR, KRB5_CONFIG, the keytabs'
    directory...), from `hadoop-cluster --secure env` at the secure suite's port block."""
    env = dict(os.environ, TONY_HADOOP_SECURE="1",
               TONY_HADOOP_BASE_PORT=os.environ.get("TONY_SECURE_HADOOP_BASE_PORT", "18900"))
    env.pop("TONY_HADOOP_HOME", None)
    if os.environ.get("TONY_SECURE_HADOOP_HOME"):
        env["TONY_HADOOP_HOME"] = os.environ["TONY_SECURE_HADOOP_HOME"]
    settings = hadoop_cluster_env(env)
    assert settings.get("TONY_KRB5_KEYTAB"), "not a Kerberos cluster's settings"
    os.environ.update(settings)
    return settings


@pytest.fixture(scope="session")
def task_python():
    """The python of the venv with tensorflow-cpu and torch (scripts/python-env)."""
    out = subprocess.run([os.path.join(SOURCE_DIR, "scripts", "python-env")], check=True,
                         capture_output=True, text=True, timeout=1800).stdout
    return os.path.join(out.strip().splitlines()[-1], "python")


@pytest.fixture
def local():
    import libtony
    return libtony.Submitter.local()
