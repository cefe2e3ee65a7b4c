#!/usr/bin/env python3
#
# Copyright 2026 gr-spead authors
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""spead2's TCP API: recv.Stream.add_tcp_reader, send.TcpStream and
send.asyncio.TcpStream.connect, as spead2 scripts call them."""

import asyncio
import socket

import numpy as np
from gnuradio import gr_unittest

import spead_qa_support as qa
from spead_qa_support import spead
import gnuradio.spead.recv  # noqa: F401
import gnuradio.spead.send  # noqa: F401
import gnuradio.spead.send.asyncio  # noqa: F401


free_tcp_port = qa.free_tcp_port


class qa_api_tcp(qa.ApiTestCase):

    def item_group(self):
        ig = spead.send.ItemGroup()
        ig.add_item(0x1000, "samples", "some samples", shape=(256,), dtype=np.int32)
        return ig

    def listen(self):
        stream = self.recv_stream()
        port = free_tcp_port()
        self.assertEqual(stream.add_tcp_reader(port, bind_hostname="127.0.0.1"),
                         ("127.0.0.1", port))
        return stream, port

    def check_received(self, stream, sent):
        ig = spead.ItemGroup()
        got = []
        for heap in stream:  # ends at the stop heap, or when the sender disconnects
            ig.update(heap)
            if "samples" in ig and ig["samples"].value is not None:
                got.append(np.array(ig["samples"].value))
        self.assertEqual(len(got), len(sent))
        for a, b in zip(got, sent):
            np.testing.assert_array_equal(a, b)

    def test_tcp_stream_to_tcp_reader_every_heap(self):
        stream, port = self.listen()
        tx = spead.send.TcpStream(self.pool, [("127.0.0.1", port)])
        ig = self.item_group()
        sent = []
        for i in range(50):
            ig["samples"].value = np.arange(256, dtype=np.int32) * i
            sent.append(ig["samples"].value.copy())
            tx.send_heap(ig.get_heap())
        tx.send_heap(ig.get_end())
        del tx
        self.check_received(stream, sent)
        self.assertEqual(stream.stats["connections_accepted"], 1)

    def test_asyncio_connect_and_send(self):
        stream, port = self.listen()
        ig = self.item_group()
        sent = []

        async def send():
            tx = await spead.send.asyncio.TcpStream.connect(self.pool,
                                                            [("127.0.0.1", port)])
            for i in range(20):
                ig["samples"].value = np.full(256, i, dtype=np.int32)
                sent.append(ig["samples"].value.copy())
                await tx.async_send_heap(ig.get_heap())
            await tx.async_send_heap(ig.get_end())

        asyncio.run(send())
        self.check_received(stream, sent)

    def test_nobody_listening_is_connection_refused(self):
        port = free_tcp_port()
        with self.assertRaises(ConnectionRefusedError) as cm:
            spead.send.TcpStream(self.pool, [("127.0.0.1", port)])
        self.assertIn(f"127.0.0.1:{port}", str(cm.exception))

        async def connect():
            await spead.send.asyncio.TcpStream.connect(self.pool, [("127.0.0.1", port)])

        with self.assertRaises(OSError):
            asyncio.run(connect())

    def test_bad_arguments_name_themselves(self):
        for call, name in (
                (lambda: spead.send.TcpStream(self.pool, [("127.0.0.1", 1),
                                                          ("127.0.0.1", 2)]), "endpoints"),
                (lambda: spead.send.TcpStream(self.pool, []), "endpoints"),
                (lambda: self.recv_stream().add_tcp_reader(70000), "port"),
                # max_size is TcpConfig.max_packet_size, whose setter says so
                (lambda: self.recv_stream().add_tcp_reader(7148, max_size=0),
                 "max_packet_size: 0 bytes")):
            with self.assertRaises(ValueError, msg=name) as cm:
                call()
            self.assertIn(name, str(cm.exception))
        # spead2's socket forms want a listening (connected) socket: one that is not
        # is refused naming the parameter
        with socket.socket() as s:
            with self.assertRaisesRegex(ValueError, "acceptor: .* not a listening TCP"):
                self.recv_stream().add_tcp_reader(s)
            with self.assertRaisesRegex(ValueError, "socket: .* not a connected TCP"):
                spead.send.TcpStream(self.pool, s)


if __name__ == "__main__":
    gr_unittest.run(qa_api_tcp)
