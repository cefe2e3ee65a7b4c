#!/usr/bin/env python3
#
# Copyright 2026 gr-spead authors
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""rdma_block_peer.py source PORT | sink HOST PORT

One side of rdma-case's blocks case: spead.sink(transport="rdma") in one flowgraph,
spead.source(transport="rdma") in another (another host), 400 heaps of 4096 complex64
samples (32 KiB each; the blocks' rdma message size is 1 MiB). The source side checks
every sample arrived bit-exact, heaps sent = heaps received, and prints
"rdma blocks ok"."""

import sys

import numpy as np
from gnuradio import blocks, gr
import gnuradio.spead as spead

HEAP_ITEMS, HEAPS = 4096, 400


def data():
    n = HEAP_ITEMS * HEAPS
    return (np.arange(n, dtype=np.float32) + 1j * np.arange(n, 0, -1, dtype=np.float32)
            ).astype(np.complex64)


def source(port):
    tb = gr.top_block()
    rx = spead.source(transport="rdma", endpoints=f"verbs://:{port}",
                      max_heap_size=HEAP_ITEMS * 8)
    out = blocks.vector_sink_c()
    tb.connect(rx, out)
    print("listening", flush=True)
    tb.run()  # ends at the sink's stop heap
    got = np.asarray(out.data(), dtype=np.complex64)
    stats = rx.stats()
    if got.tobytes() != data().tobytes():
        print(f"samples differ: got {len(got)} of {HEAP_ITEMS * HEAPS}; {stats}")
        return 1
    if stats["heaps_output"] != HEAPS:
        print(f"heaps_output {stats['heaps_output']} != {HEAPS}; {stats}")
        return 1
    print(f"rdma blocks ok: {HEAPS} heaps bit-exact; connections_accepted "
          f"{stats.get('connections_accepted')}")
    return 0


def sink(host, port):
    tb = gr.top_block()
    src = blocks.vector_source_c(data().tolist(), False)
    tx = spead.sink(transport="rdma", endpoints=f"verbs://{host}:{port}",
                    len_tag_key="", heap_items=HEAP_ITEMS)
    tb.connect(src, tx)
    tb.run()
    stats = tx.stats()
    print(f"sink: data_heaps {stats['data_heaps']} heaps_failed {stats['heaps_failed']}")
    return 0 if stats["data_heaps"] == HEAPS and stats["heaps_failed"] == 0 else 1


if __name__ == "__main__":
    if sys.argv[1] == "source":
        sys.exit(source(int(sys.argv[2])))
    sys.exit(sink(sys.argv[2], int(sys.argv[3])))
