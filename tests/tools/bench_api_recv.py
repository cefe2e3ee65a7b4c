#!/usr/bin/env python3
#
# Copyright 2026 gr-spead authors
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""How fast a Python receive loop keeps up, next to spead_recv, in the same run.

    PYTHONPATH=build/test_modules nice -n 19 /usr/bin/python3 \
        tests/tools/bench_api_recv.py --apps build/apps

spead_send (C++) sends --heaps heaps of --heap-size bytes over loopback at a given rate
to either receiver:
  - spead_recv -q (C++), or
  - this script: `for heap in stream: ig.update(heap)` with gnuradio.spead.recv.
A rate is lossless when every heap arrives complete. A bisection per receiver (the
two alternate, so background load hits both alike) finds the highest lossless rate.
Then it times ItemGroup.update() alone on one received heap (microseconds per heap).
Not a test: the figures depend on the machine (docs/python.md has ours). It lives
with the other test-side tools, not in apps/: it is not installed, and it uses the
Python tests' support module (tests/python/spead_qa_support.py).
"""

import argparse
import os
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import spead_qa_support as qa  # noqa: E402


def sender(args, port, gbps, extra=()):
    return subprocess.Popen(
        [os.path.join(args.apps, "spead_send"), "--descriptors", "--heaps", str(args.heaps),
         "--heap-size", str(args.heap_size), "--packet", str(args.packet), "--rate",
         str(gbps), *extra, f"127.0.0.1:{port}"], stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL)


def lossless(stats, args):
    # the descriptor heap + every data heap, nothing dropped on the way
    return (stats.get("heaps") == args.heaps + 1 and
            stats.get("incomplete_heaps_evicted", 0) == 0 and
            stats.get("incomplete_heaps_flushed", 0) == 0 and
            stats.get("heaps_dropped_queue_full", 0) == 0)


def spead_recv_stats(args, gbps, extra=(), recv_extra=(), cpu=None):
    """The statistics spead_recv -q (with recv_extra) prints for one trial; its CPU
    seconds (user + system, its own: os.wait4) are appended to the list cpu."""
    port = qa.free_udp_port()
    with subprocess.Popen([os.path.join(args.apps, "spead_recv"), "-q", *recv_extra,
                           f"127.0.0.1:{port}"], stdout=subprocess.PIPE,
                          stderr=subprocess.DEVNULL, text=True) as recv:
        time.sleep(0.3)  # bound
        tx = sender(args, port, gbps, extra)
        tx.wait(120)
        timer = threading.Timer(5, recv.kill)  # the stop heap was lost
        timer.start()
        output = recv.stdout.read()
        _, status, usage = os.wait4(recv.pid, 0)
        timer.cancel()
        recv.returncode = os.waitstatus_to_exitcode(status)
    if cpu is not None:
        cpu.append(usage.ru_utime + usage.ru_stime)
    return qa.app_stats(output)


def trial_cpp(args, gbps, extra=(), cpu=None):
    return lossless(spead_recv_stats(args, gbps, extra, cpu=cpu), args)


def trial_python(args, gbps, spead2, timings=None):
    pool = spead2.ThreadPool()
    stream = spead2.recv.Stream(pool)
    port = qa.free_udp_port()
    stream.add_udp_reader(port, bind_hostname="127.0.0.1")
    tx = sender(args, port, gbps)
    ig = spead2.ItemGroup()
    deadline = time.monotonic() + 60
    clock = time.perf_counter
    try:
        while time.monotonic() < deadline:
            try:
                heap = stream.get(timeout=2)
            except (spead2.Stopped, spead2.Empty):
                break
            start = clock()
            ig.update(heap)
            if timings is not None:
                timings.append(clock() - start)
    finally:
        tx.wait(120)
        stream.stop()
    return lossless(dict(stream.stats.items()), args)


def alternate_bisections(trials, args):
    """The highest lossless rate (Gb/s) of each trial function, between args.low and
    args.high in args.steps steps; the bisections alternate step by step, so
    background load hits them alike."""
    state = {name: [args.low, args.high, None] for name in trials}
    for name in state:
        state[name][2] = args.low if trials[name](args.low) else 0.0
    for _ in range(args.steps):
        for name, (low, high, best) in state.items():
            if not best:
                continue
            mid = (best + high) / 2
            if trials[name](mid):
                state[name][2] = mid
            else:
                state[name][1] = mid
    return {name: best for name, (_, _, best) in state.items()}


def bench_parser(doc, heaps, heap_size):
    """The flags of both benches (bench_api_chunk.py's too): the tools, the heaps sent,
    the packet size and the bisection's range and steps."""
    parser = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    parser.add_argument("--apps", default=os.environ.get("GR_SPEAD_APPS_DIR", "."),
                        help="directory of spead_send and spead_recv")
    parser.add_argument("--heaps", type=int, default=heaps)
    parser.add_argument("--heap-size", type=int, default=heap_size)
    parser.add_argument("--packet", type=int, default=8972)
    parser.add_argument("--low", type=float, default=0.5, help="Gb/s")
    parser.add_argument("--high", type=float, default=40.0, help="Gb/s")
    parser.add_argument("--steps", type=int, default=7)
    return parser


def main():
    args = bench_parser(__doc__, 300, 1 << 20).parse_args()

    import gnuradio.spead as spead2
    import gnuradio.spead.recv  # noqa: F401

    best = alternate_bisections({"cpp": lambda r: trial_cpp(args, r),
                                 "python": lambda r: trial_python(args, r, spead2)}, args)
    cpp, python = best["cpp"], best["python"]

    # update() per heap inside the loop, at a rate both keep up with
    timings = []
    trial_python(args, max(min(cpp, python) / 2, args.low), spead2, timings)
    in_loop = sorted(timings[1:])  # the first heap is the descriptors
    # update() alone, on one received heap
    pool = spead2.ThreadPool()
    stream = spead2.recv.Stream(pool)
    port = qa.free_udp_port()
    stream.add_udp_reader(port, bind_hostname="127.0.0.1")
    sender(args, port, 1.0).wait(120)
    ig = spead2.ItemGroup()
    ig.update(stream.get(timeout=5))
    heap = stream.get(timeout=5)
    repeats = 20000
    start = time.perf_counter()
    for _ in range(repeats):
        ig.update(heap)
    alone = (time.perf_counter() - start) / repeats
    stream.stop()

    print(f"heaps per trial: {args.heaps} x {args.heap_size} bytes, packets of "
          f"{args.packet} bytes, loopback")
    print(f"spead_recv (C++) highest lossless rate: {cpp:.2f} Gb/s")
    print(f"Python loop (for heap in stream: ig.update(heap)): {python:.2f} Gb/s "
          f"({python / cpp if cpp else 0:.2f} x spead_recv)")
    if in_loop:
        print(f"ItemGroup.update() in the loop: median {in_loop[len(in_loop) // 2] * 1e6:.1f}"
              f" us per heap, 90th percentile {in_loop[len(in_loop) * 9 // 10] * 1e6:.1f} us")
    print(f"ItemGroup.update() alone on a received heap: {alone * 1e6:.1f} us per heap")


if __name__ == "__main__":
    main()
