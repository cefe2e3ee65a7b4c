#!/usr/bin/env python3
# Copyright 2026 gr-spead authors
# SPDX-License-Identifier: GPL-3.0-or-later
"""Turns the spead2 captures into fuzz seeds: one seed per capture (and one per
configuration byte), each a config byte followed by length-prefixed UDP payloads."""

import pathlib
import struct
import sys


def udp_payloads(path):
    data = path.read_bytes()
    magic, _, _, _, _, _, linktype = struct.unpack("<IHHiIII", data[:24])
    assert magic == 0xA1B2C3D4, f"{path}: not a little-endian classic pcap"
    link_header = {1: 14, 113: 16}[linktype]
    pos = 24
    while pos + 16 <= len(data):
        _, _, incl, _ = struct.unpack("<IIII", data[pos:pos + 16])
        frame = data[pos + 16:pos + 16 + incl]
        pos += 16 + incl
        ip = frame[link_header:]
        ihl = (ip[0] & 15) * 4
        yield ip[ihl + 8:]


def main(vectors, out):
    out = pathlib.Path(out)
    out.mkdir(parents=True, exist_ok=True)
    for capture in sorted(pathlib.Path(vectors).glob("*.pcap")):
        body = b"".join(struct.pack(">H", len(p)) + p for p in udp_payloads(capture))
        for config in (0x03, 0x0B, 0x13):
            (out / f"{capture.stem}-{config:02x}").write_bytes(bytes([config]) + body)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
