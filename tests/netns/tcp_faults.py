#!/usr/bin/env python3
#
# Copyright 2026 gr-spead authors
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""A tcp link between two hosts that fails mid-stream, and comes back: the link taken
down (no FIN, no RST ever), the sender's process killed, the receiver's process killed,
and the link taken down while the sender idles (its keepalive must tell it).
Each failure must be seen by the side(s) docs/links.md says, within the bound it says
(`peer_timeout`, 5 s by default: TCP_USER_TIMEOUT while data is unacknowledged,
keepalive probes while idle), counted (connections_lost, heaps_lost_in_flight) and
logged with its cause and fix; then the keep_listening source takes the sender's new
connection, and the reconnect=True sink reconnects. On link down the heap counts
reconcile: a heap is sent once acknowledged, so sent <= received <= sent + lost in
flight.

Runs in the root namespace over `netns-topology --hosts 2 --link veth` (ctest:
qa_netns_tcp_faults). Host 1 runs the receiver (spead.source, tcp, keep_listening) and
host 2 the sender (spead.sink, tcp, reconnect) fed by a throttled repeating pattern.
"""

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import netns_peers  # noqa: E402

HERE = os.path.abspath(__file__)
PORT = 7148
HEAP_ITEMS = 4096            # complex64: 32 KiB heaps
RATE_ITEMS = 2.5e6           # 20 MB/s: the link busy, the shared machine not swamped
PEER_TIMEOUT_S = 5.0         # docs/links.md: the default peer_timeout
#: A failure must be seen within this (the documented "about 5 s", plus keepalive's
#: 1 s probe granularity and a busy machine's scheduling).
SEEN_WITHIN_S = 2 * PEER_TIMEOUT_S
#: At once (a killed peer's kernel closes its sockets: FIN or RST at the next write).
AT_ONCE_S = 3.0
#: The sink's back-off doubles from 0.1 s to 5 s: a reconnect within 4 x that.
RECONNECT_WITHIN_S = 20.0
SKIP = 77


# ---- the peers (in a host namespace) ---------------------------------------------------

def receiver_main(args, out):
    from gnuradio import blocks, gr
    from gnuradio import spead
    tb = gr.top_block()
    src = spead.source(transport="tcp", endpoints=f"{args.ip}:{PORT}", keep_listening=True,
                       max_connections=2)
    tb.connect(src, blocks.null_sink(gr.sizeof_gr_complex))
    return netns_peers.serve_running(tb, {"stats": lambda: src.stats()}, out)


def sender_main(args, out):
    import numpy as np
    from gnuradio import blocks, gr
    from gnuradio import spead
    tb = gr.top_block()
    pattern = (np.arange(HEAP_ITEMS * 16) % 1000).astype(np.complex64).tolist()
    source = blocks.vector_source_c(pattern, True)
    throttle = blocks.throttle(gr.sizeof_gr_complex, RATE_ITEMS)
    sink = spead.sink(transport="tcp", endpoints=f"{args.to}:{PORT}", len_tag_key="",
                      heap_items=HEAP_ITEMS, reconnect=True)
    tb.connect(source, throttle, sink)
    return netns_peers.serve_running(tb, {"stats": lambda: sink.stats()}, out)


def idle_sender_main(args, out):
    """send.TcpStream: one heap, then nothing (the stream idles) while serving stats."""
    import numpy as np
    from gnuradio import spead
    import gnuradio.spead.send  # noqa: F401
    pool = spead.ThreadPool()
    tx = spead.send.TcpStream(pool, [(args.to, PORT)])
    ig = spead.send.ItemGroup()
    ig.add_item(0x1000, "payload", "", shape=(HEAP_ITEMS,), dtype=np.complex64)
    ig["payload"].value = np.zeros(HEAP_ITEMS, np.complex64)
    tx.send_heap(ig.get_heap())
    return netns_peers.serve({"stats": lambda: dict(tx.stats.items())}, out)


def peer_main(argv):
    parser, roles = netns_peers.peer_roles()
    recv = roles.add_parser("recv")
    recv.add_argument("--ip", required=True)
    for role in ("send", "send-idle"):
        roles.add_parser(role).add_argument("--to", required=True)
    return netns_peers.run_peer(parser, argv, {"recv": receiver_main, "send": sender_main,
                                               "send-idle": idle_sender_main})


# ---- the orchestrator (root namespace) -------------------------------------------------

class Run:
    """The peers, their logs, and the checks' failures."""

    def __init__(self, logdir):
        self.h1, self.h2 = netns_peers.host(1), netns_peers.host(2)
        self.logdir = logdir
        self.failures = []
        self.recv = self.send = None
        self.n = {"recv": 0, "send": 0}

    def start(self, role, kind=None):
        """Starts the receiver ("recv") or a sender ("send"; kind "send-idle": one heap
        then nothing)."""
        self.n[role] += 1
        log = open(self.log_path(role), "w")
        if role == "recv":
            self.recv = netns_peers.Peer(HERE, 1, "recv", ["--ip", self.h1["ip"]],
                                         name=f"receiver {self.n[role]}", log=log)
        else:
            self.send = netns_peers.Peer(HERE, 2, kind or role, ["--to", self.h1["ip"]],
                                         name=f"sender {self.n[role]}", log=log)

    def log_path(self, role):
        return os.path.join(self.logdir, f"{role}{self.n[role]}.log")

    def log_text(self, role):
        with open(self.log_path(role)) as f:
            return f.read()

    def check(self, ok, what):
        print(f"tcp_faults: {'ok' if ok else 'FAIL'}: {what}", flush=True)
        if not ok:
            self.failures.append(what)

    def wait_for(self, condition, limit):
        """Seconds until condition() held, or None after limit."""
        start = time.monotonic()
        while time.monotonic() - start < limit:
            if condition():
                return time.monotonic() - start
            time.sleep(0.1)
        return None

    def flowing(self, limit=RECONNECT_WITHIN_S):
        """Waits until the receiver's heaps grow; True if they do."""
        before = self.recv.ask("stats").get("heaps", 0)
        return self.wait_for(lambda: self.recv.ask("stats").get("heaps", 0) > before + 10,
                             limit) is not None

    def seen(self, peer, counter, above, limit):
        return self.wait_for(lambda: peer.ask("stats").get(counter, 0) > above, limit)

    def link(self, state):
        subprocess.run(["ip", "-n", self.h2["ns"], "link", "set", self.h2["netdev"],
                        state], check=True)


def link_down_mid_stream(run):
    tx0, rx0 = run.send.ask("stats"), run.recv.ask("stats")
    run.link("down")
    try:
        t_tx = run.seen(run.send, "connections_lost", tx0.get("connections_lost", 0),
                        3 * SEEN_WITHIN_S)
        t_rx = run.seen(run.recv, "connections_lost", rx0.get("connections_lost", 0),
                        3 * SEEN_WITHIN_S)
        # Both ends gave the connection up and the link is still down: nothing moves,
        # so the totals (one sender, one receiver since the start) can be reconciled.
        time.sleep(0.5)
        tx, rx = run.send.ask("stats"), run.recv.ask("stats")
    finally:
        run.link("up")
    run.check(t_tx is not None and t_tx <= SEEN_WITHIN_S,
              f"link down: the sender counted connections_lost within {SEEN_WITHIN_S} s "
              f"(after {t_tx if t_tx is None else round(t_tx, 1)} s)")
    # the receiver's wait started once the sender's ended: add it
    total = None if t_tx is None or t_rx is None else t_tx + t_rx
    run.check(total is not None and total <= SEEN_WITHIN_S + 1,
              f"link down: the receiver counted connections_lost within "
              f"{SEEN_WITHIN_S} s (after {total if total is None else round(total, 1)} s)")
    cut = ("heaps_failed", "heaps_lost_in_flight")
    run.check(sum(tx.get(k, 0) - tx0.get(k, 0) for k in cut) > 0,
              "link down: the batch cut short is counted (heaps_failed, and "
              f"heaps_lost_in_flight when part of a heap went out): {tx}")
    # docs/links.md: a heap counts as sent once the receiver's TCP acknowledged all of
    # it, so every heap sent was received. A heap lost in flight may still have
    # arrived whole (its acknowledgment lost with the link): received may exceed sent
    # by at most heaps_lost_in_flight, and does by 0 when no acknowledgment was lost.
    sent, received, lost = tx["heaps"], rx["heaps"], tx["heaps_lost_in_flight"]
    print(f"tcp_faults: link down: heaps sent {sent}, received {received} "
          f"(+{rx.get('incomplete_heaps_flushed', 0)} incomplete), failed "
          f"{tx['heaps_failed']}, lost in flight {lost}", flush=True)
    run.check(sent <= received <= sent + lost,
              f"link down: heaps sent ({sent}) <= received ({received}) <= sent + lost "
              f"in flight ({sent + lost}): unacknowledged heaps are not counted sent")
    send_log, recv_log = run.log_text("send"), run.log_text("recv")
    run.check(re.search(r"the connection to \S+ failed: .+; \S", send_log) is not None,
              "link down: the sender logged the cause and the fix")
    run.check(re.search(r"connection from \S+ ended: .+: \S", recv_log) is not None,
              "link down: the receiver logged the cause and the fix")
    # the link is back: the sink reconnects, the source takes the new connection
    t = run.seen(run.send, "connections_established",
                 tx0.get("connections_established", 0), RECONNECT_WITHIN_S)
    run.check(t is not None, f"link up: the sink reconnected within {RECONNECT_WITHIN_S} s")
    run.check(run.recv.ask("stats").get("connections_accepted", 0) >
              rx0.get("connections_accepted", 0) and run.flowing(),
              "link up: the keep_listening source took the new connection, heaps flow")


def sender_killed(run):
    rx0 = run.recv.ask("stats")
    ended_before = sum(v for k, v in rx0.items() if k.startswith("connections_") and
                       k not in ("connections_accepted", "connections_refused"))
    run.send.proc.kill()  # kill -9: its kernel closes the socket (FIN)
    run.send.proc.wait(10)
    t = run.wait_for(lambda: sum(
        v for k, v in run.recv.ask("stats").items()
        if k.startswith("connections_") and
        k not in ("connections_accepted", "connections_refused")) > ended_before, AT_ONCE_S)
    run.check(t is not None, f"sender killed: the receiver ended its connection within "
              f"{AT_ONCE_S} s ({run.recv.ask('stats')})")
    run.check(re.search(r"connection from \S+ ended", run.log_text("recv")) is not None,
              "sender killed: the receiver logged it")
    run.start("send")
    run.check(run.flowing(), "sender killed: a new sender's connection is taken, heaps flow")


def receiver_killed(run):
    tx0 = run.send.ask("stats")
    run.recv.proc.kill()  # kill -9: its kernel answers the next write with RST
    run.recv.proc.wait(10)
    t = run.seen(run.send, "connections_lost", tx0.get("connections_lost", 0), AT_ONCE_S)
    run.check(t is not None, f"receiver killed: the sender counted connections_lost "
              f"within {AT_ONCE_S} s")
    run.check(re.search(r"the connection to \S+ failed: .+; \S", run.log_text("send"))
              is not None, "receiver killed: the sender logged the cause and the fix")
    tx = run.send.ask("stats")
    print(f"tcp_faults: receiver killed: heaps lost in flight "
          f"{tx.get('heaps_lost_in_flight', 0) - tx0.get('heaps_lost_in_flight', 0)} "
          f"(written, never acknowledged)", flush=True)
    time.sleep(1)  # the sink tries, fails (refused) and backs off
    run.start("recv")
    t = run.seen(run.send, "connections_established",
                 tx0.get("connections_established", 0), RECONNECT_WITHIN_S)
    run.check(t is not None, "receiver killed: the sink reconnected to the new receiver")
    run.check(run.flowing(), "receiver killed: heaps flow again")


def link_down_while_idle(run):
    """A sender that sent one heap and idles: no write will fail, so only the kernel's
    keepalive probes (read by the writer's idle check every second) can tell it."""
    run.send.proc.kill()  # no stop heap: the receiver goes on listening
    run.send.proc.wait(10)
    rx0 = run.recv.ask("stats")
    run.start("send", "send-idle")
    run.check(run.wait_for(lambda: run.recv.ask("stats").get("heaps", 0) >
                           rx0.get("heaps", 0), AT_ONCE_S) is not None,
              "idle: the idle sender's heap arrived")
    tx0 = run.send.ask("stats")
    run.link("down")
    try:
        t = run.seen(run.send, "connections_lost", tx0.get("connections_lost", 0),
                     3 * SEEN_WITHIN_S)
    finally:
        run.link("up")
    run.check(t is not None and t <= SEEN_WITHIN_S,
              f"link down while idle: the sender counted connections_lost within "
              f"{SEEN_WITHIN_S} s (after {t if t is None else round(t, 1)} s)")
    run.check(re.search(r"the connection to \S+ failed while idle: .+; \S",
                        run.log_text("send")) is not None,
              "link down while idle: the sender logged the cause and the fix")


def orchestrate(args):
    if not all(f"TOPO_NS_{i}" in os.environ for i in (1, 2)):
        print("tcp_faults: needs netns-topology --hosts 2 (ctest qa_netns_tcp_faults)")
        return SKIP
    with tempfile.TemporaryDirectory() as logdir:
        run = Run(logdir)
        try:
            run.start("recv")
            run.start("send")
            run.check(run.flowing(), "heaps flow from the sender to the receiver")
            link_down_mid_stream(run)
            sender_killed(run)
            receiver_killed(run)
            link_down_while_idle(run)
            for peer in (run.send, run.recv):  # nothing hangs at stop
                start = time.monotonic()
                peer.close(timeout=30)
                run.check(peer.proc.returncode == 0 and time.monotonic() - start < 20,
                          f"{peer.name} stopped cleanly and promptly")
        except AssertionError as e:
            run.failures.append(str(e))
        finally:
            for peer in (run.send, run.recv):
                if peer is not None:
                    peer.close(timeout=10)
            if run.failures:
                for role in ("send", "recv"):
                    for k in range(1, run.n[role] + 1):
                        path = os.path.join(logdir, f"{role}{k}.log")
                        with open(path) as f:
                            print(f"---- {role}{k}.log (last lines)\n" +
                                  "".join(f.readlines()[-15:]))
        return netns_peers.verdict("tcp_faults", run.failures, print)


if __name__ == "__main__":
    sys.exit(netns_peers.main(peer_main, argparse.ArgumentParser(), orchestrate))
