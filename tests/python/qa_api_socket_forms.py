#!/usr/bin/env python3
#
# Copyright 2026 gr-spead authors
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""spead2's socket forms: add_udp_reader(socket), add_tcp_reader(acceptor),
send.UdpStream(thread_pool, socket, endpoints) and send.TcpStream(thread_pool,
socket); each duplicates the caller's socket, which may be closed at once."""

import asyncio
import socket

import numpy as np
from gnuradio import gr_unittest

import spead_qa_support as qa
from spead_qa_support import spead as spead2

import gnuradio.spead.send.asyncio as send_asyncio


item_group = qa.uint32_item_group
received_values = qa.received_values


class qa_api_socket_forms(qa.ApiTestCase):

    def send_two(self, tx):
        ig = item_group([1, 2, 3])
        tx.send_heap(ig.get_heap())
        ig["x"].value = np.array([4, 5, 6], dtype=np.uint32)
        tx.send_heap(ig.get_heap())
        tx.send_heap(ig.get_end())

    def test_udp_reader_and_stream_on_sockets_of_the_caller(self):
        rx = self.recv_stream()
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
            sock.bind(("127.0.0.1", 0))
            port = sock.getsockname()[1]
            self.assertEqual(rx.add_udp_reader(sock, max_size=9000), [("127.0.0.1", port)])
        # the reader has its own copy: the caller's is closed here
        for form in ("endpoints", "host_port"):
            with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
                if form == "endpoints":
                    tx = spead2.send.UdpStream(self.pool, sock, [("127.0.0.1", port)])
                else:
                    tx = spead2.send.UdpStream(self.pool, sock, "127.0.0.1", port,
                                               spead2.send.StreamConfig(rate=1e7))
            tx.set_cnt_sequence(10 if form == "endpoints" else 20, 1)  # distinct heaps
            ig = item_group([7, 8])
            tx.send_heap(ig.get_heap())
        tx.send_heap(ig.get_end())
        self.assertEqual(received_values(rx), [[7, 8], [7, 8]])

    def test_tcp_reader_and_stream_on_sockets_of_the_caller(self):
        rx = self.recv_stream()
        with socket.socket() as acceptor:
            acceptor.bind(("127.0.0.1", 0))
            acceptor.listen(1)
            port = acceptor.getsockname()[1]
            self.assertEqual(rx.add_tcp_reader(acceptor=acceptor), ("127.0.0.1", port))
        with socket.socket() as sock:
            sock.connect(("127.0.0.1", port))
            tx = spead2.send.TcpStream(self.pool, sock)
        self.send_two(tx)
        self.assertEqual(received_values(rx), [[1, 2, 3], [4, 5, 6]])

    def test_asyncio_tcp_stream_on_a_socket(self):
        rx = self.recv_stream()
        port = rx.add_tcp_reader(qa.free_tcp_port(), bind_hostname="127.0.0.1")[1]

        async def send():
            with socket.socket() as sock:
                sock.setblocking(False)
                await asyncio.get_running_loop().sock_connect(sock, ("127.0.0.1", port))
                tx = send_asyncio.TcpStream(self.pool, sock)
            ig = item_group([9])
            await tx.async_send_heap(ig.get_heap())
            await tx.async_send_heap(ig.get_end())

        asyncio.run(send())
        self.assertEqual(received_values(rx), [[9]])

    def test_sockets_of_the_wrong_kind_are_refused_naming_the_parameter(self):
        rx = self.recv_stream()
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as unbound, \
                socket.socket() as tcp:
            with self.assertRaisesRegex(ValueError, "socket: .* not a bound UDP socket"):
                rx.add_udp_reader(unbound)
            with self.assertRaisesRegex(ValueError, "socket: .* not a bound UDP socket"):
                rx.add_udp_reader(socket=tcp)
            with self.assertRaisesRegex(ValueError, "socket: .* not a UDP socket"):
                spead2.send.UdpStream(self.pool, tcp, [("127.0.0.1", 7148)])
            with self.assertRaisesRegex(ValueError, "socket: an IPv4 socket, but the "
                                        "endpoints are IPv6"):
                spead2.send.UdpStream(self.pool, unbound, [("::1", 7148)])
            with self.assertRaisesRegex(ValueError, "acceptor: .* not a listening TCP"):
                rx.add_tcp_reader(tcp)
        closed = socket.socket()
        closed.close()
        with self.assertRaisesRegex(ValueError, "socket: the socket is closed"):
            spead2.send.TcpStream(self.pool, closed)
        with self.assertRaisesRegex(ValueError, "socket: 7 is not a socket"):
            rx.add_udp_reader(socket=7)


if __name__ == "__main__":
    gr_unittest.run(qa_api_socket_forms)
