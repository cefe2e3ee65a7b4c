# Copyright 2026 gr-spead authors
# SPDX-License-Identifier: GPL-3.0-or-later
"""`import spead2` loads gnuradio.spead (tests/compat only; docs/testing.md).

Every spead2 module name maps onto the same gnuradio.spead module object, so a class
seen as spead2.recv.Stream is gnuradio.spead.recv.Stream. A module gr-spead does not
have (or whose dependency, e.g. numba, is absent) is simply not aliased: importing it
fails as it would in spead2 without it.
"""

import importlib
import os
import sys

for _suffix in ("", ".recv", ".send", ".recv.asyncio", ".send.asyncio", ".recv.numba",
                ".numba"):
    try:
        sys.modules["spead2" + _suffix] = importlib.import_module("gnuradio.spead" + _suffix)
    except ImportError:
        if not _suffix:
            raise

# --placeholders of run_spead2_suite.py: names a test module needs at import only
if os.environ.get("SPEAD2_COMPAT_PLACEHOLDERS"):
    for _name in ("StreamStatConfig", "Chunk"):
        if not hasattr(sys.modules["spead2.recv"], _name):
            _placeholder = type(_name, (), {"__init__": lambda self, *a, **k: None})
            _placeholder.Mode = type("Mode", (), {"COUNTER": 0, "MAXIMUM": 1})
            setattr(sys.modules["spead2.recv"], _name, _placeholder)
