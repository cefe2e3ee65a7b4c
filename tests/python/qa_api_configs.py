#!/usr/bin/env python3
#
# Copyright 2026 gr-spead authors
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""The configs of the spead2-compatible API are the C++ configs, bound (docs/python.md):
keyword construction sets every field, every property reads back what was set, a bad
value is the C++ setter's ValueError naming the field (and leaves the old value), a
value of the wrong type a TypeError naming it, and the readers and streams built from
spead2's call forms take the link configs' other fields as keywords, or the config."""

import copy

import numpy as np
from gnuradio import gr_unittest

import spead_qa_support as qa
from spead_qa_support import spead
import gnuradio.spead.recv  # noqa: F401
import gnuradio.spead.send  # noqa: F401

recv, send = spead.recv, spead.send

def fields(cls):
    """The writable properties of a bound config class: its fields."""
    return {name for klass in cls.__mro__ for name, value in vars(klass).items()
            if isinstance(value, property) and value.fset is not None}


def placement():
    return recv.ChunkPlacement(timestamp_item=0x1600, timestamp_step=1024, heap_size=1024,
                               heaps_per_chunk=4)


def every_field():
    """(config class, {field: a value other than the default}) of every config."""
    region = np.zeros(64, np.uint8)
    return [
        (recv.StreamConfig, dict(
            max_heaps=7, substreams=3, bug_compat=spead.BUG_COMPAT_PYSPEAD_0_5_2,
            memcpy=spead.MEMCPY_NONTEMPORAL,
            memory_allocator=spead.MemoryPool(0, 1024, 4, 2, spead.MmapAllocator()),
            stop_on_stop_item=False, allow_unsized_heaps=False, allow_out_of_order=True,
            stream_id=123, explicit_start=True, max_heap_size=1 << 20,
            metrics="127.0.0.1:9148")),
        (recv.RingStreamConfig, dict(heaps=3, contiguous_only=False,
                                     incomplete_keep_payload_ranges=True,
                                     full_queue_policy="drop")),
        (recv.UdpConfig, dict(endpoints=[("127.0.0.1", 7148)], interface="lo",
                              buffer_size=1 << 20, max_size=1472)),
        (recv.UdpIbvConfig, dict(endpoints=[("239.1.2.3", 7148)],
                                 interface_address="10.0.0.2", buffer_size=1 << 20,
                                 max_size=1500, comp_vector=-1, max_poll=5)),
        (recv.TcpConfig, dict(endpoint="127.0.0.1:7148", buffer_size=65536,
                              peer_timeout=2.0, max_connections=4,
                              allowed_peers="127.0.0.1", max_packet_size=9000,
                              keep_listening=True, idle_timeout=3.5)),
        (recv.RdmaConfig, dict(endpoint="verbs://:7150", interface="lo",
                               rdma_connections=2, rdma_depth=4, recv_depth=32,
                               max_connections=3, allowed_peers="10.0.0.0/8",
                               max_packet_size=1 << 16, keep_listening=True,
                               idle_timeout=1.5)),
        (recv.ChunkStreamConfig, dict(items=[0x1600, 0x1601], max_chunks=4,
                                      place=placement(), max_heap_extra=16)),
        (recv.ChunkStreamGroupConfig, dict(
            max_chunks=5,
            eviction_mode=recv.ChunkStreamGroupConfig.EvictionMode.LOSSLESS)),
        (send.StreamConfig, dict(max_packet_size=8972, rate=1e6, burst_size=1000,
                                 max_heaps=8, burst_rate_ratio=1.5,
                                 rate_method=send.RateMethod.SW, allow_hw_rate=False,
                                 metrics=":9148")),
        (send.UdpConfig, dict(endpoints=[("127.0.0.1", 7148), ("127.0.0.1", 7149)],
                              interface="lo", buffer_size=1 << 20, ttl=4)),
        (send.UdpIbvConfig, dict(endpoints=[("239.1.2.3", 7148)],
                                 interface_address="10.0.0.1", buffer_size=1 << 20,
                                 ttl=4, comp_vector=2, max_poll=3,
                                 memory_regions=[region])),
        (send.TcpConfig, dict(endpoint="127.0.0.1:7148", buffer_size=65536,
                              peer_timeout=2.0, interface="lo", connect_timeout=1.0,
                              reconnect=True, reconnect_backoff=(0.25, 1.0))),
        (send.RdmaConfig, dict(endpoint="verbs://127.0.0.1:7150", interface="lo",
                               inline_bytes=128, send_depth=4, connect_timeout=1.0,
                               reconnect=True, reconnect_backoff=(0.25, 1.0))),
    ]


class qa_api_configs(qa.ApiTestCase):

    def assert_fields(self, config, values):
        for name, value in values.items():
            got = getattr(config, name)
            if isinstance(value, list) and value and isinstance(value[0], np.ndarray):
                self.assertTrue(all(a is b for a, b in zip(got, value)), name)
            else:
                self.assertEqual(got, value, f"{type(config).__name__}.{name}")

    def test_keyword_construction_sets_every_field(self):
        for cls, values in every_field():
            with self.subTest(cls=cls.__module__ + "." + cls.__name__):
                self.assertEqual(set(values), fields(cls))  # a new field needs a value
                default = cls()
                for name in values:
                    self.assertNotEqual(getattr(default, name), values[name], name)
                self.assert_fields(cls(**values), values)

    def test_properties_round_trip(self):
        for cls, values in every_field():
            with self.subTest(cls=cls.__module__ + "." + cls.__name__):
                config = cls()
                for name, value in values.items():
                    setattr(config, name, value)
                self.assert_fields(config, values)
                self.assert_fields(copy.copy(config), values)  # copy.copy keeps them
                self.assertTrue(repr(config).startswith(cls.__name__ + "("))

    def test_a_bad_value_is_the_cpp_value_error_naming_the_field(self):
        cases = (
            (recv.StreamConfig, "max_heaps", 0, "max_heaps: must be at least 1"),
            (recv.RingStreamConfig, "full_queue_policy", "wait",
             "full_queue_policy: 'wait' is not a policy; use drop"),
            (recv.UdpConfig, "max_size", 10, "max_size: 10 bytes is out of range"),
            (recv.UdpIbvConfig, "max_poll", 0, "max_poll: 0 must be at least 1"),
            (recv.TcpConfig, "max_connections", 0,
             "max_connections: 0 is out of range; use 1 to 1024"),
            (recv.RdmaConfig, "rdma_depth", 100000,
             "rdma_depth: 100000 is out of range; use 0 to 4096"),
            (recv.ChunkStreamConfig, "max_chunks", 0, "max_chunks: 0; give at least 1"),
            (recv.ChunkStreamGroupConfig, "max_chunks", 0,
             "max_chunks: 0; give at least 1"),
            (send.StreamConfig, "rate", -1.0, "rate: -1.000000 is not a rate"),
            (recv.StreamConfig, "metrics", "localhost:9148",
             "metrics: 'localhost:9148' does not start with a numeric address"),
            (send.StreamConfig, "metrics", "9148", "metrics: '9148' is not HOST:PORT"),
            (send.UdpConfig, "ttl", 300, "ttl: 300 is out of range; use 0 to 255"),
            (send.UdpIbvConfig, "max_poll", -1, "max_poll: -1 must be at least 1"),
            (send.TcpConfig, "connect_timeout", 0,
             "connect_timeout: 0 ms is out of range"),
            (send.RdmaConfig, "inline_bytes", 5000,
             "inline_bytes: 5000 is out of range; use 0 to 4096"))
        for cls, name, value, message in cases:
            with self.subTest(cls=cls.__module__ + "." + cls.__name__):
                with self.assertRaises(ValueError) as cm:
                    cls(**{name: value})
                self.assertTrue(str(cm.exception).startswith(message), cm.exception)
                config = cls()
                before = getattr(config, name)
                with self.assertRaises(ValueError):
                    setattr(config, name, value)
                self.assertEqual(getattr(config, name), before)  # the old value stays

    def test_a_value_of_the_wrong_type_is_a_type_error_naming_the_field(self):
        for call, message in (
                (lambda: recv.StreamConfig(max_heaps="4"),
                 "max_heaps: '4' is not an unsigned integer"),
                (lambda: recv.RingStreamConfig(heaps=-1),
                 "heaps: -1 is not an unsigned integer"),
                (lambda: send.UdpIbvConfig(ttl=256), "ttl: 256 is not an integer from 0 to 255"),
                (lambda: recv.TcpConfig(idle_timeout="long"), "idle_timeout: 'long'"),
                (lambda: recv.UdpIbvConfig(endpoints=[("239.1.2.3", 70000)]),
                 "endpoints: [('239.1.2.3', 70000)] is not a list of (host, port)"),
                (lambda: send.StreamConfig(no_such_field=1),
                 "no_such_field: not a field of StreamConfig; give max_packet_size, ")):
            with self.assertRaises(TypeError) as cm:
                call()
            self.assertIn(message, str(cm.exception))

    def test_spead2_fields_gr_spead_lacks_refuse_all_but_the_default(self):
        for cls, name, value in ((send.StreamConfig, "rate_method", send.RateMethod.HW),):
            with self.assertRaises(ValueError) as cm:
                cls(**{name: value})
            self.assertIn(f"{name}: ", str(cm.exception))
            self.assertIn("not supported", str(cm.exception))

    def test_a_stream_keeps_its_configs(self):
        config = recv.StreamConfig(max_heaps=6)
        config.add_stat("mine")
        stream = self.recv_stream(config=config,
                                  ring_config=recv.RingStreamConfig(heaps=5))
        self.assertEqual((stream.config.max_heaps, stream.ring_config.heaps), (6, 5))
        self.assertEqual(stream.stats["mine"], 0)  # declared, counted by nothing here

    def test_listening_configs_bound_a_slot_without_progress_by_default(self):
        # Issue 38: idle_timeout was 0 (never), so silent peers held slots for ever.
        for cls in (recv.TcpConfig, recv.RdmaConfig):
            self.assertGreater(cls().idle_timeout, 0, cls.__name__)
            self.assertLessEqual(cls().idle_timeout, 10.0, cls.__name__)

    def test_tcp_reader_and_stream_take_their_configs_fields_as_keywords(self):
        stream = self.recv_stream()
        port = qa.free_tcp_port()
        self.assertEqual(stream.add_tcp_reader(port, bind_hostname="127.0.0.1",
                                               max_connections=2, idle_timeout=30.0),
                         ("127.0.0.1", port))
        tx = send.TcpStream(self.pool, [("127.0.0.1", port)], connect_timeout=2.0,
                            reconnect=False)
        ig = send.ItemGroup()
        ig.add_item(0x1000, "x", "", (16,), dtype=np.uint8, value=np.arange(16, dtype=np.uint8))
        tx.send_heap(ig.get_heap())
        tx.send_heap(ig.get_end())
        del tx
        self.assertEqual(len(list(stream)), 1)
        self.assertEqual(stream.stats["connections_accepted"], 1)
        with self.assertRaisesRegex(TypeError, "max_conections: not a field of TcpConfig"):
            stream.add_tcp_reader(port, max_conections=2)

    def test_tcp_reader_and_stream_take_the_config_itself(self):
        stream = self.recv_stream()
        port = qa.free_tcp_port()
        listen = recv.TcpConfig(endpoint=f"127.0.0.1:{port}", keep_listening=False)
        self.assertEqual(stream.add_tcp_reader(listen), ("127.0.0.1", port))
        tx = send.TcpStream(self.pool, send.TcpConfig(endpoint=f"127.0.0.1:{port}"),
                            send.StreamConfig(max_heaps=2))
        self.assertEqual(tx.config.max_heaps, 2)
        ig = send.ItemGroup()
        tx.send_heap(ig.get_end())
        del tx
        self.assertEqual(list(stream), [])  # the stop heap ended it

    def test_every_stream_kind_has_every_reader(self):
        place = placement()
        ring = recv.ChunkRingStream(self.pool, recv.StreamConfig(),
                                    recv.ChunkStreamConfig(place=place),
                                    recv.ChunkRingbuffer(2), recv.ChunkRingbuffer(2))
        self.addCleanup(ring.stop)
        port = qa.free_tcp_port()
        self.assertEqual(ring.add_tcp_reader(port, bind_hostname="127.0.0.1"),
                         ("127.0.0.1", port))
        self.assertEqual(ring.add_udp_reader(qa.free_udp_port(), bind_hostname="127.0.0.1")[0][0],
                         "127.0.0.1")


if __name__ == "__main__":
    gr_unittest.run(qa_api_configs)
