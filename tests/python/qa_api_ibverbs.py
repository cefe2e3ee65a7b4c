#!/usr/bin/env python3
#
# Copyright 2026 gr-spead authors
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""The spead2-compatible Python API over ibverbs, on the emulated NIC: both forms of
recv.Stream.add_udp_ibv_reader and send.UdpIbvStream, zero-copy memory regions, the
asyncio sender and the SPEAD2_IBV_* environment overrides.

Runs in host 2 of a two-host topology (ctest starts it with the emulated NIC on eth0,
see python/spead/CMakeLists.txt); senders run in host 1 as `--peer send ...` child
processes of this script, so every frame crosses the veth pair.
"""

import argparse
import asyncio
import os

import numpy as np
from gnuradio import gr_unittest

import spead_qa_support as qa
from spead_qa_support import spead as spead2

HERE = os.path.abspath(__file__)
PEER_TIMEOUT = 60
HEAPS = 6
ELEMENTS = 3000  # int32: a 12000-byte item, two 8972-byte packets


def heap_values(seed, i):
    return (np.arange(ELEMENTS, dtype=np.int32) * (i + 1) + seed).astype(np.int32)


def send_peer(api, host, port, seed, interface):
    """Sends HEAPS heaps of heap_values then a stop heap with the Python API `api`;
    prints the stream's counters."""
    pool = spead2.ThreadPool()
    config = spead2.send.StreamConfig(max_packet_size=8972, rate=50e6)
    region = np.zeros((HEAPS, ELEMENTS), np.int32)
    for i in range(HEAPS):
        region[i] = heap_values(seed, i)
    if api == "udp":
        stream = spead2.send.UdpStream(pool, [(host, port)], config)
    elif api == "ibv-config":
        stream = spead2.send.UdpIbvStream(pool, config, spead2.send.UdpIbvConfig(
            endpoints=[(host, port)], interface_address=interface,
            memory_regions=[region]))
    elif api == "ibv-positional":
        stream = spead2.send.UdpIbvStream(pool, host, port, config, interface)
    elif api == "ibv-asyncio":
        import gnuradio.spead.send.asyncio
        stream = spead2.send.asyncio.UdpIbvStream(pool, config, spead2.send.UdpIbvConfig(
            endpoints=[(host, port)], interface_address=interface,
            memory_regions=[region]))
    else:
        raise ValueError(api)
    ig = spead2.send.ItemGroup()
    ig.add_item(0x1000, "values", "", (ELEMENTS,), dtype=np.int32)
    ig.add_item(0x1001, "index", "", (), format=[("u", 40)])
    heaps = []
    for i in range(HEAPS):
        ig["values"].value = region[i]  # a view inside the registered region
        ig["index"].value = i
        heaps.append(ig.get_heap())
    heaps.append(ig.get_end())
    if api == "ibv-asyncio":
        async def send_all():
            futures = [stream.async_send_heap(h) for h in heaps[:3]]
            await asyncio.gather(*futures)
            for h in heaps[3:]:
                await stream.async_send_heap(h)
        asyncio.run(send_all())
    else:
        for h in heaps:
            stream.send_heap(h)
    for name, value in stream.stats.items():
        print(f"{name}: {value}", flush=True)
    return 0


class qa_api_ibverbs(qa.TwoHostTestCase):

    def setUp(self):
        super().setUp()
        self.pool = spead2.ThreadPool()
        for name in ("SPEAD2_IBV_INTERFACE", "SPEAD2_IBV_COMP_VECTOR",
                     "GR_SPEAD_IBV_INTERFACE", "GR_SPEAD_IBV_COMP_VECTOR"):
            os.environ.pop(name, None)

    def stream(self):
        stream = spead2.recv.Stream(self.pool)
        self.addCleanup(stream.stop)
        return stream

    def run_sender(self, api, host, port, seed):
        code, output = qa.run_peer_in_host(
            HERE, 1, ["send", api, host, port, seed, self.peer["ip"]], PEER_TIMEOUT)
        self.assertEqual(code, 0, output)
        return {name: int(value) for name, _, value in
                (line.partition(": ") for line in output.splitlines())
                if value.strip().isdigit()}

    def receive_all(self, stream, seed):
        """Every heap until the stop heap; checks values and order."""
        ig = spead2.ItemGroup()
        indices = []
        for heap in stream:
            updated = ig.update(heap)
            if "values" in updated:
                i = updated["index"].value
                np.testing.assert_array_equal(updated["values"].value, heap_values(seed, i))
                indices.append(i)
        self.assertEqual(indices, list(range(HEAPS)))
        stats = stream.stats
        self.assertEqual(stats["stop_heaps"], 1)
        self.assertEqual(stats["frames_dropped_no_buffer"], 0)

    def test_reader_config_form_from_a_kernel_sender(self):
        stream = self.stream()
        stream.add_udp_ibv_reader(spead2.recv.UdpIbvConfig(
            endpoints=[(self.me["ip"], 7301)], interface_address=self.me["netdev"],
            comp_vector=0, max_poll=4))
        self.run_sender("udp", self.me["ip"], 7301, 1)
        self.receive_all(stream, 1)

    def test_reader_positional_form_from_an_ibverbs_config_stream_zero_copy(self):
        stream = self.stream()
        stream.add_udp_ibv_reader([(self.me["ip"], 7302)], self.me["ip"],
                                  spead2.recv.Stream.DEFAULT_UDP_IBV_MAX_SIZE,
                                  spead2.recv.Stream.DEFAULT_UDP_IBV_BUFFER_SIZE, -1)
        sent = self.run_sender("ibv-config", self.me["ip"], 7302, 2)
        self.receive_all(stream, 2)
        # the values lie in the registered region: their packets go out without a copy
        # (the first heap's also carry the descriptors, from outside it)
        self.assertGreaterEqual(sent["packets_zero_copy"], 2 * (HEAPS - 1))

    def test_reader_address_port_form_multicast_from_a_positional_stream(self):
        stream = self.stream()
        # the backwards-compatible (multicast_group, port, interface_address) form
        stream.add_udp_ibv_reader("239.77.4.1", 7303, self.me["ip"])
        sent = self.run_sender("ibv-positional", "239.77.4.1", 7303, 3)
        self.receive_all(stream, 3)
        self.assertEqual(sent["packets_zero_copy"], 0)  # no memory region registered

    def test_asyncio_ibverbs_sender(self):
        stream = self.stream()
        stream.add_udp_ibv_reader(spead2.recv.UdpIbvConfig(
            endpoints=[(self.me["ip"], 7304)], interface_address=self.me["netdev"]))
        sent = self.run_sender("ibv-asyncio", self.me["ip"], 7304, 4)
        self.receive_all(stream, 4)
        self.assertEqual(sent["heaps"], HEAPS + 1)

    def test_env_interface_turns_add_udp_reader_into_ibverbs(self):
        os.environ["SPEAD2_IBV_INTERFACE"] = self.me["netdev"]
        os.environ["SPEAD2_IBV_COMP_VECTOR"] = "-1"
        stream = self.stream()
        # an ibverbs reader binds no socket, so no (address, port) comes back
        self.assertEqual(stream.add_udp_reader(7305, bind_hostname=self.me["ip"]), [])
        self.run_sender("udp", self.me["ip"], 7305, 5)
        self.receive_all(stream, 5)

    def test_env_interface_loses_to_an_explicit_interface(self):
        os.environ["SPEAD2_IBV_INTERFACE"] = "lo"  # no device: only eth0 can work
        stream = self.stream()
        stream.add_udp_reader(self.me["ip"], 7306, interface_address=self.me["netdev"])
        self.run_sender("udp", self.me["ip"], 7306, 6)
        self.receive_all(stream, 6)

    def test_gr_spead_env_names_are_aliases(self):
        os.environ["GR_SPEAD_IBV_INTERFACE"] = "lo"
        with self.assertRaises(OSError) as cm:
            self.stream().add_udp_reader(7307)
        self.assertIn("no RDMA device owns interface 127.0.0.1 (lo)", str(cm.exception))

    def test_env_comp_vector_that_is_no_integer_is_refused(self):
        os.environ["SPEAD2_IBV_INTERFACE"] = self.me["netdev"]
        os.environ["SPEAD2_IBV_COMP_VECTOR"] = "two"
        with self.assertRaises(ValueError) as cm:
            self.stream().add_udp_reader(7308)
        self.assertIn("SPEAD2_IBV_COMP_VECTOR: 'two' is not an integer", str(cm.exception))

    def test_errors_of_both_forms(self):
        stream = self.stream()
        with self.assertRaises(ValueError) as cm:
            stream.add_udp_ibv_reader([(self.me["ip"], 7309)], "")
        self.assertIn("interface_address", str(cm.exception))
        with self.assertRaises(ValueError) as cm:
            stream.add_udp_ibv_reader(spead2.recv.UdpIbvConfig(
                endpoints=[(self.me["ip"], 7309)], interface_address=self.me["ip"],
                max_poll=0))
        self.assertIn("max_poll", str(cm.exception))
        with self.assertRaises(OSError) as cm:
            spead2.send.UdpIbvStream(self.pool, "239.1.2.3", 7309,
                                     spead2.send.StreamConfig(), "127.0.0.1")
        self.assertIn("no RDMA device", str(cm.exception))
        region = np.zeros(100, np.uint8)
        with self.assertRaises(ValueError) as cm:
            spead2.send.UdpIbvStream(self.pool, spead2.send.StreamConfig(),
                                     spead2.send.UdpIbvConfig(
                                         endpoints=[("239.1.2.3", 7309)],
                                         interface_address=self.me["ip"],
                                         memory_regions=[region, region[10:]]))
        self.assertIn("memory_regions", str(cm.exception))


def peer_main(argv):
    parser = argparse.ArgumentParser()
    roles = parser.add_subparsers(dest="role", required=True)
    send = roles.add_parser("send")
    for name, kind in (("api", str), ("host", str), ("port", int), ("seed", int),
                       ("interface", str)):
        send.add_argument(name, type=kind)
    args = parser.parse_args(argv)
    return send_peer(args.api, args.host, args.port, args.seed, args.interface)


if __name__ == "__main__":
    qa.run_peer_or_tests(qa_api_ibverbs, peer_main)
