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

The readers are gr-spead's (kernel UDP sockets, ibverbs, capture replay) feeding its
heap assembler; heaps come out complete, or as IncompleteHeap when the ring config
asks for them. Item values are numpy views of the heap's memory.
"""

import numbers
import os

from .. import spead_python as _core
from .._arguments import IbvConfigFields, bind_arguments, endpoints_text, host_port, unsigned
from ..spead_python import _recv

RawItem = _recv.RawItem
Heap = _recv.Heap
IncompleteHeap = _recv.IncompleteHeap

_ENV_INTERFACE = ("SPEAD2_IBV_INTERFACE", "GR_SPEAD_IBV_INTERFACE")
_ENV_COMP_VECTOR = ("SPEAD2_IBV_COMP_VECTOR", "GR_SPEAD_IBV_COMP_VECTOR")


def _check_count(name, value, minimum=1):
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < minimum:
        raise ValueError(f"{name}: {value!r} is not a count; give an integer >= {minimum}")
    return int(value)


def _check_size(name, value):
    return _check_count(name, value, minimum=0)


def _environment(names):
    """(name, value) of the first of names set in the environment, or (None, None)."""
    for name in names:
        value = os.environ.get(name)
        if value:
            return name, value
    return None, None


class StreamConfig:
    """Assembler settings (as spead2.recv.StreamConfig). Every field gr-spead cannot
    honour raises ValueError for any value but spead2's default; max_heap_size is
    gr-spead's own (heaps above it are dropped and counted)."""

    DEFAULT_MAX_HEAPS = _recv.DEFAULT_MAX_HEAPS

    def __init__(self, *, max_heaps=DEFAULT_MAX_HEAPS, substreams=1, bug_compat=0,
                 memcpy=_core.MEMCPY_STD, memory_allocator=None, stop_on_stop_item=True,
                 allow_unsized_heaps=True, allow_out_of_order=False, stream_id=0,
                 explicit_start=False, max_heap_size=_recv.DEFAULT_MAX_HEAP_SIZE):
        self.max_heaps = max_heaps
        self.substreams = substreams
        self.bug_compat = bug_compat
        self.memcpy = memcpy
        self.memory_allocator = memory_allocator
        self.stop_on_stop_item = stop_on_stop_item
        self.allow_unsized_heaps = allow_unsized_heaps
        self.allow_out_of_order = allow_out_of_order
        self.stream_id = stream_id
        self.explicit_start = explicit_start
        self.max_heap_size = max_heap_size

    def __setattr__(self, name, value):
        check = getattr(self, "_check_" + name, None)
        if check is not None:
            value = check(value)
        object.__setattr__(self, name, value)

    @staticmethod
    def _check_max_heaps(value):
        return _check_count("max_heaps", value)

    @staticmethod
    def _check_max_heap_size(value):
        return _check_count("max_heap_size", value)

    @staticmethod
    def _check_substreams(value):
        if value != 1:
            raise ValueError(f"substreams: {value!r} is not supported; gr-spead's "
                             "assembler shares max_heaps among all senders, so raise "
                             "max_heaps instead (e.g. max_heaps × senders)")
        return 1

    @staticmethod
    def _check_bug_compat(value):
        _core.Flavour(bug_compat=value)  # the same checks and messages
        return value

    @staticmethod
    def _check_memcpy(value):
        if value != _core.MEMCPY_STD:
            raise ValueError(f"memcpy: {value!r} is not supported; gr-spead copies "
                             "with MEMCPY_STD only: leave the default")
        return value

    @staticmethod
    def _check_memory_allocator(value):
        if value is not None and not isinstance(value, _core.MemoryAllocator):
            raise ValueError(f"memory_allocator: {value!r} is not a spead.MemoryPool")
        return value

    @staticmethod
    def _check_allow_unsized_heaps(value):
        if not value:
            raise ValueError("allow_unsized_heaps: False is not supported; gr-spead "
                             "assembles heaps without HEAP_SIZE (their extent is "
                             "their size): leave the default True")
        return True

    @staticmethod
    def _check_allow_out_of_order(value):
        # Both are honoured in the sense that matters: out-of-order packets are always
        # placed (spead2 with False would drop them and lose the heap).
        return bool(value)

    @staticmethod
    def _check_explicit_start(value):
        if value:
            raise ValueError("explicit_start: True is not supported; gr-spead's "
                             "readers start when they are added: leave it False and "
                             "add the readers when the stream should start")
        return False

    def __repr__(self):
        return (f"StreamConfig(max_heaps={self.max_heaps}, "
                f"stop_on_stop_item={self.stop_on_stop_item}, bug_compat={self.bug_compat}, "
                f"max_heap_size={self.max_heap_size})")


class RingStreamConfig:
    """The queue of completed heaps (as spead2.recv.RingStreamConfig). When it is
    full, full_queue_policy says what happens (gr-spead's addition): 'block'
    (default, spead2's) makes the reader wait for the consumer, so a capture replay
    loses nothing and a socket's datagrams wait in its buffer, where the kernel drops
    what does not fit (packets_dropped_socket_overflow / runs_dropped_socket_overflow;
    each wait counts reader_waits_queue_full); 'drop' drops the newest heap and counts
    it (heaps_dropped_queue_full): the reader never waits. contiguous_only=False
    delivers incomplete heaps (zero-filled, with their payload_ranges)."""

    # 8, not spead2's 4: a full ring drops the newest heap here where spead2 blocks
    # its reader, so gr-spead keeps twice the room (docs/python.md)
    DEFAULT_HEAPS = _recv.DEFAULT_RING_HEAPS
    FULL_QUEUE_POLICIES = ("block", "drop")

    def __init__(self, *, heaps=DEFAULT_HEAPS, contiguous_only=True,
                 incomplete_keep_payload_ranges=False, full_queue_policy="block"):
        self.heaps = _check_count("heaps", heaps)
        self.contiguous_only = bool(contiguous_only)
        # payload ranges are always kept: accepted either way
        self.incomplete_keep_payload_ranges = bool(incomplete_keep_payload_ranges)
        _recv._check_full_queue_policy(full_queue_policy)  # the one check, in C++
        self.full_queue_policy = full_queue_policy


class UdpIbvConfig(IbvConfigFields):
    """Settings of an ibverbs reader (as spead2.recv.UdpIbvConfig), checked by every
    setter as spead2's; buffer_size 0 means the default. The endpoints and interface
    are checked when the reader is added (parameter, value, fix)."""

    DEFAULT_BUFFER_SIZE = _recv.DEFAULT_UDP_IBV_BUFFER_SIZE
    DEFAULT_MAX_SIZE = _recv.DEFAULT_UDP_IBV_MAX_SIZE
    DEFAULT_MAX_POLL = _recv.DEFAULT_UDP_IBV_MAX_POLL

    def __init__(self, *, endpoints=(), interface_address="",
                 buffer_size=DEFAULT_BUFFER_SIZE, max_size=DEFAULT_MAX_SIZE, comp_vector=0,
                 max_poll=DEFAULT_MAX_POLL):
        self.endpoints = endpoints
        self.interface_address = interface_address
        self.buffer_size = buffer_size
        self.max_size = max_size
        self.comp_vector = comp_vector
        self.max_poll = max_poll

    @staticmethod
    def _check_max_size(value):
        if unsigned("max_size", value) == 0:
            raise ValueError("max_size: 0; give the largest packet to receive (e.g. 9200)")
        return int(value)


class StreamStats:
    """Every counter of the stream by name, as attributes and as a mapping (spead2's
    StreamStats shape; the names are gr-spead's, see docs/statistics.md, plus any
    custom ones). As in spead2 they can be set by name, index or attribute, and added
    (+, +=): counters add, the names in `maximum` take the larger value."""

    def __init__(self, pairs, maximum=("max_batch",)):
        object.__setattr__(self, "_values", dict(pairs))
        object.__setattr__(self, "_maximum", frozenset(maximum))

    def _name(self, key):
        if isinstance(key, numbers.Integral):
            return list(self._values)[key]  # IndexError past the end, as a list
        if key not in self._values:
            raise KeyError(key)
        return key

    def __setitem__(self, key, value):
        self._values[self._name(key)] = value

    def __setattr__(self, name, value):
        if name not in self._values:
            raise AttributeError(f"no counter named {name!r}; see keys()")
        self._values[name] = value

    def __add__(self, other):
        if not isinstance(other, StreamStats):
            return NotImplemented
        if list(self._values) != list(other._values) or self._maximum != other._maximum:
            raise ValueError("StreamStats: the two have different counters; add the "
                             "stats of streams made with the same StreamConfig")
        total = {name: max(value, other._values[name]) if name in self._maximum
                 else value + other._values[name] for name, value in self._values.items()}
        return StreamStats(total.items(), self._maximum)

    def __iadd__(self, other):
        total = self + other
        if total is NotImplemented:
            return total
        self._values.update(total._values)
        return self

    def __getattr__(self, name):
        try:
            return self._values[name]
        except KeyError:
            raise AttributeError(f"no counter named {name!r}; see keys()") from None

    def __getitem__(self, name):
        if isinstance(name, numbers.Integral):
            return list(self._values.values())[name]
        return self._values[name]

    def __contains__(self, name):
        return name in self._values

    def get(self, name, default=None):
        return self._values.get(name, default)

    def keys(self):
        return self._values.keys()

    def values(self):
        return self._values.values()

    def items(self):
        return self._values.items()

    def __iter__(self):
        return iter(self._values)

    def __len__(self):
        return len(self._values)

    @property
    def config(self):
        """[StreamStatConfig] of the counters, in order (as spead2's)."""
        mode = StreamStatConfig.Mode
        return [StreamStatConfig(name, mode.MAXIMUM if name in self._maximum
                                 else mode.COUNTER) for name in self._values]

    def __repr__(self):
        return "StreamStats(" + ", ".join(f"{k}={v}" for k, v in self._values.items()) + ")"


class Stream(_recv._Stream):
    """A receive stream (as spead2.recv.Stream): add readers, then take heaps with
    get(), get_nowait() or iteration (which ends at a stop heap or stop())."""

    DEFAULT_UDP_MAX_SIZE = _recv.DEFAULT_UDP_MAX_SIZE
    DEFAULT_UDP_BUFFER_SIZE = _recv.DEFAULT_UDP_BUFFER_SIZE
    DEFAULT_UDP_IBV_MAX_SIZE = _recv.DEFAULT_UDP_IBV_MAX_SIZE
    DEFAULT_UDP_IBV_BUFFER_SIZE = _recv.DEFAULT_UDP_IBV_BUFFER_SIZE
    DEFAULT_UDP_IBV_MAX_POLL = _recv.DEFAULT_UDP_IBV_MAX_POLL
    DEFAULT_TCP_MAX_SIZE = _recv.DEFAULT_TCP_MAX_SIZE
    DEFAULT_TCP_BUFFER_SIZE = _recv.DEFAULT_TCP_BUFFER_SIZE
    DEFAULT_RDMA_MAX_SIZE = _recv.DEFAULT_RDMA_MAX_SIZE
    DEFAULT_RDMA_CONNECTIONS = _recv.DEFAULT_RDMA_CONNECTIONS
    DEFAULT_RDMA_DEPTH = _recv.DEFAULT_RDMA_DEPTH
    DEFAULT_RDMA_RECV_DEPTH = _recv.DEFAULT_RDMA_RECV_DEPTH

    def __init__(self, thread_pool, config=None, ring_config=None):
        if not isinstance(thread_pool, _core.ThreadPool):
            raise ValueError(f"thread_pool: {thread_pool!r} is not a spead.ThreadPool; "
                             "give spead.ThreadPool()")
        config = StreamConfig() if config is None else config
        ring_config = RingStreamConfig() if ring_config is None else ring_config
        if not isinstance(config, StreamConfig):
            raise ValueError(f"config: {config!r} is not a spead.recv.StreamConfig")
        if not isinstance(ring_config, RingStreamConfig):
            raise ValueError(f"ring_config: {ring_config!r} is not a "
                             "spead.recv.RingStreamConfig")
        super().__init__(thread_pool, config.max_heaps, config.max_heap_size,
                         config.stop_on_stop_item, not ring_config.contiguous_only,
                         ring_config.heaps, config.bug_compat,
                         ring_config.full_queue_policy == "block")
        self._config = config
        self._ring_config = ring_config

    @property
    def config(self):
        return self._config

    @property
    def ring_config(self):
        return self._ring_config

    @property
    def stats(self):
        """A snapshot of every counter (StreamStats), custom ones included."""
        return _chunk_api.stats_snapshot(self._stats(), self._config)

    def add_udp_reader(self, *args, **kwargs):
        """spead2's forms:
        add_udp_reader(port, max_size=DEFAULT_UDP_MAX_SIZE, buffer_size=DEFAULT_UDP_BUFFER_SIZE,
                       bind_hostname='')
        add_udp_reader(multicast_group, port, max_size=..., buffer_size=...,
                       interface_address='')
        add_udp_reader(multicast_group, port, max_size=..., buffer_size=...,
                       interface_index=0)   (IPv6 groups, e.g. 'ff14::1')
        bind_hostname and multicast_group may be IPv6 ('::1', '::').
        With SPEAD2_IBV_INTERFACE (or GR_SPEAD_IBV_INTERFACE) set, the reader is an
        ibverbs one on that interface, unless interface_address names another.
        Returns the (address, port) pairs bound (kernel sockets)."""
        if args and isinstance(args[0], numbers.Integral) and not isinstance(args[0], bool):
            host, port, rest = kwargs.pop("bind_hostname", ""), args[0], args[1:]
            names = ("max_size", "buffer_size", "bind_hostname")
            interface = ""
        elif args and isinstance(args[0], str):
            if len(args) < 2 and "port" not in kwargs:
                raise ValueError(f"port: missing for multicast_group {args[0]!r}; give "
                                 "add_udp_reader(multicast_group, port, ...)")
            host = args[0]
            port = args[1] if len(args) > 1 else kwargs.pop("port")
            rest = args[2:]
            names = ("max_size", "buffer_size", "interface_address")
            interface = kwargs.pop("interface_address", "")
        elif (args and hasattr(args[0], "fileno")) or "socket" in kwargs:
            raise NotImplementedError(
                "add_udp_reader(socket): a reader on an existing socket is not supported "
                "by gr-spead; give the port instead: add_udp_reader(port, "
                "bind_hostname=...) or add_udp_reader(multicast_group, port, "
                "interface_address=...) (see docs/python.md)")
        elif "port" in kwargs:
            return self.add_udp_reader(kwargs.pop("port"), *args, **kwargs)
        else:
            raise ValueError(f"port: {args[0] if args else None!r} is not a UDP port; "
                             "give add_udp_reader(port, ...) or "
                             "add_udp_reader(multicast_group, port, ...)")
        index = kwargs.pop("interface_index", None)
        options = dict(zip(names, rest))
        for key in ("max_size", "buffer_size"):
            if key in kwargs:
                options[key] = kwargs.pop(key)
        if kwargs:
            raise ValueError(f"{next(iter(kwargs))}: not a parameter of add_udp_reader")
        if names[2] == "bind_hostname" and "bind_hostname" in options:
            host = options.pop("bind_hostname")
        interface = options.pop("interface_address", interface)
        if isinstance(interface, numbers.Integral):  # positional interface_index
            index, interface = interface, ""
        if index is not None:  # spead2's IPv6 multicast form
            if ":" not in host or interface:
                raise ValueError(f"interface_index: given with {host!r}; it is for IPv6 "
                                 "multicast groups (e.g. 'ff14::1'); for IPv4 give "
                                 "interface_address")
            if not isinstance(index, numbers.Integral) or index < 0:
                raise ValueError(f"interface_index: {index!r} is not an interface index; "
                                 "give 0 (the kernel's choice) or socket.if_nametoindex()")
            interface = str(index) if index else ""
        if isinstance(port, bool) or not isinstance(port, numbers.Integral) or \
                not 0 <= port <= 65535:  # spead2's uint16 conversion: TypeError
            raise TypeError(f"port: {port!r} is not a UDP port; give 1 to 65535")
        if port == 0:
            raise ValueError("port: 0; give the port the sender sends to (1 to 65535)")
        max_size = _check_count("max_size", options.get("max_size",
                                                        self.DEFAULT_UDP_MAX_SIZE))
        buffer_size = _check_size("buffer_size", options.get("buffer_size",
                                                             self.DEFAULT_UDP_BUFFER_SIZE))
        endpoint = host_port(host, port)
        env_name, env_interface = _environment(_ENV_INTERFACE)
        if env_interface:
            self._add_udp_ibv_reader(endpoint, interface or env_interface, max_size,
                                     self.DEFAULT_UDP_IBV_BUFFER_SIZE,
                                     self._env_comp_vector(0), self.DEFAULT_UDP_IBV_MAX_POLL)
            return []
        return self._add_udp_reader(endpoint, interface, max_size, buffer_size)

    @staticmethod
    def _env_comp_vector(default):
        name, value = _environment(_ENV_COMP_VECTOR)
        if value is None:
            return default
        try:
            return int(value)
        except ValueError:
            raise ValueError(f"{name}: {value!r} is not an integer; set a completion "
                             "vector (0, 1, ...), a negative number for busy polling, "
                             "or unset it") from None

    def add_udp_ibv_reader(self, *args, **kwargs):
        """add_udp_ibv_reader(config: UdpIbvConfig), or the positional forms of the
        ibverbs documentation:
        add_udp_ibv_reader(endpoints, interface_address, max_size=..., buffer_size=...,
                           comp_vector=0, max_poll=...)
        add_udp_ibv_reader(multicast_group, port, interface_address, max_size=...,
                           buffer_size=..., comp_vector=0, max_poll=...)"""
        if len(args) == 1 and not kwargs and isinstance(args[0], UdpIbvConfig):
            c = args[0]
            endpoints, interface = c.endpoints, c.interface_address
            max_size, buffer_size = c.max_size, c.buffer_size
            comp_vector, max_poll = c.comp_vector, c.max_poll
        else:
            if args and isinstance(args[0], str):  # (multicast_group, port, interface, ...)
                if len(args) < 2:
                    raise ValueError(f"port: missing for multicast_group {args[0]!r}")
                args = ([(args[0], args[1])],) + tuple(args[2:])
            names = ("endpoints", "interface_address", "max_size", "buffer_size",
                     "comp_vector", "max_poll")
            values = bind_arguments("add_udp_ibv_reader", names, args, kwargs)
            if "endpoints" not in values or "interface_address" not in values:
                raise ValueError("endpoints and interface_address: both needed; give "
                                 "add_udp_ibv_reader(UdpIbvConfig(...)) or "
                                 "add_udp_ibv_reader([(group, port)], interface_address)")
            c = UdpIbvConfig(**values)
            endpoints, interface = c.endpoints, c.interface_address
            max_size, buffer_size = c.max_size, c.buffer_size
            comp_vector, max_poll = c.comp_vector, c.max_poll
        if not interface:
            _, interface = _environment(_ENV_INTERFACE)
            if interface:
                comp_vector = self._env_comp_vector(comp_vector)
        if not interface:
            raise ValueError("interface_address: empty; ibverbs receives through the "
                             "RDMA device that owns an interface: give its IPv4 address "
                             "or netdev name (or set SPEAD2_IBV_INTERFACE)")
        text = endpoints_text(endpoints)
        self._add_udp_ibv_reader(text, interface, max_size, buffer_size, comp_vector,
                                 max_poll)

    def add_udp_pcap_file_reader(self, filename, filter=""):
        """Replays the UDP payloads of a capture; filter may be '' (all) or
        'udp dst port N' / 'udp port N' / 'port N' (one destination port)."""
        self._add_pcap_reader(os.fspath(filename), _pcap_port(filter))

    def add_tcp_reader(self, *args, **kwargs):
        """spead2's forms:
        add_tcp_reader(port, max_size=DEFAULT_TCP_MAX_SIZE,
                       buffer_size=DEFAULT_TCP_BUFFER_SIZE, bind_hostname='')
        Listens for one sender (SPEAD over TCP, spead2's framing); the stream ends
        when it disconnects. Returns the (address, port) listened on. spead2's
        add_tcp_reader(acceptor) (an existing listening socket) is not supported."""
        if (args and hasattr(args[0], "fileno")) or "acceptor" in kwargs:
            raise NotImplementedError(
                "acceptor: a reader on an existing listening socket is not supported by "
                "gr-spead; give the port (add_tcp_reader(port, bind_hostname=...)) "
                "(see docs/python.md)")
        values = bind_arguments("add_tcp_reader",
                                ("port", "max_size", "buffer_size", "bind_hostname"),
                                args, kwargs)
        port = values.get("port")
        if isinstance(port, bool) or not isinstance(port, numbers.Integral) or \
                not 0 <= port <= 65535:
            raise ValueError(f"port: {port!r} is not a TCP port; give 1 to 65535 "
                             "(or 0 for any free one), or a listening socket")
        max_size = _check_count("max_size", values.get("max_size",
                                                       self.DEFAULT_TCP_MAX_SIZE))
        buffer_size = _check_size("buffer_size", values.get("buffer_size",
                                                            self.DEFAULT_TCP_BUFFER_SIZE))
        host = values.get("bind_hostname", "") or ""
        if ":" in host and not host.startswith("["):
            host = f"[{host}]"  # an IPv6 address
        return self._add_tcp_reader(f"{host}:{port}", max_size, buffer_size)

    def add_rdma_reader(self, *args, **kwargs):
        """Listens for one sender of SPEAD over RDMA (RC queue pairs set up with
        rdma_cm; docs/links.md), as add_tcp_reader does for TCP:
        add_rdma_reader(port, max_size=DEFAULT_RDMA_MAX_SIZE, bind_hostname='',
                        interface_address='', rdma_connections=DEFAULT_RDMA_CONNECTIONS,
                        rdma_depth=DEFAULT_RDMA_DEPTH, recv_depth=DEFAULT_RDMA_RECV_DEPTH,
                        max_connections=1)
        port may also be a URI, 'verbs://ADDR:PORT' or 'verbs://:PORT'. Up to
        max_connections senders at once (fan-in; each assembled apart); the
        stream ends when the last has disconnected."""
        names = ("port", "max_size", "bind_hostname", "interface_address",
                 "rdma_connections", "rdma_depth", "recv_depth", "max_connections")
        values = bind_arguments("add_rdma_reader", names, args, kwargs)
        port = values.get("port")
        if isinstance(port, str):
            uri = port
        elif isinstance(port, bool) or not isinstance(port, numbers.Integral) or \
                not 1 <= port <= 65535:
            raise ValueError(f"port: {port!r} is not a port; give 1 to 65535, or a "
                             "URI 'verbs://ADDR:PORT'")
        else:
            uri = f"verbs://{values.get('bind_hostname', '') or ''}:{port}"
        self._add_rdma_reader(
            uri,
            _check_count("max_size", values.get("max_size", self.DEFAULT_RDMA_MAX_SIZE)),
            values.get("interface_address", "") or "",
            unsigned("rdma_connections",
                     values.get("rdma_connections", self.DEFAULT_RDMA_CONNECTIONS)),
            unsigned("rdma_depth", values.get("rdma_depth", self.DEFAULT_RDMA_DEPTH)),
            unsigned("recv_depth",
                     values.get("recv_depth", self.DEFAULT_RDMA_RECV_DEPTH)),
            _check_count("max_connections", values.get("max_connections", 1)))

    def add_buffer_reader(self, *args, **kwargs):
        raise NotImplementedError("add_buffer_reader: not supported by gr-spead; write "
                                  "the packets to a capture and use "
                                  "add_udp_pcap_file_reader")

    def add_inproc_reader(self, *args, **kwargs):
        raise NotImplementedError("add_inproc_reader: inproc transport is not supported "
                                  "by gr-spead; use UDP on 127.0.0.1")

    def start(self):
        """Readers start when added; kept for spead2's explicit_start scripts."""

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

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()
        return False


def _pcap_port(filter):
    words = (filter or "").split()
    if not words:
        return 0
    if words[0] == "udp":
        words = words[1:]
    if words[:1] == ["dst"]:
        words = words[1:]
    if len(words) == 2 and words[0] == "port" and words[1].isdigit():
        return int(words[1])
    raise ValueError(f"filter: {filter!r} is not supported; gr-spead replays all UDP "
                     "(filter '') or one destination port ('udp dst port 7148')")


# spead2's chunk stream API and custom statistics (python/spead/recv/_chunk.py)
from ._chunk import (Chunk, ChunkPlacement, ChunkRingbuffer, ChunkRingStream,  # noqa: E402
                     ChunkStreamConfig, StreamStatConfig, stream_stat_indices)
from ._chunk_group import (ChunkStreamGroupConfig, ChunkStreamGroupMember,  # noqa: E402
                           ChunkStreamRingGroup)
from . import _chunk as _chunk_api  # noqa: E402
_chunk_api.install(StreamConfig, Stream, (ChunkStreamGroupMember,))
