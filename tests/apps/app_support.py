# Copyright 2026 gr-spead authors
# SPDX-License-Identifier: GPL-3.0-or-later
"""What the tests of the command-line tools share: running a tool and reading the
"name: value" statistics it prints."""

import os
import subprocess

APPS = os.environ["GR_SPEAD_APPS_DIR"]


def tool(name, *args, timeout=60):
    """Runs apps/NAME with args (any type, as strings); the CompletedProcess."""
    return subprocess.run([os.path.join(APPS, name), *map(str, args)],
                          capture_output=True, text=True, timeout=timeout)


def stats(stdout):
    """The "name: value" lines with a whole-number value, as a dict."""
    out = {}
    for line in stdout.splitlines():
        name, sep, value = line.partition(": ")
        if sep and value.isdigit() and " " not in name:
            out[name] = int(value)
    return out
