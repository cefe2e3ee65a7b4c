#
# Copyright 2026 gr-spead authors
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""What the multi-host scripts (cluster.py, soak.py) share: flowgraph peers that run in
a namespace of tests/netns/netns-topology and obey one-line commands, the resource
figures of a process, and the packet reconciliation of a receiver.

A peer is `<script> --peer ROLE ARGS` started with `ip netns exec NS`; it reads one
command per line on stdin and answers each with one line of JSON on stdout (its logs go
to stderr). `Peer` is the orchestrator's side.
"""

import argparse
import json
import os
import subprocess
import sys
import threading
import time

#: Every counter of a receiver where a datagram the sender sent can end: decoded
#: (`packets`), rejected as malformed, or dropped before decoding (kernel socket, NIC).
DATAGRAM_FATES = (
    "packets", "packets_truncated", "packets_size_mismatch", "packets_bad_header",
    "packets_bad_specials", "packets_bad_offset", "packets_after_stop",
    "datagrams_oversize", "packets_dropped_socket_overflow", "frames_dropped_no_buffer")


def datagrams_accounted(stats):
    """(datagrams each counted once, runs of coalesced drops): a kernel socket that
    coalesces reports runs of 1 to 64 datagrams (runs_dropped_socket_overflow)."""
    return (sum(stats.get(name, 0) for name in DATAGRAM_FATES),
            stats.get("runs_dropped_socket_overflow", 0))


def reconcile(sent, received_stats):
    """'' when `sent` datagrams reconcile with the receiver's counters (summed over its
    runs), else what is wrong."""
    singles, runs = datagrams_accounted(received_stats)
    if singles + runs <= sent <= singles + 64 * runs:
        return ""
    return (f"{sent} datagrams sent, {singles} counted by the receiver "
            f"({received_stats.get('packets', 0)} decoded"
            + (f", {runs} runs dropped" if runs else "") + ")")


def add_stats(total, stats):
    """Adds one run's counters into `total` (max_batch excepted)."""
    for name, value in stats.items():
        if name != "max_batch":
            total[name] = total.get(name, 0) + value
    return total


def rate_for_this_build(mbps):
    """The rate to test at: a quarter under AddressSanitizer (.ci/sanitize-address
    preloads it), whose library runs several times slower."""
    return mbps / 4 if "libasan" in os.environ.get("LD_PRELOAD", "") else mbps


def process_figures(pid):
    """{"rss_kib", "fds", "threads"} of a running process (from /proc)."""
    rss = 0
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                rss = int(line.split()[1])
    return {"rss_kib": rss, "fds": len(os.listdir(f"/proc/{pid}/fd")),
            "threads": len(os.listdir(f"/proc/{pid}/task"))}


def host(i):
    """{"ns", "ip", "netdev"} of host i of the topology."""
    return {"ns": os.environ[f"TOPO_NS_{i}"], "ip": os.environ[f"TOPO_IP_{i}"],
            "netdev": os.environ[f"TOPO_IF_{i}"]}


class Peer:
    """A peer process in host i's namespace (or the namespace named i), driven by
    commands."""

    def __init__(self, script, i, role, args, name=None, log=None):
        self.name = name or f"{role}@{i}"
        ns = host(i)["ns"] if isinstance(i, int) else i
        cmd = ["ip", "netns", "exec", ns, sys.executable, "-B", script,
               "--peer", role] + [str(a) for a in args]
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=log if log is not None else subprocess.DEVNULL,
                                     text=True, bufsize=1)
        self.answers = []
        self.cond = threading.Condition()
        threading.Thread(target=self._read, daemon=True).start()
        self.wait_answer(60)  # "ready": made its flowgraph

    def _read(self):
        for line in self.proc.stdout:
            try:
                answer = json.loads(line)
            except ValueError:
                sys.stderr.write(f"{self.name}: {line}")
                continue
            with self.cond:
                self.answers.append(answer)
                self.cond.notify_all()
        with self.cond:
            self.answers.append(None)  # ended
            self.cond.notify_all()

    def wait_answer(self, timeout):
        deadline = time.monotonic() + timeout
        with self.cond:
            while not self.answers:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError(f"{self.name}: no answer within {timeout} s")
                self.cond.wait(left)
            answer = self.answers.pop(0)
        if answer is None:
            raise AssertionError(f"{self.name} ended (exit {self.proc.wait()})")
        if "error" in answer:
            raise AssertionError(f"{self.name}: {answer['error']}")
        return answer

    def ask(self, command, timeout=60):
        """Sends one command; returns its answer (a dict)."""
        self.proc.stdin.write(command + "\n")
        self.proc.stdin.flush()
        return self.wait_answer(timeout)

    def figures(self):
        return process_figures(self.proc.pid)

    def close(self, timeout=30):
        if self.proc.poll() is None:
            try:
                self.proc.stdin.write("quit\n")
                self.proc.stdin.flush()
                self.proc.wait(timeout)
            except (OSError, subprocess.TimeoutExpired):
                self.proc.kill()
                self.proc.wait(10)


def answers_only_on_stdout():
    """Keeps stdout for the answers: whatever else writes to fd 1 (a library's log)
    goes to stderr. Call before importing GNU Radio; returns the answers' stream."""
    out = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return out


def peer_roles():
    """A peer's argument parser and its subparsers, one per role (run_peer's)."""
    parser = argparse.ArgumentParser()
    return parser, parser.add_subparsers(dest="role", required=True)


def add_sender_role(roles):
    """The role `send`: the interface a sender sends from and its rate (Mb/s)."""
    send = roles.add_parser("send")
    send.add_argument("--interface", required=True)
    send.add_argument("--rate-mbps", type=float, required=True)
    return send


def run_peer(parser, argv, mains):
    """Parses a peer's arguments and runs mains[role](args, out), its answers alone on
    stdout: the peer's exit status."""
    args = parser.parse_args(argv)
    return mains[args.role](args, answers_only_on_stdout())


def serve_running(tb, handlers, out):
    """Runs flowgraph `tb` while serving `handlers` (serve()), then stops it."""
    tb.start()
    code = serve(handlers, out)
    tb.stop()
    tb.wait()
    return code


def serve(handlers, out):
    """A peer's main loop: answers each command line with handlers[word](*args) (a dict,
    sent as JSON on `out`) until `quit` or the end of stdin. Says {"ready": true}
    first."""
    def answer(obj):
        out.write(json.dumps(obj) + "\n")
        out.flush()
    answer({"ready": True})
    for line in sys.stdin:
        words = line.split()
        if not words:
            continue
        if words[0] == "quit":
            break
        try:
            answer(handlers[words[0]](*words[1:]))
        except Exception as e:  # the orchestrator reports it as the peer's failure
            answer({"error": f"{words[0]}: {type(e).__name__}: {e}"})
    return 0


def verdict(prefix, failures, say):
    """Says each failure and the outcome; the exit status."""
    for f in failures:
        say(f"{prefix}: FAIL: {f}")
    say(f"{prefix}: " + ("FAILED" if failures else "every check passed"))
    return 1 if failures else 0


def main(peer_main, parser, orchestrate):
    """`--peer ROLE ...`: peer_main(those arguments); else orchestrate(parsed
    arguments)."""
    if len(sys.argv) > 1 and sys.argv[1] == "--peer":
        return peer_main(sys.argv[2:])
    return orchestrate(parser.parse_args())
