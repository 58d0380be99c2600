"""libtony.run's bootstrap: runs in every task of the job, under the task's own Python.

    python libtony_run_fn.py libtony_run_fn.pkl

The payload is a 32-byte key, then the cloudpickled (fn, args, kwargs). It calls fn in the
environment the executor set (TF_CONFIG, MASTER_ADDR, ...) and writes a record, a plain pickle
of a dict, to the file ``libtony-run-result`` of the task's log directory, where the client reads
it as a log file (app.logs, over the NodeManager's plain HTTP on YARN). The record is signed,
``<hex HMAC-SHA256 under the key> <base64 pickle>``: the client unpickles only what this run's
tasks wrote, never what someone on the way put there. It uses only the standard library until
it imports cloudpickle, so that a task's Python without cloudpickle still gets a record naming
the fix. Exit codes: 0 done, 1 fn raised (or its value cannot be pickled), 2 the function
could not be loaded.
"""

import base64
import hashlib
import hmac
import os
import pickle
import sys
import traceback

RESULT_FILE = "libtony-run-result"
EXIT_RAISED = 1
EXIT_LOAD = 2
KEY_BYTES = 32


def sign(key, data):
    """The record file's text for the pickled record `data`."""
    mac = hmac.new(key, data, hashlib.sha256).hexdigest()
    return mac + " " + base64.b64encode(data).decode("ascii") + "\n"


def verify(key, text):
    """The pickled record of a record file's text; None when the signature is not `key`'s."""
    mac, _, encoded = text.strip().partition(" ")
    try:
        data = base64.b64decode(encoded, validate=True)
    except ValueError:
        return None
    good = hmac.new(key, data, hashlib.sha256).hexdigest().encode("ascii")
    return data if hmac.compare_digest(mac.encode("utf-8", "replace"), good) else None


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


def _write(key, record):
    where = _result_dir()
    if where is None:
        sys.stderr.write("libtony.run: neither TONY_TASK_LOG_DIR nor LOG_DIRS is set: "
                         "the result of %s cannot reach the client\n" % _task_id())
        return
    text = sign(key, pickle.dumps(record, protocol=4))
    tmp = os.path.join(where, "." + RESULT_FILE + ".tmp")
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, os.path.join(where, RESULT_FILE))  # never half a record


def _fail(key, code, error, trace=""):
    sys.stderr.write("libtony.run: %s: %s\n%s" % (_task_id(), error, trace))
    _write(key, {"ok": False, "exit_code": code, "error": error, "traceback": trace})
    return code


def _load(key, call):
    try:
        import cloudpickle  # noqa: F401  (the pickle refers to its functions)
    except ImportError:
        return None, _fail(
            key, EXIT_LOAD, "this task's Python (%s) has no cloudpickle, which libtony.run needs "
            "to unpickle the function: install it there (pip install cloudpickle), or give "
            "libtony.run a python= or python_env= that has it" % sys.executable)
    try:
        return pickle.loads(call), 0
    except Exception as e:  # e.g. a module the function uses is not installed in the task
        return None, _fail(
            key, EXIT_LOAD, "cannot load the function: %s: %s (modules imported by name on the "
            "client must be importable in the task: install them in the task's Python, or ship "
            "them with source_dir=)" % (type(e).__name__, e), traceback.format_exc())


def main(argv):
    if len(argv) != 2:
        sys.stderr.write("usage: %s PAYLOAD\n" % argv[0])
        return EXIT_LOAD
    with open(argv[1], "rb") as f:
        raw = f.read()
    key = raw[:KEY_BYTES]
    payload, code = _load(key, raw[KEY_BYTES:])
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
            return _fail(key, e.code if isinstance(e.code, int) else EXIT_RAISED,
                         "the function called sys.exit(%r)" % (e.code,))
    except Exception as e:
        return _fail(key, EXIT_RAISED, "%s: %s" % (type(e).__name__, e), traceback.format_exc())
    try:
        data = cloudpickle.dumps(value)
    except Exception as e:
        return _fail(key, EXIT_RAISED, "cannot pickle the function's return value (%s): %s: %s" %
                     (type(value).__name__, type(e).__name__, e))
    _write(key, {"ok": True, "value": data})
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
