#!/usr/bin/python3
#
# Copyright 2026 gr-spead authors
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""Send rate of spead_send against spead2_send (or any senders taking spead2_send's
flags) on this machine: unlimited rate, 1 MiB heaps, to a 127.0.0.1 port where a
socket is bound but never read (the kernel drops what overflows it), or with
--no-reader to a port nobody listens on. Trials are interleaved, so a change in the
machine's load hits every sender alike; prints each sender's median of its own printed
Gb/s, the ratio to the last sender, and the median user/system CPU (/usr/bin/time).

A measurement, not a test: nothing here passes or fails. See docs/interop.md.

  tests/interop/compare_send_rate.py --packet 8972 --trials 11 \\
      ours=build/apps/spead_send spead2=/path/to/spead2_send
"""

import argparse
import re
import socket
import statistics
import subprocess
import sys


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("senders", nargs="+", metavar="NAME=PROGRAM",
                        help="senders to compare; the last one is the reference")
    parser.add_argument("--packet", type=int, default=1472)
    parser.add_argument("--heaps", type=int, default=3000, help="1 MiB heaps per run")
    parser.add_argument("--trials", type=int, default=9)
    parser.add_argument("--no-reader", action="store_true",
                        help="send to a port without a socket (ICMP unreachable path)")
    args = parser.parse_args()
    senders = [s.split("=", 1) for s in args.senders]
    if any(len(s) != 2 for s in senders):
        parser.error("give senders as NAME=PROGRAM")

    sink = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sink.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 16)
    sink.bind(("127.0.0.1", 0))
    port = sink.getsockname()[1]
    if args.no_reader:
        sink.close()

    rates = {name: [] for name, _ in senders}
    cpu = {name: [] for name, _ in senders}
    for trial in range(args.trials):
        shift = trial % len(senders)
        for name, program in senders[shift:] + senders[:shift]:
            cmd = ["/usr/bin/time", "-f", "CPU %U %S", program, "--heap-size", "1048576",
                   "--heaps", str(args.heaps), "--packet", str(args.packet),
                   f"127.0.0.1:{port}"]
            run = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
            rate = re.search(r"([0-9.e+-]+) Gb/s", run.stdout)
            times = re.search(r"CPU ([0-9.]+) ([0-9.]+)", run.stderr)
            if run.returncode != 0 or not rate or not times:
                sys.exit(f"{name} failed:\n{run.stdout}\n{run.stderr}")
            rates[name].append(float(rate.group(1)))
            cpu[name].append((float(times.group(1)), float(times.group(2))))

    reference = statistics.median(rates[senders[-1][0]])
    print(f"packet {args.packet}, {args.heaps} x 1 MiB heaps, {args.trials} trials, "
          f"{'no reader' if args.no_reader else 'unread socket'}")
    for name, _ in senders:
        median = statistics.median(rates[name])
        user = statistics.median(c[0] for c in cpu[name])
        system = statistics.median(c[1] for c in cpu[name])
        print(f"{name:10s} median {median:6.2f} Gb/s  ({median / reference:.3f} x "
              f"{senders[-1][0]})  user {user:.2f} s  sys {system:.2f} s  "
              f"trials {' '.join(f'{r:.1f}' for r in rates[name])}")


if __name__ == "__main__":
    main()
