"""Exceptions of libtony: one class per absl status code, each a TonyError.

Where a Python built-in exception means the same, the class is also one of those, so that
``except ValueError`` catches a bad JobSpec and ``except TimeoutError`` a deadline.
"""

from __future__ import annotations


class TonyError(Exception):
    """A libtony call failed. ``code`` is the absl status code's name, e.g. "NOT_FOUND"."""

    code: str = "UNKNOWN"
    code_value: int = 2

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class CancelledError(TonyError):
    code, code_value = "CANCELLED", 1


class UnknownError(TonyError):
    code, code_value = "UNKNOWN", 2


class InvalidArgumentError(TonyError, ValueError):
    code, code_value = "INVALID_ARGUMENT", 3


class DeadlineExceededError(TonyError, TimeoutError):
    code, code_value = "DEADLINE_EXCEEDED", 4


class NotFoundError(TonyError, LookupError):
    code, code_value = "NOT_FOUND", 5


class AlreadyExistsError(TonyError):
    code, code_value = "ALREADY_EXISTS", 6


class PermissionDeniedError(TonyError, PermissionError):
    code, code_value = "PERMISSION_DENIED", 7


class ResourceExhaustedError(TonyError):
    code, code_value = "RESOURCE_EXHAUSTED", 8


class FailedPreconditionError(TonyError):
    code, code_value = "FAILED_PRECONDITION", 9


class AbortedError(TonyError):
    code, code_value = "ABORTED", 10


class OutOfRangeError(TonyError):
    code, code_value = "OUT_OF_RANGE", 11


class UnimplementedError(TonyError, NotImplementedError):
    code, code_value = "UNIMPLEMENTED", 12


class InternalError(TonyError):
    code, code_value = "INTERNAL", 13


class UnavailableError(TonyError, ConnectionError):
    code, code_value = "UNAVAILABLE", 14


class DataLossError(TonyError):
    code, code_value = "DATA_LOSS", 15


class UnauthenticatedError(TonyError, PermissionError):
    code, code_value = "UNAUTHENTICATED", 16


_BY_CODE = {
    cls.code_value: cls
    for cls in (CancelledError, UnknownError, InvalidArgumentError, DeadlineExceededError,
                NotFoundError, AlreadyExistsError, PermissionDeniedError,
                ResourceExhaustedError, FailedPreconditionError, AbortedError, OutOfRangeError,
                UnimplementedError, InternalError, UnavailableError, DataLossError,
                UnauthenticatedError)
}


def from_status(code: int, message: str) -> TonyError:
    """The exception for an absl status (called by the C++ module)."""
    return _BY_CODE.get(code, UnknownError)(message)


class TaskError(TonyError):
    """A task of libtony.run failed: ``task`` ("worker:1"), its ``exit_code`` (None when unknown),
    ``error`` (the exception's type and message, or what went wrong), ``remote_traceback`` (the
    task's traceback text, or its stderr's last lines), the job's ``app_id`` and
    ``diagnostics``."""

    def __init__(self, app_id: str, task: str, exit_code, error: str, remote_traceback: str,
                 diagnostics: str = "") -> None:
        code = "unknown" if exit_code is None else exit_code
        message = f"{task} of {app_id} failed (exit code {code}): {error}"
        if remote_traceback:
            message += "\n" + remote_traceback.rstrip("\n")
        super().__init__(message)
        self.app_id = app_id
        self.task = task
        self.exit_code = exit_code
        self.error = error
        self.remote_traceback = remote_traceback
        self.diagnostics = diagnostics
