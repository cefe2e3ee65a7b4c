#!/usr/bin/env python3
#
# Copyright 2026 gr-spead authors
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""IPv6 over kernel UDP, as spead2: recv.Stream.add_udp_reader and send.UdpStream on
::1, the tools and the blocks with [::1]:PORT endpoints, multicast ff14::/16 joined by
interface index (in a namespace with a veth pair: loopback carries no IPv6 multicast),
and the ibverbs path refusing IPv6, naming the fix."""

import os
import shutil
import socket
import subprocess
import sys

import numpy as np
from gnuradio import blocks, gr_unittest

import spead_qa_support as qa
from spead_qa_support import spead as spead2


def app(name):
    """Path of one of our apps (GR_SPEAD_APPS_DIR from ctest, else PATH); None if absent."""
    directory = os.environ.get("GR_SPEAD_APPS_DIR")
    path = os.path.join(directory, name) if directory else shutil.which(name)
    return path if path and os.path.exists(path) else None


def spead2_program(name):
    """spead2's tool (SPEAD2_BIN_DIR, else PATH); None if absent."""
    directory = os.environ.get("SPEAD2_BIN_DIR")
    path = os.path.join(directory, name) if directory else shutil.which(name)
    return path if path and os.path.exists(path) else None


def udp6_port_bound(port):
    """Some IPv6 socket of this host is bound to UDP port (/proc/net/udp6)."""
    with open("/proc/net/udp6") as f:
        return any(line.split()[1].endswith(f":{port:04X}")
                   for line in f.read().splitlines()[1:])


def send_values(stream, values):
    ig = spead2.send.ItemGroup()
    ig.add_item(0x1000, "values", "", (None,), format=[("i", 32)])
    for v in values:
        ig["values"].value = v
        stream.send_heap(ig.get_heap())
    stream.send_heap(ig.get_end())


def received_values(stream):
    ig = spead2.ItemGroup()
    out = []
    for heap in stream:
        updated = ig.update(heap)
        if "values" in updated:
            out.append(updated["values"].value.copy())
    return out


def sample_values(n=5):
    return [np.arange(i, i + 100 + i, dtype=">i4") for i in range(n)]


def multicast_child(interface):
    """In a namespace: ff14::1 sent out of interface and received there, by index."""
    pool = spead2.ThreadPool()
    index = socket.if_nametoindex(interface)
    rx = spead2.recv.Stream(pool)
    port = 7148
    rx.add_udp_reader("ff14::1", port, interface_index=index)
    # 1472 + 48 bytes of IPv6/UDP header would exceed the veth's 1500 (refused, naming
    # the largest size that fits).
    tx = spead2.send.UdpStream(pool, [("ff14::1", port)], spead2.send.StreamConfig(
        rate=1e8, max_packet_size=1400), ttl=1, interface_index=index)
    values = sample_values()
    send_values(tx, values)
    got = received_values(rx)
    assert len(got) == len(values), (len(got), rx.stats)
    for a, b in zip(got, values):
        np.testing.assert_array_equal(a, b)
    print("multicast ok", len(got))
    return 0


class qa_api_ipv6(qa.ApiTestCase):

    def loopback_receiver(self):
        rx = self.recv_stream()
        port = qa.free_udp_port()
        self.assertEqual(rx.add_udp_reader(port, bind_hostname="::1"), [("::1", port)])
        return rx, port

    def test_python_round_trip_on_ipv6_loopback(self):
        rx, port = self.loopback_receiver()
        tx = spead2.send.UdpStream(self.pool, [("::1", port)],
                                   spead2.send.StreamConfig(rate=1e8))
        values = sample_values()
        send_values(tx, values)
        got = received_values(rx)
        self.assertEqual(len(got), len(values))
        for a, b in zip(got, values):
            np.testing.assert_array_equal(a, b)
        self.assertEqual(rx.stats["packets_dropped_socket_overflow"], 0)

    def test_mixed_ip_versions_in_one_sender_are_refused_naming_the_fix(self):
        with self.assertRaises(ValueError) as cm:
            spead2.send.UdpStream(self.pool, [("::1", 7148), ("127.0.0.1", 7148)])
        self.assertIn("mixes IPv4 and IPv6", str(cm.exception))

    def test_interface_index_is_for_ipv6_groups(self):
        with self.assertRaises(ValueError) as cm:
            self.recv_stream().add_udp_reader("239.1.2.3", 7148, interface_index=1)
        self.assertIn("interface_index", str(cm.exception))

    def test_ibverbs_refuses_ipv6_naming_the_kernel_transport(self):
        config = spead2.recv.UdpIbvConfig(endpoints=[("ff14::1", 7148)],
                                          interface_address="lo")
        with self.assertRaises((ValueError, RuntimeError)) as cm:
            self.recv_stream().add_udp_ibv_reader(config)
        message = str(cm.exception)
        self.assertIn("IPv4 only", message)
        self.assertIn("kernel UDP", message)

    def test_spead_send_to_python_over_ipv6(self):
        if app("spead_send") is None:
            self.skipTest("spead_send not found (set GR_SPEAD_APPS_DIR)")
        rx, port = self.loopback_receiver()
        subprocess.run([app("spead_send"), "--heaps", "4", "--heap-size", "8192",
                        "--rate", "0.2", f"[::1]:{port}"], check=True,
                       stdout=subprocess.DEVNULL, timeout=60)
        heaps = [h for h in rx]
        self.assertEqual(len([h for h in heaps if h.get_items()]), 4)
        self.assertEqual(rx.stats["stop_heaps"], 1)

    def test_spead2_send_to_python_over_ipv6(self):
        program = spead2_program("spead2_send")
        if program is None:
            self.skipTest("spead2_send not found (set SPEAD2_BIN_DIR or put it on PATH)")
        rx, port = self.loopback_receiver()
        subprocess.run([program, "--heaps", "4", "--heap-size", "8192", "--rate", "0.2",
                        "--packet", "1400", f"::1:{port}"], check=True,  # spead2's form
                       stdout=subprocess.DEVNULL, timeout=60)
        heaps = [h for h in rx]
        self.assertEqual(len(heaps), 4)
        self.assertEqual(rx.stats["stop_heaps"], 1)

    def test_python_to_spead_recv_over_ipv6(self):
        if app("spead_recv") is None:
            self.skipTest("spead_recv not found (set GR_SPEAD_APPS_DIR)")
        port = qa.free_udp_port()
        with subprocess.Popen([app("spead_recv"), "-q", f"[::1]:{port}"],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              text=True) as recv:
            self.addCleanup(qa.kill, recv)
            qa.wait_for(lambda: udp6_port_bound(port))
            tx = spead2.send.UdpStream(self.pool, [("::1", port)],
                                       spead2.send.StreamConfig(rate=1e8))
            send_values(tx, sample_values(3))
            output, _ = recv.communicate(timeout=60)
        stats = qa.app_stats(output)
        self.assertEqual(stats["stop_heaps"], 1, output)
        self.assertEqual(stats["heaps"], 3, output)  # descriptors ride with the first

    def test_blocks_round_trip_over_ipv6(self):
        rx, port = self.loopback_receiver()
        qa.sink_ramp_into(rx, f"[::1]:{port}")

        port = qa.free_udp_port()
        src = spead2.source(endpoints=f"[::1]:{port}", item_type="int32",
                            payload_item=0x1000)
        self.assertEqual(src.bound_endpoints(), [f"[::1]:{port}"])
        out = blocks.vector_sink_i()
        values = sample_values(4)
        tx = spead2.send.UdpStream(self.pool, [("::1", port)],
                                   spead2.send.StreamConfig(rate=1e8))
        qa.run_source_while(src, out, lambda: send_values(tx, values))
        np.testing.assert_array_equal(out.data(), np.concatenate(values))

    def test_multicast_ipv6_by_interface_index_in_a_namespace(self):
        if not qa.can_use_netns():
            self.skipTest("needs root and ip netns (IPv6 multicast does not run on lo)")
        with qa.NetNamespace("grspead6") as ns:
            setup = ("ip link add v0 type veth peer name v1 && ip link set v0 up && "
                     "ip link set v1 up && sysctl -qw net.ipv6.conf.all.disable_ipv6=0 "
                     "net.ipv6.conf.v0.disable_ipv6=0 && "
                     "ip -6 addr add fd77::1/64 dev v0 nodad")
            ns.run(["sh", "-c", setup], check=True)
            result = ns.run([sys.executable, "-B", os.path.abspath(__file__),
                             "--multicast-child", "v0"], capture_output=True, text=True,
                            env=dict(os.environ), timeout=120)
        self.assertEqual(result.returncode, 0, result.stdout + result.stderr)
        self.assertIn("multicast ok 5", result.stdout)


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "--multicast-child":
        sys.exit(multicast_child(sys.argv[2]))
    gr_unittest.run(qa_api_ipv6)
