#
# Copyright 2026 gr-spead authors
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""spead2's chunk stream groups (recv.ChunkStreamGroupConfig, ChunkStreamRingGroup,
ChunkStreamGroupMember): several streams, one per reader thread (the multi-core
pattern), fill one window of shared chunks."""

import collections.abc
import enum
import numbers

from ..spead_python import _recv_chunk as _core_chunk
from ._chunk import _stream_arguments


class ChunkStreamGroupConfig:
    """Settings of a group (spead2.recv.ChunkStreamGroupConfig): max_chunks live at
    once, and what a member needing a chunk beyond them does (EvictionMode.LOSSY: the
    lagging members let go of the oldest; LOSSLESS: it waits for them)."""

    DEFAULT_MAX_CHUNKS = _core_chunk.DEFAULT_MAX_CHUNKS

    class EvictionMode(enum.Enum):
        LOSSY = 0
        LOSSLESS = 1

    def __init__(self, *, max_chunks=DEFAULT_MAX_CHUNKS, eviction_mode=EvictionMode.LOSSY):
        self.max_chunks = max_chunks
        self.eviction_mode = eviction_mode

    @property
    def max_chunks(self):
        return self._max_chunks

    @max_chunks.setter
    def max_chunks(self, value):
        if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
            raise ValueError(f"max_chunks: {value!r}; give an integer >= 1")
        self._max_chunks = int(value)

    @property
    def eviction_mode(self):
        return self._eviction_mode

    @eviction_mode.setter
    def eviction_mode(self, value):
        if not isinstance(value, ChunkStreamGroupConfig.EvictionMode):
            raise ValueError(f"eviction_mode: {value!r}; give "
                             "ChunkStreamGroupConfig.EvictionMode.LOSSY or LOSSLESS")
        self._eviction_mode = value


class ChunkStreamGroupMember:
    """A stream of a group: the readers of recv.Stream, its stats; stop() stops the
    whole group, as spead2's. Made by ChunkStreamRingGroup.emplace_back()."""

    def __init__(self, core, group, config, chunk_stream_config):
        self._core = core  # keeps the group's C++ side alive
        self._group = group
        self._config = config
        self._place = chunk_stream_config.place  # keeps the C function alive

    def __getattr__(self, name):
        if name.startswith("_") and not name.startswith("__"):
            return getattr(self.__dict__["_core"], name)  # _add_udp_reader, _stats...
        raise AttributeError(name)

    @property
    def config(self):
        return self._config

    @property
    def stats(self):
        from ._chunk import stats_snapshot
        return stats_snapshot(self._stats(), self._config)

    def stop(self):
        self._group.stop()


class ChunkStreamRingGroup(collections.abc.Sequence):
    """spead2.recv.ChunkStreamRingGroup: a sequence of member streams (emplace_back)
    sharing chunks from free_ringbuffer, which leave for data_ringbuffer once every
    member has moved past them."""

    def __init__(self, config, data_ringbuffer, free_ringbuffer):
        if not isinstance(config, ChunkStreamGroupConfig):
            raise ValueError(f"config: {config!r} is not a "
                             "spead.recv.ChunkStreamGroupConfig")
        lossless = config.eviction_mode is ChunkStreamGroupConfig.EvictionMode.LOSSLESS
        self._core = _core_chunk._ChunkStreamRingGroup(config.max_chunks, lossless,
                                                       data_ringbuffer, free_ringbuffer)
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
        core = self._core._emplace_back(_stream_arguments(thread_pool, config,
                                                          chunk_stream_config))
        self._members.append(ChunkStreamGroupMember(core, self, config, chunk_stream_config))
        return self._members[-1]

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

