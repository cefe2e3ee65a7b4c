#!/usr/bin/env python3
#
# Copyright 2026 gr-spead authors
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""rdma_api_peer.py recv PORT SENDERS HEAPS | send HOST PORT SENDERS HEAPS

One side of rdma-case's fan-in/slow-consumer case, over the Python API: SENDERS
send.RdmaStreams (one process, each its own cnt sequence) into one
recv.Stream.add_rdma_reader(max_connections=SENDERS) whose consumer is slow (it sleeps
on every heap, so the senders must wait for credits). The receiver checks that every
heap of every sender arrived, in order per sender, and prints "rdma fan-in ok"."""

import sys
import time

import numpy as np
import gnuradio.spead as spead
import gnuradio.spead.recv  # noqa: F401
import gnuradio.spead.send  # noqa: F401

ITEM = 0x1000
SLOW = 0.005  # seconds per heap: slower than the senders


def receive(port, senders, heaps):
    pool = spead.ThreadPool()
    # Each connection is assembled apart (its own max_heaps window): the default will do.
    stream = spead.recv.Stream(pool)
    stream.add_rdma_reader(f"verbs://:{port}", max_connections=senders)
    print("listening", flush=True)
    ig = spead.ItemGroup()
    got = {s: [] for s in range(senders)}
    for heap in stream:
        ig.update(heap)
        value = np.array(ig["tag"].value)
        got[int(value[0])].append(int(value[1]))
        time.sleep(SLOW)
    stats = stream.stats
    for s in range(senders):
        if got[s] != list(range(heaps)):
            print("receive stats:", {k: v for k, v in dict(stats._asdict() if hasattr(
                stats, "_asdict") else vars(stats)).items() if v})
            print(f"sender {s} got: {got[s][:12]}")
            print(f"sender {s}: got {len(got[s])} heaps, first out of order at "
                  f"{next((i for i, v in enumerate(got[s]) if v != i), None)}")
            return 1
    print(f"rdma fan-in ok: {senders} senders x {heaps} heaps, in order")
    return 0


def send(host, port, senders, heaps):
    pool = spead.ThreadPool()
    config = spead.send.StreamConfig(max_packet_size=1 << 16, max_heaps=4)
    streams = []
    for s in range(senders):
        stream = spead.send.RdmaStream(pool, f"verbs://{host}:{port}", config)
        stream.set_cnt_sequence(s + 1, senders)
        streams.append(stream)
    groups = []
    for s in range(senders):
        ig = spead.send.ItemGroup()
        ig.add_item(ITEM, "tag", "sender and sequence", shape=(2,), dtype=np.int64)
        ig.add_item(ITEM + 1, "payload", "bulk", shape=(65536,), dtype=np.uint8)
        groups.append(ig)
    for i in range(heaps):
        for s, (stream, ig) in enumerate(zip(streams, groups)):
            ig["tag"].value = np.array([s, i], dtype=np.int64)
            ig["payload"].value = np.full(65536, i % 256, dtype=np.uint8)
            stream.send_heap(ig.get_heap(descriptors="all" if i == 0 else "stale"))
    del streams  # disconnect: the receiver's stream ends when both are gone
    print("sent", flush=True)
    return 0


if __name__ == "__main__":
    if sys.argv[1] == "recv":
        sys.exit(receive(int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])))
    sys.exit(send(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])))
