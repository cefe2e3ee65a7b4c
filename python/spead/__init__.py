#
# Copyright 2008,2009 Free Software Foundation, Inc.
# Copyright 2026 gr-spead authors
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""SPEAD streams for GNU Radio: the blocks and a spead2-compatible API.

The blocks (docs/usage.md):
    source  SPEAD heaps from UDP, ibverbs or a capture file -> a stream of items
    sink    a stream of items -> SPEAD heaps to UDP, ibverbs or a capture file

The spead2-compatible API for scripts (docs/python.md): `import gnuradio.spead as
spead2` gives Flavour, ThreadPool, MemoryPool, MmapAllocator and InprocQueue (from the
bindings), Descriptor, Item and ItemGroup, and the submodules recv and send, as spead2
does.

The bindings (the compiled spead_python module) are required: when they cannot be
loaded, importing this package fails with their ImportError as the cause.
"""

try:
    from .spead_python import *  # noqa: F401,F403  (source, sink and the API's types)
except ImportError as error:
    raise ImportError(
        f"gnuradio.spead: its compiled bindings (spead_python) cannot be loaded: {error}; "
        "build gr-spead with ENABLE_PYTHON=ON and install it, or put the build's "
        "test_modules directory on PYTHONPATH") from error

from . import recv, send  # noqa: F401
from ._items import Descriptor, Item, ItemGroup, parse_range_list  # noqa: F401
