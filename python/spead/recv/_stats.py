#
# Copyright 2026 gr-spead authors
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""A stream's counters as spead2 gives them (recv.StreamStats, stream_stat_indices):
spead2's nine standard statistics and the custom ones a StreamConfig declares with
add_stat(), listed in that order; every other counter of gr-spead is read by name
(docs/statistics.md)."""

import collections.abc
import numbers

from ..spead_python import _recv

_Mode = _recv.StreamStatConfig.Mode

# spead2.recv.stream_stat_indices: the built-in counters' indices, by upper-case name
stream_stat_indices = type("stream_stat_indices", (), {
    stat.name.upper(): index for index, stat in enumerate(_recv.StreamConfig().stats)})


class StreamStats(collections.abc.Mapping):
    """A stream's statistics, as attributes and as a mapping (spead2's StreamStats):
    iterating, len(), config and integer indices cover the listed ones (a receive
    stream's: spead2's nine, worker_blocked being gr-spead's reader_waits_queue_full,
    then its custom ones); every other gr-spead counter is read (and set) by name too
    (docs/statistics.md). As in spead2 they can be set by name, index or attribute,
    and added (+, +=): counters add, the names in `maximum` take the larger value."""

    def __init__(self, pairs, maximum=("max_batch",), listed=None, indices=None):
        values = dict(pairs)
        listed = list(values) if listed is None else list(listed)
        object.__setattr__(self, "_values", values)
        object.__setattr__(self, "_listed", listed)
        object.__setattr__(self, "_indices", dict(enumerate(listed)) if indices is None
                           else dict(indices))
        object.__setattr__(self, "_maximum", frozenset(maximum))

    def _name(self, key):
        if isinstance(key, numbers.Integral):
            if key not in self._indices:
                raise IndexError(f"index: {key} is not a statistic's index; see "
                                 "StreamConfig.get_stat_index()")
            return self._indices[key]
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
        return iter(self._listed)

    def __add__(self, other):
        if not isinstance(other, StreamStats):
            return NotImplemented
        if (self._listed != other._listed or list(self._values) != list(other._values)
                or self._maximum != other._maximum):
            raise ValueError("StreamStats: the two have different counters; add the "
                             "stats of streams made with the same StreamConfig")
        total = {name: max(value, other._values[name]) if name in self._maximum
                 else value + other._values[name] for name, value in self._values.items()}
        return StreamStats(total.items(), self._maximum, self._listed, self._indices)

    def __iadd__(self, other):
        total = self + other
        if total is NotImplemented:
            return total
        self._values.update(total._values)
        return self

    def __len__(self):
        return len(self._listed)

    @property
    def config(self):
        """[StreamStatConfig] of the listed statistics, in order (as spead2's)."""
        return [_recv.StreamStatConfig(name, _Mode.MAXIMUM if name in self._maximum
                                       else _Mode.COUNTER) for name in self._listed]

    def __repr__(self):
        return "StreamStats(" + ", ".join(f"{k}={self._values[k]}"
                                          for k in self._listed) + ")"


def snapshot(pairs, config):
    """The StreamStats of a stream made with config, from its (name, value) pairs:
    config.stats listed (spead2's nine, then the custom ones, each 0 until something
    counts it, as in spead2) at the indices config gives them, and each MAXIMUM one
    combining by max when stats are added; the other counters by name."""
    values = dict(pairs)
    values["worker_blocked"] = values.get("reader_waits_queue_full", 0)
    for stat in config.stats:
        values.setdefault(stat.name, 0)
    listed = [stat.name for stat in config.stats]
    return StreamStats(values.items(),
                       [stat.name for stat in config.stats if stat.mode == _Mode.MAXIMUM],
                       listed, {config.get_stat_index(name): name for name in listed})
