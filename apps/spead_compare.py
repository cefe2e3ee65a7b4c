#!/usr/bin/python3
#
# Copyright 2026 gr-spead authors
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""spead_compare: gr-spead's kernel-UDP receiver and sender against spead2's, side by side.

Receive: for each packet size and trial, one spead2_send (1 MiB heaps at a fixed rate,
to 127.0.0.1) feeds spead2_recv --mem-pool and then spead_recv (the order alternates
from trial to trial). Each receiver's own CPU time (user and system, from the kernel's
resource usage of that process only, not the sender's) is divided by the heap payload it
delivered: CPU seconds per GiB. The table gives every trial, each receiver's median,
and the median over trials of the ratio gr-spead / spead2.

Send (--send): spead2_send and spead_send with the same flags at unlimited rate into a
socket on 127.0.0.1 that is never read (the kernel discards what does not fit); each
sender's CPU seconds per GiB of heap payload sent and its printed Gb/s.

--tcp: the same comparisons over SPEAD over TCP (apps/spead_compare_tcp.py). The trials
themselves, and the table, are apps/compare_trials.py's.

Standard library only. Exit status: 0 when every trial ran, 1 when one failed (the
table and CSV keep the trials that ran), 2 for bad options, 77 when spead2's tools are
not found (a skip).
"""

import argparse
import csv
import os
import shutil
import socket
import sys

from compare_trials import (HEAP_SIZE, OURS, RECEIVE_COLUMNS, SEND_COLUMNS, SOCKET_BUFFER,
                            SPEAD2, Results, format_number, print_table, run_receive_trial,
                            run_send_trial, run_trials)

SKIP = 77  # the exit status CTest and the regenerate script read as "skipped"
CSV_COLUMNS = ["bench", "impl", "packet_bytes", "offered_gbps", "trial", "metric", "value"]


def find_tools(names, directory, what):
    """Full paths of `names` in `directory` (when given), else on PATH; None when one is
    missing."""
    found = []
    for name in names:
        if directory:
            path = os.path.join(directory, name)
            path = path if os.access(path, os.X_OK) and os.path.isfile(path) else None
        else:
            path = shutil.which(name)
        if path is None:
            return None
        found.append(os.path.abspath(path))
    return found


def free_udp_port():
    """A UDP port on 127.0.0.1 that nobody has bound just now."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def udp_port_bound(port):
    """True when some socket is bound to this UDP port (IPv4 or IPv6; Linux /proc)."""
    suffix = f":{port:04X}"
    for table in ("/proc/net/udp", "/proc/net/udp6"):
        try:
            with open(table) as f:
                next(f)
                if any(line.split()[1].endswith(suffix) for line in f):
                    return True
        except (OSError, StopIteration, IndexError):
            continue
    return False


def compare_receivers(args, tools, failures):
    results = Results("compare_recv")
    for packet, rate in zip(args.packet, args.rate):
        port = args.port or free_udp_port()
        sender = [tools["spead2_send"], "--heap-size", str(HEAP_SIZE), "--heaps",
                  str(args.heaps), "--packet", str(packet), "--rate", format_number(rate),
                  "--buffer", str(SOCKET_BUFFER), f"127.0.0.1:{port}"]
        receivers = {
            SPEAD2: [tools["spead2_recv"], "--mem-pool", "--quiet", "--packet", str(packet),
                     "--buffer", str(SOCKET_BUFFER), f"127.0.0.1:{port}"],
            OURS: [tools["spead_recv"], "--quiet", "--packet", str(packet),
                   "--buffer", str(SOCKET_BUFFER), f"127.0.0.1:{port}"],
        }

        def run(impl, trial):
            metrics, signalled = run_receive_trial(impl, receivers[impl], sender, port,
                                                   args.heaps, rate, ready=udp_port_bound)
            if signalled:
                print(f"note: receive {packet} B trial {trial} {impl}: the stop heap did "
                      f"not arrive; the receiver was stopped with SIGINT", file=sys.stderr)
            return metrics

        run_trials(args, "receive", packet, rate, run, results, failures)
        print_table(f"kernel UDP receive: {packet}-byte packets, {format_number(rate)} Gb/s "
                    f"offered by spead2_send, {args.heaps} x 1 MiB heaps per trial",
                    results, packet, RECEIVE_COLUMNS, [("cpu_s_per_gib", "CPU s/GiB")])
    return results


def compare_senders(args, tools, failures):
    results = Results("compare_send")
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sink:
        # Bound, never read: the kernel drops what does not fit in its small buffer.
        sink.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 16)
        sink.bind(("127.0.0.1", 0))
        port = sink.getsockname()[1]
        for packet in args.packet:
            senders = {impl: [tools[name], "--heap-size", str(HEAP_SIZE), "--heaps",
                              str(args.send_heaps), "--packet", str(packet), "--rate", "0",
                              "--buffer", str(SOCKET_BUFFER), f"127.0.0.1:{port}"]
                       for impl, name in ((SPEAD2, "spead2_send"), (OURS, "spead_send"))}
            run_trials(args, "send", packet, 0,
                       lambda impl, trial: run_send_trial(senders[impl], args.send_heaps),
                       results, failures)
            print_table(f"kernel UDP send: {packet}-byte packets, unlimited rate, "
                        f"{args.send_heaps} x 1 MiB heaps per trial into an unread socket",
                        results, packet, SEND_COLUMNS,
                        [("cpu_s_per_gib", "CPU s/GiB"), ("gbps", "Gb/s")])
    return results


def write_csv(path, row_sets):
    new = not os.path.exists(path) or os.path.getsize(path) == 0
    with open(path, "a", newline="") as f:
        writer = csv.writer(f, lineterminator="\n")
        if new:
            writer.writerow(CSV_COLUMNS)
        for rows in row_sets:
            writer.writerows(rows)


def parse_args(argv):
    parser = argparse.ArgumentParser(
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="Example: apps/spead_compare.py --spead2-bin /opt/spead2/bin "
               "--apps build/apps --csv compare.csv --send")
    parser.add_argument("--spead2-bin", metavar="DIR",
                        default=os.environ.get("SPEAD2_BIN_DIR"),
                        help="directory of spead2_send and spead2_recv (default: "
                             "$SPEAD2_BIN_DIR, else PATH)")
    parser.add_argument("--apps", metavar="DIR", default=os.environ.get("GR_SPEAD_APPS_DIR"),
                        help="directory of spead_send and spead_recv, e.g. build/apps "
                             "(default: $GR_SPEAD_APPS_DIR, else PATH)")
    parser.add_argument("--packet", type=int, nargs="+", default=[1472, 8972], metavar="BYTES",
                        help="packet sizes, UDP payload bytes (default: 1472 8972)")
    parser.add_argument("--rate", type=float, nargs="+", metavar="GBPS",
                        help="receive: spead2_send's rate in Gb/s, one for all packet sizes "
                             "or one per packet size (default: 3 below 4000-byte packets, "
                             "5 from 4000)")
    parser.add_argument("--heaps", type=int, default=1500,
                        help="receive: 1 MiB heaps per trial (default: 1500)")
    parser.add_argument("--trials", type=int, default=5,
                        help="trials per packet size and tool (default: 5)")
    parser.add_argument("--port", type=int, default=0,
                        help="receive: UDP port on 127.0.0.1 (default: a free one)")
    parser.add_argument("--csv", metavar="FILE",
                        help="append tidy rows to FILE (header only when it is new)")
    parser.add_argument("--send", action="store_true",
                        help="also compare the senders (spead2_send and spead_send at "
                             "unlimited rate into an unread socket)")
    parser.add_argument("--no-recv", action="store_true",
                        help="skip the receive comparison (with --send: senders only)")
    parser.add_argument("--send-heaps", type=int, default=3000,
                        help="send: 1 MiB heaps per trial (default: 3000)")
    parser.add_argument("--tcp", action="store_true",
                        help="compare over SPEAD over TCP (--tcp of every tool) instead of "
                             "UDP; --rate and --port do not apply")
    args = parser.parse_args(argv)
    if args.rate is None:
        args.rate = [3.0 if p < 4000 else 5.0 for p in args.packet]
    elif len(args.rate) == 1:
        args.rate = args.rate * len(args.packet)
    elif len(args.rate) != len(args.packet):
        parser.error(f"--rate: give one rate or one per packet size "
                     f"({len(args.packet)}), not {len(args.rate)}")
    for name, values, low in (("--packet", args.packet, 64), ("--rate", args.rate, 1e-6),
                              ("--heaps", [args.heaps], 1), ("--trials", [args.trials], 1),
                              ("--send-heaps", [args.send_heaps], 1)):
        for value in values:
            if value < low:
                parser.error(f"{name}: {format_number(value)} is too small "
                             f"(at least {format_number(low)})")
    if not 0 <= args.port <= 65535:
        parser.error(f"--port: {args.port} is not a UDP port (1-65535, 0: a free one)")
    if args.no_recv and not args.send:
        parser.error("--no-recv leaves nothing to run; add --send")
    return args


def main(argv=None):
    args = parse_args(argv)
    spead2 = find_tools(["spead2_send", "spead2_recv"], args.spead2_bin, "spead2")
    if spead2 is None:
        where = f" in {args.spead2_bin}" if args.spead2_bin else " on PATH"
        print(f"SKIPPED: spead2_send/spead2_recv not found{where} "
              f"(give --spead2-bin or SPEAD2_BIN_DIR)")
        return SKIP
    ours = find_tools(["spead_send", "spead_recv"], args.apps, "gr-spead")
    if ours is None:
        where = f"in {args.apps}" if args.apps else "on PATH"
        print(f"spead_compare: spead_send/spead_recv not found {where}; give --apps DIR or "
              f"GR_SPEAD_APPS_DIR, the build's apps/ directory (e.g. build/apps)",
              file=sys.stderr)
        return 2
    tools = dict(zip(["spead2_send", "spead2_recv", "spead_send", "spead_recv"],
                     spead2 + ours))
    for name, path in tools.items():
        print(f"{name}: {path}")
    try:
        with open("/proc/sys/net/core/rmem_max") as f:
            rmem_max = int(f.read())
        if rmem_max < SOCKET_BUFFER:
            print(f"note: net.core.rmem_max is {rmem_max}: both receivers get that socket "
                  f"buffer, not {SOCKET_BUFFER}")
    except OSError:
        pass

    failures = []
    row_sets = []
    receivers, senders = compare_receivers, compare_senders
    if args.tcp:
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        import spead_compare_tcp
        receivers = spead_compare_tcp.compare_receivers
        senders = spead_compare_tcp.compare_senders
    if not args.no_recv:
        row_sets.append(list(receivers(args, tools, failures)
                             .rows([("cpu_s_per_gib", "cpu_ratio")])))
    if args.send:
        row_sets.append(list(senders(args, tools, failures)
                             .rows([("cpu_s_per_gib", "cpu_ratio"), ("gbps", "gbps_ratio")])))
    if args.csv:
        write_csv(args.csv, row_sets)
        print(f"\nrows appended to {args.csv}")
    if failures:
        print(f"\n{len(failures)} trial(s) failed:", file=sys.stderr)
        for failure in failures:
            print(f"  {failure.splitlines()[0]}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
