#
# Copyright 2026 gr-spead authors
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""spead_compare --tcp: SPEAD over TCP, gr-spead's tools against spead2's.

Receive: for each packet (frame) size and trial, one spead2_send --tcp (1 MiB heaps,
unlimited rate: TCP paces it to the receiver) connects to spead2_recv --tcp --mem-pool
and then to spead_recv --tcp (the order alternates from trial to trial). Each
receiver's own CPU seconds (user + system, its rusage only) per GiB of heap payload
it delivered.

Send: spead2_send --tcp and spead_send --tcp with the same flags into the same
receiver, a socket in this script that reads and discards; each sender's CPU seconds
per GiB of heap payload sent, and its Gb/s.

CPU seconds, not wall time, are the measure: they hold on a busy machine, where the
rate depends on what else runs.
"""

import socket
import threading

import compare_trials as base


def tcp_port_listening(port):
    """True when a socket listens on this TCP port (Linux /proc; no connection is
    made, since a receiver takes its first connection as its sender)."""
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(table) as f:
                next(f)
                for line in f:
                    fields = line.split()
                    if fields[3] == "0A" and int(fields[1].split(":")[1], 16) == port:
                        return True
        except (OSError, StopIteration, IndexError, ValueError):
            continue
    return False


def free_tcp_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class DiscardReceiver:
    """Listens on 127.0.0.1 and reads every connection to its end, discarding: the one
    receiver both senders send to."""

    def __init__(self):
        self.listener = socket.socket()
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(4)
        self.port = self.listener.getsockname()[1]
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while True:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            threading.Thread(target=self._drain, args=(conn,), daemon=True).start()

    @staticmethod
    def _drain(conn):
        buffer = bytearray(4 << 20)
        with conn:
            while conn.recv_into(buffer):
                pass

    def close(self):
        self.listener.close()


def compare_receivers(args, tools, failures):
    results = base.Results("compare_tcp_recv")
    for packet in args.packet:
        receivers = {
            base.SPEAD2: lambda port: [tools["spead2_recv"], "--tcp", "--mem-pool",
                                       "--quiet", "--packet", str(packet), "--buffer",
                                       str(base.SOCKET_BUFFER), f"127.0.0.1:{port}"],
            base.OURS: lambda port: [tools["spead_recv"], "--tcp", "--quiet", "--packet",
                                     str(packet), "--buffer", str(base.SOCKET_BUFFER),
                                     f"127.0.0.1:{port}"],
        }

        def run(impl, trial):
            port = free_tcp_port()
            sender = [tools["spead2_send"], "--tcp", "--heap-size", str(base.HEAP_SIZE),
                      "--heaps", str(args.heaps), "--packet", str(packet),
                      "--buffer", str(base.SOCKET_BUFFER), f"127.0.0.1:{port}"]
            metrics, _ = base.run_receive_trial(impl, receivers[impl](port), sender, port,
                                                args.heaps, 0, ready=tcp_port_listening)
            return metrics

        base.run_trials(args, "tcp receive", packet, 0, run, results, failures)
        base.print_table(f"TCP receive: {packet}-byte frames from spead2_send --tcp, "
                         f"{args.heaps} x 1 MiB heaps per trial", results, packet,
                         base.RECEIVE_COLUMNS, [("cpu_s_per_gib", "CPU s/GiB")])
    return results


def compare_senders(args, tools, failures):
    results = base.Results("compare_tcp_send")
    sink = DiscardReceiver()
    try:
        for packet in args.packet:
            senders = {impl: [tools[name], "--tcp", "--heap-size", str(base.HEAP_SIZE),
                              "--heaps", str(args.send_heaps), "--packet", str(packet),
                              "--buffer", str(base.SOCKET_BUFFER),
                              f"127.0.0.1:{sink.port}"]
                       for impl, name in ((base.SPEAD2, "spead2_send"),
                                          (base.OURS, "spead_send"))}
            base.run_trials(
                args, "tcp send", packet, 0,
                lambda impl, trial: base.run_send_trial(senders[impl], args.send_heaps),
                results, failures)
            base.print_table(f"TCP send: {packet}-byte frames, {args.send_heaps} x 1 MiB "
                             f"heaps per trial into a discarding receiver", results, packet,
                             base.SEND_COLUMNS,
                             [("cpu_s_per_gib", "CPU s/GiB"), ("gbps", "Gb/s")])
    finally:
        sink.close()
    return results
