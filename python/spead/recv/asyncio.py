#
# Copyright 2026 gr-spead authors
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""Receive SPEAD heaps in asyncio code (as spead2.recv.asyncio).

The event loop watches an eventfd (loop.add_reader): a C++ hand-off thread moves
one heap at a time out of the stream and signals it, so no Python thread runs and
nothing polls.

    async for heap in stream:
        ig.update(heap)
"""

import asyncio
import collections

from .. import spead_python as _core
from . import Stream as _SyncStream


class Stream(_SyncStream):
    """A receive stream whose get() is a coroutine; `async for heap in stream`.
    Plain `for heap in stream` still works and blocks, as in spead2."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._waiters = collections.deque()
        self._loop = None

    def _watch(self):
        loop = asyncio.get_running_loop()
        if self._loop is None:
            self._loop = loop
            loop.add_reader(self._event_fd(), self._on_ready)
        elif self._loop is not loop:
            raise RuntimeError("this stream is used from another event loop; create "
                               "the stream in the loop that awaits it")

    def _unwatch(self):
        if self._loop is not None:
            try:
                self._loop.remove_reader(self._event_fd())
            except (RuntimeError, ValueError):  # the loop is closed already
                pass
            self._loop = None

    def _on_ready(self):
        while self._waiters:
            future = self._waiters[0]
            if future.done():  # cancelled
                self._waiters.popleft()
                continue
            try:
                heap = self._take_ready()
            except _core.Empty:
                return
            except Exception as e:  # Stopped, or the reader's failure
                self._waiters.popleft()
                future.set_exception(e)
                continue
            self._waiters.popleft()
            future.set_result(heap)

    async def get(self):
        """The next heap; raises spead.Stopped at the end of the stream."""
        self._watch()
        if not self._waiters:
            try:
                return self._take_ready()
            except _core.Empty:
                pass
        future = self._loop.create_future()
        self._waiters.append(future)
        self._on_ready()
        return await future

    def get_nowait(self):
        try:
            return self._take_ready()
        except _core.Empty:
            if self._loop is None:
                self._event_fd()  # start the hand-off; a later call finds the heap
            raise

    def __aiter__(self):
        return self

    async def __anext__(self):
        try:
            return await self.get()
        except _core.Stopped:
            raise StopAsyncIteration from None

    def stop(self):
        super().stop()
        self._on_ready_after_stop()

    def _on_ready_after_stop(self):
        if self._loop is not None and self._waiters:
            self._loop.call_soon(self._on_ready)

    def __del__(self):
        self._unwatch()
