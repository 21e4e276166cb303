#!/usr/bin/env python3
"""Writes the seed corpus of the fuzz targets (corpus/<target>/): a few small, valid inputs from
which libFuzzer starts. Run it again after changing a target's input layout:
    tests/fuzz/make_seeds.py"""
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))

HELLO, CHALLENGE, AUTH, DATA, ACK, KEEPALIVE, CLOSE = range(1, 8)


def frame(kind, payload):
    return struct.pack(">HBBI", 0x4C50, 1, kind, len(payload)) + payload


def message(body, tag=7):
    # body | source u32 | destination u32 | tag i32 | context i32 | flags u32 (message.h)
    return body + struct.pack(">IIiiI", 1, 2, tag, 0, 0)


def write(target, name, data):
    folder = os.path.join(HERE, "corpus", target)
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, name), "wb") as f:
        f.write(data)


def frame_seeds():
    # Input: mode (bit 0: authenticated) | read-size seed | the byte stream.
    endpoint = b"site-a:7601"
    hello = frame(HELLO, bytes(range(32)) + bytes([1]) + struct.pack(">H", len(endpoint)) + endpoint)
    challenge = frame(CHALLENGE, bytes(range(32, 64)))
    auth = frame(AUTH, bytes(range(64, 96)))
    write("frame", "handshake", bytes([0, 3]) + hello + challenge + auth)
    data = frame(DATA, struct.pack(">Q", 0) + message(b"hello")) + frame(DATA, struct.pack(">Q", 1) + message(b""))
    ack = frame(ACK, struct.pack(">QIH", 2, 4096, 2) + struct.pack(">QQ", 4, 6) + struct.pack(">QQ", 9, 10))
    write("frame", "session", bytes([1, 77]) + data + ack + frame(KEEPALIVE, b""))
    write("frame", "close", bytes([1, 5]) + frame(CLOSE, bytes([1]) + b"engine shutting down"))
    write("frame", "bad-magic", bytes([0, 9]) + b"GET / HTTP/1.1\r\n\r\n")


def handshake_seeds():
    # Input: side (bit 0: dialler) | read-size seed | the peer's bytes.
    endpoint = b"site-b:7601"
    hello = frame(HELLO, bytes(range(32)) + bytes([0]) + struct.pack(">H", len(endpoint)) + endpoint)
    write("handshake", "acceptor", bytes([0, 11]) + hello + frame(AUTH, bytes(32)))
    write("handshake", "dialler", bytes([1, 4]) + frame(CHALLENGE, bytes(range(32))) + frame(AUTH, bytes(32)))
    write("handshake", "refused", bytes([1, 0]) + frame(CLOSE, bytes([2]) + b"authentication failed"))


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


frame_seeds()
handshake_seeds()
arq_seeds()
message_image_seeds()
