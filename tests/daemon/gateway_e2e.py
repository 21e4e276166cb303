#!/usr/bin/env python3
"""End to end test of longpiped without liblongpipe: two gateways on localhost (sites A and B, one
federation key), plain TCP servers at "site B", and a client speaking the Unix-socket protocol to
gateway A. Usage: gateway_e2e.py PATH/TO/longpiped. Every process it starts is killed at exit,
also on failure; every wait has a timeout."""
import hashlib
import json
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

LONGPIPED = sys.argv[1]
WORK = tempfile.mkdtemp(prefix="lpd-e2e-")
PROCS = {}
TIMEOUT = 30


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


PORTS = {site: free_port() for site in "ABCD"}
OTHER = {"A": "B", "B": "A", "C": "D", "D": "C"}  # two pairs: A and B, and C and D (outages)
KEY = os.path.join(WORK, "federation.key")


def config_path(site):
    return os.path.join(WORK, site + ".conf")


def sock_path(site):
    return os.path.join(WORK, site + ".sock")


def write_config(site, extra=""):
    other = OTHER[site]
    with open(config_path(site), "w") as f:
        f.write(f"site {site}\nsocket {sock_path(site)}\nlisten 127.0.0.1:{PORTS[site]}\n"
                f"key-file {KEY}\npeer {other} 127.0.0.1:{PORTS[other]}\nstream-window 1M\n"
                f"engine LONGPIPE_RTT=1\nengine LONGPIPE_PATH_CACHE=off\n{extra}")


def request(site, line, timeout=TIMEOUT):
    """Sends one request line; returns everything the gateway writes until it closes."""
    with socket.socket(socket.AF_UNIX) as s:
        s.settimeout(timeout)
        s.connect(sock_path(site))
        s.sendall(line)
        data = b""
        while chunk := s.recv(65536):
            data += chunk
        return data


def start(site):
    log = open(os.path.join(WORK, site + ".log"), "ab")
    PROCS[site] = subprocess.Popen([LONGPIPED, "--config", config_path(site)], stderr=log)
    deadline = time.time() + 10
    while time.time() < deadline:
        try:
            if request(site, b"LONGPIPE-GATEWAY/1 SITE\n", 2) == f"OK {site}\n".encode():
                return
        except OSError:
            pass
        time.sleep(0.05)
    raise AssertionError(f"gateway {site} did not answer SITE within 10 s")


def status(site):
    return json.loads(request(site, b"LONGPIPE-GATEWAY/1 STATUS json\n"))


def wait_peer_up(site, peer, not_instance=None):
    deadline = time.time() + 20
    while time.time() < deadline:
        for p in status(site)["peers"]:
            if p["site"] == peer and p["up"] and p["instance"] != not_instance:
                return p
        time.sleep(0.1)
    raise AssertionError(f"{site} never saw {peer} up")


def open_stream(target, site="A", early=b""):
    """CONNECT; returns the connected socket (after OK) or raises with the ERR line."""
    s = socket.socket(socket.AF_UNIX)
    s.settimeout(TIMEOUT)
    s.connect(sock_path(site))
    s.sendall(b"LONGPIPE-GATEWAY/1 CONNECT " + target.encode() + b"\n" + early)
    line = b""
    while not line.endswith(b"\n"):
        c = s.recv(1)
        if not c:
            break
        line += c
    if line != b"OK\n":
        s.close()
        raise ConnectionError(line.decode(errors="replace").strip())
    return s


class Server:
    """A TCP server at "site B": echo (writes back what it reads, FIN after FIN) or sink (never reads)."""

    def __init__(self, echo=True):
        self.listener = socket.socket()
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(64)
        self.port = self.listener.getsockname()[1]
        self.echo = echo
        self.held = []
        threading.Thread(target=self.accept, daemon=True).start()

    def accept(self):
        while True:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            if self.echo:
                threading.Thread(target=self.serve, args=(conn,), daemon=True).start()
            else:
                self.held.append(conn)

    @staticmethod
    def serve(conn):
        try:
            while data := conn.recv(65536):
                conn.sendall(data)
            conn.shutdown(socket.SHUT_WR)
        except OSError:
            pass
        finally:
            conn.close()


def echo_round_trip(target, size, seed, site="A"):
    """Sends `size` random bytes through the stream to an echo server while reading them back;
    half-closes; checks the bytes came back intact and in order, then EOF."""
    data = random.Random(seed).randbytes(size)
    s = open_stream(target, site)
    errors = []

    def writer():
        try:
            view = memoryview(data)
            for i in range(0, size, 100000):
                s.sendall(view[i:i + 100000])
            s.shutdown(socket.SHUT_WR)
        except OSError as e:
            errors.append(e)

    t = threading.Thread(target=writer)
    t.start()
    digest, got = hashlib.sha256(), 0
    while chunk := s.recv(1 << 20):
        digest.update(chunk)
        got += len(chunk)
    t.join(TIMEOUT)
    s.close()
    assert not errors, f"writer failed: {errors}"
    assert got == size, f"{target}: {got} of {size} bytes came back"
    assert digest.digest() == hashlib.sha256(data).digest(), f"{target}: bytes differ"


def check(name, fn):
    started = time.time()
    fn()
    print(f"ok   {name} ({time.time() - started:.1f} s)", flush=True)


def main():
    with open(KEY, "w") as f:
        f.write("federation key of the end-to-end test\n")
    os.chmod(KEY, 0o600)
    # A gives up on a peer whose host refuses connections after 3 s (the gateway's default: 5 min).
    write_config("A", "engine LONGPIPE_DEAD_PEER_MS=3000\nengine LONGPIPE_KEEPALIVE_MS=500\n")
    write_config("B")
    start("A")
    start("B")
    echo = Server(echo=True)
    sink = Server(echo=False)
    b_echo = f"B/127.0.0.1:{echo.port}"

    def status_names_peer():
        peer = wait_peer_up("A", "B")
        assert peer["endpoint"] == f"127.0.0.1:{PORTS['B']}"
        assert status("A")["site"] == "A"

    def refusals():
        for target, expect in [("Z/127.0.0.1:1", "ERR unknown site Z"), ("B/nohost", "ERR bad endpoint"),
                               ("nosite:1", "ERR bad endpoint")]:
            try:
                open_stream(target)
                raise AssertionError(f"CONNECT {target} accepted")
            except ConnectionError as e:
                assert str(e).startswith(expect), f"CONNECT {target}: {e}"
        assert request("A", b"HELLO\n").startswith(b"ERR ")
        assert request("A", b"x" * 600).startswith(b"ERR request line longer than 512")
        # Stream bytes sent at once after a refused CONNECT do not turn the answer into a reset.
        assert request("A", b"LONGPIPE-GATEWAY/1 CONNECT Z/h:1\n" + b"early" * 100) == b"ERR unknown site Z\n"

    def client_checks():
        # A client that sends no request line is answered and closed after 5 s.
        started = time.time()
        assert request("A", b"", 15).startswith(b"ERR no request line within 5 s")
        assert 4 < time.time() - started < 12
        if os.geteuid() != 0:
            return  # the uid check needs another uid to try
        os.chmod(WORK, 0o755)
        child = os.fork()
        if child == 0:  # as nobody: refused by SO_PEERCRED (allow-uid defaults to root and its own)
            try:
                os.setgid(65534)
                os.setuid(65534)
                os._exit(0 if request("A", b"LONGPIPE-GATEWAY/1 SITE\n", 10) == b"ERR uid 65534 not allowed\n" else 1)
            except BaseException:
                os._exit(2)
        _, code = os.waitpid(child, 0)
        assert code == 0, f"a client of uid 65534 was not refused (child status {code})"

    def many_streams():
        failures = []

        def one(i):
            if not _try(lambda: echo_round_trip(b_echo, 4 << 20, i)):
                failures.append(i)

        threads = [threading.Thread(target=one, args=(i,)) for i in range(6)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(120)
        assert not failures, "a concurrent stream failed (see above)"

    def slow_beside_fast():
        stuck = open_stream(f"B/127.0.0.1:{sink.port}")
        stuck.settimeout(2)
        sent = 0
        try:
            while sent < (64 << 20):
                sent += stuck.send(b"s" * 65536)
        except (socket.timeout, BlockingIOError):
            pass
        assert sent < (64 << 20), "a stream whose reader never reads took 64 MiB"
        echo_round_trip(b_echo, 8 << 20, 99)  # unaffected by the stuck stream
        stuck.close()

    def restart_ends_streams():
        s = open_stream(b_echo)
        s.sendall(b"ping")
        assert s.recv(4) == b"ping"
        old = wait_peer_up("A", "B")["instance"]
        PROCS["B"].kill()
        PROCS["B"].wait(10)
        start("B")
        s.settimeout(30)
        try:
            rest = s.recv(100)
            assert rest == b"", f"after B restarted the stream gave {rest!r}"
        except ConnectionResetError:
            pass
        except socket.timeout:
            raise AssertionError("the stream hung after gateway B restarted")
        s.close()
        wait_peer_up("A", "B", not_instance=old)
        echo_round_trip(b_echo, 1 << 20, 7)

    def given_up_peer_returns():
        PROCS["B"].kill()
        PROCS["B"].wait(10)
        deadline = time.time() + 30
        while [p for p in status("A")["peers"] if p["up"]]:
            assert time.time() < deadline, "A never gave up on the killed gateway B"
            time.sleep(0.2)
        try:
            open_stream(b_echo).close()  # refused at once, or reset: either way no hang
        except ConnectionError as e:
            assert "unreachable" in str(e), str(e)
        start("B")
        wait_peer_up("A", "B")
        echo_round_trip(b_echo, 1 << 20, 8)

    def silent_outage_gives_up_nothing():
        # The gateway's engine has no silent-path limit: an outage of any length ends, so neither
        # gateway gives up on the other over a silence (before, both did after 10 minutes, and
        # then met again only when one restarted). D stops (SIGSTOP: its host still takes
        # connections, nothing answers) for 2 s, then C does: over 10 keep-alive intervals each.
        for site in "CD":
            write_config(site, "engine LONGPIPE_KEEPALIVE_MS=150\n")
            start(site)
        instances = {site: wait_peer_up(site, OTHER[site])["instance"] for site in "CD"}
        for stopped, waiting in (("D", "C"), ("C", "D")):
            PROCS[stopped].send_signal(signal.SIGSTOP)
            try:
                time.sleep(2)
                assert [p for p in status(waiting)["peers"] if p["up"]], f"{waiting} gave up on the stopped {stopped}"
            finally:
                PROCS[stopped].send_signal(signal.SIGCONT)
        for site in "CD":
            assert wait_peer_up(site, OTHER[site])["instance"] == instances[site], f"{OTHER[site]} restarted"
            assert b" down" not in open(os.path.join(WORK, site + ".log"), "rb").read(), f"{site} gave up on a peer"
        echo_round_trip(f"D/127.0.0.1:{echo.port}", 1 << 20, 10, site="C")
        for site in "CD":
            PROCS[site].kill()
            PROCS[site].wait(10)

    def bad_configs():
        cases = {"peer B nowhere\n": ":5: peer: 'nowhere' is not host:port", "colour blue\n": ":5: colour: unknown key",
                 "stream-window 1K\n": ":5: stream-window: 1K is out of range"}
        for line, expect in cases.items():
            path = os.path.join(WORK, "bad.conf")
            with open(path, "w") as f:
                f.write(f"site A\nsocket /tmp/x.sock\nlisten 127.0.0.1:1\nkey-file {KEY}\n{line}")
            r = subprocess.run([LONGPIPED, "--check", "--config", path], capture_output=True, text=True, timeout=30)
            assert r.returncode == 2, f"--check exit {r.returncode} for {line!r}"
            assert path + expect in r.stderr, f"--check said {r.stderr!r}"
        r = subprocess.run([LONGPIPED, "--check", "--config", config_path("A")], capture_output=True, timeout=30)
        assert r.returncode == 0

    def sighup_rereads_peers():
        with open(config_path("A"), "a") as f:
            f.write(f"peer C 127.0.0.1:{free_port()}\n")
        PROCS["A"].send_signal(signal.SIGHUP)
        deadline = time.time() + 10
        while "C" not in [p["site"] for p in status("A")["peers"]]:
            assert time.time() < deadline, "SIGHUP did not add peer C"
            time.sleep(0.1)
        echo_round_trip(b_echo, 1 << 20, 9)  # B's streams untouched

    def sigterm_removes_socket():
        s = open_stream(b_echo)
        s.sendall(b"ping")
        assert s.recv(4) == b"ping"
        PROCS["A"].terminate()
        try:  # a Unix socket has no reset: end of stream (the far TCP end gets the reset)
            assert s.recv(100) == b"", "data after the gateway stopped"
        except ConnectionResetError:
            pass
        assert PROCS["A"].wait(15) == 0
        assert not os.path.exists(sock_path("A")), "socket file left behind"

    check("STATUS names the peer", status_names_peer)
    check("refusals: unknown site, bad endpoint, bad requests", refusals)
    check("request timeout; another uid refused", client_checks)
    check("32 MiB each way, in order, intact", lambda: echo_round_trip(b_echo, 32 << 20, 1))
    check("the gateway's own site", lambda: echo_round_trip(f"A/127.0.0.1:{echo.port}", 4 << 20, 2))
    check("6 concurrent streams of 4 MiB", many_streams)
    check("a stream whose server does not read stops only itself", slow_beside_fast)
    check("a restarted gateway B ends the stream", restart_ends_streams)
    check("a peer A gave up on is taken back when it returns", given_up_peer_returns)
    check("a silent outage between two gateways gives up nothing", silent_outage_gives_up_nothing)
    check("--check refuses bad configs", bad_configs)
    check("SIGHUP re-reads the peers", sighup_rereads_peers)
    check("SIGTERM exits cleanly and removes the socket", sigterm_removes_socket)


def _try(fn):
    try:
        fn()
        return True
    except Exception as e:  # reported, then counted by the caller
        print(f"FAIL {e!r}", flush=True)
        return False


if __name__ == "__main__":
    ok = False
    try:
        main()
        ok = True
    finally:
        for proc in PROCS.values():
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        if not ok:
            for site in PORTS:
                log = os.path.join(WORK, site + ".log")
                if os.path.exists(log):
                    print(f"--- {site}.log (last lines)")
                    print("".join(open(log, errors="replace").readlines()[-30:]))
        shutil.rmtree(WORK, ignore_errors=True)
    sys.exit(0 if ok else 1)
