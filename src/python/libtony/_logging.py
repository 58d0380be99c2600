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
import sys
import threading
import traceback
from typing import Optional, Union

from libtony import _tony

_LEVELS = (logging.DEBUG, logging.INFO, logging.WARNING, logging.ERROR)
_lock = threading.Lock()
_thread: Optional[threading.Thread] = None
_logger: Optional[logging.Logger] = None
_generation = 0  # a drain thread of an older routing ends instead of taking lines


def _severity_of(level: int) -> int:
    """The lowest libtony severity whose records `level` lets through."""
    for severity, python_level in enumerate(_LEVELS):
        if python_level >= level:
            return severity
    return len(_LEVELS) - 1


def _emit(logger: logging.Logger, severity: int, path: str, lineno: int, message: str) -> None:
    level = _LEVELS[severity]
    if not logger.isEnabledFor(level):
        return
    record = logger.makeRecord(logger.name, level, path, lineno, message, None, None, func=None)
    try:
        logger.handle(record)
    except Exception:  # a failing handler must not end the routing (lines would pile up)
        sys.stderr.write("libtony: a logging handler failed on one of libtony's lines:\n"
                         + traceback.format_exc())


def _drain(generation: int) -> None:
    while True:
        lines = _tony._log_queue_next(0.5)
        with _lock:
            logger = _logger if generation == _generation else None
        if lines is None or logger is None:  # routing ended (or was started afresh)
            return
        for line in lines:
            _emit(logger, *line)


def _start_drain_locked() -> None:
    global _thread, _generation
    if _thread is not None and _thread.is_alive() and _thread is not threading.current_thread():
        return  # the running drain takes the new logger
    _generation += 1
    _thread = threading.Thread(target=_drain, args=(_generation,), name="libtony-log",
                               daemon=True)
    _thread.start()


def log_to_python(logger: Union[str, logging.Logger] = "libtony",
                  level: Optional[int] = None) -> logging.Logger:
    """Routes libtony's log lines into `logger` (a name or a Logger); returns the Logger.

    `level` (a ``logging`` level) is the lowest severity libtony formats at all; by default the
    logger's effective level (DEBUG lines are not even made while the logger ignores them).
    Calling it again switches the logger or the level; ``log_to_stderr()`` undoes it. Lines a
    handler makes libtony log while it runs go to stderr (they would come round again).
    """
    global _logger
    target = logging.getLogger(logger) if isinstance(logger, str) else logger
    if not isinstance(target, logging.Logger):
        raise TypeError(f"logger must be a name or a logging.Logger, not {type(logger).__name__}")
    effective = target.getEffectiveLevel() if level is None else level
    with _lock:
        _logger = target
        _tony._log_queue_start(_severity_of(effective))
        _start_drain_locked()
    return target


def log_to_stderr() -> None:
    """Back to libtony's own lines on stderr (what ``log_to_python`` replaced).

    Lines already queued still reach the logger first; it may be called from a handler."""
    global _thread, _logger, _generation
    with _lock:
        _tony._log_queue_stop()
        thread, _thread = _thread, None
    if thread is not None and thread is not threading.current_thread():
        thread.join(timeout=5)
    with _lock:
        if _thread is None:  # not routed afresh meanwhile
            _logger = None
            _generation += 1


def _at_exit() -> None:
    # The drain thread waits in C++ with the GIL released; left there while the interpreter
    # finalizes, CPython would end it as it takes the GIL back, through a noexcept C++ frame:
    # std::terminate, and the process aborts. Ended first (atexit runs before that).
    if _thread is not None and _thread.is_alive():
        log_to_stderr()


def _after_fork_in_child() -> None:
    # The routing is still on in the child (the C++ queue starts empty there), but not its
    # thread: lines would pile up unseen.
    global _lock, _thread
    _lock = threading.Lock()
    _thread = None
    if _logger is not None:
        with _lock:
            _start_drain_locked()


atexit.register(_at_exit)
os.register_at_fork(after_in_child=_after_fork_in_child)


def dropped_log_lines() -> int:
    """Lines dropped because the queue was full (a handler slower than libtony's logging)."""
    return _tony._log_queue_dropped()
