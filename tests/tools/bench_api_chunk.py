#!/usr/bin/env python3
#
# Copyright 2026 gr-spead authors
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""How fast a Python loop over ChunkRingStream keeps up, next to spead_recv, in the
same run (issue 22's yardstick: >= 0.9 x the C++ rate).

    PYTHONPATH=build/test_modules nice -n 19 /usr/bin/python3 \
        tests/tools/bench_api_chunk.py --apps build/apps

spead_send (C++) sends a continuous stream (--timestamp-item: every heap carries
k x heap bytes) of --heaps heaps of --heap-size bytes over loopback at a given rate
to either receiver:
  - spead_recv -q --timestamp-item (C++: the same stream in continuous mode, placed
    by timestamp as the source block does; --cpp-heaps: assembled as heaps), or
  - this script: a ChunkRingStream with the declarative ChunkPlacement, and a Python
    loop `for chunk in stream.data_ringbuffer: stream.add_free_chunk(chunk)`.
A rate is lossless when every heap arrives complete (and, for the chunks, every
present flag of every chunk is set). The two bisections alternate step by step, so
background load hits both alike (as bench_api_recv.py does for heaps), and a rate
counts as lossless when most of --tries trials are. Not a test:
the figures depend on the machine.

With --cpu-rate GBPS it measures CPU time instead: --cpu-trials trials of each
receiver at that one rate, alternated, and prints the median CPU seconds each spent
receiving (Python: the whole process, reader threads included; spead_recv: its own,
from os.wait4).
"""

import os
import statistics
import sys
import threading
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import spead_qa_support as qa  # noqa: E402
from bench_api_recv import (alternate_bisections, bench_parser, sender,  # noqa: E402
                            spead_recv_stats, trial_cpp)

TIMESTAMP_ITEM = 0x1600


def trial_chunks(args, gbps, spead2):
    recv = spead2.recv
    place = recv.ChunkPlacement(timestamp_item=TIMESTAMP_ITEM, timestamp_step=args.heap_size,
                                heap_size=args.heap_size, heaps_per_chunk=args.chunk_heaps)
    data_ring, free_ring = recv.ChunkRingbuffer(args.chunks), recv.ChunkRingbuffer(args.chunks)
    stream = recv.ChunkRingStream(spead2.ThreadPool(), recv.StreamConfig(),
                                  recv.ChunkStreamConfig(place=place, max_chunks=2),
                                  data_ring, free_ring)
    for _ in range(args.chunks):
        stream.add_free_chunk(place.make_chunk())
    port = qa.free_udp_port()
    stream.add_udp_reader(port, bind_hostname="127.0.0.1")
    tx = sender(args, port, gbps, ("--timestamp-item", str(TIMESTAMP_ITEM)))
    full_chunks = args.heaps // args.chunk_heaps
    complete = 0

    def watchdog():  # a lost stop heap would leave the loop waiting
        tx.wait(120)
        if not done.wait(3):
            stream.stop()
    done = threading.Event()
    threading.Thread(target=watchdog, daemon=True).start()
    try:
        for chunk in data_ring:  # ends at the stop heap
            if chunk.chunk_id < full_chunks and np.all(chunk.present):
                complete += 1
            stream.add_free_chunk(chunk)
    finally:
        done.set()
        tx.wait(120)
        stream.stop()
    stats = stream.stats
    # the descriptor heap completes too, and is rejected (no timestamp)
    return (complete == full_chunks and stats["heaps"] - stats["rejected_heaps"] == args.heaps
            and
            stats["incomplete_heaps_evicted"] == 0 and stats["incomplete_heaps_flushed"] == 0
            and stats["too_old_heaps"] == 0)


def trial_cpp_continuous(args, gbps, cpu=None):
    """spead_recv in continuous mode: lossless when every data heap was placed and
    released, none missing, late or incomplete."""
    stats = spead_recv_stats(
        args, gbps, ("--timestamp-item", str(TIMESTAMP_ITEM)),
        ("--timestamp-item", str(TIMESTAMP_ITEM), "--timestamp-step", str(args.heap_size)),
        cpu)
    return (stats.get("heaps") == args.heaps and
            stats.get("positions_released") == args.heaps and
            all(stats.get(name, 0) == 0 for name in (
                "heaps_missing", "heaps_late", "incomplete_heaps_evicted",
                "incomplete_heaps_flushed", "heaps_dropped_queue_full")))


def trial_cpp_chosen(args, gbps, extra, cpu=None):
    if args.cpp_heaps:
        return trial_cpp(args, gbps, extra, cpu)
    return trial_cpp_continuous(args, gbps, cpu)


def cpu_comparison(args, spead2, extra):
    """Receive CPU seconds ([cpp], [python]) at args.cpu_rate, alternated, and how
    many trials of each were lossless."""
    cpp, python, cpp_ok, python_ok = [], [], 0, 0
    for _ in range(args.cpu_trials):
        own = time.process_time()
        python_ok += trial_chunks(args, args.cpu_rate, spead2)
        python.append(time.process_time() - own)
        cpp_ok += trial_cpp_chosen(args, args.cpu_rate, extra, cpp)
    return cpp, python, cpp_ok, python_ok


def main():
    parser = bench_parser(__doc__, 512, 1 << 18)
    parser.add_argument("--chunk-heaps", type=int, default=4, help="heaps per chunk")
    parser.add_argument("--chunks", type=int, default=16, help="chunks in the rings")
    parser.add_argument("--tries", type=int, default=3,
                        help="trials per rate; lossless when most are (a busy machine)")
    parser.add_argument("--cpu-rate", type=float,
                        help="Gb/s: measure CPU time at this rate instead of bisecting")
    parser.add_argument("--cpu-trials", type=int, default=5)
    parser.add_argument("--cpp-heaps", action="store_true",
                        help="spead_recv assembles heaps instead of placing by timestamp")
    args = parser.parse_args()

    import gnuradio.spead as spead2
    import gnuradio.spead.recv  # noqa: F401 (spead2.recv)

    extra = ("--timestamp-item", str(TIMESTAMP_ITEM))
    if args.cpu_rate:
        cpp, python, cpp_ok, python_ok = cpu_comparison(args, spead2, extra)
        print(f"CPU seconds receiving {args.heaps} x {args.heap_size} bytes at "
              f"{args.cpu_rate} Gb/s, {args.cpu_trials} trials each, alternated")
        print(f"spead_recv (C++): median {statistics.median(cpp):.3f} s "
              f"({', '.join(f'{c:.3f}' for c in cpp)}; lossless {cpp_ok})")
        print(f"Python ChunkRingStream loop: median {statistics.median(python):.3f} s "
              f"({', '.join(f'{p:.3f}' for p in python)}; lossless {python_ok})")
        return
    def majority(trial):
        return lambda r: sum(trial(r) for _ in range(args.tries)) * 2 > args.tries
    best = alternate_bisections(
        {"cpp": majority(lambda r: trial_cpp_chosen(args, r, extra)),
         "python": majority(lambda r: trial_chunks(args, r, spead2))}, args)
    cpp, python = best["cpp"], best["python"]
    print(f"heaps per trial: {args.heaps} x {args.heap_size} bytes with a timestamp item, "
          f"packets of {args.packet} bytes, loopback; chunks of {args.chunk_heaps} heaps")
    mode = "heaps" if args.cpp_heaps else "continuous"
    print(f"spead_recv (C++, {mode}) highest lossless rate: {cpp:.2f} Gb/s")
    print(f"Python loop over ChunkRingStream (hand chunks back): {python:.2f} Gb/s "
          f"({python / cpp if cpp else 0:.2f} x spead_recv)")


if __name__ == "__main__":
    main()
