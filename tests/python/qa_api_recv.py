#!/usr/bin/env python3
#
# Copyright 2026 gr-spead authors
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""gnuradio.spead.recv as spead2.recv: stream forms, heaps, zero-copy item values,
incomplete heaps, statistics, pcap replay of tests/vectors, waiting and errors."""

import errno
import gc
import os
import signal
import socket
import threading
import time

import numpy as np
from gnuradio import gr_unittest

import spead_qa_support as qa
from spead_qa_support import spead as spead2


class qa_api_recv(qa.ApiTestCase):

    def replay(self, name, **kwargs):
        stream = self.recv_stream(**kwargs)
        stream.add_udp_pcap_file_reader(qa.vector(name))
        return stream

    # ---- pcap replay of spead2's captures ------------------------------------------------
    def test_pcap_replay_with_item_group(self):
        ig = spead2.ItemGroup()
        values = []
        for heap in self.replay("spead64-40_multipacket_1472.pcap"):
            updated = ig.update(heap)
            values.append(np.concatenate([updated["Test item 0"].value,
                                          updated["Test item 1"].value]))
        self.assertEqual(len(values), 3)
        np.testing.assert_array_equal(np.concatenate(values), qa.minstd(3 * 4096))
        self.assertEqual(ig["Test item 0"].description, "A test item with arbitrary value")

    def test_pcap_replay_immediates_in_both_flavours(self):
        for name in ("spead64-40_immediate.pcap", "spead64-48_immediate.pcap"):
            ig = spead2.ItemGroup()
            got = [(ig.update(h)["Test item 0"].value.tolist())
                   for h in self.replay(name) if not h.is_end_of_stream()]
            self.assertEqual(got[1:], [[0x4cf91f46], [0x7be5f8f1]], name)

    def test_pcap_filter_on_destination_port(self):
        port0 = self.replay("spead64-40_two_substreams.pcap")
        stream = self.recv_stream()
        stream.add_udp_pcap_file_reader(qa.vector("spead64-40_two_substreams.pcap"),
                                        "udp dst port 7163")
        self.assertEqual([h.cnt for h in stream], [2, 4])
        self.assertEqual(stream.stats["frames_filtered"], 8)
        # both ports: the first stop heap (cnt 5) ends the stream
        self.assertEqual([h.cnt for h in port0], [1, 2, 3, 4])
        with self.assertRaises(ValueError) as cm:
            self.recv_stream().add_udp_pcap_file_reader(qa.vector("spead64-40_immediate.pcap"),
                                                   "tcp")
        self.assertIn("filter", str(cm.exception))

    def test_missing_capture_is_an_error_naming_it(self):
        with self.assertRaises(RuntimeError) as cm:
            self.recv_stream().add_udp_pcap_file_reader("/nonexistent/x.pcap")
        self.assertIn("/nonexistent/x.pcap", str(cm.exception))

    # ---- heaps -------------------------------------------------------------------------
    def test_heap_attributes(self):
        stream = self.replay("spead64-40_small_desc_stop.pcap",
                             config=spead2.recv.StreamConfig(stop_on_stop_item=False))
        heaps = list(stream)
        # the stop heap does not stop the stream: it is handed on, as spead2 does
        self.assertEqual([h.cnt for h in heaps], [1, 2, 3, 4])
        self.assertEqual(stream.stats["stop_heaps"], 1)
        self.assertEqual([h.is_end_of_stream() for h in heaps], [False] * 3 + [True])
        # with stop_on_stop_item (the default) it ends the stream and is not handed on
        stopped = list(self.replay("spead64-40_small_desc_stop.pcap"))
        self.assertEqual([h.cnt for h in stopped], [1, 2, 3])
        self.assertFalse(heaps[0].is_start_of_stream())
        self.assertEqual(len(heaps[0].get_descriptors()), 1)
        self.assertEqual(heaps[1].get_descriptors(), [])
        self.assertIsInstance(heaps[0], spead2.recv.Heap)
        self.assertEqual([r.id for r in heaps[1].get_items()], [0x1000])
        self.assertEqual(heaps[0].flavour, spead2.Flavour())

    def test_item_values_are_views_of_the_heap(self):
        heap = next(iter(self.replay("spead64-40_small_desc_stop.pcap")))
        raw = [r for r in heap.get_items() if r.id == 0x1000][0]
        ig = spead2.ItemGroup()
        ig.update(heap, new_order="|")  # keep the heap's byte order: no swap, no copy
        value = ig["Test item 0"].value
        self.assertTrue(np.shares_memory(value, np.frombuffer(raw, np.uint8)))
        self.assertEqual(value.dtype, np.dtype(">u4"))
        # the heap and the raw item go; the view keeps the storage alive
        expected = qa.minstd(256)
        del heap, raw
        gc.collect()
        for _ in self.replay("spead64-40_multipacket_1472.pcap"):
            pass  # other heaps come and go meanwhile
        np.testing.assert_array_equal(value, expected)

    def test_raw_items_expose_their_bytes(self):
        heap = next(iter(self.replay("spead64-40_small_desc_stop.pcap")))
        raw = [r for r in heap.get_items() if r.id == 0x1000][0]
        self.assertEqual(len(raw), 1024)
        self.assertFalse(raw.is_immediate)
        np.testing.assert_array_equal(np.frombuffer(raw, ">u4"), qa.minstd(256))
        self.assertEqual(memoryview(raw).nbytes, 1024)

    def test_incomplete_heaps_with_their_received_ranges(self):
        # allow_out_of_order: else (spead2's default) the packet after the gap is refused
        stream, port = self.udp_recv_stream(
            config=spead2.recv.StreamConfig(max_heaps=1, allow_out_of_order=True),
            ring_config=spead2.recv.RingStreamConfig(contiguous_only=False))
        payload = bytes(range(256)) * 4
        # heap 1: bytes [0, 256) and [512, 1024) of 1024; heap 2 complete evicts it
        packets = [qa.spead_packet(1, payload[:256], heap_size=1024, offset=0),
                   qa.spead_packet(1, payload[512:], heap_size=1024, offset=512),
                   qa.spead_packet(2, payload[:16])]
        qa.send_datagrams(port, packets)
        first = stream.get(timeout=5)
        self.assertIsInstance(first, spead2.recv.IncompleteHeap)
        self.assertEqual(first.cnt, 1)
        self.assertEqual(first.heap_length, 1024)
        self.assertEqual(first.received_length, 768)
        self.assertEqual(first.payload_ranges, [(0, 256), (512, 1024)])
        self.assertIsInstance(stream.get(timeout=5), spead2.recv.Heap)
        stats = stream.stats
        self.assertEqual(stats["incomplete_heaps_delivered"], 1)
        self.assertEqual(stats.incomplete_heaps_evicted, 1)

    def test_incomplete_heaps_are_dropped_and_counted_by_default(self):
        stream, port = self.udp_recv_stream(config=spead2.recv.StreamConfig(max_heaps=1))
        qa.send_datagrams(port, [qa.spead_packet(1, b"x" * 8, heap_size=16),
                                 qa.spead_packet(2, b"y" * 8)])
        self.assertEqual(stream.get(timeout=5).cnt, 2)
        self.assertEqual(stream.stats["incomplete_heaps_evicted"], 1)

    # ---- stats --------------------------------------------------------------------------
    def test_stats_has_every_counter_by_name_and_attribute(self):
        stream = self.replay("spead64-40_multipacket_1472.pcap")
        self.assertEqual(len(list(stream)), 3)
        stats = stream.stats
        self.assertEqual((stats.heaps, stats["packets"], stats["stop_heaps"]), (3, 37, 1))
        for name in ("incomplete_heaps_evicted", "incomplete_heaps_flushed",
                     "heaps_dropped_queue_full", "packets_duplicate", "reader_errors"):
            self.assertEqual(stats[name], 0, name)
        self.assertEqual(dict(stats.items())["heaps"], 3)
        with self.assertRaises(AttributeError):
            stats.no_such_counter

    # ---- waiting ---------------------------------------------------------------------
    def test_get_nowait_get_timeout_and_stop(self):
        stream, port = self.udp_recv_stream()
        with self.assertRaises(spead2.Empty):
            stream.get_nowait()
        start = time.monotonic()
        with self.assertRaises(spead2.Empty):
            stream.get(timeout=0.2)
        self.assertLess(time.monotonic() - start, 2)
        qa.send_datagrams(port, [qa.spead_packet(7, b"z" * 8)])
        qa.wait_for(lambda: stream.stats.heaps == 1)
        self.assertEqual(stream.get_nowait().cnt, 7)
        stream.stop()
        with self.assertRaises(spead2.Stopped):
            stream.get()
        with self.assertRaises(spead2.Stopped):
            stream.get_nowait()
        self.assertTrue(issubclass(spead2.Stopped, RuntimeError))

    def test_iteration_ends_at_a_stop_heap_and_context_manager_stops(self):
        with spead2.recv.Stream(self.pool) as stream:
            port = qa.free_udp_port()
            stream.add_udp_reader("127.0.0.1", port)
            qa.send_datagrams(port, [qa.spead_packet(1, b"a" * 8),
                                     qa.spead_packet(2, b"",
                                                     items=[(0x06, 2, True)])])
            self.assertEqual([h.cnt for h in stream], [1])
        with self.assertRaises(spead2.Stopped):
            stream.get_nowait()

    def test_the_gil_is_released_while_waiting(self):
        stream, _ = self.udp_recv_stream()
        ticks = []
        stop = threading.Event()

        def count():
            while not stop.is_set():
                ticks.append(1)
                time.sleep(0.001)
        t = threading.Thread(target=count)
        t.start()
        try:
            with self.assertRaises(spead2.Empty):
                stream.get(timeout=0.5)
        finally:
            stop.set()
            t.join()
        self.assertGreater(len(ticks), 50)

    def test_ctrl_c_interrupts_a_blocking_get(self):
        stream, _ = self.udp_recv_stream()
        timer = threading.Timer(0.3, os.kill, (os.getpid(), signal.SIGINT))
        timer.start()
        start = time.monotonic()
        with self.assertRaises(KeyboardInterrupt):
            stream.get()
        self.assertLess(time.monotonic() - start, 3)

    def test_deleting_the_thread_pool_and_stream_early_is_safe(self):
        stream = spead2.recv.Stream(spead2.ThreadPool())
        gc.collect()
        port = qa.free_udp_port()
        stream.add_udp_reader(port, bind_hostname="127.0.0.1")
        qa.send_datagrams(port, [qa.spead_packet(3, b"q" * 64,
                                                 items=[(0x1000, 0, False)])])
        heap = stream.get(timeout=5)
        raw = heap.get_items()[-1]
        del stream, heap
        gc.collect()
        self.assertEqual(bytes(raw)[:64], b"q" * 64)

    # ---- errors --------------------------------------------------------------------------
    def test_wrong_arguments_are_value_errors_naming_the_parameter(self):
        stream = self.recv_stream()
        with self.assertRaisesRegex(TypeError, "port: 70000"):  # spead2's uint16: TypeError
            stream.add_udp_reader(70000)
        with self.assertWarnsRegex(RuntimeWarning, "core 100000 does not exist"):
            spead2.ThreadPool(1, [100000])  # as spead2: warned, that thread unpinned
        before = os.sched_getaffinity(0)
        for core in (100000, -1):  # as spead2 (tut_12 pins to core 3 anywhere): warned
            with self.assertWarnsRegex(RuntimeWarning, f"core {core} cannot be used"):
                spead2.ThreadPool.set_affinity(core)
        self.assertEqual(os.sched_getaffinity(0), before)
        for call, name in ((lambda: stream.add_udp_reader(0), "port"),
                           (lambda: stream.add_udp_reader(7148, max_size=0), "max_size"),
                           (lambda: stream.add_udp_reader(7148, interface_index=2),
                            "interface_index"),
                           (lambda: spead2.recv.StreamConfig(max_heaps=0), "max_heaps"),
                           (lambda: spead2.recv.StreamConfig(substreams=0), "substreams"),
                           (lambda: spead2.recv.StreamConfig(memcpy=2), "memcpy"),
                           (lambda: spead2.MemoryPool(0, 1, 1, 1, 7), "allocator"),
                           (lambda: spead2.recv.Stream(None), "thread_pool"),
                           (lambda: spead2.ThreadPool(0), "threads"),
                           (lambda: spead2.MemoryPool(10, 5, 1, 1), "lower")):
            with self.assertRaises(ValueError, msg=name) as cm:
                call()
            self.assertIn(name, str(cm.exception))
        # where spead2 takes an unsigned integer, a negative one is its TypeError
        for call, name in ((lambda: stream.add_udp_reader(7148, buffer_size=-1),
                            "buffer_size: -1 is not an unsigned integer"),
                           (lambda: spead2.recv.RingStreamConfig(heaps=-1),
                            "heaps: -1 is not an unsigned integer")):
            with self.assertRaises(TypeError, msg=name) as cm:
                call()
            self.assertIn(name, str(cm.exception))

    def test_unsupported_readers_say_so(self):
        # inproc, buffer and socket readers are supported (qa_api_inproc.py,
        # qa_api_socket_forms.py); an rdma reader on a socket is not (rdma_cm listens)
        stream = self.recv_stream()
        with socket.socket() as sock:
            for call in (lambda: stream.add_rdma_reader(sock),
                         lambda: stream.add_rdma_reader(acceptor=sock)):
                with self.assertRaises(NotImplementedError) as cm:
                    call()
                self.assertIn("not supported", str(cm.exception))

    def test_port_in_use_is_an_os_error_with_its_errno(self):
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
            with self.assertRaises(OSError) as cm:
                self.recv_stream().add_udp_reader(port, bind_hostname="127.0.0.1")
            self.assertEqual(cm.exception.errno, errno.EADDRINUSE)

    def test_thread_pool_threads_and_affinity(self):
        pool = spead2.ThreadPool(2, [0])
        self.assertEqual(pool.num_threads, 2)
        stream = spead2.recv.Stream(pool)
        stream.stop()
        pool.stop()
        self.assertEqual(spead2.parse_range_list("0,2-4"), [0, 2, 3, 4])

    def test_memory_pool_is_accepted_as_allocator(self):
        pool = spead2.MemoryPool(16384, 32 * 1024 * 1024, 12, 8)
        stream = self.recv_stream(config=spead2.recv.StreamConfig(memory_allocator=pool))
        self.assertIs(stream.config.memory_allocator, pool)


if __name__ == "__main__":
    gr_unittest.run(qa_api_recv)
