#!/usr/bin/python3
# Copyright 2026 gr-spead authors
# SPDX-License-Identifier: GPL-3.0-or-later
"""spead_relay.py, the lossy relay of the continuous-stream tests: hand-built SPEAD
packets go through it on 127.0.0.1, and what comes out must be exactly what its seeded
rules predict and what its report says. The predictions are written out here from the
relay's documented rule, not imported from it."""

import hashlib
import json
import os
import random
import select
import signal
import socket
import struct
import subprocess
import tempfile
import time
import unittest

RELAY = os.path.join(os.path.dirname(os.path.abspath(__file__)), "spead_relay.py")
PYTHON = "/usr/bin/python3"
TIMESTAMP_ITEM = 0x1600
PAYLOAD = 64  # bytes per packet


def u(seed, kind, cnt, offset=None):
    """The relay's documented decision number."""
    fields = [seed, kind, cnt] + ([] if offset is None else [offset])
    digest = hashlib.sha256(":".join(str(f) for f in fields).encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def spead_packet(cnt, offset, heap_size, immediates=(), address_bits=40, tail=b""):
    """A SPEAD packet: the four specials, (id, value) immediates, then a payload that
    names cnt and offset (so every packet is distinct)."""
    payload = struct.pack(">QQ", cnt, offset) + tail
    payload += bytes(PAYLOAD - len(payload))

    def pointer(item_id, value):
        return (1 << 63) | (item_id << address_bits) | value

    pointers = [pointer(1, cnt), pointer(2, heap_size), pointer(3, offset),
                pointer(4, len(payload))] + [pointer(i, v) for i, v in immediates]
    address_bytes = address_bits // 8
    header = struct.pack(">BBBBHH", 0x53, 4, 8 - address_bytes, address_bytes, 0,
                         len(pointers))
    return header + b"".join(struct.pack(">Q", p) for p in pointers) + payload


def heap_packets(cnt, packets=4, address_bits=40, timestamp=True):
    """The packets of one data heap; the timestamp (cnt × 1000) rides in the first."""
    size = packets * PAYLOAD
    out = []
    for k in range(packets):
        imm = [(TIMESTAMP_ITEM, cnt * 1000)] if timestamp and k == 0 else []
        out.append(((cnt, k * PAYLOAD),
                    spead_packet(cnt, k * PAYLOAD, size, imm, address_bits)))
    return out


class RelayRun:
    """Starts the relay, sends datagrams through it, collects what comes out."""

    def __init__(self, args, receivers=1, receive_buffer=16 << 20):
        self.rxs = []
        to = []
        for _ in range(receivers):
            rx = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            try:
                rx.setsockopt(socket.SOL_SOCKET, 33, receive_buffer)  # SO_RCVBUFFORCE
            except OSError:
                rx.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, receive_buffer)
            rx.bind(("127.0.0.1", 0))
            self.rxs.append(rx)
            to += ["--to", f"127.0.0.1:{rx.getsockname()[1]}"]
        self.rx = self.rxs[0]
        self.dir = tempfile.TemporaryDirectory()
        self.report_path = os.path.join(self.dir.name, "report.json")
        self.proc = subprocess.Popen(
            [PYTHON, RELAY, "--listen", "0", "--report", self.report_path,
             "--max-seconds", "60"] + to + list(args),
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        ready, _, _ = select.select([self.proc.stdout], [], [], 20)
        if not ready:
            self.proc.kill()
            raise AssertionError("the relay printed no port within 20 s")
        self.port = int(self.proc.stdout.readline())
        self.tx = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)

    def send(self, datagrams, pause_every=64):
        for i, d in enumerate(datagrams):
            self.tx.sendto(d, ("127.0.0.1", self.port))
            if i % pause_every == pause_every - 1:
                time.sleep(0.001)

    def finish(self, timeout=30, terminate=False):
        """Waits for the relay to exit; returns (datagrams received in order, report)."""
        if terminate:
            self.proc.send_signal(signal.SIGTERM)
        try:
            _, self.stderr = self.proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.communicate()
            raise AssertionError(f"the relay did not exit within {timeout} s")
        self.received = []  # per receiver
        for rx in self.rxs:
            got = []
            rx.setblocking(False)
            for _ in range(1_000_000):
                try:
                    got.append(rx.recv(65536))
                except BlockingIOError:
                    break
            rx.close()
            self.received.append(got)
        with open(self.report_path) as f:
            report = json.load(f)
        self.tx.close()
        self.dir.cleanup()
        return self.received[0], report


def relay(args, datagrams, **finish):
    run = RelayRun(args)
    run.send(datagrams)
    received, report = run.finish(**finish)
    assert run.proc.returncode == 0, run.stderr
    return received, report


class spead_relay(unittest.TestCase):

    def identities(self, packets, received):
        """Received datagrams as the (cnt, offset) they were sent as; fails on one that
        was never sent."""
        by_bytes = {d: ident for ident, d in packets}
        for d in received:
            self.assertIn(d, by_bytes, "a datagram came out that was never sent")
        return [by_bytes[d] for d in received]

    def test_without_options_every_datagram_passes_unaltered_and_in_order(self):
        packets = [p for cnt in range(1, 51) for p in heap_packets(cnt)]
        received, report = relay(["--idle-exit", "0.5"], [d for _, d in packets])
        self.assertEqual(received, [d for _, d in packets])
        self.assertEqual((report["datagrams_in"], report["datagrams_out"]), (200, 200))
        self.assertEqual(report["datagrams_dropped_by_kernel"], 0)
        self.assertEqual(report["heaps_seen"], 50)
        self.assertEqual(report["exit_reason"], "idle")
        self.assertEqual((report["heaps_dropped"], report["heaps_lost_packets"],
                          report["duplicates"]), ([], [], []))

    def test_whole_heaps_are_dropped_as_the_seed_says(self):
        cnts = range(1, 201)
        packets = [p for cnt in cnts for p in heap_packets(cnt)]
        dropped_by_seed = {}
        for seed in (5, 6):
            with self.subTest(seed=seed):
                expected = {c for c in cnts if u(seed, "heap", c) < 0.25}
                self.assertTrue(20 < len(expected) < 80, "the rule drops about a quarter")
                received, report = relay(
                    ["--seed", str(seed), "--drop-heaps", "0.25", "--idle-exit", "0.5",
                     "--timestamp-item", "0x1600"], [d for _, d in packets])
                got = self.identities(packets, received)
                self.assertEqual(got, [i for i, _ in packets if i[0] not in expected])
                self.assertEqual(
                    report["heaps_dropped"],
                    [{"cnt": c, "timestamp": c * 1000, "packets_seen": 4,
                      "immediates": {"0x1600": c * 1000}, "packets": 4} for c in sorted(expected)])
                self.assertEqual(report["datagrams_dropped_heap"], 4 * len(expected))
                self.assertEqual(report["datagrams_out"], 800 - 4 * len(expected))
                dropped_by_seed[seed] = expected
        self.assertNotEqual(dropped_by_seed[5], dropped_by_seed[6])

    def test_single_packets_are_dropped_and_duplicated_as_the_seed_says(self):
        seed = 11
        packets = [p for cnt in range(1, 101) for p in heap_packets(cnt)]
        copies = {}
        for (cnt, offset), _ in packets:
            if u(seed, "packet", cnt, offset) < 0.1:
                copies[(cnt, offset)] = 0
            elif u(seed, "duplicate", cnt, offset) < 0.1:
                copies[(cnt, offset)] = 2
            else:
                copies[(cnt, offset)] = 1
        lost = sorted(i for i, n in copies.items() if n == 0)
        doubled = sorted(i for i, n in copies.items() if n == 2)
        self.assertTrue(lost and doubled)
        received, report = relay(
            ["--seed", str(seed), "--drop-packets", "0.1", "--duplicate-packets", "0.1",
             "--timestamp-item", "0x1600", "--idle-exit", "0.5"], [d for _, d in packets])
        got = self.identities(packets, received)
        expected = [i for i, _ in packets for _ in range(copies[i])]
        self.assertEqual(got, expected)  # a duplicate follows its original at once

        def by_heap(pairs):
            heaps = {}
            for cnt, offset in pairs:
                heaps.setdefault(cnt, []).append(offset)
            return [{"cnt": c, "timestamp": c * 1000, "packets_seen": 4,
                     "immediates": {"0x1600": c * 1000}, "offsets": offs}
                    for c, offs in sorted(heaps.items())]

        self.assertEqual(report["heaps_lost_packets"], by_heap(lost))
        self.assertEqual(report["duplicates"], by_heap(doubled))
        self.assertEqual(report["datagrams_dropped_packet"], len(lost))
        self.assertEqual(report["datagrams_duplicated"], len(doubled))
        self.assertEqual(report["datagrams_out"], 400 - len(lost) + len(doubled))

    def test_a_dropped_heap_loses_no_single_packet_and_gets_no_duplicate(self):
        packets = [p for cnt in range(1, 41) for p in heap_packets(cnt)]
        received, report = relay(
            ["--seed", "3", "--drop-heaps", "0.5", "--drop-packets", "1",
             "--duplicate-packets", "1", "--idle-exit", "0.5"], [d for _, d in packets])
        dropped = {h["cnt"] for h in report["heaps_dropped"]}
        self.assertEqual(dropped, {c for c in range(1, 41) if u(3, "heap", c) < 0.5})
        self.assertEqual(received, [])  # every other packet was dropped singly
        self.assertEqual(sorted(h["cnt"] for h in report["heaps_lost_packets"]),
                         sorted(set(range(1, 41)) - dropped))
        self.assertEqual(report["duplicates"], [])

    def test_control_heaps_and_protected_cnts_are_never_altered(self):
        for bits in (40, 48):
            with self.subTest(flavour=f"64-{bits}"):
                top = (1 << bits) - 1
                control = [p for cnt in (top, top - 1)
                           for p in heap_packets(cnt, 2, bits, timestamp=False)]
                just_below = (1 << (bits - 1)) - 1
                data = [p for cnt in (7, 8, just_below)
                        for p in heap_packets(cnt, 2, bits)]
                packets = control[:2] + data + control[2:]
                received, report = relay(
                    ["--drop-heaps", "1", "--drop-packets", "1", "--duplicate-packets", "1",
                     "--reorder-window", "3", "--protect-cnts", "7", "--idle-exit", "0.5"],
                    [d for _, d in packets])
                got = self.identities(packets, received)
                self.assertEqual(got, [(top, 0), (top, 64), (7, 0), (7, 64),
                                       (top - 1, 0), (top - 1, 64)])
                self.assertEqual(report["datagrams_protected"], 6)
                self.assertEqual([h["cnt"] for h in report["heaps_dropped"]],
                                 [8, just_below])

    def test_without_control_protection_control_heaps_are_dropped_too(self):
        top = (1 << 40) - 1
        packets = heap_packets(top, 2, timestamp=False) + heap_packets(5, 2)
        received, report = relay(["--no-protect-control", "--drop-heaps", "1",
                                  "--idle-exit", "0.5"], [d for _, d in packets])
        self.assertEqual(received, [])
        self.assertEqual([h["cnt"] for h in report["heaps_dropped"]], [5, top])

    def test_reordering_shuffles_blocks_of_the_window_by_the_seed(self):
        seed, window = 9, 8
        packets = [p for cnt in range(1, 11) for p in heap_packets(cnt)]  # 40 datagrams
        control = heap_packets((1 << 40) - 1, 1, timestamp=False)
        sent = packets[:20] + control + packets[20:]
        # the documented rule: full blocks of `window` shuffled by random.Random(seed),
        # a partial block released shuffled before a protected datagram and at the end
        rng = random.Random(seed)
        expected = []
        for block in (packets[0:8], packets[8:16], packets[16:20], control,
                      packets[20:28], packets[28:36], packets[36:40]):
            if block is control:
                expected += block
                continue
            order = list(range(len(block)))
            rng.shuffle(order)
            expected += [block[j] for j in order]
        received, report = relay(
            ["--seed", str(seed), "--reorder-window", str(window), "--hold-seconds", "30",
             "--idle-exit", "1"], [d for _, d in sent])
        got = self.identities(sent, received)
        self.assertEqual(got, [i for i, _ in expected])
        self.assertNotEqual(got, [i for i, _ in sent])
        for position, ident in enumerate(got):
            self.assertLess(abs(position - [i for i, _ in sent].index(ident)), window)
        self.assertEqual(report["datagrams_reordered"],
                         sum(1 for a, b in zip(got, [i for i, _ in sent]) if a != b))

    def test_held_datagrams_are_released_when_the_sender_pauses(self):
        packets = heap_packets(1, 3)
        run = RelayRun(["--reorder-window", "100", "--hold-seconds", "0.2",
                        "--idle-exit", "5"])
        run.send([d for _, d in packets])
        run.rx.settimeout(3)
        first = run.rx.recv(65536)  # long before --idle-exit
        self.assertIn(first, [d for _, d in packets])
        received, report = run.finish(terminate=True)
        self.assertEqual(sorted([first] + received), sorted(d for _, d in packets))
        self.assertEqual(report["exit_reason"], "signal")

    def test_sigterm_flushes_held_datagrams_and_writes_the_report(self):
        packets = heap_packets(1, 5)
        run = RelayRun(["--reorder-window", "100", "--hold-seconds", "60"])
        run.send([d for _, d in packets])
        time.sleep(0.5)
        received, report = run.finish(terminate=True)
        self.assertEqual(sorted(received), sorted(d for _, d in packets))
        self.assertEqual((report["exit_reason"], report["datagrams_in"],
                          report["datagrams_out"]), ("signal", 5, 5))

    def test_max_seconds_bounds_a_run_without_traffic(self):
        run = RelayRun(["--max-seconds", "1", "--idle-exit", "0.2"])
        t0 = time.monotonic()
        received, report = run.finish(timeout=10)
        self.assertLess(time.monotonic() - t0, 5)
        self.assertEqual((received, report["exit_reason"], report["datagrams_in"]),
                         ([], "max_seconds", 0))

    def test_datagrams_that_are_not_spead_pass_unaltered_and_are_counted(self):
        good = heap_packets(1, 1)[0][1]
        others = [b"hello", b"\x54" + good[1:], good[:1] + b"\x03" + good[2:],
                  good[:12]]  # bad magic, bad version, pointers cut off
        no_cnt = struct.pack(">BBBBHH", 0x53, 4, 3, 5, 0, 1) + struct.pack(
            ">Q", (1 << 63) | (0x1600 << 40) | 5)
        received, report = relay(["--drop-heaps", "1", "--drop-packets", "1",
                                  "--idle-exit", "0.5"], others + [no_cnt, good])
        self.assertEqual(received, others + [no_cnt])
        self.assertEqual((report["datagrams_not_spead"],
                          report["datagrams_without_heap_cnt"]), (4, 1))

    def test_several_destinations_take_heaps_by_cnt_and_all_get_control_heaps(self):
        top = (1 << 40) - 1
        descriptors = heap_packets(top, 1, timestamp=False)
        data = [p for cnt in range(1, 13) for p in heap_packets(cnt, 2)]
        packets = descriptors + data
        # a protected data heap still goes to its own destination only
        run = RelayRun(["--idle-exit", "0.5", "--protect-cnts", "4"], receivers=3)
        run.send([d for _, d in packets])
        _, report = run.finish()
        for i in range(3):
            with self.subTest(destination=i):
                self.assertEqual(self.identities(packets, run.received[i]),
                                 [(top, 0)] + [ident for ident, _ in data
                                               if ident[0] % 3 == i])
        self.assertEqual(report["datagrams_out_per_destination"], [9, 9, 9])
        self.assertEqual(report["datagrams_out"], 27)

    def test_a_stop_heap_is_held_back_by_the_stop_delay(self):
        top = (1 << 40) - 1
        stop = spead_packet(top, 0, 0, [(0x06, 2)])
        start = spead_packet(top - 1, 0, 0, [(0x06, 0)])
        data = [d for cnt in range(1, 4) for _, d in heap_packets(cnt, 2)]
        run = RelayRun(["--stop-delay", "0.3", "--idle-exit", "2"])
        run.send([start, stop] + data)
        t0 = time.monotonic()
        run.rx.settimeout(5)
        arrivals = [run.rx.recv(65536) for _ in range(8)]
        waited = time.monotonic() - t0
        received, report = run.finish(terminate=True)
        self.assertEqual(arrivals, [start] + data + [stop])  # data overtook the stop
        self.assertGreater(waited, 0.2)
        self.assertEqual(received, [])
        self.assertEqual(report["stop_datagrams_delayed"], 1)

    def test_hold_start_lets_protected_first_heaps_overtake(self):
        second = heap_packets(2, 2)
        first = heap_packets(1, 2)
        run = RelayRun(["--hold-start", "0.3", "--protect-cnts", "1", "--idle-exit", "2"])
        t0 = time.monotonic()
        run.send([d for _, d in second + first])
        run.rx.settimeout(5)
        arrivals = [(run.rx.recv(65536), time.monotonic() - t0) for _ in range(4)]
        received, report = run.finish(terminate=True)
        self.assertEqual([d for d, _ in arrivals], [d for _, d in first + second])
        self.assertLess(arrivals[1][1], 0.25)
        self.assertGreater(arrivals[2][1], 0.25)
        self.assertEqual((received, report["datagrams_out"]), ([], 4))

    def test_bad_options_are_refused(self):
        for args in (["--to", "nowhere"], ["--to", "127.0.0.1:9", "--drop-heaps", "1.5"],
                     ["--to", "127.0.0.1:9", "--protect-cnts", "x"], []):
            with self.subTest(args=args):
                r = subprocess.run([PYTHON, RELAY] + args, capture_output=True, text=True,
                                   timeout=30)
                self.assertEqual(r.returncode, 2)
                self.assertIn("error", r.stderr)


if __name__ == "__main__":
    unittest.main()
