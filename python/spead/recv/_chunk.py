#
# Copyright 2026 gr-spead authors
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""spead2's chunk stream API (recv.ChunkStreamConfig, Chunk, ChunkRingbuffer,
ChunkRingStream) and custom statistics (StreamStatConfig, StreamConfig.add_stat).

Heaps are copied straight into chunks whose buffers you give (numpy arrays). Where
each heap goes is decided once per heap by a placement:

- spead2's: a C callback (a scipy.LowLevelCallable, typically of a numba cfunc over
  gnuradio.spead.recv.numba.chunk_place_data), run unchanged;
- gr-spead's declarative ChunkPlacement (timestamp item, step, substream item): no
  compiler needed, the fast path.
"""

import enum
import numbers

import numpy as np

from ..spead_python import _recv_chunk as _core_chunk

Chunk = _core_chunk.Chunk
ChunkRingbuffer = _core_chunk.ChunkRingbuffer

_BUILTIN_STATS = list(_core_chunk.STAT_NAMES)
_MAXIMUM_STATS = {"max_batch"}

# spead2.recv.stream_stat_indices: the built-in counters' indices, by upper-case name
stream_stat_indices = type("stream_stat_indices", (), {
    name.upper(): index for index, name in enumerate(_BUILTIN_STATS)})


class StreamStatConfig:
    """A statistic of a stream (spead2.recv.StreamStatConfig): its name and how two
    values combine (Mode.COUNTER adds, Mode.MAXIMUM keeps the larger)."""

    class Mode(enum.Enum):
        COUNTER = 0
        MAXIMUM = 1

    def __init__(self, name, mode=Mode.COUNTER):
        if not isinstance(mode, StreamStatConfig.Mode):
            raise ValueError(f"mode: {mode!r}; give StreamStatConfig.Mode.COUNTER or "
                             "StreamStatConfig.Mode.MAXIMUM")
        self._name = str(name)
        self._mode = mode

    @property
    def name(self):
        return self._name

    @property
    def mode(self):
        return self._mode

    def combine(self, a, b):
        return max(a, b) if self._mode is StreamStatConfig.Mode.MAXIMUM else a + b

    def __eq__(self, other):
        return (isinstance(other, StreamStatConfig) and self._name == other._name
                and self._mode == other._mode)

    def __ne__(self, other):
        return not self == other

    def __hash__(self):
        return hash((self._name, self._mode))

    def __repr__(self):
        return f"StreamStatConfig({self._name!r}, {self._mode})"


def _builtin_stat_configs():
    return [StreamStatConfig(name, StreamStatConfig.Mode.MAXIMUM if name in _MAXIMUM_STATS
                             else StreamStatConfig.Mode.COUNTER)
            for name in _BUILTIN_STATS]


# ---- StreamConfig's statistics (installed on recv.StreamConfig by install()) ----

def _custom_stats(config):
    try:
        return object.__getattribute__(config, "_custom_stats")
    except AttributeError:
        object.__setattr__(config, "_custom_stats", [])
        return config._custom_stats


def _add_stat(self, name, mode=StreamStatConfig.Mode.COUNTER):
    """Adds a custom statistic; returns its index (for batch_stats in a placement
    callback). ValueError when the name is taken."""
    stat = StreamStatConfig(name, mode)
    if name in _BUILTIN_STATS or any(s.name == name for s in _custom_stats(self)):
        raise ValueError(f"name: a statistic {name!r} exists already; give another name")
    _custom_stats(self).append(stat)
    return len(_BUILTIN_STATS) + len(_custom_stats(self)) - 1


def _get_stat_index(self, name):
    """Index of the statistic called name; IndexError if there is none."""
    for i, stat in enumerate(_stream_stats(self)):
        if stat.name == name:
            return i
    raise IndexError(f"name: no statistic {name!r}; see StreamConfig.stats")


def _next_stat_index(self):
    return len(_BUILTIN_STATS) + len(_custom_stats(self))


def _stream_stats(self):
    return _builtin_stat_configs() + list(_custom_stats(self))


def stats_snapshot(pairs, config):
    """The StreamStats of a stream made with config, from its (name, value) pairs:
    every custom statistic of config.add_stat is in it (0 until something counts
    it, as in spead2), and each MAXIMUM one combines by max when stats are added."""
    from . import StreamStats
    values = dict(pairs)
    for stat in _custom_stats(config):
        values.setdefault(stat.name, 0)
    maximum = [stat.name for stat in _stream_stats(config)
               if stat.mode is StreamStatConfig.Mode.MAXIMUM]
    return StreamStats(values.items(), maximum)


# ---- chunk streams ----

class ChunkPlacement:
    """gr-spead's declarative placement (no compiler needed): position
    k = timestamp // timestamp_step lies in chunk k // heaps_per_chunk, at heap index
    (k % heaps_per_chunk) * substreams + substream and byte offset heap index *
    heap_size. The substream is the substream_item's value minus first_substream
    (always 0 without a substream_item), or, given substream_ids (a list or range, one
    id per substream, in order), its place in them: substream_ids=[8, 9, 10, 11] takes
    the same as first_substream=8 with 4 substreams. Checked as spead.source checks
    its own (one copy, in C++). Heaps whose timestamp is not a multiple of
    timestamp_step, or whose substream is out of range, are rejected
    (rejected_heaps). Give it as ChunkStreamConfig(place=ChunkPlacement(...))."""

    def __init__(self, *, timestamp_item, timestamp_step, heap_size, heaps_per_chunk,
                 substream_item=0, substreams=None, first_substream=0,
                 substream_ids=()):
        self.timestamp_item = int(timestamp_item)
        self.timestamp_step = int(timestamp_step)
        self.heap_size = int(heap_size)
        self.heaps_per_chunk = int(heaps_per_chunk)
        self.substream_item = int(substream_item)
        self.substream_ids = [int(i) for i in substream_ids]
        # Without substreams, as many as substream_ids name (at least 1).
        self.substreams = int(substreams if substreams is not None
                              else max(1, len(self.substream_ids)))
        self.first_substream = int(first_substream)
        self._policy = _core_chunk._declarative_placement(
            self.timestamp_item, self.timestamp_step, self.heap_size,
            self.heaps_per_chunk, self.substream_item, self.substreams,
            self.first_substream, self.substream_ids)

    @property
    def chunk_heaps(self):
        """Heaps per chunk (the size of present)."""
        return self.heaps_per_chunk * self.substreams

    @property
    def chunk_bytes(self):
        """Bytes of data per chunk."""
        return self.chunk_heaps * self.heap_size

    def make_chunk(self, extra=None):
        """A Chunk with numpy buffers of the right sizes: data (uint8, shaped
        heaps_per_chunk x substreams x heap_size) and present (uint8)."""
        data = np.zeros((self.heaps_per_chunk, self.substreams, self.heap_size), np.uint8)
        present = np.zeros((self.heaps_per_chunk, self.substreams), np.uint8)
        return Chunk(data=data, present=present, extra=extra)

    def __repr__(self):
        return (f"ChunkPlacement(timestamp_item={self.timestamp_item:#x}, "
                f"timestamp_step={self.timestamp_step}, heap_size={self.heap_size}, "
                f"heaps_per_chunk={self.heaps_per_chunk}, "
                f"substream_item={self.substream_item:#x}, substreams={self.substreams}, "
                f"first_substream={self.first_substream}"
                + (f", substream_ids={self.substream_ids}" if self.substream_ids else "")
                + ")")


def _check_count(name, value, minimum):
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < minimum:
        raise ValueError(f"{name}: {value!r} is not a count; give an integer >= {minimum}")
    return int(value)


class ChunkStreamConfig:
    """Settings of a chunk stream (spead2.recv.ChunkStreamConfig): items (immediate
    items whose values the placement reads), max_chunks (live at once), place (a
    scipy.LowLevelCallable / spead2-style tuple, or a ChunkPlacement), max_heap_extra,
    and packet presence."""

    DEFAULT_MAX_CHUNKS = _core_chunk.DEFAULT_MAX_CHUNKS

    def __init__(self, **kwargs):
        self.items = []
        self.max_chunks = self.DEFAULT_MAX_CHUNKS
        self.place = None
        self.max_heap_extra = 0
        self._packet_presence_payload_size = 0
        for key, value in kwargs.items():
            if key not in ("items", "max_chunks", "place", "max_heap_extra"):
                raise TypeError(f"{key}: not a field of ChunkStreamConfig")
            setattr(self, key, value)

    @property
    def items(self):
        return list(self._items)

    @items.setter
    def items(self, value):
        self._items = [int(v) for v in value]

    @property
    def max_chunks(self):
        return self._max_chunks

    @max_chunks.setter
    def max_chunks(self, value):
        self._max_chunks = _check_count("max_chunks", value, 1)

    @property
    def max_heap_extra(self):
        return self._max_heap_extra

    @max_heap_extra.setter
    def max_heap_extra(self, value):
        self._max_heap_extra = _check_count("max_heap_extra", value, 0)

    @property
    def place(self):
        return self._place

    @place.setter
    def place(self, value):
        if value is None:
            self._policy = None
        elif isinstance(value, ChunkPlacement):
            self._policy = value._policy
        else:
            self._policy = _core_chunk._callback_placement(value)
        self._place = value

    def enable_packet_presence(self, payload_size):
        self._packet_presence_payload_size = _check_count("payload_size", payload_size, 1)

    def disable_packet_presence(self):
        self._packet_presence_payload_size = 0

    @property
    def packet_presence_payload_size(self):
        return self._packet_presence_payload_size


def _stream_arguments(thread_pool, config, chunk_stream_config):
    """The C++ stream's arguments (_ChunkStreamArguments), checked, from spead2's
    three."""
    from . import StreamConfig
    from .. import spead_python as _core
    if not isinstance(thread_pool, _core.ThreadPool):
        raise ValueError(f"thread_pool: {thread_pool!r} is not a spead.ThreadPool; "
                         "give spead.ThreadPool()")
    config = StreamConfig() if config is None else config
    if not isinstance(config, StreamConfig):
        raise ValueError(f"config: {config!r} is not a spead.recv.StreamConfig")
    if not isinstance(chunk_stream_config, ChunkStreamConfig):
        raise ValueError(f"chunk_stream_config: {chunk_stream_config!r} is not a "
                         "spead.recv.ChunkStreamConfig")
    if chunk_stream_config._policy is None:
        raise ValueError("chunk_stream_config.place: None; give a placement (a "
                         "scipy.LowLevelCallable of a numba cfunc, or "
                         "recv.ChunkPlacement(...))")
    stats = [(s.name, s.mode is StreamStatConfig.Mode.MAXIMUM)
             for s in _custom_stats(config)]
    return _core_chunk._ChunkStreamArguments(
        thread_pool, config.max_heaps, config.max_heap_size, config.stop_on_stop_item,
        int(config.stream_id), chunk_stream_config.items, chunk_stream_config.max_chunks,
        chunk_stream_config.max_heap_extra,
        chunk_stream_config.packet_presence_payload_size, chunk_stream_config._policy,
        stats)


class ChunkRingStream(_core_chunk._ChunkRingStream):
    """spead2.recv.ChunkRingStream: heaps placed into chunks taken from
    free_ringbuffer, which leave for data_ringbuffer once out of the window
    (max_chunks). Give chunks with add_free_chunk() (or free_ringbuffer.put()), take
    them with data_ringbuffer.get() or by iterating it, and give them back. Both rings
    block as spead2's: a slow consumer makes the reader wait. Readers as recv.Stream."""

    def __init__(self, thread_pool, config, chunk_stream_config, data_ringbuffer,
                 free_ringbuffer):
        super().__init__(_stream_arguments(thread_pool, config, chunk_stream_config),
                         data_ringbuffer, free_ringbuffer)
        self._config = config
        self._chunk_stream_config = chunk_stream_config
        self._place = chunk_stream_config.place  # keeps the C function alive

    @property
    def config(self):
        return self._config

    @property
    def chunk_stream_config(self):
        return self._chunk_stream_config

    @property
    def stats(self):
        return stats_snapshot(self._stats(), self._config)

    def start(self):
        """Readers start when added; kept for spead2's explicit_start scripts."""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()
        return False


_READER_METHODS = ("add_udp_reader", "add_udp_ibv_reader", "add_udp_pcap_file_reader",
                   "add_tcp_reader", "add_buffer_reader", "add_inproc_reader",
                   "_env_comp_vector")
_READER_CONSTANTS = ("DEFAULT_UDP_MAX_SIZE", "DEFAULT_UDP_BUFFER_SIZE",
                     "DEFAULT_UDP_IBV_MAX_SIZE", "DEFAULT_UDP_IBV_BUFFER_SIZE",
                     "DEFAULT_UDP_IBV_MAX_POLL")


def install(stream_config_cls, stream_cls, targets=()):
    """Gives recv.StreamConfig spead2's statistics methods and ChunkRingStream the
    readers of recv.Stream (one copy of their argument handling)."""
    stream_config_cls.add_stat = _add_stat
    stream_config_cls.get_stat_index = _get_stat_index
    stream_config_cls.next_stat_index = _next_stat_index
    stream_config_cls.stats = property(_stream_stats)
    for target in (ChunkRingStream,) + tuple(targets):
        for name in _READER_METHODS + _READER_CONSTANTS:
            if hasattr(stream_cls, name):
                setattr(target, name, stream_cls.__dict__.get(name, getattr(stream_cls, name)))
