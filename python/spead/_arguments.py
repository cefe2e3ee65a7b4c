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
