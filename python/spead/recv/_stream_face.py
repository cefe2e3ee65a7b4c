#
# Copyright 2026 gr-spead authors
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""What every receive stream offers in Python (recv.Stream, ChunkRingStream, a chunk
stream group's members): spead2's call forms of the readers, each building a bound
link config (UdpConfig, UdpIbvConfig, TcpConfig, RdmaConfig) whose setters check the
values, the stats snapshot, start() and `with`. The C++ side (api_recv_readers.h)
adds a reader of the config's kind."""

import collections
import copy
import numbers
import os

from .._arguments import bind_arguments, fileno, host_port, link_config
from ..spead_python import _recv
from ._stats import snapshot

_ENV_INTERFACE = ("SPEAD2_IBV_INTERFACE", "GR_SPEAD_IBV_INTERFACE")
_ENV_COMP_VECTOR = ("SPEAD2_IBV_COMP_VECTOR", "GR_SPEAD_IBV_COMP_VECTOR")


def _environment(names):
    """(name, value) of the first of names set in the environment, or (None, None)."""
    for name in names:
        value = os.environ.get(name)
        if value:
            return name, value
    return None, None


def _env_comp_vector(default):
    name, value = _environment(_ENV_COMP_VECTOR)
    if value is None:
        return default
    try:
        return int(value)
    except ValueError:
        raise ValueError(f"{name}: {value!r} is not an integer; set a completion vector "
                         "(0, 1, ...), a negative number for busy polling, or unset "
                         "it") from None


def _with_env_interface(config):
    """config, or a copy on SPEAD2_IBV_INTERFACE (and SPEAD2_IBV_COMP_VECTOR) when it
    names no interface, as spead2's documentation describes."""
    _, interface = _environment(_ENV_INTERFACE)
    if config.interface_address or not interface:
        return config
    config = copy.copy(config)
    config.interface_address = interface
    config.comp_vector = _env_comp_vector(config.comp_vector)
    return config


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


# A connected link's reader (tcp, rdma): its config, spead2's positional parameters,
# and the endpoint of (bind_hostname, port)
_Link = collections.namedtuple("_Link", "config call names endpoint")
_TCP = _Link(_recv.TcpConfig, "add_tcp_reader",
             ("port", "max_size", "buffer_size", "bind_hostname"),
             lambda host, port: host_port(host, port, every=""))
_RDMA = _Link(_recv.RdmaConfig, "add_rdma_reader",
              ("port", "max_size", "bind_hostname", "interface_address", "rdma_connections",
               "rdma_depth", "recv_depth", "max_connections"),
              lambda host, port: f"verbs://{host}:{port}")


class StreamFace:
    """Readers, stats and `with` over a C++ stream that has _add_reader(config),
    _add_pcap_reader, _stats, config and stop."""

    # spead2's names for the defaults, which are the C++ configs' own
    DEFAULT_UDP_MAX_SIZE = _recv.UdpConfig().max_size
    DEFAULT_UDP_BUFFER_SIZE = _recv.UdpConfig().buffer_size
    DEFAULT_UDP_IBV_MAX_SIZE = _recv.UdpIbvConfig.DEFAULT_MAX_SIZE
    DEFAULT_UDP_IBV_BUFFER_SIZE = _recv.UdpIbvConfig.DEFAULT_BUFFER_SIZE
    DEFAULT_UDP_IBV_MAX_POLL = _recv.UdpIbvConfig.DEFAULT_MAX_POLL
    DEFAULT_TCP_MAX_SIZE = _recv.TcpConfig().max_packet_size
    DEFAULT_TCP_BUFFER_SIZE = _recv.TcpConfig().buffer_size
    DEFAULT_RDMA_MAX_SIZE = _recv.RdmaConfig().max_packet_size
    DEFAULT_RDMA_CONNECTIONS = _recv.RdmaConfig().rdma_connections
    DEFAULT_RDMA_DEPTH = _recv.RdmaConfig().rdma_depth
    DEFAULT_RDMA_RECV_DEPTH = _recv.RdmaConfig().recv_depth

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
        Also spead2's add_udp_reader(socket, max_size=...): a bound UDP socket of
        yours, which the reader duplicates (close yours when you like).
        Returns the (address, port) pairs bound (kernel sockets)."""
        if (args and hasattr(args[0], "fileno")) or "socket" in kwargs:
            values = bind_arguments("add_udp_reader", ("socket", "max_size"), args, kwargs,
                                    required=("socket",))
            sock = values.pop("socket")
            return self._add_socket_reader(fileno(sock, "socket"),
                                           _recv.UdpConfig(**values))
        names = (("multicast_group", "port", "max_size", "buffer_size", "interface_address")
                 if args and isinstance(args[0], str) else
                 ("port", "max_size", "buffer_size", "bind_hostname"))
        values = bind_arguments("add_udp_reader", names + ("interface_index",), args, kwargs)
        port = values.get("port")
        if isinstance(port, bool) or not isinstance(port, numbers.Integral) or \
                not 0 <= port <= 65535:  # spead2's uint16 conversion: TypeError
            raise TypeError(f"port: {port!r} is not a UDP port; give 1 to 65535")
        host = values.get("multicast_group", values.get("bind_hostname")) or ""
        interface = values.get("interface_address", "")
        index = values.get("interface_index")
        if isinstance(interface, numbers.Integral):  # positional interface_index
            index, interface = interface, ""
        if index is not None:  # spead2's IPv6 multicast form
            if ":" not in host or interface:
                raise ValueError(f"interface_index: given with {host!r}; it is for IPv6 "
                                 "multicast groups (e.g. 'ff14::1'); for IPv4 give "
                                 "interface_address")
            interface = str(index) if index else ""
        sizes = {k: values[k] for k in ("max_size", "buffer_size") if k in values}
        _, env_interface = _environment(_ENV_INTERFACE)
        if env_interface:
            self._add_reader(_recv.UdpIbvConfig(
                endpoints=[(host, port)], interface_address=interface or env_interface,
                comp_vector=_env_comp_vector(0), max_size=sizes.get(
                    "max_size", self.DEFAULT_UDP_MAX_SIZE)))
            return []
        return self._add_reader(_recv.UdpConfig(endpoints=[(host, port)],
                                                interface=interface, **sizes))

    def add_udp_ibv_reader(self, *args, **kwargs):
        """add_udp_ibv_reader(config: UdpIbvConfig), or the positional forms of the
        ibverbs documentation:
        add_udp_ibv_reader(endpoints, interface_address, max_size=..., buffer_size=...,
                           comp_vector=0, max_poll=...)
        add_udp_ibv_reader(multicast_group, port, interface_address, max_size=...,
                           buffer_size=..., comp_vector=0, max_poll=...)"""
        if len(args) == 1 and not kwargs and isinstance(args[0], _recv.UdpIbvConfig):
            config = args[0]
        else:
            if args and isinstance(args[0], str):  # (multicast_group, port, interface, ...)
                if len(args) < 2:
                    raise ValueError(f"port: missing for multicast_group {args[0]!r}")
                args = ([(args[0], args[1])],) + tuple(args[2:])
            names = ("endpoints", "interface_address", "max_size", "buffer_size",
                     "comp_vector", "max_poll")
            config = _recv.UdpIbvConfig(**bind_arguments("add_udp_ibv_reader", names,
                                                         args, kwargs))
        self._add_reader(_with_env_interface(config))

    def add_udp_pcap_file_reader(self, filename, filter=""):
        """Replays the UDP payloads of a capture; filter may be '' (all) or
        'udp dst port N' / 'udp port N' / 'port N' (one destination port)."""
        self._add_pcap_reader(os.fspath(filename), _pcap_port(filter))

    def _add_link_reader(self, link, args, kwargs):
        """A tcp or rdma reader: its config given, or built from spead2's arguments
        (port or a URI, bind_hostname, max_size, ...) and keywords naming the config's
        other fields (max_connections, allowed_peers, keep_listening, idle_timeout...).
        The (address, port) listened on, or None."""
        if len(args) == 1 and not kwargs and isinstance(args[0], link.config):
            config = args[0]
        elif (args and hasattr(args[0], "fileno")) or "acceptor" in kwargs:
            if link is not _TCP:
                raise NotImplementedError(
                    f"acceptor: {link.call} on an existing socket is not supported by "
                    f"gr-spead (rdma_cm listens itself); give the port "
                    f"({link.call}(port, bind_hostname=...)) (see docs/python.md)")
            values = bind_arguments(link.call, ("acceptor", "max_size"), args, kwargs,
                                    required=("acceptor",), others=True)
            acceptor = fileno(values.pop("acceptor"), "acceptor")
            config = link_config(link.config, None, values)
            return self._add_socket_reader(acceptor, config)[0]
        else:
            values = bind_arguments(link.call, link.names, args, kwargs,
                                    required=("port",), others=True)
            port = values.pop("port")
            host = values.pop("bind_hostname", "") or ""
            config = link_config(link.config, port if isinstance(port, str)
                                 else link.endpoint(host, port), values)
        bound = self._add_reader(config)
        return bound[0] if bound else None

    def add_tcp_reader(self, *args, **kwargs):
        """spead2's form, add_tcp_reader(port, max_size=DEFAULT_TCP_MAX_SIZE,
        buffer_size=DEFAULT_TCP_BUFFER_SIZE, bind_hostname=''), plus keywords naming
        fields of TcpConfig (max_connections, allowed_peers, keep_listening,
        idle_timeout, peer_timeout), or add_tcp_reader(TcpConfig(...)). Listens for one
        sender (SPEAD over TCP, spead2's framing; by default the stream ends when it
        disconnects). Returns the (address, port) listened on. Also spead2's
        add_tcp_reader(acceptor, max_size=...): a listening socket of yours, which the
        reader duplicates (close yours when you like)."""
        return self._add_link_reader(_TCP, args, kwargs)

    def add_rdma_reader(self, *args, **kwargs):
        """Listens for senders of SPEAD over RDMA (RC queue pairs set up with rdma_cm;
        docs/links.md), as add_tcp_reader does for TCP:
        add_rdma_reader(port, max_size=DEFAULT_RDMA_MAX_SIZE, bind_hostname='',
                        interface_address='', rdma_connections=DEFAULT_RDMA_CONNECTIONS,
                        rdma_depth=DEFAULT_RDMA_DEPTH, recv_depth=DEFAULT_RDMA_RECV_DEPTH,
                        max_connections=1), plus keywords naming fields of RdmaConfig,
        or add_rdma_reader(RdmaConfig(...)). port may also be a URI, 'verbs://ADDR:PORT'
        or 'verbs://:PORT'. Up to max_connections senders at once (fan-in; each
        assembled apart); the stream ends when the last has disconnected."""
        self._add_link_reader(_RDMA, args, kwargs)

    def add_buffer_reader(self, buffer):
        """Reads the SPEAD packets stored back to back in buffer (bytes, or any
        C-contiguous buffer: what send.BytesStream.getvalue() gives), as spead2. The
        stream holds the buffer while it reads; its input ends after the last packet."""
        self._add_buffer_reader(buffer)

    def add_inproc_reader(self, queue):
        """Reads the packets senders put in queue (an InprocQueue: send.InprocStream,
        or queue.add_packet()); its input ends once the queue is stopped and read."""
        self._add_inproc_reader(queue)

    @property
    def stats(self):
        """A snapshot of every counter (StreamStats), custom ones included."""
        return snapshot(self._stats(), self.config)

    def start(self):
        """With StreamConfig(explicit_start=True): starts every reader added so far,
        together; a reader added after this is refused (RuntimeError). Otherwise
        nothing: readers start when added."""
        self._start()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()
        return False
