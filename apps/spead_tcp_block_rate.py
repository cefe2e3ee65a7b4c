#!/usr/bin/python3
#
# Copyright 2026 gr-spead authors
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""The rate of a spead.sink(transport="tcp") -> spead.source(transport="tcp") link in
one flowgraph over loopback: HEAPS heaps of 1 MiB (argument, default 1000) of zeros
into a null sink; prints heaps sent and received, the wall rate, the process's CPU
seconds per GiB and the back-pressure counters (docs/performance.md, SPEAD over TCP)."""
import time, socket, resource, sys
import numpy as np
from gnuradio import gr, blocks, spead
heap_items = 131072  # 1 MiB of complex64
heaps = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
s = socket.socket(); s.bind(("127.0.0.1", 0)); port = s.getsockname()[1]; s.close()
tb = gr.top_block()
src = blocks.vector_source_c(np.zeros(heap_items, np.complex64).tolist(), True)
head = blocks.head(gr.sizeof_gr_complex, heap_items * heaps)
rx = spead.source(transport="tcp", endpoints=f"127.0.0.1:{port}", max_heap_size=1 << 20, max_packet_size=65536)
tx = spead.sink(transport="tcp", endpoints=f"127.0.0.1:{port}", len_tag_key="",
                heap_items=heap_items, max_packet_size=65000)
null = blocks.null_sink(gr.sizeof_gr_complex)
tb.connect(src, head, tx); tb.connect(rx, null)
t0 = time.monotonic(); c0 = resource.getrusage(resource.RUSAGE_SELF)
tb.run()
t = time.monotonic() - t0; c1 = resource.getrusage(resource.RUSAGE_SELF)
cpu = c1.ru_utime + c1.ru_stime - c0.ru_utime - c0.ru_stime
r, x = rx.stats(), tx.stats()
print(f"heaps sent {x['data_heaps']} received {r['heaps_output']}; {heaps*heap_items*8*8e-9/t:.2f} Gb/s wall, "
      f"{t:.2f} s, process CPU {cpu:.2f} s ({cpu/(heaps/1024):.3f} s/GiB), send_waits {x['send_waits']} receive_waits {r['receive_waits']}")
