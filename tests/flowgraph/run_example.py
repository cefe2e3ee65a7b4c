#!/usr/bin/env python3
#
# Copyright 2026 gr-spead authors
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""Compiles a GRC example with grcc and, with --run, runs the generated flowgraph
headless, as a user would: it must end by itself, exit 0 and print what --expect says.
grcc must not warn about flow control (a SPEAD Source paces the flowgraph). A C++
example is only generated here (tests/install builds and runs one).

    run_example.py EXAMPLE.grc [--run] [--expect REGEX]... [--free-port] -- [ARGS]

--free-port adds `--port N` with a UDP port nobody uses.
"""

import argparse
import os
import re
import socket
import subprocess
import sys
import tempfile


def free_udp_port():
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("grc")
    parser.add_argument("--run", action="store_true")
    parser.add_argument("--expect", action="append", default=[])
    parser.add_argument("--free-port", action="store_true")
    parser.add_argument("--timeout", type=float, default=60)
    argv = sys.argv[1:]
    rest = []
    if "--" in argv:  # what follows goes to the flowgraph
        rest = argv[argv.index("--") + 1:]
        argv = argv[:argv.index("--")]
    opts = parser.parse_args(argv)

    name = os.path.splitext(os.path.basename(opts.grc))[0]
    with tempfile.TemporaryDirectory() as out:
        compiled = subprocess.run(["grcc", "-o", out, opts.grc], capture_output=True,
                                  text=True, timeout=120)
        script = os.path.join(out, name + ".py")
        cpp = os.path.join(out, name, name + ".cpp")  # Output Language C++
        if compiled.returncode != 0 or not (os.path.exists(script) or os.path.exists(cpp)):
            print(compiled.stdout + compiled.stderr)
            print(f"FAIL: grcc could not compile {opts.grc}")
            return 1
        # SPEAD Source is paced by its network or capture: GRC must not ask for a
        # Throttle block (the source's YAML flag says so).
        if "may not have flow control" in compiled.stdout + compiled.stderr:
            print(compiled.stdout + compiled.stderr)
            print(f"FAIL: grcc warns that {opts.grc} has no flow control")
            return 1
        print(f"compiled {opts.grc}")
        if not opts.run:
            return 0

        args = list(rest)
        if opts.free_port:
            args += ["--port", str(free_udp_port())]
        try:
            ran = subprocess.run([sys.executable, "-u", script] + args, capture_output=True,
                                 text=True, timeout=opts.timeout, cwd=out,
                                 stdin=subprocess.DEVNULL)
        except subprocess.TimeoutExpired:
            print(f"FAIL: {name} did not end within {opts.timeout} s")
            return 1
        output = ran.stdout + ran.stderr
        print(output[-4000:])
        if ran.returncode != 0:
            print(f"FAIL: {name} exited with {ran.returncode}")
            return 1
        for pattern in opts.expect:
            if not re.search(pattern, output, re.MULTILINE):
                print(f"FAIL: {name} did not print /{pattern}/")
                return 1
        print(f"ran {name}")
        return 0


if __name__ == "__main__":
    sys.exit(main())
