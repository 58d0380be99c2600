"""libtony's log lines in Python's ``logging``.

By default libtony writes its own lines ("I1127 07:30:01.123 file.cc:42] ...") to stderr. After
``libtony.log_to_python()`` they become records of a ``logging.Logger`` ("libtony" unless
named), whatever thread of libtony logged them, so that the host's handlers (a file, Airflow's
task log, JSON) take them as they take its own.

The C++ side never waits for the GIL: lines go into a bounded queue (10,000 lines; beyond that
the oldest are dropped and counted) that a daemon thread of this module drains, so a record
reaches its handlers a moment after libtony logged it, in order.
"""

from __future__ import annotations

import atexit
import logging
import os
import threading
from typing import Optional, Union

from libtony import _tony

_LEVELS = (logging.DEBUG, logging.INFO, logging.WARNING, logging.ERROR)
_lock = threading.Lock()
_thread: Optional[threading.Thread] = None
_logger: Optional[logging.Logger] = None


def _severity_of(level: int) -> int:
    """The lowest libtony severity whose records `level` lets through."""
    for severity, python_level in enumerate(_LEVELS):
        if python_level >= level:
            return severity
    return len(_LEVELS) - 1


def _drain() -> None:
    while True:
        lines = _tony._log_queue_next(0.5)
        if lines is None:  # log_to_stderr() ended the routing
            return
        logger = _logger
        if logger is None:
            continue
        for severity, path, lineno, message in lines:
            level = _LEVELS[severity]
            if not logger.isEnabledFor(level):
                continue
            record = logger.makeRecord(logger.name, level, path, lineno, message, None, None,
                                       func=None)
            logger.handle(record)


def log_to_python(logger: Union[str, logging.Logger] = "libtony",
                  level: Optional[int] = None) -> logging.Logger:
    """Routes libtony's log lines into `logger` (a name or a Logger); returns the Logger.

    `level` (a ``logging`` level) is the lowest severity libtony formats at all; by default the
    logger's effective level (DEBUG lines are not even made while the logger ignores them).
    Calling it again switches the logger or the level; ``log_to_stderr()`` undoes it.
    """
    global _thread, _logger
    target = logging.getLogger(logger) if isinstance(logger, str) else logger
    if not isinstance(target, logging.Logger):
        raise TypeError(f"logger must be a name or a logging.Logger, not {type(logger).__name__}")
    effective = target.getEffectiveLevel() if level is None else level
    with _lock:
        _logger = target
        _tony._log_queue_start(_severity_of(effective))
        _start_drain_locked()
    return target


def _start_drain_locked() -> None:
    global _thread
    if _thread is None or not _thread.is_alive():
        _thread = threading.Thread(target=_drain, name="libtony-log", daemon=True)
        _thread.start()


def log_to_stderr() -> None:
    """Back to libtony's own lines on stderr (what ``log_to_python`` replaced)."""
    global _thread, _logger
    with _lock:
        _tony._log_queue_stop()
        thread, _thread = _thread, None
    if thread is not None:
        thread.join(timeout=5)
    with _lock:
        _logger = None


def _at_exit() -> None:
    # The drain thread waits in C++ with the GIL released; left there while the interpreter
    # finalizes, CPython would end it as it takes the GIL back, through a noexcept C++ frame:
    # std::terminate, and the process aborts. Ended first (atexit runs before that).
    if _logger is not None:
        log_to_stderr()


def _after_fork_in_child() -> None:
    # The routing is still on in the child, but not its thread: lines would pile up unseen.
    global _lock
    _lock = threading.Lock()
    if _logger is not None:
        with _lock:
            _start_drain_locked()


atexit.register(_at_exit)
os.register_at_fork(after_in_child=_after_fork_in_child)


def dropped_log_lines() -> int:
    """Lines dropped because the queue was full (a handler slower than libtony's logging)."""
    return _tony._log_queue_dropped()
