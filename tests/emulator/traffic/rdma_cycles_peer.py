#!/usr/bin/env python3
#
# Copyright 2026 gr-spead authors
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""rdma_cycles_peer.py source PORT CYCLES | sink HOST PORT CYCLES

One side of rdma-case's cycles case: a spead.source(transport="rdma",
keep_listening=True) takes CYCLES connections one after another, each from a new
send.RdmaStream that sends one heap and goes. Every connection must end closed, every
heap arrive, and the source's file descriptors and threads stay flat (checked after
the first 5 cycles and at the end); prints "rdma cycles ok"."""

import os
import sys
import threading
import time

import numpy as np
from gnuradio import blocks, gr
import gnuradio.spead as spead
import gnuradio.spead.send  # noqa: F401


def counts():
    return len(os.listdir("/proc/self/fd")), threading.active_count(), len(
        os.listdir("/proc/self/task"))


def wait_closed(rx, n, idle=30):
    """Waits until n connections have closed; gives up only when none closed for `idle`
    seconds (a slow run, e.g. under ASan on a loaded machine, is not a hang)."""
    seen, last_progress = -1, time.monotonic()
    while True:
        closed = rx.stats().get("connections_closed", 0)
        if closed >= n:
            return True
        if closed != seen:
            seen, last_progress = closed, time.monotonic()
        elif time.monotonic() - last_progress > idle:
            return False
        time.sleep(0.05)


def source(port, cycles):
    tb = gr.top_block()
    rx = spead.source(transport="rdma", endpoints=f"verbs://:{port}",
                      keep_listening=True, len_tag_key="")
    out = blocks.null_sink(gr.sizeof_gr_complex)
    tb.connect(rx, out)
    tb.start()
    print("listening", flush=True)
    if not wait_closed(rx, 5):
        print(f"the first 5 cycles did not end: {rx.stats()}")
        return 1
    early = counts()
    ok = wait_closed(rx, cycles)
    late = counts()
    stats = rx.stats()
    tb.stop()
    tb.wait()
    if not ok or stats["connections_accepted"] != cycles or \
            stats["connections_closed"] != cycles or stats["heaps_output"] != cycles:
        print(f"cycles: {stats}")
        return 1
    if late[0] > early[0] or late[2] > early[2]:
        print(f"fds/threads grew: after 5 cycles {early}, after {cycles} {late}")
        return 1
    print(f"rdma cycles ok: {cycles} connections, fds and threads flat {early} -> {late}")
    return 0


def sink(host, port, cycles):
    pool = spead.ThreadPool()
    for i in range(cycles):
        stream = spead.send.RdmaStream(pool, f"verbs://{host}:{port}")
        stream.set_cnt_sequence(i + 1, cycles + 1)  # new heaps each cycle
        ig = spead.send.ItemGroup()
        ig.add_item(0x1000, "samples", "", shape=(256,), dtype=np.complex64)
        ig["samples"].value = np.full(256, i, dtype=np.complex64)
        stream.send_heap(ig.get_heap(descriptors="all"))
        del stream
    print("sent", flush=True)
    return 0


if __name__ == "__main__":
    if sys.argv[1] == "source":
        sys.exit(source(int(sys.argv[2]), int(sys.argv[3])))
    sys.exit(sink(sys.argv[2], int(sys.argv[3]), int(sys.argv[4])))
