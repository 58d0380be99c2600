"""TonyHook: the cluster a job runs on, kept as an Airflow connection of type "tony".

Connection fields: ``extra`` holds ``conf_dir`` (the Hadoop configuration directory; default
$HADOOP_CONF_DIR), ``keytab`` (with ``login`` as the Kerberos principal), ``user``,
``broker_tls``, ``backend`` ("yarn", or "local" for tests and laptops) and ``reattach_secret``
(the key of the tags a retried task finds its application by; at least 16 characters, e.g.
``openssl rand -hex 32``). For example:

    AIRFLOW_CONN_TONY_DEFAULT='{"conn_type": "tony", "extra": {"conf_dir": "/etc/hadoop/conf"}}'
"""

from __future__ import annotations

from typing import Any, Dict, Optional

import libtony

from libtony_airflow._compat import BaseHook

MIN_REATTACH_SECRET = 16  # libtony.reattach_tag's minimum


class TonyHook(BaseHook):
    conn_name_attr = "tony_conn_id"
    default_conn_name = "tony_default"
    conn_type = "tony"
    hook_name = "libtony (Hadoop YARN)"

    def __init__(self, tony_conn_id: str = default_conn_name, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.tony_conn_id = tony_conn_id

    def submitter_options(self) -> Dict[str, Any]:
        """The connection as Submitter.yarn/local keyword arguments (JSON-serialisable: the
        trigger carries them to the triggerer)."""
        try:
            conn = self.get_connection(self.tony_conn_id)
        except Exception:  # no connection: the environment's Hadoop configuration
            if self.tony_conn_id != self.default_conn_name:
                raise
            return {"backend": "yarn"}
        extra = conn.extra_dejson or {}
        options: Dict[str, Any] = {"backend": extra.get("backend", "yarn")}
        for key in ("conf_dir", "user", "keytab"):
            if extra.get(key):
                options[key] = extra[key]
        if conn.login and extra.get("keytab"):
            options["principal"] = conn.login
        if extra.get("broker_tls"):
            options["broker_tls"] = bool(extra["broker_tls"])
        return options

    def reattach_secret(self) -> Optional[str]:
        """The connection's ``reattach_secret``, or None. Kept out of submitter_options(): those
        travel with the trigger into Airflow's database."""
        try:
            conn = self.get_connection(self.tony_conn_id)
        except Exception:  # no connection: no secret (submitter_options says the rest)
            return None
        secret = (conn.extra_dejson or {}).get("reattach_secret")
        if not secret:
            return None
        if not isinstance(secret, str) or len(secret) < MIN_REATTACH_SECRET:
            raise ValueError(f"connection {self.tony_conn_id}: extra reattach_secret must be a "
                             f"string of at least {MIN_REATTACH_SECRET} characters (e.g. the "
                             f"output of `openssl rand -hex 32`)")
        return secret

    def get_conn(self) -> libtony.Submitter:
        return submitter_from_options(self.submitter_options())


def submitter_from_options(options: Dict[str, Any]) -> libtony.Submitter:
    # libtony's own lines (submission, retries, warnings) as records of the "libtony" logger:
    # written by C++ to the process's stderr they would bypass Airflow's task log.
    libtony.log_to_python()
    options = dict(options)
    if options.pop("backend", "yarn") == "local":
        return libtony.Submitter.local()
    return libtony.Submitter.yarn(**options)

