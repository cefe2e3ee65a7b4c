#
# Copyright 2026 gr-spead authors
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""Arguments of spead2's call forms: positional and keyword arguments by name, and
endpoint lists, [(host, port), ...], as gr-spead's endpoint text."""

import numbers


def host_port(host, port):
    """'host:port' as the C++ endpoint parser reads it: an IPv6 address in brackets
    ('[::1]:7148'), '' as every local IPv4 address (0.0.0.0), as in spead2."""
    host = host or "0.0.0.0"
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def endpoints_text(endpoints, parameter="endpoints"):
    """'host:port,host:port' for the C++ configs, which check the addresses; host ''
    is every local address (0.0.0.0), as in spead2. ValueError names parameter."""
    out = []
    for ep in endpoints:
        if not isinstance(ep, (tuple, list)) or len(ep) != 2:
            raise ValueError(f"{parameter}: {ep!r} is not an endpoint; give (host, port), "
                             "e.g. ('239.1.2.3', 7148)")
        host, port = ep
        if not isinstance(port, numbers.Integral) or not 1 <= port <= 65535:
            raise ValueError(f"{parameter}: port {port!r} of {host!r} is not a UDP port; "
                             "give 1 to 65535")
        out.append(host_port(host, port))
    if not out:
        raise ValueError(f"{parameter}: empty; give at least one (host, port)")
    return ",".join(out)


def bind_arguments(call, names, args, kwargs):
    """{name: value} of a call's positional args (in the order of names) and kwargs;
    ValueError for too many, unknown or repeated ones, naming call."""
    if len(args) > len(names):
        raise ValueError(f"{call}: {len(args)} positional arguments, at most {len(names)}")
    values = dict(zip(names, args))
    for key, value in kwargs.items():
        if key not in names:
            raise ValueError(f"{key}: not a parameter of {call}")
        if key in values:
            raise ValueError(f"{key}: given twice (by position and by name) to {call}")
        values[key] = value
    return values


def unsigned(name, value):
    """value as an int, for what spead2 takes as an unsigned C++ integer: a negative
    or non-integer value is a TypeError there (pybind11's conversion), so here too."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 0:
        raise TypeError(f"{name}: {value!r} is not an unsigned integer; give an "
                        "integer >= 0")
    return int(value)


class CheckedFields:
    """A config whose fields are checked whenever they are set, as spead2's setters
    do: setting `x` stores what the class's `_check_x(value)` returns."""

    def __setattr__(self, name, value):
        check = getattr(type(self), "_check_" + name, None)
        object.__setattr__(self, name, value if check is None else check(value))


class IbvConfigFields(CheckedFields):
    """The checks recv.UdpIbvConfig and send.UdpIbvConfig share (spead2's setters);
    a subclass has DEFAULT_BUFFER_SIZE and DEFAULT_MAX_POLL."""

    _check_endpoints = staticmethod(list)

    @staticmethod
    def _check_interface_address(value):
        if not isinstance(value, str):
            raise TypeError(f"interface_address: {value!r} is not a str; give an IPv4 "
                            "address or netdev name")
        return value

    @classmethod
    def _check_buffer_size(cls, value):
        return unsigned("buffer_size", value) or cls.DEFAULT_BUFFER_SIZE  # 0: default

    @staticmethod
    def _check_comp_vector(value):
        if isinstance(value, bool) or not isinstance(value, numbers.Integral):
            raise TypeError(f"comp_vector: {value!r} is not an integer")
        return int(value)

    @classmethod
    def _check_max_poll(cls, value):
        if isinstance(value, bool) or not isinstance(value, numbers.Integral):
            raise TypeError(f"max_poll: {value!r} is not an integer")
        if value < 1:
            raise ValueError(f"max_poll: {value} is not positive; give 1 or more "
                             f"(default {cls.DEFAULT_MAX_POLL})")
        return int(value)


def refusing_class(name, message):
    """A stand-in for a spead2 class gr-spead does not have: constructing it raises
    NotImplementedError(message), which says what to use instead."""
    def refuse(self, *args, **kwargs):
        raise NotImplementedError(message)
    return type(name, (), {"__init__": refuse, "__doc__": message})
