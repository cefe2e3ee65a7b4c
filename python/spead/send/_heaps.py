#
# Copyright 2026 gr-spead authors
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""What a send stream is given (as spead2.send's): HeapReference and
HeapReferenceList for send_heaps, and HeapGenerator / ItemGroup, which make heaps of
what changed in an item group."""

import enum
import weakref

from .. import spead_python as _core
from .._items import ItemGroup as _ItemGroup
from ..spead_python import _send

Heap = _send.Heap


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


def heap_references(heaps, mode):
    """[(heap, cnt, substream_index)] of send_heaps' HeapReferences, in order."""
    if mode not in (GroupMode.SERIAL, GroupMode.ROUND_ROBIN):
        raise ValueError(f"mode: {mode!r} is not a GroupMode; give GroupMode.SERIAL or "
                         "GroupMode.ROUND_ROBIN")
    refs = []
    for ref in heaps:
        if not isinstance(ref, HeapReference):
            raise ValueError(f"heaps: {ref!r} is not a spead.send.HeapReference")
        refs.append((ref.heap, ref.cnt, ref.substream_index))
    return refs


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
