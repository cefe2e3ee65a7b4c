#
# Copyright 2026 gr-spead authors
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""The send streams (as spead2.send's): spead2's constructor forms, each building a
bound link config (UdpConfig, UdpIbvConfig, TcpConfig, RdmaConfig) whose setters check
the values, from which the C++ side (api_send.cc) makes the stream."""

import errno

from .._arguments import bind_arguments, fileno, host_port, link_config, one_endpoint
from ..spead_python import _send
from ._heaps import GroupMode, Heap, heap_references


def cnt_error(heap, cnt):
    """The OSError (EINVAL) spead2 fails a send with when an explicit cnt does not fit
    the heap's flavour, or None."""
    bits = heap.flavour.heap_address_bits
    if cnt >= 0 and cnt >> bits:
        return OSError(errno.EINVAL, f"cnt: {cnt} does not fit the flavour's "
                       f"heap_address_bits ({bits}); give a cnt below 2**{bits}, or "
                       "-1 for the stream's own sequence (which wraps)")
    return None


def _on_socket(args, kwargs):
    """spead2's socket form: a socket object first (or socket=)."""
    return (args and hasattr(args[0], "fileno")) or "socket" in kwargs


class _StreamMethods:
    """send_heap / send_heaps / flush / ... over a gr-spead send stream (self._stream)."""

    def _open(self, thread_pool, config, link):
        config = _send.StreamConfig() if config is None else config
        self._stream = _send._Stream._open(thread_pool, config, link)
        self._thread_pool = thread_pool
        self.config = config

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
        error = cnt_error(heap, cnt)
        if error is not None:
            raise error
        return self._stream.send_heap(heap, cnt, substream_index)

    def send_heaps(self, heaps, mode=GroupMode.SERIAL):
        """Sends HeapReferences and waits for all of them: GroupMode.SERIAL one after
        the other, keeping the queue full; GroupMode.ROUND_ROBIN as one group, one
        packet of each heap in turn (at most max_heaps heaps: else BlockingIOError, and
        OSError EINVAL for an empty group or a bad substream, as spead2)."""
        refs = heap_references(heaps, mode)
        if mode == GroupMode.ROUND_ROBIN:
            return self._stream._send_group(refs)
        return self._stream._send_heaps(refs)

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
    form) names the interface by index. Also UdpStream(thread_pool, UdpConfig(...),
    config), and spead2's socket forms UdpStream(thread_pool, socket, endpoints,
    config=StreamConfig()) and (thread_pool, socket, hostname, port, config): a UDP
    socket of yours, which the stream duplicates (its TTL, interface and buffer stay
    as you set them)."""

    DEFAULT_BUFFER_SIZE = _send.UdpConfig().buffer_size

    def __init__(self, thread_pool, *args, **kwargs):
        if _on_socket(args, kwargs):
            self._open_on_socket(thread_pool, args, kwargs)
            return
        if args and isinstance(args[0], str):
            if len(args) < 2:
                raise ValueError(f"port: missing after hostname {args[0]!r}")
            args = ([(args[0], args[1])],) + tuple(args[2:])
        if "interface_index" in kwargs:  # spead2's IPv6 multicast form
            if "interface_address" in kwargs:
                raise ValueError("interface_index and interface_address: give one")
            kwargs["interface_address"] = str(kwargs.pop("interface_index"))
        names = ("endpoints", "config", "buffer_size", "interface_address", "ttl")
        values = bind_arguments("UdpStream", names, args, kwargs, required=("endpoints",))
        link = values.pop("endpoints")
        config = values.pop("config", None)
        if not isinstance(link, _send.UdpConfig):
            values["interface"] = values.pop("interface_address", "")
            link = _send.UdpConfig(endpoints=link, **values)
        self._open(thread_pool, config, link)

    def _open_on_socket(self, thread_pool, args, kwargs):
        # UdpStream(thread_pool, socket, endpoints, config) or (..., socket, hostname,
        # port, config): the socket's TTL, interface and buffer stay as they are
        if len(args) > 1 and isinstance(args[1], str):
            if len(args) < 3:
                raise ValueError(f"port: missing after hostname {args[1]!r}")
            args = (args[0], [(args[1], args[2])]) + tuple(args[3:])
        values = bind_arguments("UdpStream", ("socket", "endpoints", "config"), args,
                                kwargs, required=("socket", "endpoints"))
        config = values.get("config") or _send.StreamConfig()
        self._stream = _send._Stream._open_socket(
            thread_pool, config, fileno(values["socket"], "socket"),
            _send.UdpConfig(endpoints=values["endpoints"]))
        self._thread_pool = thread_pool
        self.config = config


class BytesStream(_StreamMethods):
    """Writes the packets of its heaps back to back into memory (as
    spead2.send.BytesStream(thread_pool, config=StreamConfig())); getvalue() gives
    them as bytes, which recv.Stream.add_buffer_reader reads back."""

    def __init__(self, thread_pool, config=None):
        config = _send.StreamConfig() if config is None else config
        self._stream = _send._Stream._open_bytes(thread_pool, config)
        self._thread_pool = thread_pool
        self.config = config

    def getvalue(self):
        """The packets written so far (once the heaps queued have been sent)."""
        return self._stream._bytes()


class InprocStream(_StreamMethods):
    """Sends into InprocQueues of this process (as spead2.send.InprocStream(
    thread_pool, queues, config=StreamConfig())): substream i is queues[i]. A heap
    sent to a stopped queue fails with OSError."""

    def __init__(self, thread_pool, queues, config=None):
        self._open(thread_pool, config, list(queues))

    @property
    def queues(self):
        return self._stream._queues()


class UdpIbvStream(_StreamMethods):
    """Sends over ibverbs (as spead2.send.UdpIbvStream). Forms:
    UdpIbvStream(thread_pool, config, udp_ibv_config)
    UdpIbvStream(thread_pool, multicast_group, port, config=StreamConfig(),
                 interface_address, buffer_size=..., ttl=1, comp_vector=0, max_poll=...)
    (the second is the ibverbs documentation's positional form)."""

    DEFAULT_BUFFER_SIZE = _send.UdpIbvConfig.DEFAULT_BUFFER_SIZE
    DEFAULT_MAX_POLL = _send.UdpIbvConfig.DEFAULT_MAX_POLL

    def __init__(self, thread_pool, *args, **kwargs):
        if len(args) == 2 and not kwargs and isinstance(args[1], _send.UdpIbvConfig):
            config, link = args
        elif not args and "udp_ibv_config" in kwargs and \
                set(kwargs) <= {"config", "udp_ibv_config"}:
            config, link = kwargs.get("config"), kwargs["udp_ibv_config"]
        else:
            names = ("multicast_group", "port", "config", "interface_address",
                     "buffer_size", "ttl", "comp_vector", "max_poll")
            values = bind_arguments("UdpIbvStream", names, args, kwargs,
                                    required=("multicast_group", "port"))
            group, port = values.pop("multicast_group"), values.pop("port")
            config = values.pop("config", None)
            link = _send.UdpIbvConfig(endpoints=[(group, port)], **values)
        self._open(thread_pool, config, link)


class _ConnectedStream(_StreamMethods):
    """TcpStream and RdmaStream: one receiver, connected to in the constructor
    (OSError when it refuses or does not answer), from spead2's arguments and keywords
    naming fields of the link config (connect_timeout, reconnect, reconnect_backoff,
    ...), or from the link config itself. send_heap waits while the receiver is slow.
    A subclass gives _CONFIG, _NAMES (spead2's positional parameters after
    thread_pool) and _endpoint(endpoints)."""

    def __init__(self, thread_pool, *args, **kwargs):
        call = type(self).__name__
        if _on_socket(args, kwargs):
            self._open_on_socket(thread_pool, call, args, kwargs)
            return
        values = bind_arguments(call, self._NAMES, args, kwargs, required=("endpoints",),
                                others=True)
        link = values.pop("endpoints")
        config = values.pop("config", None)
        if not isinstance(link, self._CONFIG):
            link = link_config(self._CONFIG, self._endpoint(link), values)
        elif values:
            raise ValueError(f"{next(iter(values))}: given with a {self._CONFIG.__name__}; "
                             "set it in the config instead")
        self._open(thread_pool, config, link)

    def _open_on_socket(self, thread_pool, call, args, kwargs):
        if self._CONFIG is not _send.TcpConfig:
            raise NotImplementedError(
                f"socket: {call} on an existing socket is not supported by gr-spead "
                f"(rdma_cm connects itself); give {call}(thread_pool, [(host, port)]) "
                "(see docs/python.md)")
        values = bind_arguments(call, ("socket", "config"), args, kwargs,
                                required=("socket",), others=True)
        sock = fileno(values.pop("socket"), "socket")
        config = values.pop("config", None) or _send.StreamConfig()
        self._stream = _send._Stream._open_socket(thread_pool, config, sock,
                                                  link_config(self._CONFIG, None, values))
        self._thread_pool = thread_pool
        self.config = config


class TcpStream(_ConnectedStream):
    """Sends SPEAD over TCP, spead2's framing (as spead2.send.TcpStream). Forms:
    TcpStream(thread_pool, endpoints, config=StreamConfig(), buffer_size=...,
              interface_address='', **TcpConfig fields)
    TcpStream(thread_pool, TcpConfig(...), config=StreamConfig())
    TcpStream(thread_pool, socket, config=StreamConfig())   (a socket you connected;
                                                             the stream duplicates it)
    endpoints is [(host, port)]."""

    DEFAULT_BUFFER_SIZE = _send.TcpConfig().buffer_size
    _CONFIG = _send.TcpConfig
    _NAMES = ("endpoints", "config", "buffer_size", "interface_address")

    @staticmethod
    def _endpoint(endpoints):
        return host_port(*one_endpoint(endpoints, "TcpStream"), every="")


class RdmaStream(_ConnectedStream):
    """Sends SPEAD over RDMA (an RC queue pair set up with rdma_cm; docs/links.md) to
    one add_rdma_reader, in the style of TcpStream:
    RdmaStream(thread_pool, endpoints, config=StreamConfig(), interface_address='',
               inline_bytes=DEFAULT_INLINE_BYTES, send_depth=DEFAULT_SEND_DEPTH,
               **RdmaConfig fields)
    endpoints is [(host, port)] or a URI 'verbs://HOST:PORT'. config.max_packet_size is
    the message size: RC needs no MTU-sized packets (recv.Stream.DEFAULT_RDMA_MAX_SIZE,
    1 MiB + 4 KiB, suits it). send_heap waits while the receiver grants no room."""

    DEFAULT_INLINE_BYTES = _send.RdmaConfig().inline_bytes
    DEFAULT_SEND_DEPTH = _send.RdmaConfig().send_depth
    _CONFIG = _send.RdmaConfig
    _NAMES = ("endpoints", "config", "interface_address", "inline_bytes", "send_depth")

    @staticmethod
    def _endpoint(endpoints):
        if isinstance(endpoints, str):
            return endpoints
        return "verbs://{}:{}".format(*one_endpoint(endpoints, "RdmaStream"))
