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

--tcp: the same comparisons over SPEAD over TCP (apps/spead_compare_tcp.py).

Standard library only. Exit status: 0 when every trial ran, 1 when one failed (the
table and CSV keep the trials that ran), 2 for bad options, 77 when spead2's tools are
not found (a skip).
"""

import argparse
import csv
import os
import re
import shutil
import signal
import socket
import statistics
import sys
import tempfile
import time

HEAP_SIZE = 1 << 20  # bytes of payload per heap, as spead2_send --heap-size 1048576
GIB = 1 << 30
SOCKET_BUFFER = 8388608  # --buffer of every sender and receiver
SKIP = 77  # the exit status CTest and the regenerate script read as "skipped"
CSV_COLUMNS = ["bench", "impl", "packet_bytes", "offered_gbps", "trial", "metric", "value"]
SPEAD2, OURS = "spead2", "gr-spead"
POLL = 0.02  # seconds between checks on a child


class TrialFailed(Exception):
    """One trial could not be measured; the message says which process and why."""


class Child:
    """A tool run with its output in temporary files, reaped with os.wait4 so that its
    resource usage is its own (never the sender's, never this script's)."""

    def __init__(self, name, argv):
        self.name = name
        self.argv = argv
        self.stdout = tempfile.TemporaryFile(mode="w+")
        self.stderr = tempfile.TemporaryFile(mode="w+")
        try:
            self.pid = os.posix_spawn(argv[0], argv, os.environ,
                                      file_actions=[(os.POSIX_SPAWN_DUP2,
                                                     self.stdout.fileno(), 1),
                                                    (os.POSIX_SPAWN_DUP2,
                                                     self.stderr.fileno(), 2)])
        except OSError as e:
            raise TrialFailed(f"{name}: cannot start {argv[0]}: {e.strerror}") from None
        self.exit_code = None
        self.rusage = None

    def poll(self):
        """True once the process has ended (and been reaped)."""
        if self.exit_code is None:
            pid, status, rusage = os.wait4(self.pid, os.WNOHANG)
            if pid == 0:
                return False
            self.exit_code = os.waitstatus_to_exitcode(status)
            self.rusage = rusage
        return True

    def wait(self, seconds):
        """Waits up to `seconds` for the process to end; True if it did."""
        deadline = time.monotonic() + seconds
        while not self.poll():
            if time.monotonic() >= deadline:
                return False
            time.sleep(POLL)
        return True

    def finish(self, seconds):
        """Waits for the process to end and succeed; TrialFailed on a timeout (after
        killing it) or a non-zero exit status, with its last lines of output."""
        if not self.wait(seconds):
            self.kill()
            raise TrialFailed(f"{self.name} did not finish within {seconds:.0f} s (timeout)")
        if self.exit_code != 0:
            raise TrialFailed(f"{self.name} failed (exit status {self.exit_code}):\n"
                              f"{self.describe_output()}")

    def kill(self):
        """Ends the process for good (after a timeout) and reaps it."""
        if not self.poll():
            os.kill(self.pid, signal.SIGKILL)
            self.wait(10)

    def output(self):
        self.stdout.seek(0)
        self.stderr.seek(0)
        return self.stdout.read(), self.stderr.read()

    def describe_output(self):
        out, err = self.output()
        text = (out.strip() + "\n" + err.strip()).strip()
        lines = text.splitlines()[-15:]
        return "\n".join("    " + line for line in lines) or "    (no output)"

    def cpu(self):
        return self.rusage.ru_utime, self.rusage.ru_stime


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


def sender_timeout(heaps, rate_gbps):
    """Seconds a sender may take: four times its nominal time at the given rate (at
    least 1 Gb/s when unlimited), plus start-up."""
    nominal = heaps * HEAP_SIZE * 8 / (max(rate_gbps, 1.0) * 1e9)
    return 30 + 4 * nominal


def parse_sent(name, text):
    """(bytes, seconds, Gb/s) from spead2_send's and spead_send's common summary line
    'Sent B bytes in S seconds, R Gb/s'."""
    m = re.search(r"Sent (\d+) bytes in ([0-9.eE+-]+) seconds, ([0-9.eE+-]+) Gb/s", text)
    if not m:
        raise TrialFailed(f"{name} printed no 'Sent ... bytes in ... seconds, ... Gb/s' line")
    return int(m.group(1)), float(m.group(2)), float(m.group(3))


def parse_heaps(impl, name, text):
    """Heaps a receiver delivered: spead2_recv's 'Received N heaps', spead_recv's
    'heaps: N' statistic."""
    pattern = r"^Received (\d+) heaps" if impl == SPEAD2 else r"^heaps: (\d+)$"
    m = re.search(pattern, text, re.MULTILINE)
    if not m:
        raise TrialFailed(f"{name} printed no heap count (looked for /{pattern}/)")
    return int(m.group(1))


def per_gib(user, system, payload_bytes):
    gib = payload_bytes / GIB
    return {"cpu_user_s_per_gib": user / gib, "cpu_sys_s_per_gib": system / gib,
            "cpu_s_per_gib": (user + system) / gib}


def run_receive_trial(impl, receiver_argv, sender_argv, port, heaps, rate,
                      ready=udp_port_bound):
    """One receiver fed by one sender: the receiver's metrics. ready(port) says the
    receiver is there (bound, or listening)."""
    receiver = Child(os.path.basename(receiver_argv[0]), receiver_argv)
    sender = None
    try:
        deadline = time.monotonic() + 10
        while not ready(port):
            if receiver.poll():
                raise TrialFailed(f"{receiver.name} ended (exit status {receiver.exit_code}) "
                                  f"before binding port {port}:\n{receiver.describe_output()}")
            if time.monotonic() >= deadline:
                raise TrialFailed(f"{receiver.name} did not bind port {port} within 10 s")
            time.sleep(POLL)
        sender = Child(os.path.basename(sender_argv[0]), sender_argv)
        sender.finish(sender_timeout(heaps, rate))
        _, seconds, _ = parse_sent(sender.name, sender.output()[0])
        # The receiver ends at the stop heap; when that was lost it is told to stop
        # (SIGINT, which both receivers take as "stop and print the statistics").
        stopped_by_signal = not receiver.wait(5)
        if stopped_by_signal:
            os.kill(receiver.pid, signal.SIGINT)
        receiver.finish(10)
        received = parse_heaps(impl, receiver.name, receiver.output()[0])
        if received == 0:
            raise TrialFailed(f"{receiver.name} received no heaps:\n"
                              f"{receiver.describe_output()}")
        user, system = receiver.cpu()
        metrics = per_gib(user, system, received * HEAP_SIZE)
        metrics.update(heaps_received=received, heaps_sent=heaps,
                       gbps=received * HEAP_SIZE * 8e-9 / seconds)
        return metrics, stopped_by_signal
    finally:
        for child in (sender, receiver):
            if child is not None:
                child.kill()


def run_send_trial(sender_argv, heaps):
    """One sender at unlimited rate into the discarding socket: its metrics."""
    sender = Child(os.path.basename(sender_argv[0]), sender_argv)
    try:
        sender.finish(sender_timeout(heaps, 0))
        _, _, gbps = parse_sent(sender.name, sender.output()[0])
        user, system = sender.cpu()
        metrics = per_gib(user, system, heaps * HEAP_SIZE)
        metrics.update(heaps_sent=heaps, gbps=gbps)
        return metrics
    finally:
        sender.kill()


class Results:
    """Per (packet, impl): one metrics dict per trial number; turned into the table
    and the tidy CSV rows."""

    def __init__(self, bench):
        self.bench = bench
        self.trials = {}  # (packet, impl) -> {trial: metrics}
        self.offered = {}  # packet -> Gb/s offered (0: unlimited)

    def add(self, packet, offered, impl, trial, metrics):
        self.offered[packet] = offered
        self.trials.setdefault((packet, impl), {})[trial] = metrics

    def ratios(self, packet, metric):
        """Per trial where both ran: gr-spead / spead2 of `metric`."""
        ours = self.trials.get((packet, OURS), {})
        theirs = self.trials.get((packet, SPEAD2), {})
        return {t: ours[t][metric] / theirs[t][metric]
                for t in sorted(ours.keys() & theirs.keys()) if theirs[t][metric] > 0}

    def rows(self, ratio_metrics):
        for packet in sorted(self.offered):
            # Offered rate empty for "as fast as possible", as spead_bench writes it.
            offered = format_number(self.offered[packet]) if self.offered[packet] else ""

            def row(impl, trial, metric, value):
                return [self.bench, impl, packet, offered, trial, metric, format_number(value)]

            for impl in (SPEAD2, OURS):
                trials = self.trials.get((packet, impl), {})
                if not trials:
                    continue
                metrics = list(next(iter(trials.values())))
                for trial in sorted(trials):
                    for metric in metrics:
                        yield row(impl, trial, metric, trials[trial][metric])
                for metric in metrics:
                    yield row(impl, "median", metric,
                              statistics.median(t[metric] for t in trials.values()))
            for metric, name in ratio_metrics:
                ratios = self.ratios(packet, metric)
                for trial, value in ratios.items():
                    yield row("ratio", trial, name, value)
                if ratios:
                    yield row("ratio", "median", name, statistics.median(ratios.values()))


def format_number(value):
    if isinstance(value, int):
        return str(value)
    return f"{value:.6g}"


def print_table(title, results, packet, columns, ratio_metrics):
    print(f"\n{title}")
    header = f"{'trial':>6}  {'impl':8}" + "".join(f"  {label:>11}" for label, _, _ in columns)
    print(header)
    print("-" * len(header))
    for impl in (SPEAD2, OURS):
        trials = results.trials.get((packet, impl), {})
        for trial in sorted(trials):
            print(f"{trial:>6}  {impl:8}" + "".join(
                f"  {fmt.format(trials[trial][key]):>11}" for _, key, fmt in columns))
    for impl in (SPEAD2, OURS):
        trials = results.trials.get((packet, impl), {})
        if trials:
            print(f"{'median':>6}  {impl:8}" + "".join(
                f"  {fmt.format(statistics.median(t[key] for t in trials.values())):>11}"
                for _, key, fmt in columns))
    for metric, name in ratio_metrics:
        ratios = results.ratios(packet, metric)
        if ratios:
            print(f"{name} gr-spead/spead2: median {statistics.median(ratios.values()):.3f}"
                  f" (trials: {' '.join(f'{r:.3f}' for r in ratios.values())})")


RECEIVE_COLUMNS = [("heaps", "heaps_received", "{:g}"), ("Gb/s", "gbps", "{:.3f}"),
                   ("user s/GiB", "cpu_user_s_per_gib", "{:.4f}"),
                   ("sys s/GiB", "cpu_sys_s_per_gib", "{:.4f}"),
                   ("CPU s/GiB", "cpu_s_per_gib", "{:.4f}")]
SEND_COLUMNS = [("heaps", "heaps_sent", "{:g}"), ("Gb/s", "gbps", "{:.3f}"),
                ("user s/GiB", "cpu_user_s_per_gib", "{:.4f}"),
                ("sys s/GiB", "cpu_sys_s_per_gib", "{:.4f}"),
                ("CPU s/GiB", "cpu_s_per_gib", "{:.4f}")]


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
        for trial in range(1, args.trials + 1):
            order = [SPEAD2, OURS] if trial % 2 else [OURS, SPEAD2]
            for impl in order:
                try:
                    metrics, signalled = run_receive_trial(
                        impl, receivers[impl], sender, port, args.heaps, rate)
                except TrialFailed as e:
                    failures.append(f"receive {packet} B trial {trial} {impl}: {e}")
                    print(f"FAILED: {failures[-1]}", file=sys.stderr)
                    continue
                if signalled:
                    print(f"note: receive {packet} B trial {trial} {impl}: the stop heap did "
                          f"not arrive; the receiver was stopped with SIGINT", file=sys.stderr)
                results.add(packet, rate, impl, trial, metrics)
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
            for trial in range(1, args.trials + 1):
                order = [SPEAD2, OURS] if trial % 2 else [OURS, SPEAD2]
                for impl in order:
                    try:
                        metrics = run_send_trial(senders[impl], args.send_heaps)
                    except TrialFailed as e:
                        failures.append(f"send {packet} B trial {trial} {impl}: {e}")
                        print(f"FAILED: {failures[-1]}", file=sys.stderr)
                        continue
                    results.add(packet, 0, impl, trial, metrics)
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
