#!/usr/bin/env python3
#
# Copyright 2026 gr-spead authors
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""gnuradio.spead.send as spead2.send, and loopback both ways between the Python API
and the C++ side: spead_send -> recv.Stream, send.UdpStream -> spead_recv, and the
spead.source / spead.sink blocks."""

import gc
import os
import shutil
import socket
import subprocess

import numpy as np
from gnuradio import gr_unittest

import spead_qa_support as qa
from spead_qa_support import spead as spead2



def app(name):
    """Path of one of our apps (GR_SPEAD_APPS_DIR from ctest, else PATH)."""
    directory = os.environ.get("GR_SPEAD_APPS_DIR")
    path = os.path.join(directory, name) if directory else shutil.which(name)
    assert path and os.path.exists(path), f"{name} not found (set GR_SPEAD_APPS_DIR)"
    return path


def pattern(cnt, item_index, elements, items):
    """The uint32 values of item item_index of heap cnt under spead2's --verify (which
    spead_send --verify writes, apps/verify_pattern.h): one std::minstd_rand sequence,
    heap cnt starting at elements x items x (cnt - 1)."""
    position = elements * (items * (cnt - 1) + item_index)
    out = np.empty(elements, dtype=np.uint32)
    x = pow(48271, position + 1, 2147483647)
    for i in range(elements):
        out[i] = x
        x = x * 48271 % 2147483647
    return out


def udp_port_bound(port):
    """Some socket of this host is bound to UDP port (as /proc/net/udp lists them)."""
    with open("/proc/net/udp") as f:
        return any(line.split()[1].endswith(f":{port:04X}")
                   for line in f.read().splitlines()[1:])


class qa_api_send(qa.ApiTestCase):

    def sender(self, port, **config):
        config.setdefault("rate", 2e8)
        return spead2.send.UdpStream(self.pool, [("127.0.0.1", port)],
                                     spead2.send.StreamConfig(**config))

    # ---- loopback with the C++ apps -------------------------------------------------
    def test_python_sender_to_spead_recv_verify(self):
        port = qa.free_udp_port()
        with subprocess.Popen([app("spead_recv"), "-q", "--verify", f"127.0.0.1:{port}"],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              text=True) as recv:
            try:
                qa.wait_for(lambda: udp_port_bound(port))
                tx = self.sender(port, max_packet_size=8972)
                ig = spead2.send.ItemGroup()
                # spead2's pattern: items of one length, big-endian uint32
                ig.add_item(0x1000, "a", "", (5000,), dtype=">u4")
                ig.add_item(0x1001, "b", "", (5000,), dtype=">u4")
                heaps = 5
                for cnt in range(1, heaps + 1):
                    ig["a"].value = pattern(cnt, 0, 5000, 2)
                    ig["b"].value = pattern(cnt, 1, 5000, 2)
                    tx.send_heap(ig.get_heap(descriptors="none"), cnt)
                # explicit cnts leave the sequence at 1: the stop heap needs its own
                tx.send_heap(ig.get_end(), heaps + 1)
                output, _ = recv.communicate(timeout=30)
            finally:
                recv.kill()
        stats = qa.app_stats(output)
        self.assertEqual(stats["verify_heaps"], heaps, output)
        self.assertEqual(stats["verify_heaps_mismatched"], 0)
        self.assertEqual(stats["verify_elements_mismatched"], 0)
        self.assertEqual(stats["stop_heaps"], 1)

    def test_spead_send_to_python_receiver(self):
        rx, port = self.udp_recv_stream()
        heaps, heap_size = 4, 16384
        subprocess.run([app("spead_send"), "--verify", "--descriptors", "--heaps",
                        str(heaps), "--heap-size", str(heap_size), "--items", "2",
                        "--rate", "0.2", f"127.0.0.1:{port}"], check=True,
                       stdout=subprocess.DEVNULL, timeout=30)
        ig = spead2.ItemGroup()
        cnts = []
        for heap in rx:
            updated = ig.update(heap)
            if 0x1000 not in [r.id for r in heap.get_items()]:
                continue
            cnts.append(heap.cnt)
            for index, name in enumerate(sorted(updated, key=lambda n: ig[n].id)):
                value = updated[name].value  # the descriptor says '>u4'
                np.testing.assert_array_equal(
                    value, pattern(heap.cnt, index, heap_size // 8, 2))
        self.assertEqual(len(cnts), heaps)
        self.assertEqual(len(ig), 2)
        self.assertEqual(rx.stats["stop_heaps"], 1)

    # ---- loopback with the blocks ----------------------------------------------------
    def test_python_sender_to_source_block(self):
        src, port = qa.make_source(item_type="int32", payload_item=0x1000)
        sent = []

        def send():
            tx = self.sender(port)
            ig = spead2.send.ItemGroup()
            ig.add_item(0x1000, "samples", "", (None,), format=[("i", 32)])
            for i in range(4):
                value = np.arange(100 * i, 100 * i + 50 + i, dtype=">i4")
                ig["samples"].value = value
                sent.append(value)
                tx.send_heap(ig.get_heap())
            tx.send_heap(ig.get_end())

        out = qa.source_block_output(src, send)
        np.testing.assert_array_equal(out.data(), np.concatenate(sent))
        self.assertEqual([v["heap_cnt"] for _, v in sorted(
            qa.tags_by_offset(out.tags()).items())], [1, 2, 3, 4])

    def test_sink_block_to_python_receiver(self):
        rx, port = self.udp_recv_stream()
        data = np.arange(4096, dtype=np.int32)
        np.testing.assert_array_equal(qa.sink_block_into(rx, f"127.0.0.1:{port}", data),
                                      data)

    # ---- the send API ------------------------------------------------------------------
    def test_send_heaps_substreams_and_cnt_sequence(self):
        rx1, port1 = self.udp_recv_stream()
        rx2, port2 = self.udp_recv_stream()
        tx = spead2.send.UdpStream(self.pool, [("127.0.0.1", port1), ("127.0.0.1", port2)],
                                   spead2.send.StreamConfig(rate=2e8, max_heaps=2))
        self.assertEqual(tx.num_substreams, 2)
        tx.set_cnt_sequence(100, 10)
        ig = spead2.send.ItemGroup()
        ig.add_item(0x1000, "x", "", (256,), dtype=np.float32, value=np.ones(256, np.float32))
        refs = [spead2.send.HeapReference(ig.get_heap(data="all"), substream_index=i % 2)
                for i in range(6)]
        sent = tx.send_heaps(refs, spead2.send.GroupMode.SERIAL)
        self.assertGreater(sent, 6 * 1024)
        self.assertEqual([rx1.get(timeout=5).cnt for _ in range(3)], [100, 120, 140])
        self.assertEqual([rx2.get(timeout=5).cnt for _ in range(3)], [110, 130, 150])
        stats = tx.stats
        self.assertEqual((stats["heaps"], stats.heaps_failed), (6, 0))

    def test_numpy_values_are_sent_from_their_own_memory(self):
        item = spead2.Item(0x1000, "x", "", (4, 8), dtype=np.int16,
                           value=np.zeros((4, 8), np.int16))
        self.assertIs(item.to_buffer(), item.value)
        fortran = spead2.Item(0x1001, "f", "", (4, 8), dtype=np.int16, order="F",
                              value=np.asfortranarray(np.zeros((4, 8), np.int16)))
        self.assertTrue(np.shares_memory(fortran.to_buffer(), fortran.value))

    def test_heap_keeps_item_memory_alive(self):
        rx, port = self.udp_recv_stream()
        tx = self.sender(port)
        ig = spead2.send.ItemGroup()
        ig.add_item(0x1000, "x", "", (1000,), dtype=np.uint8,
                    value=np.full(1000, 7, np.uint8))
        heap = ig.get_heap()
        ig["x"].value = np.zeros(1, np.uint8).repeat(1000)  # the first array may go
        gc.collect()
        tx.send_heap(heap)
        recv_ig = spead2.ItemGroup()
        self.assertTrue((recv_ig.update(rx.get(timeout=5))["x"].value == 7).all())

    def test_deleting_pool_and_stream_after_sending_is_safe(self):
        rx, port = self.udp_recv_stream()
        tx = spead2.send.UdpStream(spead2.ThreadPool(), "127.0.0.1", port)
        gc.collect()
        ig = spead2.send.ItemGroup()
        ig.add_item(0x1000, "x", "", (), dtype=np.int64, value=5)
        tx.send_heap(ig.get_heap())
        del tx
        gc.collect()
        self.assertEqual(spead2.ItemGroup().update(rx.get(timeout=5))["x"].value, 5)

    def test_send_heaps_round_robin_interleaves_packets(self):
        # three heaps of 1, 2 and 3 packets: packets of each in turn, one group
        tx = spead2.send.BytesStream(self.pool, spead2.send.StreamConfig(
            max_packet_size=200, max_heaps=3))
        igs = []
        for i, size in enumerate((100, 250, 450)):
            ig = spead2.send.ItemGroup()
            ig.add_item(0x1000 + i, "x", "values", shape=(size,), dtype=np.uint8,
                        value=np.full(size, i, np.uint8))
            igs.append(ig)
        refs = [spead2.send.HeapReference(ig.get_heap(descriptors="none", data="all"),
                                          cnt=10 + i) for i, ig in enumerate(igs)]
        sent = tx.send_heaps(refs, spead2.send.GroupMode.ROUND_ROBIN)
        data = tx.getvalue()
        self.assertEqual(sent, len(data))
        cnts, at = [], 0
        while at < len(data):
            n = int.from_bytes(data[at + 6:at + 8], "big")
            pointers = [int.from_bytes(data[at + 8 + 8 * k:at + 16 + 8 * k], "big")
                        for k in range(n)]
            fields = {(p >> 40) & 0x7FFFFF: p & ((1 << 40) - 1) for p in pointers}
            cnts.append(fields[0x01])
            at += 8 + 8 * n + fields[0x04]
        self.assertEqual(cnts, [10, 11, 12, 11, 12, 12])
        rx = self.recv_stream()
        rx.add_buffer_reader(data)
        self.assertEqual(sorted(h.cnt for h in rx), [10, 11, 12])
        with self.assertRaises(BlockingIOError):  # more than max_heaps: none queued
            tx.send_heaps(refs * 2, spead2.send.GroupMode.ROUND_ROBIN)
        with self.assertRaises(OSError):
            tx.send_heaps([], spead2.send.GroupMode.ROUND_ROBIN)

    def test_wrong_arguments_are_value_errors_naming_the_parameter(self):
        _, port = self.udp_recv_stream()
        tx = self.sender(port)
        heap = spead2.send.ItemGroup().get_end()
        for call, name in (
                (lambda: tx.send_heap(heap, substream_index=1), "substream_index"),
                (lambda: tx.send_heap("not a heap"), "heap"),
                (lambda: tx.send_heaps([spead2.send.HeapReference(heap)], 7), "mode"),
                (lambda: spead2.send.StreamConfig(max_packet_size=10), "max_packet_size"),
                (lambda: spead2.send.StreamConfig(rate=-1), "rate"),
                (lambda: spead2.send.StreamConfig(burst_rate_ratio=0.5),
                 "burst_rate_ratio"),
                (lambda: spead2.send.UdpStream(self.pool, [("127.0.0.1", 0)]), "port"),
                (lambda: spead2.send.UdpStream(self.pool, []), "endpoints"),
                (lambda: spead2.send.UdpStream(None, [("127.0.0.1", 1)]), "thread_pool"),
                (lambda: spead2.send.UdpStream(self.pool, [("127.0.0.1", port)], ttl=300),
                 "ttl"),
                (lambda: spead2.send.UdpIbvStream(self.pool, "239.1.2.3", 7148),
                 "interface_address"),
                (lambda: spead2.send.ItemGroup().get_heap(descriptors="some"),
                 "descriptors"),
                (lambda: tx.set_cnt_sequence(1, 0), "step")):
            with self.assertRaises(ValueError, msg=name) as cm:
                call()
            self.assertIn(name, str(cm.exception))

    def test_unsupported_streams_say_so(self):
        # InprocStream, BytesStream and the UDP and TCP socket forms are supported
        # (qa_api_inproc.py, qa_api_socket_forms.py); an RdmaStream on a socket is not
        with socket.socket() as sock:
            with self.assertRaises(NotImplementedError) as cm:
                spead2.send.RdmaStream(self.pool, sock)
            self.assertIn("not supported", str(cm.exception))

    def test_defaults_are_the_cpp_ones(self):
        self.assertEqual(spead2.send.StreamConfig().max_packet_size, 1472)
        self.assertEqual(spead2.send.StreamConfig.DEFAULT_MAX_HEAPS, 4)
        self.assertEqual(spead2.send.UdpStream.DEFAULT_BUFFER_SIZE, 512 * 1024)
        self.assertEqual(spead2.send.UdpIbvStream.DEFAULT_BUFFER_SIZE, 512 * 1024)
        self.assertEqual(spead2.send.UdpIbvStream.DEFAULT_MAX_POLL, 10)
        self.assertEqual(spead2.recv.Stream.DEFAULT_UDP_IBV_MAX_SIZE, 9200)
        self.assertEqual(spead2.recv.Stream.DEFAULT_UDP_IBV_BUFFER_SIZE, 16 * 1024 * 1024)
        self.assertEqual(spead2.recv.Stream.DEFAULT_UDP_IBV_MAX_POLL, 10)
        self.assertEqual(spead2.recv.Stream.DEFAULT_UDP_MAX_SIZE, 9200)
        self.assertEqual(spead2.recv.Stream.DEFAULT_UDP_BUFFER_SIZE, 8 * 1024 * 1024)
        self.assertEqual(spead2.recv.UdpIbvConfig.DEFAULT_MAX_SIZE, 9200)
        self.assertEqual(spead2.recv.StreamConfig.DEFAULT_MAX_HEAPS, 4)
        self.assertEqual(spead2.recv.RingStreamConfig.DEFAULT_HEAPS, 8)


if __name__ == "__main__":
    gr_unittest.run(qa_api_send)
