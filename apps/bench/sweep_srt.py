"""SRT's part of apps/bench/sweep: srt-file-transmit runs between the sites in file mode, with SRT's
file congestion control or paced at the link rate, and the check that the bytes received are those
sent. A mixin of the Sweep class (sweep_point.py): it uses its processes, work folder and notes."""

import os
import subprocess
import time

from bench_common import WAN, speaker

say = speaker("sweep")

SRT_TOOL = "srt-file-transmit"
SRT_PORT = 9000
# SRT's options for every mode (apps/bench/README.md, "SRT"): buffers and flow window for the grid's
# largest bandwidth-delay product (400 Mbit/s x 600 ms = 30 MB) with room to spare, so that no path
# of the grid is window-limited. These are fixed values, not the path's: SRT gets no path setting but
# the paced mode's rate. (Its UDP socket buffers follow rcvbuf and are capped by net.core.rmem_max.)
SRT_BUFFER_BYTES = 64 << 20
SRT_FLOW_WINDOW = 50000     # packets; must cover rcvbuf (64 MiB / 1456-byte payloads = 46091)
SRT_PAYLOAD = 1456          # bytes of file data per SRT packet (its default, and the live mode's maximum)
# The SRT modes: SRT's file congestion control (FileCC, SRT's default for transtype=file), or the
# live congestion control with the link rate as maxbw (SRT paces at that rate; the rate is the only
# path-specific setting any tool of the sweep gets, and only this mode gets it).
SRT_MODES = {"file": "", "paced": "&congestion=live&messageapi=1"}
# Connections tried per SRT run. On a lossy link SRT 1.5.1's caller gives up when the listener's
# handshake answer is lost and a keepalive comes first ("CONFUSED: expected UMSG_HANDSHAKE"): no byte
# moves, which measures the handshake's luck, not SRT's goodput. Such a run is tried again (noted).
SRT_CONNECT_ATTEMPTS = 3


def srt_key(mode):
    """Summary column prefix of an SRT mode: srt_ (file congestion control), srt_paced_."""
    return "srt" if mode == "file" else f"srt_{mode}"


class SrtRuns:
    """The SRT measurements of a Sweep (its args, env, work folder, children and raw rows)."""

    def srt_limit(self, rtt_s):
        """An SRT transfer's time limit: the data phase as long as iperf3's, plus SRT's handshake (about
        two round trips: the caller's induction and conclusion) which iperf3 does before its clock starts,
        and half a second for the two processes to start in their sites."""
        return self.args.srt_seconds + 2 * rtt_s + 0.5

    def srt_source(self, size):
        """The file SRT sends: random bytes, at least SIZE of them; one file for the whole sweep, grown when
        a point needs more. A transfer that has not ended at its time limit is stopped, as iperf3 -t is.
        Its size is a multiple of SRT_PAYLOAD: every message of the paced mode is a full one, so the
        received messages can be checked whatever order they came in."""
        size = -(-size // SRT_PAYLOAD) * SRT_PAYLOAD
        path = os.path.join(self.work, "srt-source.bin")
        have = os.path.getsize(path) if os.path.exists(path) else 0
        if have < size:
            with open(path, "ab") as f:
                while have < size:
                    chunk = os.urandom(min(SRT_PAYLOAD << 12, size - have))
                    f.write(chunk)
                    have += len(chunk)
        return path

    def srt(self, point, mode, rtt_s, row, notes, deadline):
        key = srt_key(mode)
        row[f"{key}_goodput_mbit"] = row[f"{key}_goodput_share"] = ""
        seconds = self.args.srt_seconds
        if seconds <= 0 or self.srt_missing:
            return
        limit = self.srt_limit(rtt_s)
        # As many bytes as the link carries in the data phase: the file does not run out before the
        # time limit unless SRT moves it faster than the link rate allows.
        size = max(1 << 20, int(point.rate_mbit * 1e6 / 8 * seconds))
        source = self.srt_source(size)
        size = os.path.getsize(source)
        for attempt in range(1, SRT_CONNECT_ATTEMPTS + 1):
            left = deadline - time.monotonic()
            if left < limit + 5:
                notes.append(f"SRT {mode} skipped (budget): {limit:.0f} s run, {max(0, left):.0f} s left")
                say(f"  {notes[-1]}")
                return
            out_dir = os.path.join(self.work, f"srt-out-{len(self.summary)}-{mode}")
            os.makedirs(out_dir)
            try:
                status, sender_status, received, elapsed = self.srt_transfer(point, mode, source, out_dir, limit)
                complete = status == 0 and received == size
                # Ended by itself without every byte (either side), or nothing at all: a failed transfer.
                failed = not complete and (status is not None or sender_status not in (None, 0) or not received)
                if failed:
                    why = (f"receiver status {status}, sender status {sender_status}, {received} of {size} bytes):"
                           + self.srt_log_tails())
                    if not received and attempt < SRT_CONNECT_ATTEMPTS:
                        notes.append(f"SRT {mode}: connection {attempt} moved nothing ({why}; tried again")
                        say(f"  {notes[-1]}")
                        continue
                    notes.append(f"SRT {mode} failed ({why}")
                    say(f"  {notes[-1]}")
                    return
                intact = self.same_prefix(source, out_dir, received) if mode == "file" else \
                    self.same_messages(source, out_dir, received, SRT_BUFFER_BYTES)
            finally:
                self.srt_clean(out_dir)
            break
        if not intact:
            notes.append(f"SRT {mode} failed: the {received} bytes received differ from those sent")
            say(f"  {notes[-1]}")
            return
        goodput = received * 8 / elapsed / 1e6
        share = goodput / point.rate_mbit
        row[f"{key}_goodput_mbit"] = round(goodput, 2)
        row[f"{key}_goodput_share"] = round(share, 3)
        self.raw.append({"point": point.name, "one_way_ms": point.delay_ms, "rate_mbit": point.rate_mbit,
                         "loss_pct": point.loss_pct, "tool": "srt", "size_bytes": received, "congestion": mode,
                         "batch": "", "kind": "complete" if complete else "stopped", "seconds": round(elapsed, 3),
                         "t_ms": "", "floor_ms": "", "t_over_floor": "", "lp_perf_rtt_ms": "",
                         "goodput_mbit": round(goodput, 2), "goodput_share": round(share, 4)})
        say(f"  SRT {mode}: {goodput:.1f} Mbit/s ({100 * share:.0f} % of the link), {received / 1e6:.1f} MB in "
            f"{elapsed:.1f} s" + ("" if complete else " (stopped at the time limit)")
            + (f" (connection {attempt})" if attempt > 1 else ""))

    def srt_transfer(self, point, mode, source, out_dir, limit):
        """One SRT transfer of SOURCE into OUT_DIR, stopped at LIMIT seconds. Returns the receiver's and the
        sender's exit status (None: still running when the transfer ended), the bytes received and the
        seconds from the sender's start."""
        options = f"transtype=file&rcvbuf={SRT_BUFFER_BYTES}&sndbuf={SRT_BUFFER_BYTES}&fc={SRT_FLOW_WINDOW}" \
            + SRT_MODES[mode]
        sender_options = options + (f"&maxbw={int(point.rate_mbit * 1e6 / 8)}" if mode == "paced" else "")
        server = sender = None
        try:
            server = self.start_srt_receiver(
                [WAN, "exec", "b", SRT_TOOL, "-q", f"srt://:{SRT_PORT}?mode=listener&{options}", f"file://{out_dir}/"],
                os.path.join(self.work, "srt-receiver.log"))
            started = time.monotonic()
            with open(os.path.join(self.work, "srt-sender.log"), "w") as log:
                sender = subprocess.Popen([WAN, "exec", "a", SRT_TOOL, "-q", f"file://{source}",
                                           f"srt://site-b:{SRT_PORT}?{sender_options}"],
                                          env=self.env, stdout=log, stderr=subprocess.STDOUT)
            self.children.append(sender)
            # The receiver ends when the sender closes the connection and every byte is written; a
            # sender that fails (its connection did not come up) ends the transfer too.
            status = sender_status = None
            while time.monotonic() - started < limit:
                status, sender_status = server.poll(), sender.poll()
                if status is not None or sender_status not in (None, 0):
                    break
                time.sleep(0.05)
            elapsed = time.monotonic() - started
            received = sum(os.path.getsize(os.path.join(out_dir, name)) for name in os.listdir(out_dir))
        finally:
            for child in (sender, server):
                if child is not None:
                    self.stop(child)
        return status, sender_status, received, elapsed

    def srt_log_tails(self):
        tail = ""
        for side in ("sender", "receiver"):
            with open(os.path.join(self.work, f"srt-{side}.log")) as f:
                tail += f" {side}: {f.read().strip()[-150:]}"
        return tail

    def start_srt_receiver(self, argv, log_path):
        """Starts the SRT listener in site-b and waits until its UDP port is bound. (srt-file-transmit prints
        nothing when it listens unless -v, which also prints a line per 1456-byte chunk received.) `wan exec`
        execs into the tool, so once the process is srt-file-transmit it is in site-b's namespace and
        /proc/PID/net/udp lists that namespace's sockets."""
        with open(log_path, "w") as log:
            child = subprocess.Popen(argv, env=self.env, stdout=log, stderr=subprocess.STDOUT)
        self.children.append(child)
        port = f":{SRT_PORT:04X}"
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and child.poll() is None:
            try:
                with open(f"/proc/{child.pid}/comm") as f:
                    if f.read().strip() == SRT_TOOL[:15]:
                        with open(f"/proc/{child.pid}/net/udp") as udp:
                            if any(line.split()[1].endswith(port) for line in udp.readlines()[1:]):
                                return child
            except OSError:
                pass
            time.sleep(0.05)
        self.stop(child)
        with open(log_path) as f:
            raise RuntimeError(f"{' '.join(argv)} did not start:\n{f.read()[-800:]}")

    @staticmethod
    def same_prefix(sent, out_dir, received):
        """Whether the file written in OUT_DIR holds the first RECEIVED bytes of SENT (SRT delivers in order)."""
        names = os.listdir(out_dir)
        if len(names) != 1:
            return False
        with open(sent, "rb") as a, open(os.path.join(out_dir, names[0]), "rb") as b:
            while received > 0:
                chunk = b.read(min(8 << 20, received))
                if not chunk or chunk != a.read(len(chunk)):
                    return False
                received -= len(chunk)
        return True

    @staticmethod
    def same_messages(sent, out_dir, received, window):
        """Whether the file written in OUT_DIR is made of messages of SENT, each once. With the message API
        (the paced mode), srt-file-transmit sends each SRT_PAYLOAD-byte read as one message, not in order
        (SRT's default): after a loss, later messages are delivered before the retransmitted one, so the file
        is a permutation of the messages sent. They can only come from the first RECEIVED bytes plus what
        the sender's buffer (WINDOW) held ahead of them."""
        names = os.listdir(out_dir)
        if len(names) != 1:
            return False
        sent_messages = set()
        with open(sent, "rb") as f:
            limit = received + window
            while f.tell() < limit:
                message = f.read(SRT_PAYLOAD)
                if not message:
                    break
                sent_messages.add(message)
        with open(os.path.join(out_dir, names[0]), "rb") as f:
            seen = set()
            while True:
                message = f.read(SRT_PAYLOAD)
                if not message:
                    return True
                # The last message may be a short tail of a message the receiver had not finished writing.
                if message in seen or (message not in sent_messages and len(message) == SRT_PAYLOAD):
                    return False
                seen.add(message)

    @staticmethod
    def srt_clean(out_dir):
        subprocess.run(["rm", "-rf", out_dir], check=False)
