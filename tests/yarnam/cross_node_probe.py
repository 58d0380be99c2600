# Copyright libtony authors.
#
# Run as every task of a job (yarn_job_itest): checks that the address this task advertises in
# TF_CONFIG is its node's own (not loopback, an address of this network namespace), then serves
# on it and reaches every other task at the address that task advertises.
import json
import os
import socket
import sys
import threading
import time

cfg = json.loads(os.environ["TF_CONFIG"])
me = cfg["task"]
addrs = [(job, i, a) for job, lst in cfg["cluster"].items() for i, a in enumerate(lst)]
mine = cfg["cluster"][me["type"]][me["index"]]
host, port = mine.rsplit(":", 1)
port = int(port)
ip = socket.gethostbyname(host)
print(f"task {me['type']}:{me['index']} advertises {mine} ({ip}); NM_HOST={os.environ.get('NM_HOST')}"
      f"; hostname={socket.gethostname()}", flush=True)
if ip.startswith("127."):
    print(f"advertised address {mine} is loopback", file=sys.stderr)
    sys.exit(4)

# Binding the advertised IP (not 0.0.0.0) fails unless the address is this node's own.
server = socket.socket()
server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
server.bind((ip, port))
server.listen(8)
peers = [(job, i, a) for job, i, a in addrs if a != mine]
served = []


def serve():
    while len(served) < len(peers):
        conn, _ = server.accept()
        served.append(conn.recv(256).decode())
        conn.sendall(f"hello from {mine}".encode())
        conn.close()


t = threading.Thread(target=serve, daemon=True)
t.start()
for job, i, a in peers:
    h, p = a.rsplit(":", 1)
    deadline = time.time() + 120
    while True:
        try:
            with socket.create_connection((h, int(p)), timeout=5) as c:
                src = c.getsockname()[0]
                c.sendall(f"{mine}".encode())
                reply = c.recv(256).decode()
            print(f"reached {job}:{i} at {a} from {src}: {reply}", flush=True)
            break
        except OSError as e:
            if time.time() > deadline:
                print(f"cannot reach {job}:{i} at {a}: {e}", file=sys.stderr)
                sys.exit(5)
            time.sleep(0.5)
t.join(120)
if len(served) < len(peers):
    print(f"only {len(served)} of {len(peers)} peers reached this task", file=sys.stderr)
    sys.exit(6)
print(f"probe done; reached by {sorted(served)}", flush=True)
