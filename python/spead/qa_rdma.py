#!/usr/bin/env python3
#
# Copyright 2026 gr-spead authors
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""The rdma transport's Python API, recv.Stream.add_rdma_reader and send.RdmaStream:
bad input is refused before any device is touched, naming the parameter, the value
and the fix. (Round trips run over the emulated NIC: tests/emulator, rdma-case.)"""

from gnuradio import gr_unittest

import spead_qa_support as qa
from spead_qa_support import spead
import gnuradio.spead.recv  # noqa: F401
import gnuradio.spead.send  # noqa: F401
import gnuradio.spead.send.asyncio  # noqa: F401


class qa_rdma(qa.ApiTestCase):

    def test_reader_refuses_bad_uri(self):
        stream = self.recv_stream()
        with self.assertRaisesRegex(ValueError, r'endpoint: "tcp://1.2.3.4:7150" is not'
                                    r' a verbs:// URI.*verbs://HOST:PORT'):
            stream.add_rdma_reader("tcp://1.2.3.4:7150")
        with self.assertRaisesRegex(ValueError, r"has port \"0\""):
            stream.add_rdma_reader("verbs://:0")

    def test_reader_refuses_bad_port(self):
        stream = self.recv_stream()
        with self.assertRaisesRegex(ValueError, 'has port "0", not 1 to 65535'):
            stream.add_rdma_reader(0)

    def test_reader_refuses_depth_zero_with_rdma_connections(self):
        stream = self.recv_stream()
        with self.assertRaisesRegex(ValueError, "rdma_depth: 0 with rdma_connections 2"):
            stream.add_rdma_reader(7150, rdma_connections=2, rdma_depth=0)

    def test_reader_refuses_unknown_interface(self):
        stream = self.recv_stream()
        with self.assertRaisesRegex(ValueError, "interface"):
            stream.add_rdma_reader(7150, interface_address="nosuchif0")

    def test_stream_refuses_bad_endpoints(self):
        with self.assertRaisesRegex(ValueError, "names no host"):
            spead.send.RdmaStream(self.pool, "verbs://:7150")
        with self.assertRaisesRegex(ValueError, "exactly one receiver"):
            spead.send.RdmaStream(self.pool, [("10.0.0.1", 1), ("10.0.0.2", 2)])
        with self.assertRaisesRegex(ValueError, "does not resolve"):
            spead.send.RdmaStream(self.pool, [("no-such-host.invalid", 7150)])
        with self.assertRaisesRegex(ValueError, "inline_bytes: 5000"):
            spead.send.RdmaStream(self.pool, "verbs://127.0.0.1:7150", inline_bytes=5000)

    def test_asyncio_stream_refuses_bad_endpoints(self):
        with self.assertRaisesRegex(ValueError, "names no host"):
            spead.send.asyncio.RdmaStream(self.pool, "verbs://:7150")

    def test_defaults_are_exposed(self):
        self.assertEqual(spead.recv.Stream.DEFAULT_RDMA_MAX_SIZE, (1 << 20) + 4096)
        self.assertGreater(spead.send.RdmaStream.DEFAULT_SEND_DEPTH, 0)


if __name__ == "__main__":
    gr_unittest.run(qa_rdma)
