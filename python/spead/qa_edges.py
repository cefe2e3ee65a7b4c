#!/usr/bin/env python3
#
# Copyright 2026 gr-spead authors
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""What a new user meets first at the blocks' edges: a sink that sent nothing still
ends its receiver, packets longer than the upstream buffer, a stream type that
contradicts the sender's descriptor, a bad parameter said once, and logs that say where
a source listens."""

import os
import subprocess
import sys
import textwrap

import numpy as np
from gnuradio import blocks, gr

import spead_qa_support as qa
from spead_qa_support import spead


def run_script(code, timeout=60):
    """Runs `code` in a fresh /usr/bin/python3 with this test's environment: (exit
    status, what it printed, what it logged), so what GNU Radio's logger says can be
    read. The logger writes to stdout or stderr depending on its configuration: lines
    that start with "RESULT" are what the script printed, the others are its logs."""
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(code)],
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          timeout=timeout, env=dict(os.environ))
    lines = proc.stdout.splitlines()
    printed = "\n".join(line for line in lines if line.startswith("RESULT"))
    logged = "\n".join(line for line in lines if not line.startswith("RESULT"))
    return proc.returncode, printed, logged


class qa_edges(qa.FlowgraphTestCase):

    def receive_until_stop(self, **source_kwargs):
        """A started source on a free port and its vector sink: (rx, port, out)."""
        rx, port = qa.make_source(**source_kwargs)
        itemsize = {"int16": gr.sizeof_short, "complex_int16": 4}.get(
            source_kwargs.get("item_type"), gr.sizeof_gr_complex)
        out = blocks.vector_sink_s() if itemsize == gr.sizeof_short else \
            blocks.vector_sink_c() if itemsize == gr.sizeof_gr_complex else \
            blocks.vector_sink_i()
        self.tb.connect(rx, out)
        self.tb.start()
        return rx, port, out

    # ---- one endpoint parser ---------------------------------------------------------
    def test_the_blocks_take_the_forms_the_tools_take(self):
        # The parser's own table is tests/unit/test_endpoint_argument.cc; here, that
        # the blocks read their endpoints through it.
        port = qa.free_udp_port()
        src = spead.source(endpoints=str(port))  # a bare PORT, as spead2_recv's
        self.assertEqual(src.bound_endpoints(), [f"0.0.0.0:{port}"])
        del src
        port = qa.free_udp_port()
        src = spead.source(endpoints=f"239.255.4.1+2:{port}", interface="lo")
        self.assertEqual(src.bound_endpoints(), [f"0.0.0.0:{port}"])
        del src
        refused = [
            (spead.source, dict(endpoints="heaps.pcap"),
             "set transport=pcap and capture_file=heaps.pcap"),
            (spead.sink, dict(endpoints="out.pcap"),
             "set transport=pcap and capture_file=out.pcap"),
            (spead.sink, dict(endpoints="verbs://10.0.0.2:7150"), "set transport=rdma"),
            (spead.source, dict(endpoints="10.0.0.2:7150", transport="rdma"),
             "write verbs://10.0.0.2:7150"),
            (spead.source, dict(endpoints="239.1.2.3+3"), "239.1.2.3+3:7148"),
        ]
        for make, kwargs, fix in refused:
            with self.subTest(make=make.__name__, **kwargs):
                with self.assertRaises(ValueError) as raised:
                    make(**kwargs)
                self.assertIn(fix, str(raised.exception))

    # ---- stop heaps always -------------------------------------------------------
    def sink_ends_its_receiver(self, connect_upstream):
        """A sink fed by connect_upstream(tb, sink) into a source until its stop heap:
        the sink's counters, once the receiving flowgraph ended."""
        rx, port, _ = self.receive_until_stop(item_type="int16")
        tx_tb = gr.top_block()
        tx = spead.sink(endpoints=f"127.0.0.1:{port}", item_type="int16")
        connect_upstream(tx_tb, tx)
        qa.run_to_completion(tx_tb)
        qa.wait_to_end(self.tb, 10, "the receiving flowgraph (no stop heap?)")
        self.assertEqual(rx.stats()["stop_heaps"], 1)
        return tx.stats()

    def test_a_sink_fed_nothing_still_ends_its_receiver(self):
        sent = self.sink_ends_its_receiver(lambda tb, tx: tb.connect(
            blocks.null_source(gr.sizeof_short), blocks.head(gr.sizeof_short, 0), tx))
        self.assertEqual(sent["data_heaps"], 0)

    def test_a_sink_that_dropped_every_item_still_ends_its_receiver(self):
        # No length tags on a tagged-stream sink: every item is dropped, counted.
        sent = self.sink_ends_its_receiver(
            lambda tb, tx: tb.connect(blocks.vector_source_s([1] * 1000, False), tx))
        self.assertEqual(sent["items_dropped_untagged"], 1000)

    # ---- the buffer rule ---------------------------------------------------------
    def test_packets_longer_than_the_upstream_buffer_are_sent_whole(self):
        rx, port, out = self.receive_until_stop(item_type="int16")
        packet = 100000  # the default buffer holds 32767 shorts
        data = np.arange(3 * packet, dtype=np.int16)
        tx_tb = gr.top_block()
        # As a GNU Radio user frames a stream, and no set_min_output_buffer: the
        # default buffer holds fewer items than a packet.
        src = blocks.vector_source_s(data.tolist(), False)
        framed = blocks.stream_to_tagged_stream(gr.sizeof_short, 1, packet, "packet_len")
        tx = spead.sink(endpoints=f"127.0.0.1:{port}", item_type="int16",
                        rate_gbps=qa.TEST_RATE_GBPS)
        tx_tb.connect(src, framed, tx)
        qa.run_to_completion(tx_tb)
        qa.wait_to_end(self.tb, 20, "the receiving flowgraph")
        self.assertEqual(tx.stats()["data_heaps"], 3)
        self.assertEqual(rx.stats()["heaps_output"], 3)
        np.testing.assert_array_equal(np.array(out.data(), dtype=np.int16), data)

    # ---- a type that contradicts the descriptor --------------------------------------
    def check_type_mismatch_is_said_once(self, source_kwargs, sink_kwargs):
        """A complex_float sink into a complex_int16 source (both with the keyword
        arguments given): the source counts the descriptor and says so once."""
        code = f"""
            import sys
            sys.path[:0] = {sys.path!r}
            from gnuradio import blocks, gr
            import spead_qa_support as qa
            from spead_qa_support import spead
            rx, port = qa.make_source(item_type="complex_int16", **{source_kwargs!r})
            tb = gr.top_block()
            tb.connect(rx, blocks.null_sink(4))
            tb.start()
            tx_tb = gr.top_block()
            src = blocks.vector_source_c([1j] * 4000, False, 1,
                                         qa.packet_tags([1000] * 4))
            tx = spead.sink(endpoints=f"127.0.0.1:{{port}}", item_type="complex_float",
                            **{sink_kwargs!r})
            tx_tb.connect(src, tx)
            qa.run_to_completion(tx_tb)
            qa.wait_to_end(tb, 20)
            print("RESULT counted", rx.stats()["descriptors_type_mismatch"])
        """
        status, out, err = run_script(code)
        self.assertEqual(status, 0, err)
        self.assertIn("RESULT counted 1", out)
        said = [line for line in err.splitlines() if "<c8" in line]
        self.assertEqual(len(said), 1, err)
        self.assertIn("item_type=complex_float", said[0])  # the type to set

    def test_a_stream_type_the_descriptor_contradicts_is_counted_and_said_once(self):
        self.check_type_mismatch_is_said_once({}, {})

    def test_in_continuous_mode_too(self):
        self.check_type_mismatch_is_said_once(
            dict(output_mode="continuous", timestamp_item=0x1600, sample_rate=1e6),
            dict(input_mode="continuous", timestamp_item=0x1600, sample_rate=1e6,
                 heap_items=1000))

    # ---- a bad parameter is said once ------------------------------------------------
    def test_a_bad_parameter_is_said_once(self):
        code = f"""
            import sys
            sys.path[:0] = {sys.path!r}
            from spead_qa_support import spead
            for make in (spead.source, spead.sink):
                try:
                    make(transport="pcap")  # no capture_file: the plan refuses it
                except ValueError as e:
                    print("RESULT raised", e)
        """
        status, out, err = run_script(code)
        self.assertEqual(status, 0, err)
        self.assertEqual(out.count("RESULT raised capture_file"), 2, out)
        self.assertNotIn("capture_file", err)  # not logged as well

    # ---- logs say where a source listens ---------------------------------------------
    def test_a_multicast_source_logs_the_groups_it_joined_and_the_interface(self):
        code = f"""
            import sys
            sys.path[:0] = {sys.path!r}
            import spead_qa_support as qa
            from spead_qa_support import spead
            port = qa.free_udp_port()
            src = spead.source(endpoints=f"239.255.3.1+1:{{port}}", interface="lo")
        """
        status, out, err = run_script(code)
        self.assertEqual(status, 0, err)
        self.assertIn("239.255.3.1", err)
        self.assertIn("239.255.3.2", err)
        self.assertIn("interface lo", err)


if __name__ == "__main__":
    import unittest
    unittest.main()
