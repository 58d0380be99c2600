"""libtony.run's bootstrap: runs in every task of the job, under the task's own Python.

    python libtony_run_fn.py libtony_run_fn.pkl

It unpickles (fn, args, kwargs), calls fn in the environment the executor set (TF_CONFIG,
MASTER_ADDR, ...) and writes a record, base64 of a plain pickle of a dict, to the file
``libtony-run-result`` of the task's log directory, where the client reads it as a log file
(app.logs). It uses only the standard library until it imports cloudpickle, so that a task's
Python without cloudpickle still gets a record naming the fix. Exit codes: 0 done, 1 fn raised
(or its value cannot be pickled), 2 the function could not be loaded.
"""

import base64
import os
import pickle
import sys
import traceback

RESULT_FILE = "libtony-run-result"
EXIT_RAISED = 1
EXIT_LOAD = 2


def _task_id():
    return "%s:%s" % (os.environ.get("DTF_TASK_JOB_NAME", "?"),
                      os.environ.get("DTF_TASK_INDEX", "?"))


def _result_dir():
    """The task's log directory: the local backend's, else the YARN container's (LOG_DIRS may
    list one per NodeManager disk; the executor's stderr is in the container's)."""
    local = os.environ.get("TONY_TASK_LOG_DIR")
    if local:
        return local
    dirs = [d for d in os.environ.get("LOG_DIRS", "").split(",") if d]
    for d in dirs:
        if os.path.exists(os.path.join(d, "stderr")):
            return d
    return dirs[0] if dirs else None


def _write(record):
    where = _result_dir()
    if where is None:
        sys.stderr.write("libtony.run: neither TONY_TASK_LOG_DIR nor LOG_DIRS is set: "
                         "the result of %s cannot reach the client\n" % _task_id())
        return
    data = base64.b64encode(pickle.dumps(record, protocol=4)) + b"\n"
    tmp = os.path.join(where, "." + RESULT_FILE + ".tmp")
    with open(tmp, "wb") as f:
        f.write(data)
    os.replace(tmp, os.path.join(where, RESULT_FILE))  # never half a record


def _fail(code, error, trace=""):
    sys.stderr.write("libtony.run: %s: %s\n%s" % (_task_id(), error, trace))
    _write({"ok": False, "exit_code": code, "error": error, "traceback": trace})
    return code


def _load(path):
    try:
        import cloudpickle  # noqa: F401  (the pickle refers to its functions)
    except ImportError:
        return None, _fail(
            EXIT_LOAD, "this task's Python (%s) has no cloudpickle, which libtony.run needs to "
            "unpickle the function: install it there (pip install cloudpickle), or give "
            "libtony.run a python= or python_env= that has it" % sys.executable)
    try:
        with open(path, "rb") as f:
            return pickle.load(f), 0
    except Exception as e:  # e.g. a module the function uses is not installed in the task
        return None, _fail(
            EXIT_LOAD, "cannot load the function: %s: %s (modules imported by name on the "
            "client must be importable in the task: install them in the task's Python, or ship "
            "them with source_dir=)" % (type(e).__name__, e), traceback.format_exc())


def main(argv):
    if len(argv) != 2:
        sys.stderr.write("usage: %s PAYLOAD\n" % argv[0])
        return EXIT_LOAD
    payload, code = _load(argv[1])
    if payload is None:
        return code
    fn, args, kwargs = payload
    import cloudpickle
    try:
        value = fn(*args, **kwargs)
    except SystemExit as e:
        if e.code in (None, 0):
            value = None
        else:
            return _fail(e.code if isinstance(e.code, int) else EXIT_RAISED,
                         "the function called sys.exit(%r)" % (e.code,))
    except Exception as e:
        return _fail(EXIT_RAISED, "%s: %s" % (type(e).__name__, e), traceback.format_exc())
    try:
        data = cloudpickle.dumps(value)
    except Exception as e:
        return _fail(EXIT_RAISED, "cannot pickle the function's return value (%s): %s: %s" %
                     (type(value).__name__, type(e).__name__, e))
    _write({"ok": True, "value": data})
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
