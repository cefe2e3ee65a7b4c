#
# Copyright 2026 gr-spead authors
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""Send SPEAD heaps from asyncio code (as spead2.send.asyncio).

async_send_heap() queues the heap and returns a future; the writer thread signals
an eventfd that the event loop watches (loop.add_reader), so no thread polls. The
stream holds each heap (and the memory of its items) until it has been sent.
"""

import asyncio

from . import TcpStream as _SyncTcpStream
from . import UdpIbvStream as _SyncUdpIbvStream
from . import UdpStream as _SyncUdpStream
from . import GroupMode, _heap_references


class _AsyncMethods:
    def _async_init(self):
        self._futures = {}
        self._loop = None
        self._last_future = None

    def _watch(self):
        loop = asyncio.get_running_loop()
        if self._loop is None:
            self._loop = loop
            loop.add_reader(self._stream._event_fd(), self._on_completions)
        elif self._loop is not loop:
            raise RuntimeError("this stream is used from another event loop")

    def _on_completions(self):
        for token, error, message, sent in self._stream._take_completions():
            future = self._futures.pop(token, None)
            if future is None or future.done():
                continue
            if error:
                future.set_exception(OSError(error, message))
            else:
                future.set_result(sent)

    def async_send_heap(self, heap, cnt=-1, substream_index=0, rate=-1.0):
        """Queues heap; returns a future with the bytes sent (OSError on failure,
        errno EAGAIN when the queue was full)."""
        if rate != -1.0:
            raise ValueError("rate: per-heap rates are not supported; set "
                             "StreamConfig(rate=...)")
        self._watch()
        future = self._loop.create_future()
        token = self._stream._async_send_heap(heap, cnt, substream_index)
        self._futures[token] = future
        self._last_future = future
        return future

    async def async_send_heaps(self, heaps, mode=GroupMode.SERIAL):
        """Queues every HeapReference (waiting for room) and returns the bytes sent."""
        pending = []
        for heap, cnt, substream_index in _heap_references(heaps, mode):
            while len([f for f in pending if not f.done()]) >= self.config.max_heaps:
                await asyncio.wait([f for f in pending if not f.done()],
                                   return_when=asyncio.FIRST_COMPLETED)
            pending.append(self.async_send_heap(heap, cnt, substream_index))
        return sum(await asyncio.gather(*pending))

    async def async_flush(self):
        """Waits until every heap queued so far has been sent."""
        futures = list(self._futures.values())
        if futures:
            await asyncio.wait(futures)

    def flush(self):
        self._stream.flush()
        if self._loop is not None:
            self._on_completions()

    def __del__(self):
        if getattr(self, "_loop", None) is not None:
            try:
                self._loop.remove_reader(self._stream._event_fd())
            except (RuntimeError, ValueError):
                pass


class UdpStream(_AsyncMethods, _SyncUdpStream):
    """spead.send.UdpStream with async_send_heap (same constructor forms)."""

    def __init__(self, *args, **kwargs):
        _SyncUdpStream.__init__(self, *args, **kwargs)
        self._async_init()


class UdpIbvStream(_AsyncMethods, _SyncUdpIbvStream):
    """spead.send.UdpIbvStream with async_send_heap (same constructor forms)."""

    def __init__(self, *args, **kwargs):
        _SyncUdpIbvStream.__init__(self, *args, **kwargs)
        self._async_init()


class TcpStream(_AsyncMethods, _SyncTcpStream):
    """spead.send.TcpStream with async_send_heap. Use `await TcpStream.connect(
    thread_pool, endpoints, ...)` (spead2's form) to connect without blocking the
    event loop; the constructor connects too, blocking."""

    def __init__(self, *args, **kwargs):
        _SyncTcpStream.__init__(self, *args, **kwargs)
        self._async_init()

    @classmethod
    async def connect(cls, *args, **kwargs):
        """Connects (the arguments of spead.send.TcpStream) in a worker thread;
        OSError when the receiver refuses or does not answer."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(None, lambda: cls(*args, **kwargs))


__all__ = ["UdpStream", "UdpIbvStream", "TcpStream"]
