#!/usr/bin/env python3
#
# Copyright 2026 gr-spead authors
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""Time-continuous streams over the emulated ibverbs NIC: spead.sink (continuous) in
host 1 -> the veth pair -> spead.source (continuous, transport ibverbs) in host 2.

Runs in host 2 of a two-host topology with the emulated NIC on eth0, as qa_ibverbs does
(see python/spead/CMakeLists.txt). The sender runs in host 1 as a child process of this
script (--peer send ...). Every output is checked to the sample: its length, every
sample, the tags and the counters, which must reconcile.

The emulator has no loss knob (and NIC-level drops are not what it emulates), so the
gaps come from tests/tools/spead_relay.py in host 1: the sink sends to it over kernel
UDP on host 1's address (the relay forwards from the address it listens on, and
127.0.0.1 cannot reach host 2), it drops whole heaps and single packets by a seeded pattern and
forwards the rest to host 2, where the ibverbs source places them. Its report says
which positions must be zeros.
"""

import json
import os
import subprocess
import sys
import tempfile
import threading

import numpy as np
from gnuradio import blocks, gr, gr_unittest

import spead_qa_support as qa
from spead_qa_support import spead

HERE = os.path.abspath(__file__)
RELAY = qa.tests_path("tools", "spead_relay.py")
PEER_TIMEOUT = 90

TIMESTAMP_ITEM = 0x1600
SUBSTREAM_ITEM = 0x3101
SUBSTREAMS = 2
HEAP_ITEMS = 512          # int32: 2048-byte heaps, two packets each at 1472 bytes
HEAP_BYTES = 4 * HEAP_ITEMS
START = 3_000_000         # timestamp of the first heaps
SAMPLE_RATE = 1e6         # so rx_time of the first item is (3, 0.0)
WINDOW_HEAPS = 64
RATE_GBPS = 0.05          # slow enough for the relay (Python) to see every datagram


def samples(heaps, substream):
    """What input `substream` of the sink sends: no sample is zero, and none repeats
    across substreams, so a heap placed on the wrong output or position shows."""
    return (np.arange(1, heaps * HEAP_ITEMS + 1, dtype=np.int32)
            + 10_000_000 * (substream + 1))


# ---- host 1: the sender ------------------------------------------------------------------

def send(args):
    """spead.sink (continuous, SUBSTREAMS inputs) to args.endpoints, or through the
    lossy relay to args.relay_to; prints SENT <data heaps> and, with the relay,
    RELAY_REPORT <json>."""
    relay = None
    endpoints = args.endpoints
    if args.relay_to:
        report = tempfile.NamedTemporaryFile(suffix=".json", delete=False)
        report.close()
        # the sink numbers data heaps 1, 2, ... round by round: the first and the last
        # round are kept, since heaps lost there would shorten the output instead
        last = args.heaps * SUBSTREAMS
        protect = [1, 2, last - 1, last]
        relay = subprocess.Popen(
            [sys.executable, RELAY, "--listen", "0", "--listen-host", args.relay_host,
             "--to", args.relay_to,
             "--seed", str(args.seed), "--drop-heaps", "0.05", "--drop-packets", "0.03",
             "--timestamp-item", hex(TIMESTAMP_ITEM),
             "--protect-cnts", ",".join(map(str, protect)),
             "--idle-exit", "2", "--max-seconds", str(PEER_TIMEOUT - 20),
             "--report", report.name],
            stdout=subprocess.PIPE, text=True)
        port = relay.stdout.readline().strip()
        if not port.isdigit():
            relay.kill()
            raise SystemExit(f"the relay did not start: {port!r}")
        endpoints = f"{args.relay_host}:{port}"

    tb = gr.top_block()
    tx = spead.sink(transport=args.transport, endpoints=endpoints,
                    interface=args.interface, item_type="int32", max_packet_size=1472,
                    heap_items=HEAP_ITEMS, rate_gbps=RATE_GBPS, input_mode="continuous",
                    timestamp_item=TIMESTAMP_ITEM, start_timestamp=START,
                    sample_rate=SAMPLE_RATE, substreams=SUBSTREAMS,
                    substream_item=SUBSTREAM_ITEM)
    print("SINK_TRANSPORT", tx.active_transport(), flush=True)
    for s in range(SUBSTREAMS):
        tb.connect(blocks.vector_source_i(samples(args.heaps, s).tolist(), False), (tx, s))
    qa.run_to_completion(tb, timeout=PEER_TIMEOUT - 30)
    stats = tx.stats()
    print("SENT", stats["data_heaps"], "WRAPPED", stats["timestamps_wrapped"], flush=True)
    if relay:
        relay.wait(PEER_TIMEOUT - 30)  # --idle-exit: 2 s after the stop heaps
        relay.stdout.close()
        with open(report.name) as f:
            print("RELAY_REPORT", json.dumps(json.load(f)), flush=True)
        os.unlink(report.name)
    return 0


def run_sender_in_host_1(args):
    """Runs this script with --peer send ARGS in host 1; returns its output."""
    code, output = qa.run_peer_in_host(HERE, 1, ["send"] + list(args), PEER_TIMEOUT)
    if code != 0:
        raise AssertionError(f"sender failed ({code}):\n{output}")
    return output


# ---- host 2: the tests -------------------------------------------------------------------

class qa_continuous_ibverbs(gr_unittest.TestCase):

    def setUp(self):
        if not qa.have_two_host_topology():
            self.skipTest("needs netns-topology --hosts 2 and the emulated NIC (ctest)")
        self.me = qa.topology_host(2)

    def receive(self, ports, threads, sender_args):
        """A continuous ibverbs source on `ports` of host 2 -> vector sinks, while the
        host-1 sender runs; the sender's stop heaps end the flowgraph. Returns
        (source, outputs, sender output)."""
        rx = spead.source(
            transport="ibverbs", interface=self.me["netdev"],
            endpoints=",".join(f"{self.me['ip']}:{p}" for p in ports),
            item_type="int32", timestamp_item=TIMESTAMP_ITEM, sample_rate=SAMPLE_RATE,
            output_mode="continuous", window_heaps=WINDOW_HEAPS, substreams=SUBSTREAMS,
            substream_item=SUBSTREAM_ITEM, threads=threads)
        self.assertEqual(rx.active_transport(), "ibverbs")
        tb = gr.top_block()
        outs = [blocks.vector_sink_i() for _ in range(SUBSTREAMS)]
        for s in range(SUBSTREAMS):
            tb.connect((rx, s), outs[s])
        tb.start()
        try:
            sender = run_sender_in_host_1(sender_args)
            waiter = threading.Thread(target=tb.wait, daemon=True)
            waiter.start()
            waiter.join(30)
            if waiter.is_alive():
                raise AssertionError("the source did not see the stop heaps within 30 s; "
                                 f"the sender said:\n{sender}")
        finally:
            qa.stop_and_wait(tb, 10)
        return rx, outs, sender

    def check(self, rx, outs, heaps, zeros, endpoints):
        """Outputs, tags and counters, given the (substream, position) pairs that must
        be zeros (lost whole or incomplete, with the drop policy)."""
        for s in range(SUBSTREAMS):
            with self.subTest(output=s):
                got = np.asarray(outs[s].data(), dtype=np.int32)
                self.assertEqual(len(got), heaps * HEAP_ITEMS)
                expected = samples(heaps, s)
                for sub, p in zeros:
                    if sub == s:
                        expected[p * HEAP_ITEMS:(p + 1) * HEAP_ITEMS] = 0
                wrong = np.flatnonzero(got != expected)
                self.assertEqual(wrong.size, 0,
                                 f"{wrong.size} samples differ; first at item "
                                 f"{wrong[:1]}, position {wrong[:1] // HEAP_ITEMS}")
                tags = qa.sorted_tags(outs[s])
                missing = qa.heap_missing_tags((p for sub, p in zeros if sub == s),
                                               HEAP_ITEMS, HEAP_BYTES, WINDOW_HEAPS)
                self.assertEqual([t for t in tags if t[1] != "rx_time"], missing)
                self.assertEqual([t for t in tags if t[1] == "rx_time"],
                                 [(0, "rx_time", (3, 0.0))])

        stats = rx.stats()
        positions = heaps * SUBSTREAMS
        self.assertEqual(stats["frames_dropped_no_buffer"], 0)
        self.assertEqual(stats["positions_released"], heaps)
        self.assertEqual(stats["heaps_missing"], len(zeros))
        self.assertEqual(stats["items_zero_filled"], len(zeros) * HEAP_ITEMS)
        self.assertEqual(stats["bytes_zero_filled"], len(zeros) * HEAP_BYTES)
        # every position x substream output is a placed heap or zeros
        self.assertEqual(stats["heaps"] + stats["heaps_missing"]
                         + stats["incomplete_heaps_delivered"]
                         + stats["heaps_dropped_queue_full"], positions)
        # descriptors, one heap per endpoint, are control heaps; so are the stop heaps
        self.assertEqual(stats["control_heaps"], endpoints)
        self.assertEqual(stats["stop_heaps"], endpoints)
        for counter in ("heaps_late", "heaps_misaligned", "heaps_duplicate_position",
                        "heaps_bad_substream", "heaps_wrong_size", "timestamp_resyncs",
                        "heaps_dropped_queue_full", "incomplete_heaps_delivered"):
            self.assertEqual(stats[counter], 0, counter)
        return stats

    def test_ibverbs_sink_to_ibverbs_source_two_substreams_two_threads(self):
        # substream i goes to endpoint i: one port, and one receiver thread, each
        heaps = 300
        rx, outs, sender = self.receive(
            [7301, 7302], 2,
            ["ibverbs", f"{self.me['ip']}:7301,{self.me['ip']}:7302", heaps,
             "--interface", qa.topology_host(1)["ip"]])
        self.assertIn("SINK_TRANSPORT ibverbs", sender)
        self.assertIn(f"SENT {heaps * SUBSTREAMS} WRAPPED 0", sender)
        stats = self.check(rx, outs, heaps, set(), endpoints=2)
        self.assertEqual(stats["heaps"], heaps * SUBSTREAMS)
        self.assertEqual(stats["incomplete_heaps_evicted"]
                         + stats["incomplete_heaps_flushed"], 0)
        # every packet of every heap arrived once: two per data heap, one per control heap
        self.assertEqual(stats["packets"], 2 * heaps * SUBSTREAMS + 4)
        self.assertEqual(stats["packets_duplicate"] + stats["packets_late"], 0)

    def test_heaps_lost_on_the_way_are_zeros_at_their_place(self):
        heaps, seed = 250, 5
        rx, outs, sender = self.receive(
            [7303], 1,
            ["udp", "", heaps, "--relay-host", qa.topology_host(1)["ip"],
             "--relay-to", f"{self.me['ip']}:7303", "--seed", seed])
        self.assertIn(f"SENT {heaps * SUBSTREAMS} WRAPPED 0", sender)
        line = [ln for ln in sender.splitlines() if ln.startswith("RELAY_REPORT ")]
        self.assertEqual(len(line), 1, sender)
        report = json.loads(line[0][len("RELAY_REPORT "):])
        self.assertEqual(report["send_errors"], 0)
        self.assertEqual(report["datagrams_dropped_by_kernel"], 0,
                         "the relay could not keep up: its report is incomplete")

        def where(entry):
            ts = entry["timestamp"]
            self.assertIsNotNone(ts, f"relay saw no timestamp in heap {entry}")
            self.assertEqual((ts - START) % HEAP_ITEMS, 0)
            return entry["immediates"][hex(SUBSTREAM_ITEM)], (ts - START) // HEAP_ITEMS

        lost_whole = {where(e) for e in report["heaps_dropped"]}
        incomplete = set()
        for e in report["heaps_lost_packets"]:
            # a heap whose every packet was dropped one by one never arrived at all
            (lost_whole if len(e["offsets"]) == e["packets_seen"] else incomplete).add(
                where(e))
        # the seed must make gaps of both kinds, or the test proves little
        self.assertTrue(lost_whole and incomplete,
                        f"seed {seed}: whole {len(lost_whole)}, incomplete {len(incomplete)}")
        zeros = lost_whole | incomplete
        self.assertTrue(all(0 < p < heaps - 1 for _, p in zeros))

        stats = self.check(rx, outs, heaps, zeros, endpoints=1)
        self.assertEqual(stats["heaps"], heaps * SUBSTREAMS - len(zeros))
        self.assertEqual(stats["incomplete_heaps_evicted"]
                         + stats["incomplete_heaps_flushed"], len(incomplete))


def peer_main(argv):
    parser, _, send_role = qa.peer_parser()
    send_role.add_argument("heaps", type=int)
    send_role.add_argument("--relay-to", default="")
    send_role.add_argument("--relay-host", default="")
    send_role.add_argument("--seed", type=int, default=0)
    return send(parser.parse_args(argv))


if __name__ == "__main__":
    qa.run_peer_or_tests(qa_continuous_ibverbs, peer_main)
