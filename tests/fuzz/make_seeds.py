#!/usr/bin/env python3
"""Writes the seed corpus of the fuzz targets (corpus/<target>/): a few small, valid inputs of
protocol version 6 (libshim/core/wire/wire_frame.h) from which libFuzzer starts. Run it again after
changing a target's input layout or the wire format:
    tests/fuzz/make_seeds.py
It overwrites only the files it writes: the other files in corpus/ are reproducers of past
findings (arq/sack-range-wraps-at-2-64, handshake/dialler-sealed-identify), kept as they are. When
the protocol version changes, move the version byte of the reproducers' frame headers too (a frame
of another version is refused before it reaches the code the reproducer was found in)."""
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))

PROTOCOL_VERSION = 6
HELLO, CHALLENGE, AUTH, DATA, ACK, KEEPALIVE, CLOSE, IDENTIFY, REPAIR = range(1, 10)
ENCRYPT, INTEGRITY_ONLY = 1, 2  # Protection
TAG_SIZE = 16                   # frame_cipher.h


def frame(kind, payload, version=PROTOCOL_VERSION):
    # magic u16 "LP" | version u8 | type u8 | payload length u32 | payload
    return struct.pack(">HBBI", 0x4C50, version, kind, len(payload)) + payload


def hello(nonce, stream, protection, endpoint):
    # client nonce [32] | stream index u8 | protection u8 | endpoint length u16 | endpoint
    return frame(HELLO, nonce + bytes([stream, protection]) + struct.pack(">H", len(endpoint)) + endpoint)


def challenge(nonce, protection, offer=0x82):
    # server nonce [32] | protection u8 | carrier offer u8 (carrier_choice.h; 0x82: auto, datagrams ready)
    return frame(CHALLENGE, nonce + bytes([protection, offer]))


def identify(token, offer=0x82):
    # identity token [32] | carrier offer u8 (carrier_choice.h; 0x82: auto, datagrams ready)
    return frame(IDENTIFY, token + bytes([offer]))


def message(body, tag=7):
    # body | source u32 | destination u32 | tag i32 | context i32 | flags u32 (message.h)
    return body + struct.pack(">IIiiI", 1, 2, tag, 0, 0)


def data(sequence, body):
    return frame(DATA, struct.pack(">Q", sequence) + message(body))


def ack(cumulative, window, ranges, arrivals=(0, 0, 0)):
    # cumulative u64 | window u32 | arrivals (newest u64 | first u32 | count u16) | range count u16 | ranges
    return frame(ACK, struct.pack(">QIQIHH", cumulative, window, *arrivals, len(ranges)) +
                 b"".join(struct.pack(">QQ", begin, end) for begin, end in ranges))


def repair(first_sequence, data_count, index, symbol):
    # first sequence u64 | data count u8 | repair index u8 | symbol (tail_fec.h)
    return frame(REPAIR, struct.pack(">QBB", first_sequence, data_count, index) + symbol)


def close(reason, text):
    return frame(CLOSE, bytes([reason]) + text)


def write(target, name, content):
    folder = os.path.join(HERE, "corpus", target)
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, name), "wb") as f:
        f.write(content)


# frame_fuzz.cpp's mode byte.
AUTHENTICATED, SEALED, INTEGRITY, KEY_HOLDER = 1, 2, 4, 8


def frame_seeds():
    # Input: mode | read-size seed | [key holder: tamper u16] | the byte stream.
    endpoint = b"site-a:7601"
    handshake = (hello(bytes(range(32)), 1, ENCRYPT, endpoint) + challenge(bytes(range(32, 64)), INTEGRITY_ONLY) +
                 frame(AUTH, bytes(range(64, 96))) + identify(bytes(range(96, 128))))
    write("frame", "handshake", bytes([0, 3]) + handshake)
    session = (data(0, b"hello") + data(1, b"") + ack(2, 4096, [(4, 6), (9, 10)], (1_700_000_000_000_000_000, 76_000, 2)) + frame(KEEPALIVE, b""))
    write("frame", "session", bytes([AUTHENTICATED, 77]) + session)
    write("frame", "close", bytes([AUTHENTICATED, 5]) + close(1, b"engine shutting down"))
    write("frame", "repair", bytes([AUTHENTICATED, 31]) + repair(600, 200, 3, b"\x05\x78" + bytes(range(200))) +
          repair(0, 255, 1, b"\0\0\0"))
    write("frame", "bad-magic", bytes([0, 9]) + b"GET / HTTP/1.1\r\n\r\n")
    version_1 = hello(bytes(32), 0, ENCRYPT, endpoint)
    write("frame", "old-version", bytes([0, 1]) + version_1[:2] + bytes([1]) + version_1[3:])
    # Sealed, by a peer that holds the key: the harness seals each frame before the reader sees it.
    sealed = identify(bytes(range(32))) + session + close(1, b"bye")
    write("frame", "sealed-key-holder", bytes([AUTHENTICATED | SEALED | KEY_HOLDER, 21, 0, 0]) + sealed)
    write("frame", "sealed-key-holder-integrity",
          bytes([AUTHENTICATED | SEALED | INTEGRITY | KEY_HOLDER, 60, 0, 0]) + sealed)
    # One byte of the sealed stream altered in transit: tamper = 1 + its offset, here the first
    # byte of the first DATA frame's message (after the sealed IDENTIFY, DATA's header and sequence).
    sealed_identify = 8 + 33 + TAG_SIZE
    write("frame", "sealed-tampered", bytes([AUTHENTICATED | SEALED | KEY_HOLDER, 8]) +
          struct.pack(">H", 1 + sealed_identify + 8 + 8) + sealed)
    # Sealed frames from someone without the key: tags of zeros.
    stranger = identify(bytes(32)) + bytes(TAG_SIZE)
    stranger = stranger[:4] + struct.pack(">I", 33 + TAG_SIZE) + stranger[8:]
    write("frame", "sealed-stranger", bytes([SEALED, 13]) + stranger)


def handshake_seeds():
    # Input: choices (bit 0: dialler, bit 1: we want encryption) | read-size seed | the peer's bytes.
    endpoint = b"site-b:7601"
    peer_hello = hello(bytes(range(32)), 0, INTEGRITY_ONLY, endpoint)
    write("handshake", "acceptor", bytes([0, 11]) + peer_hello + frame(AUTH, bytes(32)))
    write("handshake", "acceptor-encrypting", bytes([2, 5]) + hello(bytes(range(32)), 3, ENCRYPT, endpoint) +
          frame(AUTH, bytes(32)) + identify(bytes(32)) + bytes(TAG_SIZE))
    # IDENTIFY before the proof: refused as malformed.
    write("handshake", "acceptor-identify-too-early", bytes([0, 17]) + peer_hello + identify(bytes(32)))
    write("handshake", "dialler", bytes([1, 4]) + challenge(bytes(range(32)), INTEGRITY_ONLY) + frame(AUTH, bytes(32)))
    write("handshake", "dialler-encrypting", bytes([3, 40]) + challenge(bytes(range(32)), ENCRYPT) +
          frame(AUTH, bytes(32)) + identify(bytes(32)))
    write("handshake", "refused", bytes([1, 0]) + close(2, b"authentication failed"))
    write("handshake", "identity-refused", bytes([1, 9]) + challenge(bytes(32), ENCRYPT) +
          close(5, b"this endpoint's session belongs to another process"))


def arq_seeds():
    # Input: flags | send window msgs | bytes u16 | receive window msgs | bytes u16 | sack ranges |
    #        ack every | fast retransmit | max transmissions | operations (arq_fuzz.cpp).
    reliable = bytes([0, 16, 0x10, 0, 16, 0x10, 0, 4, 1, 3, 0])
    datagram = bytes([3, 8, 0x04, 0, 8, 0x04, 0, 2, 2, 3, 4])
    in_order = b"".join(bytes([0, 16 + i]) for i in range(6)) + bytes([3, 7])
    holes = bytes([0, 20, 0, 18, 0, 17, 7, 0, 16, 3, 7, 0, 19, 3])
    sender = bytes([6, 5, 10, 20, 30, 40, 50, 8, 2, 0, 2, 64, 0, 2, 2, 4, 0, 2, 0, 4, 0x13, 0x88, 5, 6, 2, 2, 8])
    write("arq", "reliable-in-order", reliable + in_order)
    write("arq", "reliable-holes", reliable + holes + sender)
    write("arq", "datagram", datagram + holes + sender + bytes([1]) + struct.pack(">Q", 2**64 - 1))


def image(encoding, fragments):
    body = b"".join(struct.pack("<i", len(f)) + f for f in fragments)
    header = struct.pack("<8i", sum(len(f) for f in fragments), 0, 5, 0, encoding, 0, 0x40001, 0x40002)
    return header + body


def message_image_seeds():
    write("message_image", "xdr-two-fragments", image(0x10000000, [b"\0\0\0\x2a", b"abcdefgh"]))
    write("message_image", "in-place-empty", image(0x20000000, []))
    write("message_image", "raw-one", image(0x3e, [bytes(40)]))
    write("message_image", "truncated", image(0, [b"xyz"])[:-2])


def datagram_seeds():
    # Input: mode (bit 0: integrity only, bit 1: two connections) | operations (datagram_fuzz.cpp): op | arg | fields.
    def sealed_data(seq, unit, arg=0):
        return bytes([2, arg, seq]) + struct.pack(">H", len(unit)) + unit
    def sealed_ack(cumulative, ranges, arg=0):
        out = bytes([3, arg, cumulative]) + struct.pack(">H", 4096) + bytes([1]) + struct.pack(">HHB", 500, 30, 2)
        out += bytes([len(ranges)])
        at = cumulative
        for begin, end in ranges:  # gaps as the target reads them: 1 + n, 1 + n
            out += bytes([begin - at - 1, end - begin - 1])
            at = end
        return out
    def sealed_repair(first, count, index, symbol, arg=0):
        return bytes([4, arg, first, count, index]) + struct.pack(">H", len(symbol) - 3) + symbol
    unit = lambda last, body: bytes([1 if last else 0]) + body
    message = b"hello" + bytes(20)
    write("datagram", "stranger", bytes([0, 0, 0]) + struct.pack(">H", 40) + b"LD\x02\x00" + bytes(36))
    write("datagram", "in-order", bytes([0]) + sealed_data(0, unit(False, message)) + sealed_data(1, unit(True, message)) +
          bytes([7, 0]) + bytes([6, 5, 4]))
    write("datagram", "holes-repair", bytes([1]) + sealed_data(0, unit(True, message)) + sealed_data(2, unit(True, message)) +
          sealed_repair(0, 3, 0, bytes([0, 26]) + unit(True, message)) + bytes([7, 0, 6, 1, 0]))
    write("datagram", "send-ack", bytes([0, 5, 7]) + struct.pack(">H", 3000) + bytes([6, 200, 0]) +
          sealed_ack(1, [(2, 3)]) + bytes([6, 255, 10]) + sealed_ack(3, []))
    write("datagram", "replay-tamper-other-keys", bytes([2]) + sealed_data(0, unit(True, message), 0x20) +
          sealed_data(1, unit(True, message), 0x40) + struct.pack(">HB", 30, 4) + sealed_data(1, unit(True, message), 0x80))
    write("datagram", "any-frame", bytes([0, 1, 8]) + struct.pack(">H", 4) + b"\x01bye")


def repair_seeds():
    # Input: units - 1 u8 | block - 1 u8 | per unit: length - 1 u8, fill u8 | operations (repair_fuzz.cpp).
    units = bytes([9, 4]) + b"".join(bytes([10 + 7 * i, 0x41 + i]) for i in range(10))
    arrive = lambda *seqs: b"".join(bytes([0, s]) for s in seqs)
    genuine = lambda seq, index: bytes([1, seq, index])
    write("repair", "recover-two", units + arrive(0, 1, 3, 5, 6, 7, 8, 9) + genuine(0, 0) + genuine(0, 1) + bytes([3]))
    write("repair", "recover-late", units + arrive(0, 2) + genuine(0, 3) + arrive(3, 4) + bytes([3]) + arrive(1) + bytes([3]))
    write("repair", "forged", units + arrive(0, 2) + bytes([2, 0, 1, 5, 2, 30]) + bytes(range(30)) +
          bytes([2, 1]) + struct.pack(">Q", 2**64 - 3) + bytes([200, 55, 3, 1, 2, 3]) + bytes([3]))
    write("repair", "erasure-code", bytes([0, 0, 0, 0, 4, 9, 15, 3, 100]) + bytes(range(160)) +
          struct.pack(">QH", 0b1011, 0xffff))


def path_cache_seeds():
    # Input: clock u8 (now = 1.8e9 + 3600 x clock) | selector u8 | the file's text.
    now = 1_800_000_000
    text = ("# longpipe path cache 1\n# key saved_unix min_rtt_us rate_bytes_per_s cwnd_segments send_buffer "
            "receive_buffer loss_ppm peer_verdict\n"
            f"10.0.0.2 {now - 100} 540000 19375000 7200 16777216 16777216 120 1\n"
            f"10.0.0.3 {now - 5000} 2000 1e9 10 212992 131072\n"
            f"site-b {now - 90000} 540000 19375000 7200 16777216 16777216 -1\n"
            f"10.0.0.2 {now - 50} 541000 20000000 7300 16777216 16777216 -1 0\n")
    write("path_cache", "three-paths", bytes([0, 0]) + text.encode())
    write("path_cache", "damaged", bytes([1, 1]) + b"# longpipe path cache 1\nfe80::1 17 -3 x\n\x00\xff junk\n" +
          f"10.0.0.9 {now} 1 0 0 0 0 1000000 -1 extra\n".encode())


def mpi_wire_seeds():
    # Input: operations (mpi_wire_fuzz.cpp), each an op byte and its fields; bodies are a length
    # byte (x 4) and the bytes.
    b = lambda data: bytes([len(data) // 4]) + data
    write("mpi_wire", "sync-id", bytes([0]) + b(b"dataid--12345678"))
    write("mpi_wire", "transfer", bytes([1, 2]) + b(bytes(range(16))) + bytes([0, 2]) + b(b"abcd") + b(b"efgh"))
    write("mpi_wire", "segmented-redirect", bytes([2, 3]) + b(bytes(range(8))) + bytes([0x81, 2, 3]) + b(b"wxyz") + b(b"0123") +
          b(b"4567"))
    write("mpi_wire", "segmented-kept", bytes([2, 1]) + b(bytes(8)) + bytes([0, 0, 1]) + b(b"last"))
    write("mpi_wire", "sender", bytes([3]) + b(bytes(range(40))) + bytes([7]) + struct.pack(">Q", 3 << 40) + bytes([1, 1]) +
          struct.pack(">I", 1 << 20))


frame_seeds()
handshake_seeds()
arq_seeds()
message_image_seeds()
datagram_seeds()
repair_seeds()
path_cache_seeds()
mpi_wire_seeds()
