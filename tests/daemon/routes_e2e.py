#!/usr/bin/env python3
"""End to end test of longpiped's routes and reverse mode: three gateways on localhost. Site C
dials out only (A and B name it `peer C dial-in`); A and C know no path to each other (no peer
lines) and route through B, which relays between them. Checks: a stream A -> C through B, 4 MiB
each way, whole and in order, with B's STATUS showing the relayed stream; a stream B -> C over the
session C opened, C's engine having accepted no connection; SIGHUP on B without its relay line
refuses the next relayed stream with a reason; `--check` refuses a route through a non-peer.
Usage: routes_e2e.py PATH/TO/longpiped. Every process it starts is killed at exit."""
import hashlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

LONGPIPED = sys.argv[1]
WORK = tempfile.mkdtemp(prefix="lpd-routes-")
PROCS = {}
TIMEOUT = 30


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


PORTS = {site: free_port() for site in "ABC"}
KEY = os.path.join(WORK, "federation.key")
LINES = {
    "A": ["peer B {B}", "route C via B"],
    "B": ["peer A {A}", "peer C dial-in", "relay A C"],
    "C": ["peer B {B}", "route A via B"],
}


def path(site, suffix):
    return os.path.join(WORK, site + suffix)


def write_config(site, lines):
    addresses = {s: f"127.0.0.1:{p}" for s, p in PORTS.items()}
    with open(path(site, ".conf"), "w") as f:
        f.write(f"site {site}\nsocket {path(site, '.sock')}\nlisten 127.0.0.1:{PORTS[site]}\nkey-file {KEY}\n"
                "stream-window 256K\nengine LONGPIPE_RTT=1\nengine LONGPIPE_PATH_CACHE=off\n")
        for line in lines:
            f.write(line.format(**addresses) + "\n")


def request(site, line):
    with socket.socket(socket.AF_UNIX) as s:
        s.settimeout(TIMEOUT)
        s.connect(path(site, ".sock"))
        s.sendall(line)
        data = b""
        while chunk := s.recv(65536):
            data += chunk
        return data


def status(site):
    return json.loads(request(site, b"LONGPIPE-GATEWAY/1 STATUS json\n"))


def start(site):
    PROCS[site] = subprocess.Popen([LONGPIPED, "--config", path(site, ".conf")], stderr=open(path(site, ".log"), "ab"))
    deadline = time.time() + 10
    while time.time() < deadline:
        try:
            if request(site, b"LONGPIPE-GATEWAY/1 SITE\n") == f"OK {site}\n".encode():
                return
        except OSError:
            time.sleep(0.05)
    raise AssertionError(f"gateway {site} did not answer SITE")


def wait_for(what, check, seconds=20):
    deadline = time.time() + seconds
    while time.time() < deadline:
        if check():
            return
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def peer(site, name):
    return next(p for p in status(site)["peers"] if p["site"] == name)


def echo_server():
    listener = socket.create_server(("127.0.0.1", 0))

    def serve(connection):
        while data := connection.recv(65536):
            connection.sendall(data)
        connection.shutdown(socket.SHUT_WR)

    def accept():
        while True:
            connection, _ = listener.accept()
            threading.Thread(target=serve, args=(connection,), daemon=True).start()

    threading.Thread(target=accept, daemon=True).start()
    return listener.getsockname()[1]


def connect(site, target):
    s = socket.socket(socket.AF_UNIX)
    s.settimeout(TIMEOUT)
    s.connect(path(site, ".sock"))
    s.sendall(f"LONGPIPE-GATEWAY/1 CONNECT {target}\n".encode())
    line = b""
    while not line.endswith(b"\n") and (c := s.recv(1)):
        line += c
    assert line == b"OK\n", f"CONNECT {target}: {line!r}"
    return s


def echo_through(site, target, size, during=None):
    """Sends `size` random bytes, reads them back; `during` runs once half came back."""
    data = os.urandom(size)
    s = connect(site, target)

    def send():
        s.sendall(data)
        s.shutdown(socket.SHUT_WR)

    threading.Thread(target=send, daemon=True).start()
    back = hashlib.sha256()
    got = 0
    while chunk := s.recv(65536):
        back.update(chunk)
        got += len(chunk)
        if during and got >= size // 2:
            during()
            during = None
    s.close()
    assert got == size and back.digest() == hashlib.sha256(data).digest(), f"{target}: {got} of {size} bytes, or altered"


def main():
    with open(KEY, "w") as f:
        f.write("routes-e2e-federation-key\n")
    os.chmod(KEY, 0o600)
    for site, lines in LINES.items():
        write_config(site, lines)
    for site in "ABC":
        start(site)
    wait_for("B to see A and C up", lambda: peer("B", "A")["up"] and peer("B", "C")["up"])
    wait_for("C to see B up", lambda: peer("C", "B")["up"])
    assert peer("B", "C")["mode"] == "dial-in" and peer("C", "B")["mode"] == "dial"
    port = echo_server()

    def relayed_shown():
        relayed = status("B")["relayed_streams"]
        assert any(r["from"] == "A" and r["to"] == "C" and r["bytes_forward"] > 0 for r in relayed), relayed

    echo_through("A", f"C/127.0.0.1:{port}", 4 << 20, during=relayed_shown)
    echo_through("C", f"A/127.0.0.1:{port}", 1 << 20)
    echo_through("B", f"C/127.0.0.1:{port}", 1 << 20)  # over the session C opened
    assert status("C")["engine"]["accepted_connections"] == 0, "C's gateway accepted a connection"
    wait_for("B's relayed streams to end", lambda: status("B")["relayed_streams"] == [])
    print("ok: A <-> C through B, whole and in order; B -> C on C's own session; C accepted nothing")

    # SIGHUP: B no longer relays; the next stream A -> C is reset with B's reason.
    write_config("B", [line for line in LINES["B"] if not line.startswith("relay")])
    PROCS["B"].send_signal(signal.SIGHUP)
    wait_for("B to reload", lambda: "reloaded" in open(path("B", ".log")).read())
    s = connect("A", f"C/127.0.0.1:{port}")
    s.sendall(b"hello")
    try:
        assert s.recv(100) == b"", "a stream B no longer relays carried bytes"
    except ConnectionResetError:
        pass
    wait_for("B's refusal in its log", lambda: "does not relay between A and C (no 'relay A C' line)" in open(path("B", ".log")).read())
    wait_for("A's log of the reset", lambda: "relay refused: site B does not relay" in open(path("A", ".log")).read())
    print("ok: after SIGHUP without the relay line, B refuses to relay A -> C and says why")

    PORTS["X"] = free_port()
    write_config("X", ["peer B {B}", "route C via D"])
    check = subprocess.run([LONGPIPED, "--check", "--config", path("X", ".conf")], capture_output=True, text=True, timeout=TIMEOUT)
    assert check.returncode == 2 and "route: via D, which is not a direct peer" in check.stderr, (check.returncode, check.stderr)
    print("ok: --check refuses a route through a site that is not a direct peer")


if __name__ == "__main__":
    try:
        main()
    except BaseException:
        for site in "ABC":
            if os.path.exists(path(site, ".log")):
                sys.stderr.write(f"--- {site}.log\n" + open(path(site, ".log")).read()[-3000:])
        raise
    finally:
        for proc in PROCS.values():
            proc.kill()
            proc.wait()
        shutil.rmtree(WORK, ignore_errors=True)
