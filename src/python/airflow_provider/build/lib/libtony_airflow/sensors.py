"""TonyApplicationSensor: waits for an application (by id) to end, e.g. one submitted by
`ytf-submit --detach` from a BashOperator, or by another DAG."""

from __future__ import annotations

from typing import Any

import libtony

from libtony_airflow._compat import AirflowException, BaseSensorOperator
from libtony_airflow.hooks import TonyHook


class TonyApplicationSensor(BaseSensorOperator):
    template_fields = ("app_id",)

    def __init__(self, *, app_id: str, tony_conn_id: str = TonyHook.default_conn_name,
                 fail_on_failure: bool = True, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.app_id = app_id
        self.tony_conn_id = tony_conn_id
        self.fail_on_failure = fail_on_failure

    def poke(self, context: Any) -> bool:
        status = TonyHook(self.tony_conn_id).get_conn().open(self.app_id).status(timeout=60)
        self.log.info("%s: %s", self.app_id, status.state.name)
        if not status.final:
            return False
        if self.fail_on_failure and status.state != libtony.AppState.SUCCEEDED:
            raise AirflowException(f"{self.app_id} ended {status.state.name}: "
                                   f"{status.diagnostics}")
        return True
