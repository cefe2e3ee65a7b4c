#
# Copyright 2026 gr-spead authors
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""ValueErrors naming the parameter for the blocks' constructors.

pybind11 refuses an argument it cannot convert (vlen=-1 for a size_t, a number for a
string) with a TypeError listing the whole signature: "incompatible constructor
arguments". The blocks promise a ValueError naming the parameter, the value and the
fix, as for every other bad value; this finds which argument pybind11 refused.
"""

import functools
import numbers
import re

#: The blocks' make() parameters that are C++ `int` (every other integer is unsigned:
#: std::size_t or std::uint64_t). qa_block_python_api checks this against the headers.
SIGNED_INT_PARAMETERS = frozenset({"comp_vector", "max_poll", "ttl"})

_PARAMETER = re.compile(r"(\w+): ([\w.]+)(?: = )?")


def _signature(init):
    """[(name, type name)] of a pybind11 __init__, from its docstring's first line."""
    first = (init.__doc__ or "").splitlines()[0] if init.__doc__ else ""
    inside = first[first.find("(") + 1:first.rfind(")")]
    return [(name, kind) for name, kind in _PARAMETER.findall(inside) if name != "self"]


def _problem(name, kind, value):
    """Why pybind11 cannot pass value as the parameter, or None."""
    if kind == "str":
        if not isinstance(value, str):
            return f"{value!r} is not text; give a string"
    elif kind == "bool":
        if not isinstance(value, bool):
            return f"{value!r} is not True or False"
    elif kind == "float":
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            return f"{value!r} is not a number"
    elif kind in ("List", "list"):
        if isinstance(value, (str, bytes)) or not all(
                isinstance(v, numbers.Integral) and not isinstance(v, bool) and v >= 0
                for v in value):
            return (f"{value!r} is not a list of ids; give a list or range of whole "
                    "numbers >= 0, e.g. [8, 9, 10, 11] or range(8, 12), or text: '8-11'")
    elif kind == "int":
        if isinstance(value, bool) or not isinstance(value, numbers.Integral):
            return f"{value!r} is not a whole number"
        if name in SIGNED_INT_PARAMETERS:
            if not -(1 << 31) <= value < (1 << 31):
                return f"{value} is out of range; give a 32-bit integer"
        elif value < 0:
            return f"{value} is negative; give a whole number >= 0"
        elif value >= (1 << 64):
            return f"{value} is too large; give a whole number below 2**64"
    return None


def _explain(block, signature, args, kwargs):
    names = [name for name, _ in signature]
    kinds = dict(signature)
    if len(args) > len(names):
        return f"{block}: {len(args)} positional arguments, at most {len(names)}"
    given = dict(zip(names, args))
    for name, value in kwargs.items():
        if name not in kinds:
            return (f"{name}: not a parameter of spead.{block}; see help(spead.{block}) "
                    "for the parameters")
        if name in given:
            return f"{name}: given twice (by position and by name)"
        given[name] = value
    for name, value in given.items():
        problem = _problem(name, kinds[name], value)
        if problem:
            return f"{name}: {problem} (see help(spead.{block}))"
    return None


def check_block_arguments(cls):
    """Wraps cls.__init__ so that pybind11's conversion TypeError becomes a ValueError
    naming the parameter. Other errors pass unchanged."""
    original = cls.__init__
    signature = _signature(original)

    @functools.wraps(original)
    def __init__(self, *args, **kwargs):
        if isinstance(kwargs.get("substream_ids"), str):
            # "8-11" or "8,9,10,11", parsed as spead_recv --substream-ids parses it
            from .spead_python import _recv_chunk
            kwargs["substream_ids"] = _recv_chunk._parse_substream_ids(
                kwargs["substream_ids"])
        try:
            original(self, *args, **kwargs)
        except TypeError as e:
            if "incompatible constructor arguments" not in str(e):
                raise
            why = _explain(cls.__name__, signature, args, kwargs)
            if why is None:
                raise
            raise ValueError(why) from None

    cls.__init__ = __init__
    return cls
