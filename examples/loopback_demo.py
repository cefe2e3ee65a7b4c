#!/usr/bin/env python3
#
# Copyright 2026 gr-spead authors
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""gr-spead loopback demo.

Generated complex int16 samples -> spead.sink -> UDP on 127.0.0.1 -> spead.source ->
a verifier that checks every sample. Prints heaps/s, Gb/s and every drop counter, and
ends by itself (the sink's stop heap ends the source). Exit status 0 when every
sample that arrived is right and every heap sent is accounted for.

Run with Debian's Python (GNU Radio's): /usr/bin/python3 examples/loopback_demo.py
"""

import argparse
import contextlib
import socket
import sys
import threading
import time

import numpy as np
from gnuradio import blocks, gr

try:
    from gnuradio import spead
except ImportError:
    sys.exit("gnuradio.spead not found: build gr-spead and set PYTHONPATH to "
             "BUILD/test_modules (or install it)")


class verify(gr.sync_block):
    """Compares every sample with the pattern the sender repeats, heap by heap."""

    def __init__(self, pattern):
        gr.sync_block.__init__(self, "verify", [np.int32], [])
        self.pattern = np.concatenate([pattern, pattern])
        self.period = len(pattern)
        self.items = 0
        self.wrong = 0
        self.first = None
        self.last = None

    def work(self, input_items, output_items):
        data = input_items[0]
        now = time.monotonic()
        if self.first is None:
            self.first = now
        self.last = now
        start = self.nitems_read(0) % self.period
        done = 0
        while done < len(data):
            n = min(len(data) - done, self.period)
            expected = self.pattern[start:start + n]
            self.wrong += int(np.count_nonzero(data[done:done + n] != expected))
            done += n
            start = (start + n) % self.period
        self.items += len(data)
        return len(data)


RMEM_MAX = "/proc/sys/net/core/rmem_max"


@contextlib.contextmanager
def socket_buffer_cap(wanted):
    """As root, lifts net.core.rmem_max to `wanted` while the source makes its socket
    (the kernel grants SO_RCVBUF then and keeps it), and restores it after; otherwise
    the source warns that its buffer was capped."""
    try:
        with open(RMEM_MAX) as f:
            old = int(f.read())
        raised = old < wanted
        if raised:
            with open(RMEM_MAX, "w") as f:
                f.write(str(wanted))
    except (OSError, ValueError):  # not root, or no /proc
        raised = False
    if not raised:
        yield
        return
    print(f"net.core.rmem_max: {old} -> {wanted} while the source's socket is made, "
          f"then {old} again", flush=True)
    try:
        yield
    finally:
        with open(RMEM_MAX, "w") as f:
            f.write(str(old))


def free_udp_port():
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[1],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--heaps", type=int, default=2000, help="heaps to send (2000)")
    parser.add_argument("--heap-size", type=int, default=1 << 20,
                        help="heap payload in bytes, a multiple of 4 (1 MiB)")
    parser.add_argument("--packet", type=int, default=8972,
                        help="largest SPEAD packet in bytes (8972, jumbo)")
    parser.add_argument("--rate", type=float, default=0.0,
                        help="send rate in Gb/s, 0 = as fast as possible (0)")
    parser.add_argument("--port", type=int, default=0, help="UDP port (0: a free one)")
    parser.add_argument("--buffer", type=int, default=64 << 20,
                        help="the source's socket receive buffer in bytes; as root the "
                             "demo lifts net.core.rmem_max for it while the socket is "
                             "made (64 MiB)")
    parser.add_argument("--timeout", type=float, default=120, help="give up after (s)")
    args = parser.parse_args()
    if args.heap_size <= 0 or args.heap_size % 4:
        parser.error("--heap-size must be a positive multiple of 4 (complex int16)")
    items = args.heap_size // 4
    port = args.port or free_udp_port()
    endpoint = f"127.0.0.1:{port}"

    # One heap of samples: I = n mod 32749, Q = -I, packed as int32 (4 bytes = sc16).
    ramp = (np.arange(items) % 32749).astype(np.int16)
    pattern = np.empty(2 * items, dtype=np.int16)
    pattern[0::2] = ramp
    pattern[1::2] = -ramp
    pattern = pattern.view(np.int32)

    tb = gr.top_block("spead loopback demo")
    # A sender that runs as fast as it can outpaces the receiver in bursts on a small
    # machine: a large socket buffer absorbs them.
    with socket_buffer_cap(args.buffer):
        rx = spead.source(endpoints=endpoint, item_type="complex_int16",
                          payload_item=0x1000, max_heap_size=args.heap_size,
                          buffer_size=args.buffer)
    checker = verify(pattern)
    src = blocks.vector_source_i(pattern.tolist(), True)
    head = blocks.head(4, args.heaps * items)
    packets = blocks.stream_to_tagged_stream(4, 1, items, "packet_len")
    packets.set_min_output_buffer(2 * items)  # a tagged stream holds two packets
    tx = spead.sink(endpoints=endpoint, item_type="complex_int16", payload_item=0x1000,
                    payload_name="samples", payload_description="demo ramp",
                    max_packet_size=args.packet, rate_gbps=args.rate)
    tb.connect(src, head, packets, tx)
    tb.connect(rx, checker)

    rate = f"{args.rate:g} Gb/s" if args.rate > 0 else "as fast as possible"
    print(f"gr-spead loopback demo: {args.heaps} heaps of {args.heap_size} bytes "
          f"({items} complex int16 samples), packets of at most {args.packet} bytes, "
          f"{rate}, {endpoint}", flush=True)

    started = time.monotonic()
    tb.start()
    waiter = threading.Thread(target=tb.wait, daemon=True)
    waiter.start()
    # Normally the stop heap ends the flowgraph. Should the network lose it, stop once
    # the sender is done and nothing has arrived for two seconds.
    last_seen, last_change = -1, time.monotonic()
    while waiter.is_alive():
        waiter.join(0.1)
        seen = rx.stats()["packets"]
        if seen != last_seen:
            last_seen, last_change = seen, time.monotonic()
        sender_done = tx.stats()["data_heaps"] >= args.heaps
        if (sender_done and time.monotonic() - last_change > 2.0) or \
                time.monotonic() - started > args.timeout:
            print("(no stop heap arrived: stopping the flowgraph)", flush=True)
            tb.stop()
            waiter.join(10)
            break

    rs, ts = rx.stats(), tx.stats()
    output = rs["heaps_output"]
    lost = args.heaps - output
    print(f"sent:       {ts['data_heaps']} heaps ({ts['heaps']} with control heaps), "
          f"{ts['packets']} packets, {ts['bytes'] / 1e9:.3f} GB")
    print(f"received:   {rs['heaps']} heaps, {rs['packets']} packets; "
          f"{output} heaps output, {lost} lost")
    drops = {k: v for k, v in rs.items()
             if v and (k.startswith(("packets_", "heaps_dropped", "heaps_too", "incomplete",
                                     "datagrams_", "frames_")))}
    print("drops:      " + (", ".join(f"{k}: {v}" for k, v in sorted(drops.items()))
                            if drops else "none"))
    print(f"verified:   {checker.items} samples, {checker.wrong} wrong")
    if checker.first is not None and checker.last > checker.first and output > 1:
        seconds = checker.last - checker.first
        heaps_per_s = (output - 1) / seconds  # first heap starts the clock
        gbps = heaps_per_s * args.heap_size * 8 / 1e9
        print(f"throughput: {heaps_per_s:.0f} heaps/s, {gbps:.2f} Gb/s of payload "
              f"(first to last heap, {seconds:.3f} s)")
    accounted = (output + rs["heaps_dropped_queue_full"] + rs["heaps_too_large"]
                 + rs["incomplete_heaps_evicted"] + rs["incomplete_heaps_flushed"]
                 + rs["heaps_dropped_partial_item"]
                 + rs["heaps_dropped_too_large_for_output"])
    unaccounted_packets = ts["packets"] - rs["packets"] - rs["packets_dropped_socket_overflow"]
    ok = checker.wrong == 0 and checker.items == output * items
    runs = rs["runs_dropped_socket_overflow"]  # coalesced (GRO) runs: no packet count
    if lost and accounted < args.heaps and runs:
        print(f"note: the socket buffer overflowed: {runs} runs of packets dropped")
    elif lost and accounted < args.heaps and unaccounted_packets:
        print(f"note: {unaccounted_packets} packets never reached the socket")
    print("result:     " + ("OK" if ok else "FAILED: wrong samples"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
