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
import errno

from ._heaps import GroupMode, heap_references
from ._streams import InprocStream as _SyncInprocStream
from ._streams import RdmaStream as _SyncRdmaStream
from ._streams import TcpStream as _SyncTcpStream
from ._streams import UdpIbvStream as _SyncUdpIbvStream
from ._streams import UdpStream as _SyncUdpStream
from ._streams import cnt_error


async def _total(futures):
    return sum(await asyncio.gather(*futures))


class _AsyncMethods:
    def _async_init(self):
        self._futures = {}
        self._loop = None
        self._last_future = None

    def _watch(self):
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # as spead2: the loop that will run (a script's main loop)
            loop = asyncio.get_event_loop_policy().get_event_loop()
        if self._loop is None:
            self._loop = loop
            loop.add_reader(self._stream._event_fd(), self._on_completions)
        elif self._loop is not loop:
            raise RuntimeError("this stream is used from another event loop")

    @property
    def _active(self):
        """Sends not yet completed (spead2's attribute, which its tests read)."""
        return len(self._futures)

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
        error = cnt_error(heap, cnt)
        if error is not None:
            future.set_exception(error)
            return future
        token = self._stream._async_send_heap(heap, cnt, substream_index)
        self._futures[token] = future
        self._last_future = future
        return future

    def async_send_heaps(self, heaps, mode=GroupMode.SERIAL):
        """Queues every HeapReference now, in order (GroupMode.ROUND_ROBIN: as one
        group whose packets interleave), and returns a future (not a coroutine, as
        spead2) with the bytes sent. More heaps than max_heaps: none is
        queued and the future fails with BlockingIOError, as spead2; heaps that find
        the queue full fail it the same way."""
        self._watch()
        refs = heap_references(heaps, mode)
        if len(refs) > self.config.max_heaps:  # never fits: none is queued, as spead2
            future = self._loop.create_future()
            future.set_exception(BlockingIOError(
                errno.EAGAIN, f"async_send_heaps: {len(refs)} heaps do not fit a queue "
                f"of max_heaps={self.config.max_heaps}; send them in smaller groups or "
                "raise StreamConfig(max_heaps=...)"))
            return future
        if mode == GroupMode.ROUND_ROBIN:  # one group, one future
            future = self._loop.create_future()
            try:
                token = self._stream._async_send_group(refs)
            except OSError as error:
                future.set_exception(error)
                return future
            self._futures[token] = future
            self._last_future = future
            return future
        futures = [self.async_send_heap(heap, cnt, substream_index)
                   for heap, cnt, substream_index in refs]
        return asyncio.ensure_future(_total(futures), loop=self._loop)

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


class InprocStream(_AsyncMethods, _SyncInprocStream):
    """spead.send.InprocStream with async_send_heap (same constructor)."""

    def __init__(self, *args, **kwargs):
        _SyncInprocStream.__init__(self, *args, **kwargs)
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


class RdmaStream(_AsyncMethods, _SyncRdmaStream):
    """spead.send.RdmaStream with async_send_heap; `await RdmaStream.connect(
    thread_pool, endpoints, ...)` connects without blocking the event loop."""

    def __init__(self, *args, **kwargs):
        _SyncRdmaStream.__init__(self, *args, **kwargs)
        self._async_init()

    connect = classmethod(TcpStream.connect.__func__)  # the same worker-thread connect


__all__ = ["UdpStream", "UdpIbvStream", "InprocStream", "TcpStream", "RdmaStream"]
