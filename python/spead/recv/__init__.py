#
# Copyright 2026 gr-spead authors
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""Receive SPEAD heaps in a script, as spead2.recv does (see docs/python.md).

    import gnuradio.spead as spead2
    import gnuradio.spead.recv

    stream = spead2.recv.Stream(spead2.ThreadPool())
    stream.add_udp_reader(7148)
    ig = spead2.ItemGroup()
    for heap in stream:
        ig.update(heap)

The readers are gr-spead's (kernel UDP sockets, ibverbs, capture replay, TCP and RDMA
links) feeding its heap assembler; heaps come out complete, or as IncompleteHeap when
the ring config asks for them. Item values are numpy views of the heap's memory.

The configs are the C++ ones, bound with spead2's keyword constructors and
properties: their setters are the only rules, and a bad value is a ValueError with
the C++ message (a value of the wrong type a TypeError naming the field).
"""

from .. import spead_python as _core
from ..spead_python import _recv, _recv_chunk
from ._chunk import ChunkRingStream, ChunkStreamGroupMember, ChunkStreamRingGroup  # noqa
from ._stats import StreamStats, stream_stat_indices  # noqa: F401
from ._stream_face import StreamFace as _StreamFace

# The configs (api_recv_config.cc, api_recv_chunk_stream.cc, api_recv_chunk_group.cc)
StreamConfig = _recv.StreamConfig
RingStreamConfig = _recv.RingStreamConfig
StreamStatConfig = _recv.StreamStatConfig
UdpConfig = _recv.UdpConfig
UdpIbvConfig = _recv.UdpIbvConfig
TcpConfig = _recv.TcpConfig
RdmaConfig = _recv.RdmaConfig
ChunkStreamConfig = _recv_chunk.ChunkStreamConfig
ChunkPlacement = _recv_chunk.ChunkPlacement
ChunkStreamGroupConfig = _recv_chunk.ChunkStreamGroupConfig

# What a stream gives
RawItem = _recv.RawItem
Heap = _recv.Heap
IncompleteHeap = _recv.IncompleteHeap
Chunk = _recv_chunk.Chunk
ChunkRingbuffer = _recv_chunk.ChunkRingbuffer


class Stream(_StreamFace, _recv._Stream):
    """A receive stream (as spead2.recv.Stream(thread_pool, config=StreamConfig(),
    ring_config=RingStreamConfig())): add readers, then take heaps with get(),
    get_nowait() or iteration (which ends at a stop heap or stop())."""

    def get(self, timeout=None):
        """The next heap, waiting (the GIL released; Ctrl-C interrupts). Raises
        spead.Stopped once the stream has ended and every heap has been taken,
        spead.Empty when timeout (seconds) passes, RuntimeError if a reader failed."""
        return super().get(timeout)

    def __iter__(self):
        while True:
            try:
                yield super().get(None)
            except _core.Stopped:
                return
