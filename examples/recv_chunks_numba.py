#!/usr/bin/env python3
#
# Copyright 2026 gr-spead authors
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""Receive a continuous stream into chunks with a numba placement callback and print
the mean power of each chunk: spead2's tutorial receiver (doc/tutorial/
tut-12-recv-chunks.rst), with only the imports swapped to gnuradio.spead.

    examples/recv_chunks_numba.py --heap-size 65536 7148 &
    spead_send --heap-size 65536 --timestamp-item 0x1600 --heaps 256 127.0.0.1:7148

Every heap of HEAP_SIZE int8 samples carries its timestamp (in samples) as item 0x1600
(spead_send --timestamp-item 5632 does this). The callback places heap k (timestamp
k x heap size) at index k % heaps-per-chunk of chunk k // heaps-per-chunk, and rejects
heaps of another size or without a timestamp. Without numba, the declarative
recv.ChunkPlacement does the same with no compiler (--declarative).
"""

import argparse
import ctypes

import numba
import numpy as np
import scipy
from numba import types

import gnuradio.spead as spead2
import gnuradio.spead.recv
from gnuradio.spead.numba import intp_to_voidptr
from gnuradio.spead.recv.numba import chunk_place_data

HEAP_SIZE_ID = 0x02
TIMESTAMP_ID = 0x1600


@numba.njit
def mean_power(adc_samples, present):
    total = np.int64(0)
    n = 0
    for i in range(len(present)):
        if present[i]:
            for j in range(adc_samples.shape[1]):
                sample = np.int64(adc_samples[i, j])
                total += sample * sample
            n += adc_samples.shape[1]
    return np.float64(total) / n if n else np.nan


@numba.cfunc(
    types.void(types.CPointer(chunk_place_data), types.size_t, types.CPointer(types.int64)),
    nopython=True,
)
def place_callback(data_ptr, data_size, sizes_ptr):
    data = numba.carray(data_ptr, 1)
    items = numba.carray(intp_to_voidptr(data[0].items), 2, dtype=np.int64)
    sizes = numba.carray(sizes_ptr, 2)
    payload_size = items[0]
    timestamp = items[1]
    heap_size = sizes[0]
    chunk_size = sizes[1]
    if timestamp >= 0 and payload_size == heap_size:
        data[0].chunk_id = timestamp // chunk_size
        data[0].heap_offset = timestamp % chunk_size
        data[0].heap_index = data[0].heap_offset // heap_size


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-H", "--heap-size", type=int, default=65536)
    parser.add_argument("--heaps-per-chunk", type=int, default=16)
    parser.add_argument("--chunks", type=int, default=4, help="chunks in circulation")
    parser.add_argument("--declarative", action="store_true",
                        help="place with recv.ChunkPlacement instead of the numba callback")
    parser.add_argument("port", type=int)
    args = parser.parse_args()

    heap_size = args.heap_size
    chunk_size = heap_size * args.heaps_per_chunk
    config = spead2.recv.StreamConfig(max_heaps=2)
    if args.declarative:
        place = spead2.recv.ChunkPlacement(timestamp_item=TIMESTAMP_ID,
                                           timestamp_step=heap_size, heap_size=heap_size,
                                           heaps_per_chunk=args.heaps_per_chunk)
        chunk_config = spead2.recv.ChunkStreamConfig(place=place, max_chunks=2)
    else:
        user_data = np.array([heap_size, chunk_size], np.int64)
        chunk_config = spead2.recv.ChunkStreamConfig(
            items=[HEAP_SIZE_ID, TIMESTAMP_ID], max_chunks=2,
            place=scipy.LowLevelCallable(place_callback.ctypes,
                                         user_data.ctypes.data_as(ctypes.c_void_p),
                                         "void (void *, size_t, void *)"))
    data_ring = spead2.recv.ChunkRingbuffer(args.chunks)
    free_ring = spead2.recv.ChunkRingbuffer(args.chunks)
    stream = spead2.recv.ChunkRingStream(spead2.ThreadPool(), config, chunk_config,
                                         data_ring, free_ring)
    for _ in range(free_ring.maxsize):
        stream.add_free_chunk(spead2.recv.Chunk(
            data=np.zeros(chunk_size, np.int8),
            present=np.zeros(args.heaps_per_chunk, np.uint8)))
    stream.add_udp_reader(args.port, bind_hostname="127.0.0.1")
    print("ready", flush=True)
    for chunk in data_ring:
        n_present = int(np.sum(chunk.present))
        if n_present:
            power = mean_power(chunk.data.reshape(args.heaps_per_chunk, heap_size),
                               chunk.present)
            print(f"chunk {chunk.chunk_id}: {n_present} heaps, power {power:.6f}",
                  flush=True)
        stream.add_free_chunk(chunk)
    stats = stream.stats
    print(f"heaps: {stats['heaps']} rejected_heaps: {stats['rejected_heaps']} "
          f"too_old_heaps: {stats['too_old_heaps']}", flush=True)


if __name__ == "__main__":
    main()
