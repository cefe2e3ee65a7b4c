#!/usr/bin/env python3
# Copyright 2026 gr-spead authors
# SPDX-License-Identifier: GPL-3.0-or-later
"""spead_send → spead_recv between two network namespaces over a veth pair whose
checksum and segmentation offloads are off, as on a NIC without them: the sender's UDP
segmentation offload (GSO) must either work with software checksums (Linux >= 6.11) or
fall back to one datagram per packet, and every heap must arrive intact either way.
Needs root (namespaces); skipped otherwise."""

import os
import subprocess
import unittest

APPS = os.environ["GR_SPEAD_APPS_DIR"]
TOPOLOGY = os.environ["GR_SPEAD_NETNS_TOPOLOGY"]

SCRIPT = r"""
set -eu
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
ip netns exec "$TOPO_NS_2" timeout 30 "$APPS/spead_recv" --quiet --verify --all-stats \
    "$TOPO_IP_2:7148" > "$out/recv" 2> "$out/recv.err" &
receiver=$!
for i in $(seq 100); do   # until the receiver's socket is bound (at most 5 s)
    ip netns exec "$TOPO_NS_2" grep -q ":1BEC " /proc/net/udp && break
    sleep 0.05
done
ip netns exec "$TOPO_NS_1" "$APPS/spead_send" --all-stats --heaps 30 --heap-size 200000 --packet 8972 \
    --verify --rate 0.5 "$TOPO_IP_2:7148" > "$out/send"
wait "$receiver"
echo "== send"; cat "$out/send"; echo "== recv"; cat "$out/recv"; cat "$out/recv.err" >&2
"""


def sections(stdout):
    out, current = {}, None
    for line in stdout.splitlines():
        if line.startswith("== "):
            current = out.setdefault(line[3:], {})
            continue
        name, sep, value = line.partition(": ")
        if current is not None and sep and value.isdigit() and " " not in name:
            current[name] = int(value)
    return out


@unittest.skipUnless(os.geteuid() == 0, "network namespaces need root")
class spead_send_over_veth_without_offloads(unittest.TestCase):
    def test_every_heap_arrives_intact(self):
        r = subprocess.run([TOPOLOGY, "--hosts", "2", "--link", "veth", "--timeout", "60",
                            "--", "bash", "-c", SCRIPT],
                           capture_output=True, text=True, timeout=100,
                           env=dict(os.environ, APPS=APPS))
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        s = sections(r.stdout)
        sent, got = s["send"], s["recv"]
        self.assertEqual((sent["data_heaps"], sent["packets_failed"]), (30, 0))
        self.assertEqual((got["heaps"], got["verify_heaps"], got["verify_heaps_mismatched"]),
                         (30, 30, 0))
        # exact, unless the receiving socket dropped coalesced runs (1-64 datagrams each)
        singles = got["packets"] + got["packets_dropped_socket_overflow"]
        runs = got["runs_dropped_socket_overflow"]
        self.assertTrue(singles + runs <= sent["packets"] <= singles + 64 * runs,
                        (sent["packets"], singles, runs))


if __name__ == "__main__":
    unittest.main()
