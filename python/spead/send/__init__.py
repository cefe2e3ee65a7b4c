#
# Copyright 2026 gr-spead authors
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""Send SPEAD heaps from a script, as spead2.send does (see docs/python.md).

    import gnuradio.spead as spead2
    import gnuradio.spead.send

    stream = spead2.send.UdpStream(spead2.ThreadPool(), [("127.0.0.1", 7148)],
                                   spead2.send.StreamConfig(rate=1e9))
    ig = spead2.send.ItemGroup()
    ig.add_item(0x1000, "samples", "", (1024,), dtype=np.int16)
    ig["samples"].value = data
    stream.send_heap(ig.get_heap())
    stream.send_heap(ig.get_end())

Numpy values are sent from their own memory (no copy); over ibverbs, arrays inside
a registered memory region go out without even the copy into the NIC's ring.
"""

import enum
import errno
import math
import numbers
import weakref

from .. import spead_python as _core
from .._arguments import (CheckedFields, IbvConfigFields, bind_arguments, endpoints_text,
                          refusing_class, unsigned)
from .._items import ItemGroup as _ItemGroup
from ..spead_python import _send

Heap = _send.Heap
PacketGenerator = _send.PacketGenerator


def _check(name, value, minimum):
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or value < minimum:
        raise ValueError(f"{name}: {value!r} is out of range; give a number >= {minimum}")
    return value


class StreamConfig(CheckedFields):
    """Send settings (as spead2.send.StreamConfig), checked by every setter as in
    spead2; rate is in bytes per second (0: as fast as possible). burst_rate_ratio
    and rate_method are spead2's catch-up and hardware pacing, which gr-spead's
    limiter does not have: only their defaults (and RateMethod.SW) are accepted."""

    DEFAULT_MAX_PACKET_SIZE = _send.DEFAULT_MAX_PACKET_SIZE
    DEFAULT_MAX_HEAPS = _send.DEFAULT_MAX_HEAPS
    DEFAULT_BURST_SIZE = _send.DEFAULT_BURST_SIZE
    DEFAULT_BURST_RATE_RATIO = 1.05

    def __init__(self, *, max_packet_size=DEFAULT_MAX_PACKET_SIZE, rate=0.0,
                 burst_size=DEFAULT_BURST_SIZE, max_heaps=DEFAULT_MAX_HEAPS,
                 burst_rate_ratio=DEFAULT_BURST_RATE_RATIO, rate_method=None,
                 allow_hw_rate=True):
        self.max_packet_size = max_packet_size
        self.rate = rate
        self.burst_size = burst_size
        self.max_heaps = max_heaps
        self.burst_rate_ratio = burst_rate_ratio
        self.rate_method = RateMethod.AUTO if rate_method is None else rate_method
        self.allow_hw_rate = bool(allow_hw_rate)

    @staticmethod
    def _check_max_packet_size(value):
        value = unsigned("max_packet_size", value)
        if value < 64:
            raise ValueError(f"max_packet_size: {value} is too small; give 64 or more "
                             "(the UDP payload: 1472 for a 1500-byte MTU)")
        return value

    @staticmethod
    def _check_rate(value):
        if isinstance(value, bool) or not isinstance(value, numbers.Real) or \
                not math.isfinite(value) or value < 0:
            raise ValueError(f"rate: {value!r} is not a rate; give bytes per second "
                             ">= 0 and finite (0: as fast as possible)")
        return float(value)

    @staticmethod
    def _check_burst_size(value):
        return unsigned("burst_size", value)

    @staticmethod
    def _check_max_heaps(value):
        if unsigned("max_heaps", value) == 0:
            raise ValueError("max_heaps: 0 leaves no room in the queue; give 1 or more")
        return int(value)

    @classmethod
    def _check_burst_rate_ratio(cls, value):
        if isinstance(value, bool) or not isinstance(value, numbers.Real) or \
                not math.isfinite(value) or value < 1.0:
            raise ValueError(f"burst_rate_ratio: {value!r} must be at least 1.0 and "
                             "finite")
        if value != cls.DEFAULT_BURST_RATE_RATIO:
            raise ValueError(f"burst_rate_ratio: {value!r} is not supported; gr-spead's "
                             "rate limiter never sends faster than rate to catch up "
                             "(leave the default 1.05)")
        return float(value)

    @staticmethod
    def _check_rate_method(value):
        if not isinstance(value, RateMethod):
            raise TypeError(f"rate_method: {value!r} is not a spead.send.RateMethod")
        if value not in (RateMethod.AUTO, RateMethod.SW):
            raise ValueError(f"rate_method: {value} is not supported; gr-spead paces in "
                             "software (RateMethod.SW or AUTO)")
        return value

    @property
    def burst_rate(self):
        """rate × burst_rate_ratio, as spead2 (bytes per second)."""
        return self.rate * self.burst_rate_ratio

    def _args(self):
        return (self.max_packet_size, self.rate, self.burst_size, self.max_heaps)


class RateMethod(enum.Enum):
    SW = 0
    HW = 1
    AUTO = 2


StreamConfig.DEFAULT_RATE_METHOD = RateMethod.AUTO


class GroupMode(enum.Enum):
    ROUND_ROBIN = 0
    SERIAL = 1


class HeapReference:
    """A heap with its cnt and substream, for send_heaps (as spead2)."""

    def __init__(self, heap, *, cnt=-1, substream_index=0, rate=-1.0):
        if not isinstance(heap, Heap):
            raise ValueError(f"heap: {heap!r} is not a spead.send.Heap")
        if rate != -1.0:
            raise ValueError(f"rate: {rate!r} per heap is not supported; set the "
                             "stream's StreamConfig(rate=...) instead")
        self.heap = heap
        self.cnt = cnt
        self.substream_index = substream_index
        self.rate = rate


class HeapReferenceList:
    """A fixed list of HeapReferences for send_heaps (as spead2); slicing gives
    another HeapReferenceList."""

    def __init__(self, heaps):
        heaps = list(heaps)
        for ref in heaps:
            if not isinstance(ref, HeapReference):
                raise TypeError(f"heaps: {ref!r} is not a spead.send.HeapReference")
        self._refs = heaps

    def __len__(self):
        return len(self._refs)

    def __iter__(self):
        return iter(self._refs)

    def __getitem__(self, index):
        if not isinstance(index, slice):
            raise TypeError(f"index: {index!r}; a HeapReferenceList takes slices only")
        if index.step == 0:
            raise ValueError("index: a slice step of 0; give a step of 1 or more")
        return HeapReferenceList(self._refs[index])


def _heap_references(heaps, mode):
    """[(heap, cnt, substream_index)] of send_heaps' HeapReferences, in order."""
    if mode != GroupMode.SERIAL:
        raise ValueError(f"mode: {mode} is not supported; gr-spead sends heaps whole, "
                         "one after the other (GroupMode.SERIAL)")
    refs = []
    for ref in heaps:
        if not isinstance(ref, HeapReference):
            raise ValueError(f"heaps: {ref!r} is not a spead.send.HeapReference")
        refs.append((ref.heap, ref.cnt, ref.substream_index))
    return refs


def _check_pool(thread_pool):
    if not isinstance(thread_pool, _core.ThreadPool):
        raise ValueError(f"thread_pool: {thread_pool!r} is not a spead.ThreadPool; give "
                         "spead.ThreadPool()")


def _check_config(config):
    config = StreamConfig() if config is None else config
    if not isinstance(config, StreamConfig):
        raise ValueError(f"config: {config!r} is not a spead.send.StreamConfig")
    return config


def _cnt_error(heap, cnt):
    """The OSError (EINVAL) spead2 fails a send with when an explicit cnt does not fit
    the heap's flavour, or None."""
    bits = heap.flavour.heap_address_bits
    if cnt >= 0 and cnt >> bits:
        return OSError(errno.EINVAL, f"cnt: {cnt} does not fit the flavour's "
                       f"heap_address_bits ({bits}); give a cnt below 2**{bits}, or "
                       "-1 for the stream's own sequence (which wraps)")
    return None


class _StreamMethods:
    """send_heap / send_heaps / flush / ... over a gr-spead send stream (self._stream)."""

    def send_heap(self, heap, cnt=-1, substream_index=0, rate=-1.0):
        """Sends a heap and waits until it has left (the GIL released); returns the
        bytes sent. OSError on a transport error, BlockingIOError (EAGAIN) when the
        queue is full (as spead2), OSError EINVAL for a cnt too wide for the flavour."""
        if not isinstance(heap, Heap):
            raise ValueError(f"heap: {heap!r} is not a spead.send.Heap (use "
                             "ItemGroup.get_heap())")
        if rate != -1.0:
            raise ValueError("rate: per-heap rates are not supported; set "
                             "StreamConfig(rate=...)")
        error = _cnt_error(heap, cnt)
        if error is not None:
            raise error
        return self._stream.send_heap(heap, cnt, substream_index)

    def send_heaps(self, heaps, mode=GroupMode.SERIAL):
        """Sends HeapReferences one after the other, keeping the queue full, and waits
        for all of them. GroupMode.ROUND_ROBIN (packets of the heaps interleaved) is
        not supported."""
        return self._stream._send_heaps(_heap_references(heaps, mode))

    def flush(self):
        """Waits until every queued heap has been sent."""
        self._stream.flush()

    def set_cnt_sequence(self, next, step):
        """Heap cnts of heaps sent without one: next, next + step, ..."""
        self._stream.set_cnt_sequence(next, step)

    @property
    def num_substreams(self):
        return self._stream.num_substreams

    @property
    def stats(self):
        """Counters of the stream by name (heaps, packets, bytes, ...)."""
        from ..recv import StreamStats
        return StreamStats(self._stream._stats())


class UdpStream(_StreamMethods):
    """Sends over kernel UDP sockets (as spead2.send.UdpStream). Forms:
    UdpStream(thread_pool, endpoints, config=StreamConfig(), buffer_size=...,
              interface_address='', ttl=1)
    UdpStream(thread_pool, hostname, port, config=StreamConfig(), buffer_size=...,
              interface_address='', ttl=1)
    endpoints is [(host, port), ...], one substream each; hosts may be IPv6 ('::1',
    'ff14::1'; all of one IP version), and interface_index (spead2's IPv6 multicast
    form) names the interface by index."""

    DEFAULT_BUFFER_SIZE = _send.DEFAULT_UDP_BUFFER_SIZE

    def __init__(self, thread_pool, *args, **kwargs):
        _check_pool(thread_pool)
        if (args and hasattr(args[0], "fileno")) or "socket" in kwargs:
            raise NotImplementedError(
                "UdpStream(thread_pool, socket, ...): a stream on an existing socket is "
                "not supported by gr-spead; give the endpoints instead: "
                "UdpStream(thread_pool, [(host, port)], config, buffer_size, "
                "interface_address) (see docs/python.md)")
        if args and isinstance(args[0], str):
            if len(args) < 2:
                raise ValueError(f"port: missing after hostname {args[0]!r}")
            args = ([(args[0], args[1])],) + tuple(args[2:])
        if "interface_index" in kwargs:  # spead2's IPv6 multicast form
            if "interface_address" in kwargs:
                raise ValueError("interface_index and interface_address: give one")
            kwargs["interface_address"] = str(_check("interface_index",
                                                     kwargs.pop("interface_index"), 0))
        names = ("endpoints", "config", "buffer_size", "interface_address", "ttl")
        values = bind_arguments("UdpStream", names, args, kwargs)
        if "endpoints" not in values:
            raise ValueError("endpoints: missing; give [(host, port), ...]")
        config = _check_config(values.get("config"))
        text = endpoints_text(values["endpoints"])
        self._stream = _send._Stream._udp(
            thread_pool, text, config._args(),
            int(_check("buffer_size", values.get("buffer_size", self.DEFAULT_BUFFER_SIZE), 0)),
            int(values.get("ttl", 1)), values.get("interface_address", ""))
        self._thread_pool = thread_pool
        self.config = config


class UdpIbvConfig(IbvConfigFields):
    """Settings of an ibverbs sender (as spead2.send.UdpIbvConfig), checked by every
    setter as spead2's; buffer_size 0 means the default. memory_regions: objects with
    a buffer (numpy arrays) whose items are sent without a copy."""

    DEFAULT_BUFFER_SIZE = _send.DEFAULT_UDP_IBV_BUFFER_SIZE
    DEFAULT_MAX_POLL = _send.DEFAULT_UDP_IBV_MAX_POLL

    def __init__(self, *, endpoints=(), interface_address="",
                 buffer_size=DEFAULT_BUFFER_SIZE, ttl=1, comp_vector=0,
                 max_poll=DEFAULT_MAX_POLL, memory_regions=()):
        self.endpoints = endpoints
        self.interface_address = interface_address
        self.buffer_size = buffer_size
        self.ttl = ttl
        self.comp_vector = comp_vector
        self.max_poll = max_poll
        self.memory_regions = memory_regions

    _check_memory_regions = staticmethod(list)

    @staticmethod
    def _check_ttl(value):
        if unsigned("ttl", value) > 255:  # spead2's uint8
            raise TypeError(f"ttl: {value} is not a TTL; give 0 to 255")
        return int(value)


class UdpIbvStream(_StreamMethods):
    """Sends over ibverbs (as spead2.send.UdpIbvStream). Forms:
    UdpIbvStream(thread_pool, config, udp_ibv_config)
    UdpIbvStream(thread_pool, multicast_group, port, config=StreamConfig(),
                 interface_address, buffer_size=..., ttl=1, comp_vector=0, max_poll=...)
    (the second is the ibverbs documentation's positional form)."""

    DEFAULT_BUFFER_SIZE = _send.DEFAULT_UDP_IBV_BUFFER_SIZE
    DEFAULT_MAX_POLL = _send.DEFAULT_UDP_IBV_MAX_POLL

    def __init__(self, thread_pool, *args, **kwargs):
        _check_pool(thread_pool)
        if len(args) == 2 and not kwargs and isinstance(args[1], UdpIbvConfig):
            config, ibv = _check_config(args[0]), args[1]
        elif not args and set(kwargs) <= {"config", "udp_ibv_config"} and \
                "udp_ibv_config" in kwargs:
            config, ibv = _check_config(kwargs.get("config")), kwargs["udp_ibv_config"]
        else:
            names = ("multicast_group", "port", "config", "interface_address",
                     "buffer_size", "ttl", "comp_vector", "max_poll")
            values = bind_arguments("UdpIbvStream", names, args, kwargs)
            missing = [n for n in ("multicast_group", "port", "interface_address")
                       if n not in values]
            if missing:
                raise ValueError(f"{', '.join(missing)}: missing; give "
                                 "UdpIbvStream(thread_pool, config, UdpIbvConfig(...)) or "
                                 "UdpIbvStream(thread_pool, multicast_group, port, config, "
                                 "interface_address, ...)")
            config = _check_config(values.get("config"))
            ibv = UdpIbvConfig(
                endpoints=[(values["multicast_group"], values["port"])],
                interface_address=values["interface_address"],
                buffer_size=values.get("buffer_size", self.DEFAULT_BUFFER_SIZE),
                ttl=values.get("ttl", 1), comp_vector=values.get("comp_vector", 0),
                max_poll=values.get("max_poll", self.DEFAULT_MAX_POLL))
        if not isinstance(ibv, UdpIbvConfig):
            raise ValueError(f"udp_ibv_config: {ibv!r} is not a spead.send.UdpIbvConfig")
        if not ibv.interface_address:
            raise ValueError("interface_address: empty; ibverbs sends through the RDMA "
                             "device that owns an interface: give its IPv4 address or "
                             "netdev name")
        self._stream = _send._Stream._udp_ibv(
            thread_pool, endpoints_text(ibv.endpoints), config._args(),
            ibv.interface_address, ibv.buffer_size, ibv.ttl, ibv.comp_vector,
            ibv.max_poll, list(ibv.memory_regions))
        self._thread_pool = thread_pool
        self.config = config


class TcpStream(_StreamMethods):
    """Sends SPEAD over TCP, spead2's framing (as spead2.send.TcpStream). Forms:
    TcpStream(thread_pool, endpoints, config=StreamConfig(), buffer_size=...,
              interface_address='')
    endpoints is [(host, port)]: one receiver, connected to in the constructor (OSError
    when it refuses or does not answer). send_heap waits while the receiver is slow.
    spead2's TcpStream(thread_pool, socket) (an existing socket) is not supported."""

    DEFAULT_BUFFER_SIZE = _send.DEFAULT_TCP_BUFFER_SIZE

    def __init__(self, thread_pool, *args, **kwargs):
        _check_pool(thread_pool)
        if (args and hasattr(args[0], "fileno")) or "socket" in kwargs:
            raise NotImplementedError(
                "socket: a stream on an existing connected socket is not supported by "
                "gr-spead; give the receiver, TcpStream(thread_pool, [(host, port)]) "
                "(see docs/python.md)")
        names = ("endpoints", "config", "buffer_size", "interface_address")
        values = bind_arguments("TcpStream", names, args, kwargs)
        if "endpoints" not in values:
            raise ValueError("endpoints: missing; give [(host, port)]")
        endpoints = list(values["endpoints"])
        if len(endpoints) != 1:
            raise ValueError(f"endpoints: {endpoints!r}; a TcpStream connects to "
                             "exactly one receiver: give [(host, port)]")
        text = endpoints_text(endpoints)
        host, port = endpoints[0]
        if ":" in str(host) and not str(host).startswith("["):
            text = f"[{host}]:{port}"  # an IPv6 address
        config = _check_config(values.get("config"))
        self._stream = _send._Stream._tcp(
            thread_pool, text, config._args(),
            int(_check("buffer_size",
                       values.get("buffer_size", self.DEFAULT_BUFFER_SIZE), 0)),
            values.get("interface_address", "") or "")
        self._thread_pool = thread_pool
        self.config = config


class RdmaStream(_StreamMethods):
    """Sends SPEAD over RDMA (an RC queue pair set up with rdma_cm; docs/links.md) to
    one add_rdma_reader, in the style of TcpStream:
    RdmaStream(thread_pool, endpoints, config=StreamConfig(), interface_address='',
               inline_bytes=DEFAULT_INLINE_BYTES, send_depth=DEFAULT_SEND_DEPTH)
    endpoints is [(host, port)] or a URI 'verbs://HOST:PORT'; connected to in the
    constructor (OSError when it fails). config.max_packet_size is the message size:
    RC needs no MTU-sized packets (recv.Stream.DEFAULT_RDMA_MAX_SIZE, 1 MiB + 4 KiB,
    suits it). send_heap waits while the receiver grants no room."""

    DEFAULT_INLINE_BYTES = _send.DEFAULT_RDMA_INLINE_BYTES
    DEFAULT_SEND_DEPTH = _send.DEFAULT_RDMA_SEND_DEPTH

    def __init__(self, thread_pool, *args, **kwargs):
        _check_pool(thread_pool)
        names = ("endpoints", "config", "interface_address", "inline_bytes",
                 "send_depth")
        values = bind_arguments("RdmaStream", names, args, kwargs)
        if "endpoints" not in values:
            raise ValueError("endpoints: missing; give [(host, port)] or "
                             "'verbs://HOST:PORT'")
        endpoints = values["endpoints"]
        if isinstance(endpoints, str):
            uri = endpoints
        else:
            endpoints = list(endpoints)
            if len(endpoints) != 1:
                raise ValueError(f"endpoints: {endpoints!r}; an RdmaStream connects to "
                                 "exactly one receiver: give [(host, port)]")
            host, port = endpoints[0]
            uri = f"verbs://{host}:{port}"
        config = _check_config(values.get("config"))
        self._stream = _send._Stream._rdma(
            thread_pool, uri, config._args(),
            values.get("interface_address", "") or "",
            int(_check("inline_bytes",
                       values.get("inline_bytes", self.DEFAULT_INLINE_BYTES), 0)),
            int(_check("send_depth",
                       values.get("send_depth", self.DEFAULT_SEND_DEPTH), 1)))
        self._thread_pool = thread_pool
        self.config = config


def _unsupported(name, why):
    return refusing_class(name, f"{name}: {why} (see docs/python.md)")


InprocStream = _unsupported("InprocStream", "inproc is not supported by gr-spead; use "
                            "UdpStream to 127.0.0.1 and add_udp_reader on the receiver")
BytesStream = _unsupported("BytesStream", "an in-memory stream is not supported by "
                           "gr-spead; write a capture file with spead_send or "
                           "spead.sink(transport='pcap') and replay it with "
                           "add_udp_pcap_file_reader")


class _ItemState:
    __slots__ = ("item", "version_sent", "descriptor_sent_at")

    def __init__(self, item):
        self.item = weakref.ref(item)
        self.version_sent = None
        self.descriptor_sent_at = None


class HeapGenerator:
    """Makes heaps of what changed in an item group since the last heap (as
    spead2.send.HeapGenerator): new or replaced descriptors (and every one again each
    descriptor_frequency heaps), and values whose version moved."""

    def __init__(self, item_group, descriptor_frequency=None, flavour=None):
        self._group = item_group if item_group is not self else None
        self._state = {}
        self._descriptor_frequency = descriptor_frequency
        self._heaps_made = 0
        self._flavour = _core.Flavour() if flavour is None else flavour
        if not isinstance(self._flavour, _core.Flavour):
            raise ValueError(f"flavour: {flavour!r} is not a spead.Flavour")

    def _descriptor_due(self, item, state):
        if state.descriptor_sent_at is None or state.item() is not item:
            state.item = weakref.ref(item)
            state.version_sent = None
            return True
        return (self._descriptor_frequency is not None and
                self._heaps_made - state.descriptor_sent_at >= self._descriptor_frequency)

    def add_to_heap(self, heap, descriptors="stale", data="stale"):
        for name, value in (("descriptors", descriptors), ("data", data)):
            if value not in ("stale", "all", "none"):
                raise ValueError(f"{name}: {value!r} is not 'stale', 'all' or 'none'")
        group = self._group if self._group is not None else self
        for item in group.values():
            state = self._state.get(item.id)
            if state is None:
                state = self._state[item.id] = _ItemState(item)
            due = self._descriptor_due(item, state)
            if descriptors == "all" or (descriptors == "stale" and due):
                heap.add_descriptor(item)
                state.descriptor_sent_at = self._heaps_made
            if item.value is not None and (
                    data == "all" or (data == "stale" and state.version_sent != item.version)):
                heap.add_item(item)
                state.version_sent = item.version
        self._heaps_made += 1
        return heap

    def get_heap(self, descriptors="stale", data="stale"):
        """A new heap with the descriptors and values due (see add_to_heap)."""
        return self.add_to_heap(Heap(self._flavour), descriptors, data)

    def get_start(self):
        """A heap holding only the start-of-stream control item."""
        heap = Heap(self._flavour)
        heap.add_start()
        return heap

    def get_end(self):
        """A heap holding only the stop control item: receivers end their stream."""
        heap = Heap(self._flavour)
        heap.add_end()
        return heap


class ItemGroup(_ItemGroup, HeapGenerator):
    """An item group that makes its own heaps (as spead2.send.ItemGroup)."""

    def __init__(self, descriptor_frequency=None, flavour=None):
        _ItemGroup.__init__(self)
        HeapGenerator.__init__(self, self, descriptor_frequency, flavour)
