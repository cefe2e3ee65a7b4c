#!/usr/bin/env python3
#
# Copyright 2026 gr-spead authors
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""Starting and stopping: stop heaps, prompt stop(), restarts, no leaked threads or
sockets."""

import gc
import socket
import time

import numpy as np
from gnuradio import blocks, gr, gr_unittest

import spead_qa_support as qa
from spead_qa_support import spead


def sender(port, heaps, items=1024, **kwargs):
    """A flowgraph sending `heaps` heaps of int16 counters to 127.0.0.1:port."""
    tb = gr.top_block()
    data = np.arange(heaps * items, dtype=np.int16)
    src = blocks.vector_source_s(data.tolist(), False, 1, qa.packet_tags([items] * heaps))
    src.set_min_output_buffer(2 * items)
    tx = spead.sink(endpoints=f"127.0.0.1:{port}", item_type="int16", **kwargs)
    tb.connect(src, tx)
    tb.rewind = src.rewind  # for another run
    return tb, tx


def port_is_free(port):
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        try:
            s.bind(("127.0.0.1", port))
            return True
        except OSError:
            return False


class qa_lifecycle(qa.FlowgraphTestCase):

    def test_stop_heap_ends_the_flowgraph_after_the_heaps_before_it(self):
        rx, port = qa.make_source(item_type="int16")
        out = blocks.vector_sink_s()
        self.tb.connect(rx, out)
        self.tb.start()
        tx_tb, tx = sender(port, 20)
        qa.run_to_completion(tx_tb)
        ended = qa.wait_for(lambda: rx.stats()["stop_heaps"] == 1, timeout=10)
        self.assertTrue(ended)
        t0 = time.monotonic()
        self.tb.wait()  # returns by itself: the source returned WORK_DONE
        self.assertLess(time.monotonic() - t0, 5)
        self.assertEqual(len(out.data()), 20 * 1024)
        self.assertEqual(rx.stats()["heaps_output"], 20)

    def test_without_stop_on_stop_heap_the_source_keeps_listening(self):
        rx, port = qa.make_source(item_type="int16", stop_on_stop_heap=False)
        out = blocks.vector_sink_s()
        self.tb.connect(rx, out)
        self.tb.start()
        for _ in range(2):  # the second sender reuses cnts after the first one's stop
            tx_tb, _ = sender(port, 5)
            qa.run_to_completion(tx_tb)
        self.assertTrue(qa.wait_for(lambda: len(out.data()) == 10 * 1024))
        self.assertEqual(rx.stats()["stop_heaps"], 2)
        self.assertLess(qa.stop_and_wait(self.tb), 1.0)
        self.assertEqual(len(out.data()), 10 * 1024)

    def test_sink_without_stop_heap_leaves_the_source_running(self):
        rx, port = qa.make_source(item_type="int16")
        self.tb.connect(rx, blocks.null_sink(gr.sizeof_short))
        self.tb.start()
        tx_tb, _ = sender(port, 3, send_stop_heap=False)
        qa.run_to_completion(tx_tb)
        self.assertTrue(qa.wait_for(lambda: rx.stats()["heaps_output"] == 3))
        time.sleep(0.3)
        self.assertEqual(rx.stats()["stop_heaps"], 0)
        self.assertLess(qa.stop_and_wait(self.tb), 1.0)

    def test_stop_returns_within_a_second_and_closes_the_socket(self):
        rx, port = qa.make_source(item_type="complex_float")
        self.tb.connect(rx, blocks.null_sink(gr.sizeof_gr_complex))
        self.tb.start()
        time.sleep(0.3)  # idle: work() is waiting for heaps
        self.assertFalse(port_is_free(port))
        self.assertLess(qa.stop_and_wait(self.tb), 1.0)
        self.assertEqual(rx.bound_endpoints(), [])
        self.assertTrue(port_is_free(port))

    def test_start_stop_start_receives_again(self):
        rx, port = qa.make_source(item_type="int16", stop_on_stop_heap=False)
        out = blocks.vector_sink_s()
        self.tb.connect(rx, out)
        for run in range(3):
            out.reset()
            self.tb.start()
            self.assertTrue(qa.wait_for(lambda: rx.bound_endpoints() != []))
            tx_tb, _ = sender(port, 4)
            qa.run_to_completion(tx_tb)
            self.assertTrue(qa.wait_for(lambda: len(out.data()) == 4 * 1024), f"run {run}")
            qa.stop_and_wait(self.tb)
            self.assertEqual(len(out.data()), 4 * 1024, f"run {run}")

    def test_start_stop_cycles_leave_no_thread_or_socket_behind(self):
        rx, port = qa.make_source(item_type="int16", stop_on_stop_heap=False)
        self.tb.connect(rx, blocks.null_sink(gr.sizeof_short))
        tx_tb, tx = sender(port, 2)  # the sink reopens its socket on every start

        def cycle():
            self.tb.start()
            tx_tb.rewind()
            qa.run_to_completion(tx_tb)
            self.assertTrue(qa.wait_for(lambda: rx.stats()["heaps_output"] == 2))
            qa.stop_and_wait(self.tb)

        cycle()
        gc.collect()
        threads, fds, sockets = qa.thread_count(), qa.fd_count(), qa.udp_socket_inodes()
        for _ in range(10):
            cycle()
        gc.collect()
        self.assertTrue(qa.wait_for(lambda: qa.thread_count() <= threads, timeout=5),
                        f"{qa.thread_count()} threads, {threads} before")
        self.assertEqual(qa.fd_count(), fds)
        self.assertEqual(qa.udp_socket_inodes(), sockets)
        self.assertEqual(rx.bound_endpoints(), [])


if __name__ == "__main__":
    gr_unittest.run(qa_lifecycle)
