"""TonyJobTrigger: follows one application in the triggerer, through libtony's asyncio API
(ApplicationMonitor's descriptor on the triggerer's loop), while no worker slot is held."""

from __future__ import annotations

import asyncio
from typing import Any, AsyncIterator, Dict, Optional, Tuple

import libtony
import libtony.aio

from libtony_airflow._compat import BaseTrigger, TriggerEvent
from libtony_airflow.hooks import submitter_from_options


def status_event(app_id: str, status: Optional[libtony.ApplicationStatus],
                 error: Optional[BaseException] = None) -> Dict[str, Any]:
    """What the operator's execute_complete receives (JSON: it crosses processes)."""
    if status is None:
        return {"app_id": app_id, "state": "UNKNOWN", "error": str(error),
                "error_code": getattr(error, "code", "UNKNOWN")}
    return {
        "app_id": app_id,
        "state": status.state.name,
        "diagnostics": status.diagnostics,
        "tracking_url": status.tracking_url,
        "progress": {role: {"total": p.total, "succeeded": p.succeeded, "failed": p.failed}
                     for role, p in status.progress.items()},
    }


class TonyJobTrigger(BaseTrigger):
    def __init__(self, app_id: str, submitter_options: Dict[str, Any],
                 timeout_seconds: Optional[float] = None) -> None:
        super().__init__()
        self.app_id = app_id
        self.submitter_options = submitter_options
        self.timeout_seconds = timeout_seconds

    def serialize(self) -> Tuple[str, Dict[str, Any]]:
        return ("libtony_airflow.triggers.TonyJobTrigger", {
            "app_id": self.app_id,
            "submitter_options": self.submitter_options,
            "timeout_seconds": self.timeout_seconds,
        })

    async def run(self) -> AsyncIterator[TriggerEvent]:
        loop = asyncio.get_running_loop()
        try:
            # Opening asks the ResourceManager: a blocking call, off the loop.
            app = await loop.run_in_executor(
                None, lambda: submitter_from_options(self.submitter_options).open(self.app_id))
            async with libtony.aio.AsyncMonitor() as monitor:
                status = await monitor.wait(app, timeout=self.timeout_seconds)
            yield TriggerEvent(status_event(self.app_id, status))
        except libtony.TonyError as e:
            yield TriggerEvent(status_event(self.app_id, None, e))
