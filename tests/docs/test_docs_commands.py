#!/usr/bin/env python3
# Copyright 2026 gr-spead authors
# SPDX-License-Identifier: GPL-3.0-or-later
"""The README's and docs/usage.md's commands and code blocks, run as a new user would,
as far as this machine can:

- each row of the README's one-line tables (tools, and blocks in Python) runs as a
  receiver and its sender: udp, a multicast range (eth0 is lo here), tcp, auto and pcap
  here; rdma and ibverbs on the emulated NIC (transport_rows_on_the_emulated_nic, one
  ctest test each in a two-host topology: 10.0.0.2 is host 2, eth0 its interface);
- each command of the README's code blocks runs (a receiver until a stop heap sent to
  it), unless SKIPPED says why not here;
- docs/usage.md's Python blocks run one after the other in one namespace (eth1 is lo,
  `samples` some samples); its C++ blocks compile.

Ports 7148 and 7150 become free ports. A command the docs gain that is neither run nor
in SKIPPED fails the test, so the docs and this test stay together."""

import os
import re
import shlex
import signal
import socket
import subprocess
import tempfile
import time
import unittest

TOP = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
APPS = os.environ["GR_SPEAD_APPS_DIR"]
PYTHON = "/usr/bin/python3"
HEAPS = 10  # the tables' --heaps, and heaps of heap_items items for the blocks

# Commands of the README's code blocks not run here, by their start, and why.
SKIPPED = {
    ".ci/demo": "builds and runs everything: tests/ci runs it",
    ".ci/run": "is CI itself",
    "sudo examples/cluster_demo": "the simulated cluster: tests/netns runs it",
    "cmake --install": "installs: the install tests do it in a scratch prefix",
    "dpkg-buildpackage": "builds the Debian packages: the debian test does",
    "find_package(": "CMake, in a downstream project: tests/install/downstream",
    "target_link_libraries(": "CMake, in a downstream project: tests/install/downstream",
    "pkg-config": "needs the module installed: the install tests check it",
    "build/apps/spead_recv --ibv": "ibverbs: the transports row runs on the emulated NIC",
    "build/apps/spead_bench": "a benchmark (minutes of CPU): tests/apps/test_spead_bench",
    "apps/spead_compare.py": "needs spead2's tools: tests/apps/test_spead_compare",
    "docs/performance/regenerate": "measures for minutes on an idle machine",
}


def free_port(kind=socket.SOCK_DGRAM):
    with socket.socket(socket.AF_INET, kind) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def read(*path):
    with open(os.path.join(TOP, *path)) as f:
        return f.read()


def section(text, heading):
    start = text.index(heading)
    end = text.find("\n## ", start + len(heading))
    return text[start:end if end >= 0 else len(text)]


def table(text, header):
    """[(first cell, [code of each other cell])] of the markdown table `header` opens."""
    rows = []
    lines = text[text.index(header):].splitlines()[2:]
    for line in lines:
        if not line.startswith("|"):
            break
        cells = [c.strip() for c in line.strip("|").split("|")]
        rows.append((cells[0].split()[0] if cells[0] != "udp multicast range" else
                     "multicast", [re.sub(r"^`|`$", "", c) for c in cells[1:]]))
    return rows


def readme_commands():
    """Each command of the README's indented code blocks (continuations joined, comments
    dropped)."""
    commands = []
    text = read("README.md")
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("    ") and not line.startswith("     ") and \
                (i == 0 or not lines[i - 1].strip() or lines[i - 1].startswith("    ")):
            command = line.strip()
            while command.endswith("\\") and i + 1 < len(lines):
                i += 1
                command = command[:-1].rstrip() + " " + lines[i].strip()
            command = re.sub(r"\s+#.*$", "", command).strip()
            if command and not command.startswith("#"):
                commands.append(command)
        i += 1
    return commands


def udp_bound(port):
    with open("/proc/net/udp") as f:
        return any(r.split()[1].endswith(f":{port:04X}") for r in f.read().splitlines()[1:])


def tcp_listening(port):
    with open("/proc/net/tcp") as f:
        return any(r.split()[1].endswith(f":{port:04X}") and r.split()[3] == "0A"
                   for r in f.read().splitlines()[1:])


def wait_until(condition, proc, what, seconds=20):
    deadline = time.monotonic() + seconds
    while not condition():
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            out, err = proc.communicate()
            raise AssertionError(f"gave up waiting for {what}: {out}{err}")
        time.sleep(0.05)


def finish(proc, seconds=60, interrupt_after=None):
    """(status, stdout + stderr) of a background process; with `interrupt_after`, a
    Ctrl-C once that many seconds have passed without it ending."""
    try:
        out, _ = proc.communicate(timeout=interrupt_after or seconds)
    except subprocess.TimeoutExpired:
        if interrupt_after is None:
            proc.kill()
            out, _ = proc.communicate()
            raise AssertionError("did not end: " + out)
        proc.send_signal(signal.SIGINT)
        out, _ = proc.communicate(timeout=seconds)
    return proc.returncode, out


class Place:
    """Where a row runs: here (every host is this one, eth0 is lo) or, on the emulated
    NIC, the receiver in host 2 and the sender in host 1."""

    def __init__(self, emulated=False):
        self.emulated = emulated
        self.tmp = tempfile.mkdtemp(prefix="docs-commands.")
        self.ports = {"7148": str(free_port()), "7150": str(free_port(socket.SOCK_STREAM))}

    def text(self, text):
        if ".pcap" in text:
            return text  # no socket: the capture's frames keep their port
        for port, free in self.ports.items():
            text = re.sub(rf"(?<![\d.]){port}\b", free, text)
        if self.emulated:
            return text.replace("10.0.0.2", os.environ["TOPO_IP_2"])
        return text.replace("eth0", "lo").replace("eth1", "lo")

    def prefix(self, role):
        if not self.emulated:
            return []
        return ["ip", "netns", "exec", os.environ["TOPO_NS_%d" % (2 if role == "rx" else 1)]]

    def ready(self, role, command, proc):
        """Waits until a receiver listens (its port is bound, or listening for tcp)."""
        port = next((int(p) for p in self.ports.values() if p in command), None)
        if port is None:
            return
        if "--tcp" in command or 'transport="tcp"' in command:
            check = lambda: tcp_listening(port)  # noqa: E731
        elif "--rdma" in command or 'transport="rdma"' in command:
            check = lambda: self.in_host_listening(port)  # noqa: E731
        elif self.emulated and ("--ibv" in command or 'transport="ibverbs"' in command):
            time.sleep(2)  # the ibverbs receiver has no socket to look for
            return
        else:
            check = lambda: udp_bound(port)  # noqa: E731
        wait_until(check, proc, "the receiver to listen")

    def in_host_listening(self, port):
        if not self.emulated:
            return tcp_listening(port)
        r = subprocess.run(self.prefix("rx") + ["ss", "-Hltn", f"sport = :{port}"],
                           capture_output=True, text=True, timeout=10)
        return "LISTEN" in r.stdout

    def run(self, role, args, background=False, env=None):
        env = dict(os.environ, PATH=APPS + os.pathsep + os.environ["PATH"], **(env or {}))
        proc = subprocess.Popen(self.prefix(role) + args, cwd=self.tmp, env=env,
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                text=True)
        if background:
            return proc
        return finish(proc)


BLOCK_RECEIVER = """
from gnuradio import blocks, gr, spead
rx = {expr}
tb = gr.top_block()
out = blocks.vector_sink_c()
tb.connect(rx, out)
tb.start()
print("listening", flush=True)
tb.wait()
print("RESULT items", len(out.data()))
"""

BLOCK_SENDER = """
import numpy as np
from gnuradio import blocks, gr, spead
tx = {expr}
tb = gr.top_block()
samples = (np.arange({n}) + 1j).astype(np.complex64)
tb.connect(blocks.vector_source_c(samples.tolist(), False), tx)
tb.run()
print("RESULT data_heaps", tx.stats()["data_heaps"])
"""


class TransportRows:
    """Runs a row of the README's tables."""

    def tools_row(self, place, receive, send):
        receive, send = place.text(receive), place.text(send)
        if ".pcap" in receive:  # a capture is recorded, then replayed
            status, out = place.run("tx", shlex.split(send))
            self.assertEqual(status, 0, out)
            status, out = place.run("rx", shlex.split(receive))
        else:
            rx = place.run("rx", shlex.split(receive), background=True)
            place.ready("rx", receive, rx)
            status, out = place.run("tx", shlex.split(send))
            self.assertEqual(status, 0, out)
            status, out = finish(rx)
        self.assertEqual(status, 0, out)
        self.assertIn(f"Received {HEAPS} heaps", out)

    def blocks_row(self, place, source, sink):
        source, sink = place.text(source), place.text(sink)
        items = HEAPS * int(re.search(r"heap_items=(\d+)", sink).group(1))
        receiver = [PYTHON, "-c", BLOCK_RECEIVER.format(expr=source)]
        sender = [PYTHON, "-c", BLOCK_SENDER.format(expr=sink, n=items)]
        if "pcap" in source:
            status, out = place.run("tx", sender)
            self.assertEqual(status, 0, out)
            status, out = place.run("rx", receiver)
        else:
            rx = place.run("rx", receiver, background=True)
            wait_until(lambda: rx.stdout is not None and self.said(rx, "listening"), rx,
                       "the source's flowgraph")
            place.ready("rx", source, rx)
            status, out = place.run("tx", sender)
            self.assertEqual(status, 0, out)
            self.assertIn(f"RESULT data_heaps {HEAPS}", out)
            status, out = finish(rx)
            out = "listening\n" + out
        self.assertEqual(status, 0, out)
        self.assertIn(f"RESULT items {items}", out)

    @staticmethod
    def said(proc, word):
        line = proc.stdout.readline()
        return word in line

    def rows(self):
        readme = section(read("README.md"), "## Every transport in one line")
        return (dict(table(readme, "| transport | receive | send |")),
                dict(table(readme, "| transport | spead.source | spead.sink |")))


class transport_rows_here(unittest.TestCase, TransportRows):

    def check(self, row):
        tools, blocks = self.rows()
        if row in tools:
            with self.subTest(what="tools"):
                self.tools_row(Place(), *tools[row])
        with self.subTest(what="blocks"):
            self.blocks_row(Place(), *blocks[row])

    def test_udp_unicast(self):
        self.check("udp")

    def test_multicast_range(self):
        self.check("multicast")

    def test_tcp(self):
        self.check("tcp")

    def test_auto_falls_back_to_udp_here(self):
        self.check("auto")

    def test_pcap(self):
        self.check("pcap")

    def test_every_row_is_run_here_or_on_the_emulated_nic(self):
        tools, blocks = self.rows()
        run = {"udp", "multicast", "tcp", "auto", "pcap", "rdma", "ibverbs"}
        self.assertEqual(set(blocks), run)
        self.assertLessEqual(set(tools), run)


class transport_rows_on_the_emulated_nic(unittest.TestCase, TransportRows):

    def setUp(self):
        if "TOPO_NS_1" not in os.environ:
            self.skipTest("runs in a two-host emulated-NIC topology "
                          "(ctest docs.transport_rows.*)")

    def check(self, row):
        tools, blocks = self.rows()
        with self.subTest(what="tools"):
            self.tools_row(Place(emulated=True), *tools[row])
        with self.subTest(what="blocks"):
            self.blocks_row(Place(emulated=True), *blocks[row])

    def test_rdma(self):
        self.check("rdma")

    def test_ibverbs(self):
        self.check("ibverbs")


class readme_commands_here(unittest.TestCase):

    def test_every_command_runs_or_says_why_not(self):
        commands = readme_commands()
        self.assertGreater(len(commands), 10)
        for command in commands:
            reason = next((why for start, why in SKIPPED.items()
                           if command.startswith(start)), None)
            with self.subTest(command=command):
                if reason:
                    continue
                self.run_command(command)

    def run_command(self, command):
        place = Place()
        text = place.text(command.replace("build/apps/", ""))
        text = text.replace("tests/vectors/", os.path.join(TOP, "tests", "vectors") + "/")
        args = shlex.split(text)
        tool = args[0]
        if tool == "spead_recv" and not any(a.startswith("--help") for a in args) and \
                not any(a.endswith(".pcap") for a in args):
            # A receiver: it ends at a stop heap sent to its first address (or Ctrl-C).
            rx = place.run("rx", args, background=True)
            place.ready("rx", text, rx)
            where = next(a for a in args[1:] if ":" in a)
            group = re.sub(r"\+\d+", "", where)
            bind = ["--bind", "lo"] if "--bind" in args else []
            subprocess.run([os.path.join(APPS, "spead_send"), "--heaps", "0", *bind,
                            group if not group.startswith(":") else "127.0.0.1" + group],
                           capture_output=True, timeout=30)
            status, out = finish(rx, interrupt_after=10)
        elif tool == "spead_send" and "--heaps" not in args:
            # Sends until Ctrl-C: into a socket bound here and never read.
            with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sink:
                sink.bind(("127.0.0.1", int(place.ports["7148"])))
                status, out = finish(place.run("tx", args, background=True),
                                     interrupt_after=1)
        elif tool == "spead_ibv_check":
            status, out = place.run("tx", args)
            # lo has no RDMA device: it says why ibverbs cannot run, and exits 1
            self.assertIn(status, (0, 1), out)
            self.assertIn("udp", out)
            return
        else:
            status, out = place.run("tx", args)
        self.assertEqual(status, 0, out)


class usage_code_blocks(unittest.TestCase):

    def blocks(self, language):
        return re.findall(rf"```{language}\n(.*?)```", read("docs", "usage.md"), re.S)

    def test_the_python_blocks_run_one_after_the_other(self):
        blocks = self.blocks("python")
        self.assertGreater(len(blocks), 3)
        place = Place()
        code = "import numpy as np\nsamples = np.zeros(8192, np.complex64)\n"
        for i, block in enumerate(blocks):
            code += f"print('block {i}', flush=True)\n" + place.text(block) + "\n"
        status, out = place.run("tx", [PYTHON, "-c", code])
        self.assertEqual(status, 0, out)
        self.assertIn(f"block {len(blocks) - 1}", out)

    def test_the_cpp_blocks_compile(self):
        blocks = self.blocks("cpp")
        self.assertTrue(blocks)
        includes = os.environ.get("GR_SPEAD_INCLUDE_DIRS", os.path.join(TOP, "include"))
        for block in blocks:
            with self.subTest(block=block.splitlines()[0]):
                source = ("#include <gnuradio/spead/source.h>\n"
                          "#include <gnuradio/spead/sink.h>\n"
                          "int main()\n{\n" + block + "\n}\n")
                done = subprocess.run(["g++", "-std=c++17", "-fsyntax-only", "-x", "c++",
                                       *(f"-I{d}" for d in includes.split(";")), "-"],
                                      input=source, capture_output=True, text=True,
                                      timeout=120)
                self.assertEqual(done.returncode, 0, done.stderr[-3000:])


if __name__ == "__main__":
    unittest.main()
