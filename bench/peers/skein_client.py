"""Skein's side of bench/peers/run: submit one job of the bench's shape and wait for its end.

Runs in the Skein venv the bench made (it imports the `skein` package downloaded from PyPI).
A user's Python program on Skein does the same: skein.Client() starts the Java driver (no
global driver is running: SKEIN_CONFIG points at the bench's own directory), submit() stages
and submits the application, and the program polls the application report until YARN has the
final state (Skein 0.8.2 has no blocking wait; we poll every 0.1 s).

  python skein_client.py --shape ps:1,worker:2 --command true [--name N]
                         [--memory 128] [--am_memory 256]

Prints the application id as soon as it exists, then `SKEIN_DRIVER_READY <seconds>` (time to
the driver's start) and the final state; exit 0 when the final status is SUCCEEDED.
"""

import argparse
import signal
import sys
import time

import skein


def main():
    t0 = time.time()
    ap = argparse.ArgumentParser()
    ap.add_argument("--shape", required=True)
    ap.add_argument("--command", required=True)
    ap.add_argument("--name", default="bench-peers-skein")
    ap.add_argument("--memory", type=int, default=128, help="MiB per task container")
    ap.add_argument("--am_memory", type=int, default=256, help="MiB of the AM container")
    args = ap.parse_args()

    services = {}
    for part in args.shape.split(","):
        role, count = part.split(":")
        services[role] = skein.Service(
            instances=int(count),
            resources=skein.Resources(memory=args.memory, vcores=1),
            script=args.command)
    spec = skein.ApplicationSpec(
        name=args.name,
        master=skein.Master(resources=skein.Resources(memory=args.am_memory, vcores=1)),
        services=services)

    client = skein.Client()
    print(f"SKEIN_DRIVER_READY {time.time() - t0:.3f}", flush=True)
    app = None

    def on_term(signum, frame):
        # The bench stops us (timeout, Ctrl-C): take the application down with us.
        if app is not None:
            try:
                client.kill_application(app)
            except Exception:  # the bench also kills it by id
                pass
        client.close()
        sys.exit(1)

    signal.signal(signal.SIGTERM, on_term)
    try:
        app = client.submit(spec)
        print(app, flush=True)
        while True:
            report = client.application_report(app)
            if str(report.state) in ("FINISHED", "FAILED", "KILLED"):
                break
            time.sleep(0.1)
    finally:
        client.close()
    print(f"{app} {report.state} {report.final_status}", flush=True)
    return 0 if str(report.final_status) == "SUCCEEDED" else 1


if __name__ == "__main__":
    sys.exit(main())
