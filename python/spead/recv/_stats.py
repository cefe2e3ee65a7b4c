#
# Copyright 2026 gr-spead authors
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""A stream's counters as spead2 gives them (recv.StreamStats, stream_stat_indices):
every counter of gr-spead by name (docs/statistics.md), and the custom ones a
StreamConfig declares with add_stat()."""

import collections.abc
import numbers

from ..spead_python import _recv

_Mode = _recv.StreamStatConfig.Mode

# spead2.recv.stream_stat_indices: the built-in counters' indices, by upper-case name
stream_stat_indices = type("stream_stat_indices", (), {
    stat.name.upper(): index for index, stat in enumerate(_recv.StreamConfig().stats)})


class StreamStats(collections.abc.Mapping):
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

    def __getitem__(self, key):
        return self._values[self._name(key)]

    def __setitem__(self, key, value):
        self._values[self._name(key)] = value

    def __getattr__(self, name):
        try:
            return self._values[name]
        except KeyError:
            raise AttributeError(f"no counter named {name!r}; see keys()") from None

    def __setattr__(self, name, value):
        if name not in self._values:
            raise AttributeError(f"no counter named {name!r}; see keys()")
        self._values[name] = value

    def __contains__(self, name):
        return name in self._values

    def __iter__(self):
        return iter(self._values)

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

    def __len__(self):
        return len(self._values)

    @property
    def config(self):
        """[StreamStatConfig] of the counters, in order (as spead2's)."""
        return [_recv.StreamStatConfig(name, _Mode.MAXIMUM if name in self._maximum
                                       else _Mode.COUNTER) for name in self._values]

    def __repr__(self):
        return "StreamStats(" + ", ".join(f"{k}={v}" for k, v in self._values.items()) + ")"


def snapshot(pairs, config):
    """The StreamStats of a stream made with config, from its (name, value) pairs:
    every statistic of config.stats is in it (a custom one 0 until something counts
    it, as in spead2), and each MAXIMUM one combines by max when stats are added."""
    values = dict(pairs)
    for stat in config.stats:
        values.setdefault(stat.name, 0)
    return StreamStats(values.items(),
                       [stat.name for stat in config.stats if stat.mode == _Mode.MAXIMUM])
