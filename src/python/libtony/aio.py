"""asyncio: follow many applications from one event loop, on ApplicationMonitor's descriptor.

    async with libtony.aio.AsyncMonitor() as monitor:
        statuses = await asyncio.gather(*(monitor.wait(app) for app in apps))

Nothing here blocks the loop: events arrive through ``loop.add_reader`` on the monitor's
eventfd, and stopping the monitor (which joins its thread) runs in the default executor.
``await libtony.aio.run(fn, ...)`` is libtony.run's twin.
"""

from __future__ import annotations

import asyncio
import datetime
from typing import Any, AsyncIterator, Callable, Dict, Optional, Union

from libtony import _run, errors
from libtony._tony import (Application, ApplicationEvent, ApplicationMonitor, ApplicationStatus,
                           Submitter)

Timeout = Union[datetime.timedelta, float, None]


class AsyncMonitor:
    """An ApplicationMonitor whose events go to the asyncio loop it was started on."""

    def __init__(self, **options) -> None:
        self._monitor = ApplicationMonitor(**options)
        self._queues: Dict[str, asyncio.Queue] = {}
        self._loop: Optional[asyncio.AbstractEventLoop] = None

    async def __aenter__(self) -> "AsyncMonitor":
        self.start()
        return self

    async def __aexit__(self, *exc) -> None:
        await self.close()

    def start(self) -> None:
        """Starts the monitor's thread and watches its descriptor on the running loop."""
        self._loop = asyncio.get_running_loop()
        self._monitor.start()
        self._loop.add_reader(self._monitor.fileno(), self._dispatch)

    async def close(self) -> None:
        """Stops following everything (open iterators end) and joins the monitor's thread."""
        if self._loop is None:
            return
        self._dispatch()  # events already queued still reach their followers
        self._loop.remove_reader(self._monitor.fileno())
        await self._loop.run_in_executor(None, self._monitor.stop)
        for queue in self._queues.values():
            queue.put_nowait(None)
        self._loop = None

    def _dispatch(self) -> None:
        for event in self._monitor.take_events():
            queue = self._queues.get(event.id)
            if queue is not None:
                queue.put_nowait(event)

    async def events(self, app: Application,
                     timeout: Timeout = None) -> AsyncIterator[ApplicationEvent]:
        """Every change of ``app`` until it is final (the last event has ``last`` set)."""
        if self._loop is None:
            raise RuntimeError("AsyncMonitor is not started (use `async with`)")
        if app.id in self._queues:
            raise RuntimeError(f"{app.id} is followed already")
        queue: asyncio.Queue = asyncio.Queue()
        self._monitor.follow(app, timeout)
        self._queues[app.id] = queue
        try:
            while True:
                event = await queue.get()
                if event is None:  # closed
                    return
                yield event
                if event.last:
                    return
        finally:
            del self._queues[app.id]
            self._monitor.unfollow(app.id)

    async def wait(self, app: Application, timeout: Timeout = None,
                   on_progress: Optional[Callable[[ApplicationStatus], None]] = None
                   ) -> ApplicationStatus:
        """The final status of ``app``; raises the TonyError that ended following."""
        events = self.events(app, timeout)
        try:
            async for event in events:
                if event.error is not None:
                    raise event.error
                if on_progress is not None and event.status is not None:
                    on_progress(event.status)
                if event.last:
                    return event.status
        finally:
            await events.aclose()  # unfollows now, so that app can be followed again at once
        raise errors.AbortedError(f"the monitor was closed while following {app.id}")


async def run(fn: Callable, *args: Any, job_types: Any = None, framework: Optional[str] = None,
              submitter: Optional[Submitter] = None, python: str = "python3",
              kwargs: Optional[Dict[str, Any]] = None, timeout: Timeout = None,
              progress: _run.Progress = True, monitor: Optional[AsyncMonitor] = None,
              **spec_fields: Any) -> Dict[str, Any]:
    """libtony.run without blocking the loop: submitting and reading the results run in the
    default executor, waiting on ``monitor`` (a started AsyncMonitor; default: one of its own).
    Cancelling it kills the job."""
    prepared = _run.prepare(fn, args, kwargs or {}, job_types, framework, python, spec_fields)
    loop = asyncio.get_running_loop()
    try:
        if submitter is None:
            submitter = await loop.run_in_executor(None, Submitter.yarn)
        printer = _run.ProgressPrinter(progress)
        app = await loop.run_in_executor(None, submitter.submit, prepared.spec)
        printer.submitted(app, prepared.spec)
        try:
            if monitor is None:
                async with AsyncMonitor() as own:
                    final = await own.wait(app, timeout, on_progress=printer)
            else:
                final = await monitor.wait(app, timeout, on_progress=printer)
        except BaseException:  # cancelled, the timeout: nobody could collect the results
            await asyncio.shield(loop.run_in_executor(None, _run.kill_quietly, app))
            raise
        return await loop.run_in_executor(None, _run.collect, app, prepared, final)
    finally:
        prepared.close()
