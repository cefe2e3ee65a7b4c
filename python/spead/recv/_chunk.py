#
# Copyright 2026 gr-spead authors
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""spead2's chunk streams: ChunkRingStream, and ChunkStreamRingGroup with its members
(several streams, one per reader thread, filling one window of shared chunks).

Heaps are copied straight into chunks whose buffers you give (numpy arrays). Where
each heap goes is decided once per heap by the ChunkStreamConfig's placement:

- spead2's: a C callback (a scipy.LowLevelCallable, typically of a numba cfunc over
  gnuradio.spead.recv.numba.chunk_place_data), run unchanged;
- gr-spead's declarative ChunkPlacement (timestamp item, step, substream item): no
  compiler needed, the fast path.

The configs, Chunk and ChunkRingbuffer are bound from C++ (api_recv_chunk*.cc); what
is here adds spead2's reader forms and a group's sequence of members.
"""

import collections.abc

from ..spead_python import _recv_chunk
from ._stream_face import StreamFace


class ChunkRingStream(StreamFace, _recv_chunk._ChunkRingStream):
    """spead2.recv.ChunkRingStream(thread_pool, config, chunk_stream_config,
    data_ringbuffer, free_ringbuffer): heaps placed into chunks taken from
    free_ringbuffer, which leave for data_ringbuffer once out of the window
    (max_chunks). Give chunks with add_free_chunk() (or free_ringbuffer.put()), take
    them with data_ringbuffer.get() or by iterating it, and give them back. Both rings
    block as spead2's: a slow consumer makes the reader wait. Readers as recv.Stream."""


class ChunkStreamGroupMember(StreamFace, _recv_chunk._ChunkStreamGroupMember):
    """A stream of a group: the readers of recv.Stream, its stats; stop() stops the
    whole group, as spead2's. Made by ChunkStreamRingGroup.emplace_back()."""


class ChunkStreamRingGroup(collections.abc.Sequence):
    """spead2.recv.ChunkStreamRingGroup(config, data_ringbuffer, free_ringbuffer): a
    sequence of member streams (emplace_back) sharing chunks from free_ringbuffer,
    which leave for data_ringbuffer once every member has moved past them."""

    def __init__(self, config, data_ringbuffer, free_ringbuffer):
        self._core = _recv_chunk._ChunkStreamRingGroup(config, data_ringbuffer,
                                                       free_ringbuffer)
        self._config = config
        self._members = []

    @property
    def config(self):
        return self._config

    @property
    def data_ringbuffer(self):
        return self._core.data_ringbuffer

    @property
    def free_ringbuffer(self):
        return self._core.free_ringbuffer

    def add_free_chunk(self, chunk):
        self._core.add_free_chunk(chunk)

    def emplace_back(self, thread_pool, config, chunk_stream_config):
        member = ChunkStreamGroupMember(self._core, thread_pool, config,
                                        chunk_stream_config)
        member._group = self  # a member keeps its group alive, as spead2's
        self._members.append(member)
        return member

    def __len__(self):
        return len(self._members)

    def __getitem__(self, index):
        return self._members[index]

    def stop(self):
        self._core.stop()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()
        return False
