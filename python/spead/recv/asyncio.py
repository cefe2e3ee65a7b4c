#
# Copyright 2026 gr-spead authors
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""Receive SPEAD heaps and chunks in asyncio code (as spead2.recv.asyncio).

The event loop watches an eventfd (loop.add_reader): a C++ hand-off thread moves
one heap at a time out of the stream and signals it, so no Python thread runs and
nothing polls.

    async for heap in stream:
        ig.update(heap)
"""

import asyncio
import collections
import functools

from .. import spead_python as _core
from . import Stream as _SyncStream
from .. import recv as _recv


class _AsyncIteration:
    """`async for x in self` over `await self.get()`, ending at spead.Stopped."""

    def __aiter__(self):
        return self

    async def __anext__(self):
        try:
            return await self.get()
        except _core.Stopped:
            raise StopAsyncIteration from None


class Stream(_AsyncIteration, _SyncStream):
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

    def stop(self):
        super().stop()
        self._on_ready_after_stop()

    def _on_ready_after_stop(self):
        if self._loop is not None and self._waiters:
            self._loop.call_soon(self._on_ready)

    def __del__(self):
        self._unwatch()


class _FdWaiters:
    """Coroutines waiting, in order, for an operation that can succeed once fd is
    readable (a ChunkRingbuffer's level-triggered data_fd or space_fd). The loop
    watches fd only while someone waits; the first waiter retries when it is
    readable, and not_ready (Empty, Full) means "not yet"."""

    def __init__(self, fd, not_ready):
        self._fd = fd
        self._not_ready = not_ready
        self._waiters = collections.deque()  # (operation, future)
        self._loop = None

    def _drop_done(self):
        while self._waiters and self._waiters[0][1].done():  # cancelled
            self._waiters.popleft()
        if not self._waiters and self._loop is not None:
            try:
                self._loop.remove_reader(self._fd)
            except (RuntimeError, ValueError):  # the loop is closed already
                pass
            self._loop = None

    def _on_ready(self):
        self._drop_done()
        while self._waiters:
            operation, future = self._waiters[0]
            try:
                result = operation()
            except self._not_ready:
                return
            except Exception as e:  # Stopped: this waiter, then the next, learn it
                self._waiters.popleft()
                future.set_exception(e)
            else:
                self._waiters.popleft()
                future.set_result(result)
            self._drop_done()

    async def wait(self, operation):
        self._drop_done()
        if not self._waiters:
            try:
                result = operation()
            except self._not_ready:
                pass
            else:
                await asyncio.sleep(0)  # a busy consumer still lets the loop run
                return result
        loop = asyncio.get_running_loop()
        if self._loop is None:
            loop.add_reader(self._fd, self._on_ready)
            self._loop = loop
        elif self._loop is not loop:
            raise RuntimeError("this ringbuffer is awaited from another event loop; "
                               "use it from one loop at a time")
        future = loop.create_future()
        self._waiters.append((operation, future))
        return await future


class ChunkRingbuffer(_AsyncIteration, _recv.ChunkRingbuffer):
    """spead2.recv.asyncio.ChunkRingbuffer: get() and put() are coroutines, and
    `async for chunk in ring` ends when the ring stops. The loop waits on the ring's
    data_fd / space_fd, so no thread polls."""

    def __init__(self, maxsize):
        super().__init__(maxsize)
        self._getters = _FdWaiters(self.data_fd, _core.Empty)
        self._putters = _FdWaiters(self.space_fd, _core.Full)

    async def get(self):
        """The next chunk; raises spead.Stopped once the ring has stopped and is
        empty."""
        return await self._getters.wait(self.get_nowait)

    async def put(self, chunk):
        """Puts chunk, waiting for room; raises spead.Stopped once the ring has
        stopped."""
        return await self._putters.wait(functools.partial(self.put_nowait, chunk))
