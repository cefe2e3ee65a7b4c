#
# Copyright 2026 gr-spead authors
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""Arguments of spead2's call forms: positional and keyword arguments by name, a
(host, port) as endpoint text, the bound link configs built from them, and the
descriptor of a socket given. The configs' setters check the values (in C++); this
only puts them where they go."""

#: spead2's keyword names of what the tcp and rdma configs call otherwise
_FIELD_NAMES = {"max_size": "max_packet_size", "interface_address": "interface"}


def host_port(host, port, every="0.0.0.0"):
    """'host:port' as the C++ endpoint parser reads it: an IPv6 address in brackets
    ('[::1]:7148'), '' as every, the address meaning every local one."""
    host = host or every
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def bind_arguments(call, names, args, kwargs, required=(), others=False):
    """{name: value} of a call's positional args (in the order of names) and kwargs;
    ValueError for too many, unknown (unless others), repeated or missing (required)
    ones, naming call."""
    if len(args) > len(names):
        raise ValueError(f"{call}: {len(args)} positional arguments, at most {len(names)}")
    values = dict(zip(names, args))
    for key, value in kwargs.items():
        if key not in names and not others:
            raise ValueError(f"{key}: not a parameter of {call}")
        if key in values:
            raise ValueError(f"{key}: given twice (by position and by name) to {call}")
        values[key] = value
    for name in required:
        if name not in values:
            raise ValueError(f"{name}: missing; give {call}({', '.join(names)})")
    return values


def link_config(config_class, endpoint, values):
    """A tcp or rdma config (recv or send) for endpoint from a call's other values:
    spead2's names (max_size, interface_address) as the config's fields, and every
    other keyword a field of the same name (TypeError naming an unknown one)."""
    fields = {_FIELD_NAMES.get(k, k): v for k, v in values.items()}
    if endpoint is not None:  # None: on a socket of the caller's, which has its own
        fields["endpoint"] = endpoint
    return config_class(**fields)


def one_endpoint(endpoints, stream):
    """The (host, port) of a connected stream's endpoint list, which names one."""
    endpoints = list(endpoints)
    if len(endpoints) != 1:
        raise ValueError(f"endpoints: {endpoints!r}; a {stream} connects to exactly one "
                         "receiver: give [(host, port)]")
    return endpoints[0]


def fileno(sock, parameter):
    """The file descriptor of a socket object (anything with fileno()), which the
    reader or stream duplicates; ValueError naming parameter for anything else."""
    try:
        fd = sock.fileno()
    except AttributeError:
        raise ValueError(f"{parameter}: {sock!r} is not a socket; give a "
                         "socket.socket") from None
    if fd < 0:
        raise ValueError(f"{parameter}: the socket is closed; give an open one")
    return fd
