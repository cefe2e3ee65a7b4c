#!/usr/bin/env python3
# Copyright 2026 gr-spead authors
# SPDX-License-Identifier: GPL-3.0-or-later
"""Imports spead_emu_verbs_probe (a pybind11 module linked with -libverbs) and checks the
RDMA devices it sees: with the stand-ins on LD_LIBRARY_PATH, exactly the emulated device
of each SPEAD_EMU_NETDEVS entry (--expect); without them, the real rdma-core's, which
never include an emulated one (--absent)."""

import argparse
import sys


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--module-dir", required=True)
    parser.add_argument("--expect", nargs="*", help="exactly these devices")
    parser.add_argument("--absent", nargs="*", default=[], help="devices that must not exist")
    args = parser.parse_args()
    sys.path.insert(0, args.module_dir)
    import spead_emu_verbs_probe as probe

    names = probe.device_names()
    print(f"{sys.executable}: RDMA devices {names}")
    if args.expect is not None and names != args.expect:
        print(f"expected {args.expect}")
        return 1
    if set(names) & set(args.absent):
        print(f"expected none of {args.absent}")
        return 1
    for name in args.expect or []:
        facts = probe.describe(name)
        print(f"{name}: {facts}")
        if (facts["link_layer"] != "Ethernet" or facts["port_state"] != "active" or
                not facts["ip_checksum_offload"] or not facts["flow_steering"] or
                facts["num_comp_vectors"] < 1):
            print(f"{name} does not look like an active raw-packet Ethernet NIC")
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
