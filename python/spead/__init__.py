#
# Copyright 2008,2009 Free Software Foundation, Inc.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#

# The presence of this file turns this directory into a Python package

'''
This is the GNU Radio SPEAD module. Place your Python package
description here (python/__init__.py).
'''
import os

# import pybind11 generated symbols into the spead namespace
try:
    # this might fail if the module is python-only
    from .spead_python import *
except ModuleNotFoundError:
    pass
else:
    # import any pure python here
    # The spead2-compatible API (docs/python.md): `import gnuradio.spead as spead2`
    # gives Flavour, ThreadPool, MemoryPool (bindings), Descriptor, Item, ItemGroup
    # and the submodules recv and send, as spead2 does.
    from ._block_arguments import check_block_arguments as _check_block_arguments
    from ._items import Descriptor, Item, ItemGroup, parse_range_list  # noqa: F401
    from . import recv, send  # noqa: F401

    # vlen=-1 and the like: a ValueError naming the parameter, not pybind11's TypeError
    _check_block_arguments(source)  # noqa: F405
    _check_block_arguments(sink)  # noqa: F405
#
