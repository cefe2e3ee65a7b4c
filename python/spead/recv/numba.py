#
# Copyright 2026 gr-spead authors
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""The placement callback's argument as a numba record (as spead2.recv.numba)."""

from numba import types

_size_t = getattr(types, "size_t", types.uintp)

# The layout of gr::spead::recv::chunk_place_data (include/gnuradio/spead/
# recv_chunk_place.h), which is spead2's. Pointers are integers: convert them with
# gnuradio.spead.numba.intp_to_voidptr, then numba.carray.
chunk_place_data = types.Record.make_c_struct([
    ("packet", types.intp),        # const uint8_t *
    ("packet_size", _size_t),
    ("items", types.intp),         # int64_t *: the requested items' values, -1 if absent
    ("chunk_id", types.int64),     # output; -1 (or untouched): the heap is rejected
    ("heap_index", _size_t),       # output: its byte of present
    ("heap_offset", _size_t),      # output: its byte offset in data
    ("batch_stats", types.intp),   # uint64_t *: indexed by StreamConfig.get_stat_index
    ("extra", types.intp),         # uint8_t *: max_heap_extra bytes to fill
    ("extra_offset", _size_t),     # output: where extra goes in the chunk's extra
    ("extra_size", _size_t),       # output: bytes of extra to copy
])
