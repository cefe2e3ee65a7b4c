#!/usr/bin/env python3
#
# Copyright 2026 gr-spead authors
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""spead.source (ibverbs) when its NIC has a bad day, over the emulated NIC.

Runs in host 2 of a two-host topology (ctest starts it with the emulated NIC on eth0).
A peer in host 1 (this script with --peer) sends single-packet heaps with a kernel
socket; faults are injected into host 2's emulated device through the emulator's test
API (spead_emu_inject_fault, loaded with ctypes from the stand-in libibverbs). The
source recovers and counts (port down and up, a QP in the error state, frames dropped,
duplicated or reordered), or its stream ends with the cause and the flowgraph with it
(CQ overrun, device fatal, device removed). Frames sent reconcile with frames received
plus what the emulator counted.
"""

import ctypes
import os
import tempfile
import threading

import numpy as np
from gnuradio import blocks, gr, gr_unittest

import spead_qa_support as qa
from spead_qa_support import spead

HERE = os.path.abspath(__file__)
WORDS = 256  # int32 values per heap
PEER_TIMEOUT = 60

# enum spead_emu_fault (tests/emulator/include/spead_emu/extensions.h)
PORT_DOWN, PORT_UP, QP_FATAL, CQ_OVERRUN, DEVICE_FATAL, DEVICE_REMOVED = range(1, 7)


class emu_counters(ctypes.Structure):
    """struct spead_emu_counters."""
    _fields_ = [(name, ctypes.c_uint64) for name in (
        "rx_frames_delivered", "rx_frames_dropped_no_receive",
        "rx_frames_dropped_qp_not_ready", "rx_frames_dropped_oversize",
        "rx_frames_dropped_socket_overflow", "tx_frames_sent", "tx_frames_lost",
        "error_completions", "rx_frames_dropped_port_down", "rx_frames_dropped_injected",
        "rx_frames_duplicated_injected", "rx_frames_reordered_injected")]


def heap(cnt):
    """A one-packet heap whose item 0x1000 holds WORDS int32 values cnt * 1000 + i."""
    payload = (np.arange(WORDS, dtype=np.int32) + cnt * 1000).tobytes()
    return qa.spead_packet(cnt, payload, items=[(0x1000, 0, False)])


def expected(cnts):
    return np.concatenate([np.arange(WORDS, dtype=np.int32) + c * 1000 for c in cnts])


class captured_log:
    """Collects what the process writes to fds 1 and 2 (GNU Radio's log goes to one
    of them through C stdio) while in effect."""

    def __enter__(self):
        self.libc = ctypes.CDLL(None)
        self.libc.fflush(None)
        self.file = tempfile.TemporaryFile(mode="w+b")
        self.saved = [os.dup(fd) for fd in (1, 2)]
        for fd in (1, 2):
            os.dup2(self.file.fileno(), fd)
        return self

    def __exit__(self, *exc):
        self.libc.fflush(None)
        for fd, saved in zip((1, 2), self.saved):
            os.dup2(saved, fd)
            os.close(saved)
        self.file.seek(0)
        self.text = self.file.read().decode(errors="replace")
        self.file.close()
        os.write(2, self.text.encode())  # still shown in the test's output


def peer_main(args):
    """blast HOST PORT FIRST COUNT: heaps FIRST .. FIRST + COUNT - 1 to HOST:PORT."""
    _, host, port, first, count = args
    qa.send_datagrams(int(port), [heap(c) for c in range(int(first), int(first) + int(count))],
                      host=host)
    return 0


class qa_faults_ibverbs(qa.TwoHostTestCase):

    def setUp(self):
        super().setUp()
        # The stand-in libibverbs the block library loaded (LD_LIBRARY_PATH).
        self.emu = ctypes.CDLL("libibverbs.so.1")
        self.emu.spead_emu_set_frame_faults.argtypes = [
            ctypes.c_char_p, ctypes.c_double, ctypes.c_double, ctypes.c_double]
        self.device = ("emu_" + self.me["netdev"]).encode()
        self.tb = gr.top_block()

    def tearDown(self):
        qa.stop_and_wait(self.tb, 10)

    # ---- helpers ------------------------------------------------------------------

    def start(self, port, comp_vector=0):
        rx = spead.source(transport="ibverbs", endpoints=f"{self.me['ip']}:{port}",
                          interface=self.me["netdev"], item_type="int32",
                          byte_order="as-is", stop_on_stop_heap=False, queue_heaps=1024,
                          comp_vector=comp_vector)
        self.assertEqual(rx.active_transport(), "ibverbs")
        out = blocks.vector_sink_i()
        self.tb.connect(rx, out)
        self.tb.start()
        return rx, out

    def send(self, port, first, count):
        code, output = qa.run_peer_in_host(
            HERE, 1, ["blast", self.me["ip"], port, first, count], PEER_TIMEOUT)
        self.assertEqual(code, 0, output)

    def inject(self, fault):
        self.assertEqual(self.emu.spead_emu_inject_fault(self.device, fault), 0)

    def counters(self):
        c = emu_counters()
        self.assertEqual(self.emu.spead_emu_query_device_counters(self.device, ctypes.byref(c)),
                         0)
        return c

    def wait_for_heaps(self, out, n):
        self.assertTrue(qa.wait_for(lambda: len(out.data()) >= n * WORDS, timeout=10),
                        f"{len(out.data()) // WORDS} heaps of {n} arrived")

    def assert_flowgraph_ends(self):
        """The flowgraph ends by itself (its sources run for ever)."""
        waiter = threading.Thread(target=self.tb.wait, daemon=True)
        waiter.start()
        waiter.join(10)
        self.assertFalse(waiter.is_alive(), "the flowgraph did not end after the fault")

    def assert_flowgraph_ends_with(self, rx, heaps):
        """The source's stream failed: the flowgraph ends by itself, the failure is
        counted, and the heaps before it were delivered."""
        self.assert_flowgraph_ends()
        stats = rx.stats()
        self.assertEqual(stats["reader_errors"], 1)
        self.assertEqual(stats["heaps"], heaps)

    # ---- recovered and counted ----------------------------------------------------

    def port_down_and_up(self, port, comp_vector):
        rx, out = self.start(port, comp_vector)
        self.send(port, 1, 10)
        self.wait_for_heaps(out, 10)
        self.inject(PORT_DOWN)
        self.assertTrue(qa.wait_for(lambda: rx.stats()["ibv_port_down_events"] == 1),
                        "the source did not count IBV_EVENT_PORT_ERR")
        self.send(port, 11, 10)  # lost on the way
        self.assertTrue(qa.wait_for(lambda: self.counters().rx_frames_dropped_port_down == 10))
        self.inject(PORT_UP)
        self.send(port, 21, 10)
        self.wait_for_heaps(out, 20)
        qa.stop_and_wait(self.tb, 10)
        np.testing.assert_array_equal(np.asarray(out.data(), dtype=np.int32),
                                      expected(list(range(1, 11)) + list(range(21, 31))))
        stats = rx.stats()
        self.assertEqual(stats["reader_errors"], 0)
        # Sent = received + lost while the port was down.
        self.assertEqual(30, stats["packets"] + self.counters().rx_frames_dropped_port_down)

    def test_port_down_and_up_interrupts(self):
        self.port_down_and_up(7180, 0)

    def test_port_down_and_up_busy_poll(self):
        self.port_down_and_up(7181, -1)

    def test_queue_pair_in_error_is_reset_and_counted(self):
        rx, out = self.start(7182)
        self.send(7182, 1, 5)
        self.wait_for_heaps(out, 5)
        self.inject(QP_FATAL)
        self.assertTrue(qa.wait_for(lambda: rx.stats()["ibv_qp_recoveries"] == 1),
                        "the source did not reset its QP after IBV_EVENT_QP_FATAL")
        self.send(7182, 6, 5)
        self.wait_for_heaps(out, 10)
        qa.stop_and_wait(self.tb, 10)
        np.testing.assert_array_equal(np.asarray(out.data(), dtype=np.int32),
                                      expected(range(1, 11)))
        self.assertEqual(rx.stats()["reader_errors"], 0)

    def test_frames_dropped_duplicated_and_reordered_are_each_handled_and_reconcile(self):
        rx, out = self.start(7183)
        self.assertEqual(self.emu.spead_emu_set_frame_faults(self.device, 0.05, 0.05, 0.05), 0)
        sent = 300
        self.send(7183, 1, sent)

        def settled():
            c = self.counters()
            return (c.rx_frames_delivered + c.rx_frames_dropped_injected
                    == sent + c.rx_frames_duplicated_injected
                    and rx.stats()["packets"] == c.rx_frames_delivered)
        self.assertTrue(qa.wait_for(settled, timeout=20))
        qa.stop_and_wait(self.tb, 10)
        c = self.counters()
        self.assertGreater(c.rx_frames_dropped_injected, 0)
        self.assertGreater(c.rx_frames_duplicated_injected, 0)
        self.assertGreater(c.rx_frames_reordered_injected, 0)
        stats = rx.stats()
        # Sent + duplicated on the way = received + dropped on the way.
        self.assertEqual(sent + c.rx_frames_duplicated_injected,
                         stats["packets"] + c.rx_frames_dropped_injected)
        self.assertEqual(stats["reader_errors"], 0)
        # Each heap is one frame. A duplicate is counted as one and not output again;
        # a dropped frame is a heap missing; a reordered one is still output.
        self.assertEqual(stats["packets_duplicate"], c.rx_frames_duplicated_injected)
        words = np.asarray(out.data(), dtype=np.int32).reshape(-1, WORDS)
        cnts = (words[:, 0] // 1000).tolist()
        self.assertEqual(len(cnts), len(set(cnts)), "a heap was output twice")
        self.assertEqual(len(cnts), sent - c.rx_frames_dropped_injected)
        np.testing.assert_array_equal(words.ravel(), expected(cnts))
        self.assertNotEqual(cnts, sorted(cnts), "no frame arrived out of order")

    # ---- the stream ends with the cause, and the flowgraph with it ----------------

    def test_completion_queue_overrun_ends_the_flowgraph_naming_it(self):
        rx, out = self.start(7184)
        self.send(7184, 1, 3)
        self.wait_for_heaps(out, 3)
        with captured_log() as log:
            self.inject(CQ_OVERRUN)
            self.assert_flowgraph_ends_with(rx, 3)
        # The cause is the overrun (IBV_EVENT_CQ_ERR), not only the poll that failed.
        self.assertIn("overran (IBV_EVENT_CQ_ERR)", log.text)

    def test_device_fatal_ends_the_flowgraph(self):
        rx, out = self.start(7185)
        self.send(7185, 1, 3)
        self.wait_for_heaps(out, 3)
        self.inject(DEVICE_FATAL)
        self.assert_flowgraph_ends_with(rx, 3)

    def test_device_removed_ends_the_flowgraph(self):
        rx, out = self.start(7186, comp_vector=-1)
        self.send(7186, 1, 3)
        self.wait_for_heaps(out, 3)
        self.inject(DEVICE_REMOVED)
        self.assert_flowgraph_ends_with(rx, 3)

    def test_device_fatal_ends_the_sinks_flowgraph(self):
        """spead.sink over ibverbs: once its device is dead every heap would fail, so
        the sink ends its flowgraph rather than send into it for ever, counting the
        failure once."""
        src = blocks.vector_source_i(list(range(WORDS)), True)  # never ends by itself
        tx = spead.sink(transport="ibverbs", endpoints=f"{qa.topology_host(1)['ip']}:7187",
                        interface=self.me["netdev"], item_type="int32", len_tag_key="",
                        heap_items=WORDS, rate_gbps=0.05, send_stop_heap=False)
        self.assertEqual(tx.active_transport(), "ibverbs")
        self.tb.connect(src, tx)
        self.tb.start()
        self.assertTrue(qa.wait_for(lambda: tx.stats()["heaps"] >= 10),
                        "the sink sent nothing before the fault")
        with captured_log() as log:
            self.inject(DEVICE_FATAL)
            self.assert_flowgraph_ends()
        self.assertIn("fatal error (IBV_EVENT_DEVICE_FATAL)", log.text)
        self.assertIn("the flowgraph ends", log.text)
        stats = tx.stats()
        self.assertEqual(stats["writer_errors"], 1)
        self.assertGreaterEqual(stats["heaps"], 10)
        # Every heap handed to the stream (data, and the descriptors) went out or failed.
        self.assertEqual(stats["data_heaps"] + stats["control_heaps"],
                         stats["heaps"] + stats["heaps_failed"])


if __name__ == "__main__":
    qa.run_peer_or_tests(qa_faults_ibverbs, peer_main)
