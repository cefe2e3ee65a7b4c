#!/usr/bin/env python3
# Copyright 2026 gr-spead authors
# SPDX-License-Identifier: GPL-3.0-or-later
"""Fails when a file of the library includes a layer it must not: every include points
down (docs/architecture.md, "Layers").

usage: check_layers.py SOURCE_DIR
Reads every .cc and .h file below SOURCE_DIR/lib/<layer>/ and each of its includes of
the form "<folder>/...", where <folder> is one of lib/'s; lists every include of a
folder the layer may not use. The transports and the streams are peers: neither
includes the other (they meet in the public headers and in lib/protocol's
packet_writer.h). The blocks (lib/*.cc) are the top and may use every layer.
"""
import os
import re
import sys

ALLOWED = {
    "common": {"common"},
    "protocol": {"common", "protocol"},
    "transport": {"common", "protocol", "transport"},
    "streams": {"common", "protocol", "streams"},
    "mapping": {"common", "protocol", "transport", "streams", "mapping", "metrics"},
    # watching streams: reads their public counters only
    "metrics": {"common", "metrics"},
}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([a-z_]+)/')


def main():
    lib = os.path.join(os.path.abspath(sys.argv[1]), "lib")
    layers = sorted(d for d in os.listdir(lib) if os.path.isdir(os.path.join(lib, d)))
    unknown = [d for d in layers if d not in ALLOWED]
    if unknown:
        print(f"FAIL: lib/{unknown[0]} is a layer this check does not know: add it to "
              "ALLOWED with the layers it may include")
        return 1
    bad, checked = [], 0
    for layer in layers:
        for root, _, files in os.walk(os.path.join(lib, layer)):
            for name in sorted(files):
                if not name.endswith((".cc", ".h")):
                    continue
                checked += 1
                path = os.path.join(root, name)
                with open(path, encoding="utf-8") as f:
                    for number, line in enumerate(f, 1):
                        m = INCLUDE.match(line)
                        if m and m.group(1) in ALLOWED and m.group(1) not in ALLOWED[layer]:
                            bad.append(f"FAIL: {os.path.relpath(path, lib)}:{number}: "
                                       f"lib/{layer} includes lib/{m.group(1)}")
    print("\n".join(bad + [f"{len(bad)} includes point the wrong way in {checked} files"
                           if bad else f"ok: {checked} files, every include points down"]))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
