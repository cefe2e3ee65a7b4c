#!/usr/bin/env python3
#
# Copyright 2026 gr-spead authors
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""spead.source / spead.sink with transport ibverbs and auto, over the emulated NIC.

Runs in host 2 of a two-host topology (tests/netns/netns-topology --hosts 2, started by
ctest with the emulated NIC on eth0; see python/spead/CMakeLists.txt). Senders run in
host 1 as child processes of this script (--peer send ...), so every frame crosses the
veth pair. Conditions this process cannot have (no CAP_NET_RAW, environment overrides)
run in a child process in host 2 (--peer receive ...) that prints what happened.
"""

import os
import subprocess
import threading
import time

import numpy as np
import pmt
from gnuradio import blocks, gr, gr_unittest

import spead_qa_support as qa
from spead_qa_support import spead

HERE = os.path.abspath(__file__)
PEER_TIMEOUT = 60
LENGTHS = [100, 3000, 1, 2048, 777, 1024, 5, 1500, 2000, 64]
RATE_GBPS = 0.5


def test_samples(seed):
    """The samples of LENGTHS packets; the same in the sender and the receiver."""
    rng = np.random.default_rng(seed)
    n = sum(LENGTHS)
    return (rng.standard_normal(n) + 1j * rng.standard_normal(n)).astype(np.complex64)


def heap_cnt(i):
    return 100 + 3 * i


def immediate(i):
    return 1_000_000 * i + 17


def send(transport, endpoints, seed, interface=""):
    """Sends LENGTHS packets through a spead.sink, tagged heap_cnt and 0x1600, then a
    stop heap (at stop())."""
    data = test_samples(seed)

    def extra(i, offset):
        return [("heap_cnt", pmt.from_uint64(heap_cnt(i))),
                ("0x1600", pmt.from_uint64(immediate(i)))]

    tb = gr.top_block()
    src = blocks.vector_source_c(data.tolist(), False, 1, qa.packet_tags(LENGTHS, extra=extra))
    src.set_min_output_buffer(2 * max(LENGTHS))
    tx = spead.sink(transport=transport, endpoints=endpoints, interface=interface,
                    item_type="complex_float", max_packet_size=8972, rate_gbps=RATE_GBPS)
    print("SINK_TRANSPORT", tx.active_transport(), flush=True)
    tb.connect(src, tx)
    qa.run_to_completion(tb, timeout=PEER_TIMEOUT - 10)
    print("SENT", tx.stats()["data_heaps"], flush=True)


def run_peer_in_host(i, args, extra_env=None, prefix=(), timeout=PEER_TIMEOUT):
    """Runs this script with --peer ARGS in host i; returns (exit code, output)."""
    return qa.run_peer_in_host(HERE, i, args, timeout, extra_env, prefix)


def check_received(test, out, seed, cnts=None):
    """The output of a source equals what send() sent: samples, lengths, tags."""
    data = test_samples(seed)
    test.assertEqual(np.asarray(out.data(), dtype=np.complex64).tobytes(), data.tobytes())
    offsets = np.cumsum([0] + LENGTHS[:-1]).tolist()
    test.assertEqual(qa.heap_starts(out.tags()), list(zip(offsets, LENGTHS)))
    by_offset = qa.tags_by_offset(out.tags())
    test.assertEqual(len(by_offset), len(LENGTHS))
    for i, offset in enumerate(offsets):
        test.assertEqual(by_offset[offset], {"heap_cnt": heap_cnt(i), "0x1600": immediate(i)})


def receive(test_or_none, source, peer_args, seed, peer_env=None):
    """Runs source -> vector sink while a host-1 peer sends; returns (sink, peer output).
    The sender's stop heap ends the flowgraph."""
    tb = gr.top_block()
    out = blocks.vector_sink_c()
    tb.connect(source, out)
    tb.start()
    try:
        code, output = run_peer_in_host(1, peer_args, peer_env)
        if code != 0:
            raise AssertionError(f"sender failed ({code}):\n{output}")
        waiter = threading.Thread(target=tb.wait, daemon=True)
        waiter.start()
        waiter.join(30)
        if waiter.is_alive():
            raise AssertionError("the source did not see the stop heap within 30 s")
    finally:
        qa.stop_and_wait(tb, 10)
    return out, output


def joined_groups(netdev):
    text = subprocess.run(["ip", "maddr", "show", "dev", netdev], capture_output=True,
                          text=True, timeout=10).stdout
    return {line.split()[1] for line in text.splitlines()
            if line.strip().startswith("inet ")}


class qa_ibverbs(gr_unittest.TestCase):

    def setUp(self):
        if not qa.have_two_host_topology():
            self.skipTest("needs netns-topology --hosts 2 and the emulated NIC (ctest)")
        self.me = qa.topology_host(2)

    def source(self, transport, port, **kwargs):
        kwargs.setdefault("interface", self.me["netdev"])
        return spead.source(transport=transport, endpoints=f"{self.me['ip']}:{port}",
                            item_type="complex_float", **kwargs)

    # ---- traffic -----------------------------------------------------------------------

    def kernel_to_ibverbs_source(self, comp_vector, port):
        rx = self.source("ibverbs", port, comp_vector=comp_vector, max_poll=4)
        self.assertEqual(rx.active_transport(), "ibverbs")
        self.assertEqual(rx.bound_endpoints(), [f"{self.me['ip']}:{port}"])
        out, sender = receive(self, rx, ["send", "udp", f"{self.me['ip']}:{port}", "7"], 7)
        self.assertIn("SINK_TRANSPORT udp", sender)
        check_received(self, out, 7)
        stats = rx.stats()
        self.assertEqual(stats["heaps_output"], len(LENGTHS))
        self.assertEqual(stats["stop_heaps"], 1)
        self.assertEqual(stats["frames_dropped_no_buffer"], 0)

    def test_kernel_udp_to_ibverbs_source_interrupts(self):
        self.kernel_to_ibverbs_source(0, 7201)

    def test_kernel_udp_to_ibverbs_source_busy_poll(self):
        self.kernel_to_ibverbs_source(-1, 7202)

    def test_ibverbs_sink_to_kernel_udp_source(self):
        rx = self.source("udp", 7203, interface="")
        self.assertEqual(rx.active_transport(), "udp")
        out, sender = receive(
            self, rx, ["send", "ibverbs", f"{self.me['ip']}:7203", "8", "--interface",
                       "eth0"], 8)
        self.assertIn("SINK_TRANSPORT ibverbs", sender)
        self.assertIn(f"SENT {len(LENGTHS)}", sender)
        check_received(self, out, 8)

    def test_ibverbs_sink_to_ibverbs_source(self):
        rx = self.source("ibverbs", 7204)
        out, sender = receive(
            self, rx, ["send", "ibverbs", f"{self.me['ip']}:7204", "9", "--interface",
                       qa.topology_host(1)["ip"]], 9)
        self.assertIn("SINK_TRANSPORT ibverbs", sender)
        check_received(self, out, 9)

    def test_multicast_range_joined_while_the_source_lives(self):
        groups = {"239.77.3.1", "239.77.3.2"}
        self.assertFalse(groups & joined_groups("eth0"))
        rx = spead.source(transport="ibverbs", endpoints="239.77.3.1+1:7205",
                          interface="eth0", item_type="complex_float")
        self.assertEqual(rx.bound_endpoints(), ["239.77.3.1:7205", "239.77.3.2:7205"])
        self.assertEqual(groups & joined_groups("eth0"), groups)
        # The sink sends heaps round-robin to the two groups.
        out, _ = receive(self, rx, ["send", "udp", "239.77.3.1+1:7205", "10"], 10)
        check_received(self, out, 10)
        # stop() closed the reader: the groups are left.
        self.assertFalse(groups & joined_groups("eth0"))

    # ---- errors and fallbacks ------------------------------------------------------------

    def test_ibverbs_on_an_interface_without_a_device_says_so(self):
        # SPEAD_EMU_NETDEVS=eth0: loopback has no device.
        with self.assertRaises(RuntimeError) as ctx:
            spead.source(transport="ibverbs", endpoints="127.0.0.1:7206", interface="lo")
        self.assertIn("no RDMA device owns interface 127.0.0.1 (lo)", str(ctx.exception))
        self.assertIn("transport udp", str(ctx.exception))
        with self.assertRaises(RuntimeError) as ctx:
            spead.sink(transport="ibverbs", endpoints="127.0.0.1:7206", interface="lo")
        self.assertIn("no RDMA device owns interface 127.0.0.1 (lo)", str(ctx.exception))

    def receiver_prints(self, args, expected, extra_env=None, prefix=()):
        """Runs a receiving peer in host 2 (--peer receive ARGS): it must exit 0 having
        printed every string of `expected`. Returns its output."""
        code, output = run_peer_in_host(2, ["receive"] + args, extra_env, prefix)
        self.assertEqual(code, 0, output)
        for text in expected:
            self.assertIn(text, output)
        return output

    def test_auto_without_a_device_falls_back_to_udp_and_receives(self):
        self.receiver_prints(["auto", "lo", "7207", "11"], [
            "transport auto: ibverbs cannot be used on lo (127.0.0.1): "
            "rdma_bind_addr(127.0.0.1): No such device. no RDMA device owns "
            "interface 127.0.0.1 (lo)",
            "using udp", "SOURCE_TRANSPORT udp", "RECEIVED_OK"])

    def test_auto_with_a_device_uses_ibverbs(self):
        rx = self.source("auto", 7208)
        self.assertEqual(rx.active_transport(), "ibverbs")
        tx = spead.sink(transport="auto", endpoints=f"{qa.topology_host(1)['ip']}:7208",
                        interface="eth0", max_packet_size=8972)
        self.assertEqual(tx.active_transport(), "ibverbs")

    def test_without_cap_net_raw_ibverbs_errors_and_auto_falls_back(self):
        drop = ["setpriv", "--inh-caps=-net_raw", "--bounding-set=-net_raw", "--"]
        output = self.receiver_prints(
            ["ibverbs", "eth0", "7209", "12"],
            ["SOURCE_ERROR RuntimeError", "need CAP_NET_RAW", "setcap cap_net_raw+ep",
             "--ambient-caps=+net_raw"], prefix=drop)
        self.assertNotIn("setcap cap_net_raw+ep /usr/bin/python", output)

        self.receiver_prints(
            ["auto", "eth0", "7210", "13"],
            [f"transport auto: ibverbs cannot be used on eth0 ({self.me['ip']}): "
             "CAP_NET_RAW is missing", "SOURCE_TRANSPORT udp", "RECEIVED_OK"], prefix=drop)

    # ---- environment overrides -------------------------------------------------------------

    def test_env_interface_turns_a_udp_source_into_ibverbs(self):
        self.receiver_prints(
            ["udp", "", "7211", "14"],
            ["GR_SPEAD_IBV_INTERFACE=eth0: transport udp becomes ibverbs on eth0",
             "GR_SPEAD_IBV_COMP_VECTOR=-1: comp_vector -1 (busy polling)",
             "over ibverbs on eth0 (ring", "busy polling)", "SOURCE_TRANSPORT ibverbs",
             "RECEIVED_OK"],
            {"GR_SPEAD_IBV_INTERFACE": "eth0", "GR_SPEAD_IBV_COMP_VECTOR": "-1"})

    def test_env_interface_loses_to_the_blocks_interface(self):
        # lo has no device: ibverbs works only if the block's eth0 wins.
        self.receiver_prints(
            ["udp", "eth0", "7212", "15"],
            ["GR_SPEAD_IBV_INTERFACE=lo: transport udp becomes ibverbs on eth0 "
             "(the interface given to the block wins)",
             "GR_SPEAD_IBV_COMP_VECTOR=1: comp_vector 1", "SOURCE_TRANSPORT ibverbs",
             "RECEIVED_OK"],
            {"GR_SPEAD_IBV_INTERFACE": "lo", "GR_SPEAD_IBV_COMP_VECTOR": "1"})

    def test_env_comp_vector_that_is_no_integer_is_refused(self):
        self.receiver_prints(
            ["udp", "", "7213", "16"],
            ["SOURCE_ERROR ValueError: GR_SPEAD_IBV_COMP_VECTOR: 'two' is not an integer"],
            {"GR_SPEAD_IBV_INTERFACE": "eth0", "GR_SPEAD_IBV_COMP_VECTOR": "two"})

    def test_without_env_override_udp_stays_udp(self):
        self.assertNotIn("GR_SPEAD_IBV_INTERFACE", os.environ)
        rx = self.source("udp", 7214, interface="eth0")
        self.assertEqual(rx.active_transport(), "udp")

    # ---- lifecycle -------------------------------------------------------------------------

    def test_start_stop_cycles_release_queue_pairs_threads_and_fds(self):
        rx = self.source("ibverbs", 7215)
        tb = gr.top_block()
        tb.connect(rx, blocks.null_sink(gr.sizeof_gr_complex))
        cycles = 10
        baseline = None
        for cycle in range(cycles):
            tb.start()
            time.sleep(0.05)
            qa.stop_and_wait(tb, 10)
            if cycle == 1:
                baseline = (qa.fd_count(), qa.thread_count())
        # GNU Radio's threads end shortly after stop(): allow them a moment.
        qa.wait_for(lambda: qa.fd_count() <= baseline[0] and
                    qa.thread_count() <= baseline[1], 5)
        self.assertEqual(qa.fd_count(), baseline[0])
        self.assertLessEqual(qa.thread_count(), baseline[1])
        self.assertEqual(rx.bound_endpoints(), [])


def peer_main(argv):
    parser, roles, send_role = qa.peer_parser()
    send_role.add_argument("seed", type=int)
    r = roles.add_parser("receive")
    r.add_argument("transport")
    r.add_argument("interface")
    r.add_argument("port", type=int)
    r.add_argument("seed", type=int)
    args = parser.parse_args(argv)
    if args.role == "send":
        send(args.transport, args.endpoints, args.seed, args.interface)
        return 0
    # receive: a source in this host, a kernel sender in host 1; says what happened.
    here = qa.topology_host(2)["ip"]
    try:
        rx = spead.source(transport=args.transport, endpoints=f"{here}:{args.port}",
                          interface=args.interface, item_type="complex_float")
    except Exception as e:  # reported to the parent test
        print(f"SOURCE_ERROR {type(e).__name__}: {e}", flush=True)
        return 0
    print("SOURCE_TRANSPORT", rx.active_transport(), flush=True)

    class Checker(gr_unittest.TestCase):
        def runTest(self):
            pass

    checker = Checker()
    out, sender = receive(checker, rx, ["send", "udp", f"{here}:{args.port}", str(args.seed)],
                          args.seed)
    check_received(checker, out, args.seed)
    print("RECEIVED_OK", flush=True)
    return 0


if __name__ == "__main__":
    qa.run_peer_or_tests(qa_ibverbs, peer_main)
