# Copyright 2026 gr-spead authors
# SPDX-License-Identifier: GPL-3.0-or-later
"""What the tests of the command-line tools share: running a tool and reading the
"name: value" statistics it prints."""

import os
import shutil
import signal
import socket
import subprocess
import sys
import time

APPS = os.environ["GR_SPEAD_APPS_DIR"]

# The port checks of apps/spead_compare.py: a free UDP port, and one a receiver has bound.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                "apps"))
from spead_compare import free_udp_port, udp_port_bound  # noqa: E402,F401


def tool(name, *args, timeout=60):
    """Runs apps/NAME with args (any type, as strings); the CompletedProcess."""
    return subprocess.run([os.path.join(APPS, name), *map(str, args)],
                          capture_output=True, text=True, timeout=timeout)


def counter_names():
    """Every counter the tools know (their --help-stats), once."""
    if not _counter_names:
        for name in ("spead_recv", "spead_send"):
            listed = tool(name, "--help-stats").stdout
            _counter_names.update(line.split()[0] for line in listed.splitlines()
                                  if line.strip())
    return _counter_names


_counter_names = set()


class Counters(dict):
    """The counters a tool printed. The tools print only the non-zero ones (unless
    --all-stats), so a counter they know and did not print reads 0; a name they do not
    know is still a KeyError (a typo in a test)."""

    def __missing__(self, name):
        if name in counter_names():
            return 0
        raise KeyError(name)


def stats(stdout):
    """The "name: value" lines with a whole-number value, as Counters."""
    out = Counters()
    for line in stdout.splitlines():
        name, sep, value = line.partition(": ")
        if sep and value.isdigit() and " " not in name:
            out[name] = int(value)
    return out


def spead2_tool(name):
    """spead2's tool `name` (SPEAD2_BIN_DIR, else PATH), or None."""
    directory = os.environ.get("SPEAD2_BIN_DIR")
    path = os.path.join(directory, name) if directory else shutil.which(name)
    return path if path and os.access(path, os.X_OK) else None


def free_tcp_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Background:
    """A tool run in the background (args[0]: one of ours by name, or a path) until
    `ready()`; leaving its `with` block kills it if it still runs (a test that
    failed)."""

    def __init__(self, args, ready, timeout=10):
        command = [os.path.join(APPS, args[0]) if "/" not in args[0] else args[0],
                   *map(str, args[1:])]
        self.proc = subprocess.Popen(command, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + timeout
        while not ready():
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.proc.kill()
                out, err = self.proc.communicate()
                raise AssertionError(f"{args[0]} did not start listening: {out}{err}")
            time.sleep(0.02)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.communicate()

    def result(self, timeout=30, interrupt=False):
        """(exit status, stdout, stderr) once it ends (with `interrupt`, after a
        Ctrl-C); AssertionError if it does not within `timeout` s."""
        if interrupt:
            self.proc.send_signal(signal.SIGINT)
        try:
            out, err = self.proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            out, err = self.proc.communicate()
            raise AssertionError("it did not end (no stop heap?): " + err)
        return self.proc.returncode, out, err


class receiver(Background):
    """spead_recv ARGS in the background on 127.0.0.1 at `ports` (one port or a list),
    once it listens on every one."""

    def __init__(self, ports, *args):
        ports = [ports] if isinstance(ports, int) else list(ports)
        super().__init__(["spead_recv", *args, *("127.0.0.1:%d" % port for port in ports)],
                         lambda: all(udp_port_bound(port) for port in ports))
