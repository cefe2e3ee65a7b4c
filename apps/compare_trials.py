#
# Copyright 2026 gr-spead authors
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""The trials of spead_compare (UDP) and spead_compare_tcp (TCP): tools run as children
whose own CPU time is measured, gr-spead's and spead2's in alternating order, and the
table of the results.

Standard library only.
"""

import os
import re
import signal
import statistics
import sys
import tempfile
import time

HEAP_SIZE = 1 << 20  # bytes of payload per heap, as spead2_send --heap-size 1048576
GIB = 1 << 30
SOCKET_BUFFER = 8388608  # --buffer of every sender and receiver
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


def run_receive_trial(impl, receiver_argv, sender_argv, port, heaps, rate, ready):
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


def run_trials(args, what, packet, offered, run, results, failures):
    """`run(impl, trial)` for each trial of `packet`, spead2 and gr-spead in turn (which
    goes first alternates from trial to trial); its metrics go into `results`, a
    TrialFailed into `failures` as "<what> <packet> B trial <n> <impl>: why"."""
    for trial in range(1, args.trials + 1):
        order = [SPEAD2, OURS] if trial % 2 else [OURS, SPEAD2]
        for impl in order:
            try:
                metrics = run(impl, trial)
            except TrialFailed as e:
                failures.append(f"{what} {packet} B trial {trial} {impl}: {e}")
                print(f"FAILED: {failures[-1]}", file=sys.stderr)
                continue
            results.add(packet, offered, impl, trial, metrics)
