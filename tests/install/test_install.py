#!/usr/bin/env python3
#
# Copyright 2026 gr-spead authors
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""gr-spead as a user gets it after installing: what a downstream project can do.

    test_install.py --build-dir BUILD     `cmake --install BUILD` to a scratch prefix
    test_install.py --installed-prefix P  an installation already there (the .debs)

Then, against that prefix, from a scratch directory:
  1. the files: the CMake package and the targets it includes, gnuradio-spead.pc,
     docs under share/doc/gr-spead, examples and their capture under share/gr-spead;
  2. a downstream CMake project (downstream/) with find_package(gnuradio-spead)
     configures, builds, makes a source and replays the installed capture;
  3. the same program built with pkg-config's flags only;
  4. a fresh /usr/bin/python3 imports gnuradio.spead from the prefix and replays it;
  5. the installed pcap_replay.grc, compiled with grcc and run with no arguments from
     another directory, finds its capture and says what it did;
  6. (--steps cpp) the installed loopback_cpp.grc, generated as C++ by grcc, builds
     with the CMakeLists.txt GRC writes and runs: both blocks' cpp_templates.
Each step prints what it ran; the first failure ends the test with its output.
"""

import argparse
import glob
import os
import re
import socket
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
CAPTURE = "share/gr-spead/examples/vectors/spead64-40_multipacket_1472.pcap"
# spead64-40_multipacket_1472.spead2_recv.txt: three heaps with payload
REPLAY_LINE = r"replayed 3 heaps, \d+ items"


class Failed(Exception):
    pass


def run(cmd, env=None, cwd=None, timeout=600, expect=()):
    print("$ " + " ".join(cmd), flush=True)
    done = subprocess.run(cmd, env=env, cwd=cwd, capture_output=True, text=True,
                          timeout=timeout, stdin=subprocess.DEVNULL)
    output = done.stdout + done.stderr
    if done.returncode != 0:
        raise Failed(f"{output[-4000:]}\nexited with {done.returncode}: {' '.join(cmd)}")
    for pattern in expect:
        if not re.search(pattern, output, re.MULTILINE):
            raise Failed(f"{output[-4000:]}\ndid not print /{pattern}/: {' '.join(cmd)}")
    return output


def one(patterns, what):
    """The one file the patterns match (no recursive globbing: the prefix may be /usr)."""
    found = sorted(set(f for p in patterns for f in glob.glob(p)))
    if len(found) != 1:
        raise Failed(f"expected one {what} ({patterns}), found {found}")
    return found[0]


def check_files(prefix):
    """The installed files; returns (library directory, pkg-config directory)."""
    config = one([f"{prefix}/lib/cmake/gnuradio-spead/gnuradio-speadConfig.cmake",
                  f"{prefix}/lib/*/cmake/gnuradio-spead/gnuradio-speadConfig.cmake"],
                 "CMake package config")
    with open(config) as f:
        text = f.read()
    targets = os.path.join(os.path.dirname(config), "gnuradio-speadTargets.cmake")
    if "gnuradio-speadTargets.cmake" not in text or not os.path.exists(targets):
        raise Failed(f"{config} does not include an installed "
                     f"gnuradio-speadTargets.cmake:\n{text}")
    library = one([f"{prefix}/lib/libgnuradio-spead.so",
                   f"{prefix}/lib/*/libgnuradio-spead.so"], "library (.so link)")
    pc = one([f"{prefix}/lib/pkgconfig/gnuradio-spead.pc",
              f"{prefix}/lib/*/pkgconfig/gnuradio-spead.pc"], "pkg-config file")
    for path in ["share/doc/gr-spead/README.md", "share/doc/gr-spead/docs/usage.md",
                 "share/gr-spead/examples/pcap_replay.grc",
                 "share/gr-spead/examples/loopback.grc", CAPTURE,
                 "share/gr-spead/examples/spead_alerts.yml",
                 "share/gr-spead/examples/prometheus.yml",
                 "share/doc/gr-spead/docs/monitoring.md",
                 "share/gnuradio/grc/blocks/spead_source.block.yml"]:
        if not os.path.exists(os.path.join(prefix, path)):
            raise Failed(f"not installed: {prefix}/{path}")
    print(f"ok: files ({config}, {pc}, {library}, docs, examples, capture)")
    return os.path.dirname(library), os.path.dirname(pc)


def main():
    parser = argparse.ArgumentParser()
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--build-dir")
    where.add_argument("--installed-prefix")
    parser.add_argument("--steps", default="cmake,pkgconfig,python,example",
                        help="comma-separated: cmake, pkgconfig, python, example, cpp")
    opts = parser.parse_args()
    steps = opts.steps.split(",")

    with tempfile.TemporaryDirectory(prefix="gr-spead-install-") as tmp:
        try:
            if opts.build_dir:
                prefix = os.path.join(tmp, "prefix")
                run(["cmake", "--install", opts.build_dir, "--prefix", prefix])
            else:
                prefix = opts.installed_prefix
            libdir, pkgconfig_dir = check_files(prefix)
            env = dict(os.environ)
            env.pop("PYTHONPATH", None)  # nothing from the build tree
            env.pop("GRC_BLOCKS_PATH", None)
            if prefix != "/usr":  # what a user of a private prefix sets
                env["LD_LIBRARY_PATH"] = libdir
                env["GRC_BLOCKS_PATH"] = f"{prefix}/share/gnuradio/grc/blocks"
            capture = os.path.join(prefix, CAPTURE)
            elsewhere = os.path.join(tmp, "elsewhere")
            os.mkdir(elsewhere)

            if "cmake" in steps:
                cmake_project(prefix, env, tmp, capture, elsewhere)
            if "pkgconfig" in steps:
                pkgconfig_project(prefix, env, tmp, capture, elsewhere, pkgconfig_dir)
            if "python" in steps or "example" in steps:
                pydir = one([f"{prefix}/lib/python3*/*-packages/gnuradio/spead/__init__.py"],
                            "Python package")
                pydir = os.path.dirname(os.path.dirname(os.path.dirname(pydir)))
                if prefix == "/usr":  # a package: python3 must find it by itself
                    env["EXPECTED_PYTHON_DIR"] = pydir
                else:
                    env["PYTHONPATH"] = pydir
            if "python" in steps:
                python_replay(env, capture, elsewhere)
            if "example" in steps:
                installed_example(prefix, env, tmp, elsewhere)
            if "cpp" in steps:
                cpp_flowgraph(prefix, env, tmp, elsewhere)
        except (Failed, subprocess.TimeoutExpired) as e:
            print(f"FAIL: {e}")
            return 1
    return 0


def cmake_project(prefix, env, tmp, capture, elsewhere):
    project = os.path.join(tmp, "downstream")
    run(["cmake", "-S", os.path.join(HERE, "downstream"), "-B", project, "-G", "Ninja",
         f"-DCMAKE_PREFIX_PATH={prefix}"], env=env)
    run(["cmake", "--build", project], env=env)
    run([os.path.join(project, "spead_replay"), capture], env=env, cwd=elsewhere,
        expect=[REPLAY_LINE])
    print("ok: find_package(gnuradio-spead), build, pcap replay")


def pkgconfig_project(prefix, env, tmp, capture, elsewhere, pkgconfig_dir):
    env_pc = dict(env, PKG_CONFIG_PATH=pkgconfig_dir)
    flags = run(["pkg-config", "--cflags", "--libs", "gnuradio-spead", "gnuradio-blocks"],
                env=env_pc).split()
    if prefix != "/usr" and f"-I{prefix}/include" not in flags:
        raise Failed(f"gnuradio-spead.pc does not point into {prefix}: {flags}")
    binary = os.path.join(tmp, "spead_replay_pc")
    run(["g++", "-std=c++17", "-o", binary, os.path.join(HERE, "downstream", "replay.cc")]
        + flags, env=env_pc)
    run([binary, capture], env=env, cwd=elsewhere, expect=[REPLAY_LINE])
    print("ok: pkg-config gnuradio-spead, build, pcap replay")


def python_replay(env, capture, elsewhere):
    script = (
        "import os, sys\n"
        "from gnuradio import blocks, gr, spead\n"
        "assert spead.__file__.startswith(sys.argv[1]), spead.__file__\n"
        "tb = gr.top_block()\n"
        "src = spead.source(transport='pcap', endpoints='', item_type='int32',\n"
        "                   capture_file=sys.argv[2])\n"
        "snk = blocks.vector_sink_i()\n"
        "tb.connect(src, snk)\n"
        "tb.run()\n"
        "print('python: {} from {}: replayed {} heaps, {} items'.format(\n"
        "    spead.__name__, os.path.dirname(spead.__file__),\n"
        "    src.stats()['heaps_output'], len(snk.data())))\n")
    where = env.get("PYTHONPATH") or env["EXPECTED_PYTHON_DIR"]
    run(["/usr/bin/python3", "-c", script, where, capture], env=env,
        cwd=elsewhere, expect=[REPLAY_LINE])
    print("ok: python3 imports gnuradio.spead from the prefix, pcap replay")


def installed_example(prefix, env, tmp, elsewhere):
    out = os.path.join(tmp, "grc")
    os.mkdir(out)
    compiled = run(["grcc", "-o", out,
                    os.path.join(prefix, "share/gr-spead/examples/pcap_replay.grc")], env=env)
    if "flow control" in compiled:
        raise Failed(f"{compiled}\ngrcc asks for a Throttle block")
    run(["/usr/bin/python3", "-u", os.path.join(out, "pcap_replay.py"),
         "--output", os.path.join(tmp, "replay.s32")], env=env, cwd=elsewhere,
        expect=[r"Key: heap_cnt +Value: 3", r"stopped: .*heaps_output: 3\b"])
    print("ok: installed pcap_replay.grc runs from another directory and says what it did")


def free_udp_port():
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def cpp_flowgraph(prefix, env, tmp, elsewhere):
    out = os.path.join(tmp, "cpp")
    os.mkdir(out)
    compiled = run(["grcc", "-o", out,
                    os.path.join(prefix, "share/gr-spead/examples/loopback_cpp.grc")],
                   env=env)
    if "flow control" in compiled:
        raise Failed(f"{compiled}\ngrcc asks for a Throttle block")
    project = os.path.join(out, "loopback_cpp")
    build = os.path.join(project, "build")
    run(["cmake", "-S", project, "-B", build, "-G", "Ninja",
         f"-DCMAKE_PREFIX_PATH={prefix}"], env=env)
    run(["cmake", "--build", build], env=env)
    heaps = 200
    run([os.path.join(build, "loopback_cpp"), "--endpoint",
         f"127.0.0.1:{free_udp_port()}", "--heaps", str(heaps)], env=env, cwd=elsewhere,
        timeout=120,
        expect=[rf"spead_sink.*stopped: .*data_heaps: {heaps}\b",
                rf"spead_source.*stopped: .*heaps_output: {heaps}\b"])
    print(f"ok: loopback_cpp.grc generated as C++ builds and runs: {heaps} heaps "
          "sent and received")


if __name__ == "__main__":
    sys.exit(main())
