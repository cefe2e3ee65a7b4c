#
# Copyright 2026 gr-spead authors
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""Counts, per bridge port and per destination multicast group, the IPv4 frames a port
sends to its host: one AF_PACKET socket per port in the switch namespace, reading the
frames the bridge forwards out of it (the kernel's tc counters are not available
everywhere). Its own drops are counted too (PACKET_STATISTICS): counts are only
conclusive when there were none."""

import select
import socket
import struct
import threading

ETH_P_ALL = 0x0003  # frames sent are handed only to taps of every protocol
PACKET_OUTGOING = 4
SOL_PACKET = 263
PACKET_STATISTICS = 6
SO_RCVBUFFORCE = 33


class PortCounter:
    def __init__(self, ports):
        self.sockets = {}
        for port in ports:
            s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
            s.setsockopt(socket.SOL_SOCKET, SO_RCVBUFFORCE, 64 << 20)
            s.bind((port, ETH_P_ALL))
            s.setblocking(False)
            self.sockets[s.fileno()] = (port, s)
        self.counts = {port: {} for port in ports}
        self.drops = 0
        self.lock = threading.Lock()
        self.running = True
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        poller = select.poll()
        for fd in self.sockets:
            poller.register(fd, select.POLLIN)
        while self.running:
            for fd, _ in poller.poll(100):
                port, s = self.sockets[fd]
                while True:
                    try:
                        frame, address = s.recvfrom(64)
                    except BlockingIOError:
                        break
                    if (address[2] != PACKET_OUTGOING or len(frame) < 34
                            or frame[12:14] != b"\x08\x00"):  # IPv4 sent to the host
                        continue
                    group = socket.inet_ntoa(frame[30:34])
                    with self.lock:
                        c = self.counts[port]
                        c[group] = c.get(group, 0) + 1

    def read(self):
        """({port: {destination: frames}}, frames this counter dropped)."""
        for _, s in self.sockets.values():
            drops = struct.unpack("II", s.getsockopt(SOL_PACKET, PACKET_STATISTICS, 8))[1]
            self.drops += drops
        with self.lock:
            return {p: dict(c) for p, c in self.counts.items()}, self.drops

    def close(self):
        self.running = False
        self.thread.join(5)
        for _, s in self.sockets.values():
            s.close()
