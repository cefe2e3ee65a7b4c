#!/usr/bin/env python3
#
# Copyright 2026 gr-spead authors
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""SPEAD over TCP between two hosts, working as it should and under hostile input: the
cases of issue 26 that the loopback tests run in one process (tests/unit/test_tcp_*.cc,
python/spead/qa_tcp.py, tests/python/qa_api_tcp.py), here with the receiver in host 1
and the sender in host 2, separate processes joined by a veth:

- every item type round trips bit-exact through spead.sink -> spead.source;
- heaps of 1 B to 64 MiB, then every kind of item (dtypes of each width and byte order,
  2-D, Fortran order, an immediate, a string) through send.TcpStream ->
  recv.Stream.add_tcp_reader;
- 8 sinks into one source (max_connections 8): every heap, each sender's in order;
- a slow consumer: the sink waits (send_waits), nothing lost, sent = received;
- a flowgraph pair in continuous mode, 2 substreams on 2 connections, bit-exact;
- hostile input (garbage, an oversized frame, half a frame then close, a silent peer,
  one connection too many) against a live source: each counted in its own counter and
  logged with its cause and fix, the good connection's heaps bit-exact; a peer not in
  allowed_peers refused;
- 100 connect/disconnect cycles: the receiver's fds, threads and RSS flat.

Runs in the root namespace over `netns-topology --hosts 2 --link veth` (ctest:
qa_netns_tcp_cases); the peers are tcp_case_peers.py.
"""

import argparse
import os
import re
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import netns_peers  # noqa: E402
import spead_qa_support as qa  # noqa: E402  (tests/python: wait_for)
import tcp_case_peers as peers  # noqa: E402

PEERS = os.path.abspath(peers.__file__)
#: each case's port (types takes 7160-7166, one per item type)
PORTS = {"types": 7160, "api": 7170, "fanin": 7171, "slow": 7172, "continuous": 7173,
         "hostile": 7174, "cycles": 7175, "admission": 7176}
#: Generous bounds on a busy 2-core machine (each case takes a few seconds idle).
CASE_S = 120
#: A hostile connection is ended at once: counted within this.
COUNTED_WITHIN_S = 10
#: tests/unit/test_tcp_failures.cc's bound on 100 cycles' RSS growth.
RSS_SLACK_KIB = 4 * 1024
SKIP = 77
LOST = ("incomplete_heaps_evicted", "incomplete_heaps_flushed", "heaps_dropped_queue_full")
#: every counter an accepted connection can end in (docs/links.md)
#: what the receiver logs for each attack: the cause and the fix (connected_reader.cc)
ATTACK_LOGS = {
    "garbage": r"connection from \S+ ended: .*not a SPEAD packet header.*\?",
    "oversized": r"connection from \S+ ended: .*above max_packet_size.*raise ",
    "partial": r"connection from \S+ ended: .*middle of a packet.*: \S",
    "one_too_many": r"refused a connection from \S+ .*max_connections.*raise ",
    "not_allowed": r"refused a connection from \S+ .*not in allowed_peers.*add it"}
CONNECTION_ENDS = ("connections_closed", "connections_lost", "connections_framing_errors",
                   "connections_frame_too_large", "connections_partial_frame",
                   "connections_idle_timeout", "connections_stopped")


class Run:
    """The two peers, and the checks' failures."""

    def __init__(self, logdir):
        self.h1 = netns_peers.host(1)
        self.logdir = logdir
        self.failures = []
        self.rx = netns_peers.Peer(PEERS, 1, "recv", [self.h1["ip"]], name="receiver",
                                   log=open(os.path.join(logdir, "recv.log"), "w"))
        self.recv_log = os.path.join(logdir, "recv.log")
        self.tx = netns_peers.Peer(PEERS, 2, "send", [], name="sender",
                                   log=open(os.path.join(logdir, "send.log"), "w"))

    def check(self, ok, what):
        print(f"tcp_cases: {'ok' if ok else 'FAIL'}: {what}", flush=True)
        if not ok:
            self.failures.append(what)

    def listen(self, case):
        self.rx.ask(f"listen {case} {PORTS[case]}")

    def send(self, case):
        return self.tx.ask(f"send {case} {self.h1['ip']} {PORTS[case]}", CASE_S)

    def exchange(self, case):
        """The case's receiving end started, its sending end run: (what the sender
        answered, what the receiver answered once its stream ended)."""
        self.listen(case)
        sent = self.send(case)
        return sent, self.finish()

    def finish(self, seconds=CASE_S / 2):
        answer = self.rx.ask(f"finish {seconds}", seconds + 30)
        self.check(answer["ended"], f"the receiving end ended by itself within {seconds} s")
        return answer

    def logged(self, pattern):
        """True once the receiver's log has a line matching pattern."""
        def found():
            with open(self.recv_log) as f:
                return any(re.search(pattern, line) for line in f)
        return qa.wait_for(found, COUNTED_WITHIN_S)

    def rx_stats(self):
        return self.rx.ask("stats")["stats"][0]



def counted_lost(stats):
    """The loss counters that are not 0."""
    return {k: stats.get(k, 0) for k in LOST if stats.get(k, 0)}


def item_types(run):
    sent, answer = run.exchange("types")
    sent, got = sent["types"], answer["types"]
    ends = [sum(peers.TYPE_LENGTHS[:i]) for i in range(len(peers.TYPE_LENGTHS))]
    starts = [list(p) for p in zip(ends, peers.TYPE_LENGTHS)]
    for (t, (sent_digest, ts)), rs in zip(sorted(sent.items()), answer["stats"]):
        run.check(got[t][0] == sent_digest, f"item type {t}: received bit-exact")
        run.check(got[t][1] == starts, f"item type {t}: every heap, at its offset")
        run.check(rs["heaps"] + rs["stop_heaps"] == ts["heaps"] and
                  ts["heaps_failed"] == 0 and not counted_lost(rs),
                  f"item type {t}: heaps sent ({ts['heaps']}) = received "
                  f"({rs['heaps']} + {rs['stop_heaps']} stop), none failed or lost")


def python_api(run):
    """send.TcpStream -> recv.Stream.add_tcp_reader: heaps of 1 B to 64 MiB, then one
    of every kind of item."""
    sent_answer, answer = run.exchange("api")
    sent, got, rs = sent_answer["heaps"], answer["heaps"], answer["stats"][0]
    for cnt, size, sent_digest in sent:
        mine = [h for h in got if h[0] == cnt]
        run.check(mine == [[cnt, size, sent_digest]],
                  f"a heap of {size} B arrived once, bit-exact (cnt {cnt})")
    run.check(len(got) == len(sent) and not counted_lost(rs),
              f"heap sizes: {len(sent)} sent, {len(got)} received, nothing lost "
              f"({counted_lost(rs)})")
    for name, value in sent_answer["kinds"].items():
        run.check(answer["kinds"].get(name) == value,
                  f"item {name}: {value} received as {answer['kinds'].get(name)}")


def fan_in(run):
    sent, answer = run.exchange("fanin")
    rs = answer["stats"][0]
    for s, (a, b) in enumerate(zip(sent["senders"], answer["senders"])):
        run.check(a == b, f"8 senders: sender {s}'s heaps all arrived, in order, "
                  "bit-exact")
    heaps = peers.FANIN_SENDERS * peers.FANIN_HEAPS
    run.check(rs["connections_accepted"] == peers.FANIN_SENDERS and
              rs["heaps_output"] == heaps and
              sum(ts["data_heaps"] for ts in sent["stats"]) == heaps and
              not counted_lost(rs) and rs.get("connections_refused", 0) == 0,
              f"8 senders: {peers.FANIN_SENDERS} connections, {heaps} heaps sent and "
              f"output, none lost or refused ({rs})")


def slow_consumer(run):
    sent, answer = run.exchange("slow")
    rs, ts = answer["stats"][0], sent["stats"][0]
    run.check(answer["digest"] == sent["digest"],
              "slow consumer: every sample received, bit-exact")
    run.check(rs["heaps_output"] == ts["data_heaps"] == peers.SLOW_HEAPS and
              rs["heaps"] + rs["stop_heaps"] == ts["heaps"],
              f"slow consumer: heaps sent ({ts['heaps']}) = received ({rs['heaps']} + "
              f"{rs['stop_heaps']} stop)")
    run.check(not counted_lost(rs) and ts["heaps_failed"] == 0 and
              ts.get("heaps_lost_in_flight", 0) == 0 and rs.get("heaps_missing", 0) == 0,
              f"slow consumer: nothing counted lost ({counted_lost(rs)}, sender {ts})")
    run.check(ts.get("send_waits", 0) > 0 and ts.get("send_wait_us", 0) > 0,
              f"slow consumer: the sink waited for the receiver "
              f"(send_waits {ts.get('send_waits')}, {ts.get('send_wait_us')} us)")


def continuous_pair(run):
    sent, answer = run.exchange("continuous")
    rs, ts = answer["stats"][0], sent["stats"][0]
    for s in range(2):
        run.check(answer["outputs"][s] == sent["outputs"][s],
                  f"continuous pair: substream {s} (connection {s}) bit-exact")
    heaps = 2 * peers.CONT_HEAPS
    run.check(rs["connections_accepted"] == 2 and ts["connections_established"] == 2 and
              rs["heaps"] == heaps and ts["data_heaps"] == heaps and
              rs.get("heaps_missing", 0) == 0,
              f"continuous pair: 2 connections, {heaps} heaps sent and received, none "
              f"missing ({rs})")


def hostile_input(run):
    """Each attack from its own connection while the good sender streams."""
    run.listen("hostile")
    run.tx.ask(f"good_start {run.h1['ip']} {PORTS['hostile']}")
    at = (run.h1["ip"], PORTS["hostile"])
    run.check(qa.wait_for(lambda: run.rx_stats().get("heaps_output", 0) > 10, 30),
              "hostile: the good sender's heaps flow")
    run.tx.ask("attack silent {} {}".format(*at))
    run.check(qa.wait_for(lambda: run.rx_stats()["connections_accepted"] == 2,
                           COUNTED_WITHIN_S), "hostile: a silent peer is connected")
    for kind, counter in (("garbage", "connections_framing_errors"),
                          ("oversized", "connections_frame_too_large"),
                          ("partial", "connections_partial_frame"),
                          ("one_too_many", None),  # the third slot: held
                          ("one_too_many", "connections_refused")):
        before = run.rx_stats()
        run.tx.ask("attack {} {} {}".format(kind, *at))
        if counter is None:
            run.check(qa.wait_for(lambda: run.rx_stats()["connections_accepted"] ==
                                   before["connections_accepted"] + 1, COUNTED_WITHIN_S),
                      "hostile: a third connection takes the last slot")
            continue
        counted = qa.wait_for(lambda: run.rx_stats().get(counter, 0) ==
                               before.get(counter, 0) + 1, COUNTED_WITHIN_S)
        after = run.rx_stats()
        others = {k: after.get(k, 0) - before.get(k, 0) for k in
                  CONNECTION_ENDS + ("connections_refused",) if k != counter and
                  after.get(k, 0) != before.get(k, 0)}
        run.check(run.logged(ATTACK_LOGS[kind]),
                  f"hostile: {kind} logged with its cause and fix")
        run.check(counted and not others,
                  f"hostile: {kind} counted once in {counter} within {COUNTED_WITHIN_S} s, "
                  f"in no other counter ({others})")
        run.check(qa.wait_for(lambda: run.rx_stats()["heaps_output"] >
                               after["heaps_output"], COUNTED_WITHIN_S),
                  f"hostile: the good connection's heaps flow on after {kind}")
    live = run.rx_stats()["heaps_output"] < peers.GOOD_HEAPS
    run.check(live, "hostile: every attack came while the good connection was live")
    run.tx.ask("release")
    good = run.tx.ask(f"good_wait {CASE_S}", CASE_S + 30)
    answer = run.finish()  # the good sender's stop heap ends the stream
    rs, ts = answer["stats"][0], good["stats"][0]
    run.check(answer["digest"] == good["digest"] and rs["heaps_output"] == peers.GOOD_HEAPS
              and ts["data_heaps"] == peers.GOOD_HEAPS and ts["heaps_failed"] == 0,
              f"hostile: the good connection's {peers.GOOD_HEAPS} heaps all arrived, "
              "bit-exact")
    ends = {k: rs.get(k, 0) for k in CONNECTION_ENDS if rs.get(k, 0)}
    run.check(rs["connections_accepted"] == 6 and sum(ends.values()) == 6 and
              rs["connections_refused"] == 1,
              f"hostile: 6 connections accepted ({rs['connections_accepted']}), each "
              f"ended in one counter ({ends}), 1 refused ({rs['connections_refused']})")


def not_allowed(run):
    """A source whose allowed_peers names only its own host refuses host 2."""
    run.listen("admission")
    run.tx.ask("attack silent {} {}".format(run.h1["ip"], PORTS["admission"]))
    run.check(qa.wait_for(lambda: run.rx_stats()["connections_refused"] == 1,
                           COUNTED_WITHIN_S) and
              run.rx_stats()["connections_accepted"] == 0,
              "allowed_peers: host 2, not in it, refused and counted in "
              "connections_refused")
    run.check(run.logged(ATTACK_LOGS["not_allowed"]),
              "allowed_peers: the refusal logged with its cause and fix")
    run.tx.ask("release")
    run.rx.ask("stop")


def connect_cycles(run):
    run.listen("cycles")
    to = f"{run.h1['ip']} {PORTS['cycles']}"

    def cycled(n, total):
        """n cycles; True once the receiver saw `total` connections end."""
        run.tx.ask(f"cycles {to} {n}", CASE_S)
        return qa.wait_for(
            lambda: run.rx_stats().get("connections_closed", 0) >= total, 30)

    run.check(cycled(5, 5), "cycles: 5 warm-up connections came and went")
    start = run.rx.figures()
    run.check(cycled(100, 105), "cycles: 100 connections came and went")
    end = run.rx.figures()
    rs = run.rx.ask("stop")["stats"][0]
    run.check(rs["connections_accepted"] == rs["connections_closed"] == 105 and
              rs["heaps"] == 105, f"cycles: 105 connections, each closed, 105 heaps ({rs})")
    run.check(end["fds"] == start["fds"] and end["threads"] == start["threads"],
              f"cycles: the receiver's fds ({start['fds']} -> {end['fds']}) and threads "
              f"({start['threads']} -> {end['threads']}) flat over 100 cycles")
    if "libasan" in os.environ.get("LD_PRELOAD", ""):
        print("tcp_cases: RSS not judged under AddressSanitizer (quarantine)")
    else:
        run.check(end["rss_kib"] <= start["rss_kib"] + RSS_SLACK_KIB,
                  f"cycles: the receiver's RSS flat ({start['rss_kib']} -> "
                  f"{end['rss_kib']} KiB, slack {RSS_SLACK_KIB})")


CASES = (item_types, python_api, fan_in, slow_consumer, continuous_pair, hostile_input,
         not_allowed, connect_cycles)


def orchestrate(args):
    if not all(f"TOPO_NS_{i}" in os.environ for i in (1, 2)):
        print("tcp_cases: needs netns-topology --hosts 2 (ctest qa_netns_tcp_cases)")
        return SKIP
    with tempfile.TemporaryDirectory() as logdir:
        run = None
        failures = []
        try:
            run = Run(logdir)
            for case in CASES:
                if args.only and case.__name__ not in args.only:
                    continue
                start = time.monotonic()
                try:
                    case(run)
                except (AssertionError, OSError) as e:  # a peer failed or is gone
                    run.check(False, f"{case.__name__}: {e}")
                print(f"tcp_cases: {case.__name__} took "
                      f"{time.monotonic() - start:.1f} s", flush=True)
        except (AssertionError, OSError) as e:
            failures.append(str(e))
        finally:
            if run is not None:
                failures += run.failures
                for peer in (run.tx, run.rx):
                    peer.close(timeout=30)
            if failures:
                for role in ("send", "recv"):
                    with open(os.path.join(logdir, f"{role}.log")) as f:
                        print(f"---- {role}.log (last lines)\n" +
                              "".join(f.readlines()[-20:]))
        return netns_peers.verdict("tcp_cases", failures, print)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--only", nargs="*", help="run only these cases (function names)")
    sys.exit(orchestrate(parser.parse_args()))
