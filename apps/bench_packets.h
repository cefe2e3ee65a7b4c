/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_SPEAD_APPS_BENCH_PACKETS_H
#define INCLUDED_SPEAD_APPS_BENCH_PACKETS_H

// spead_bench mem's input: heaps cut into packets in memory, and the memcpy ceiling
// over the same bytes.

#include <gnuradio/spead/recv_stream.h>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace gr {
namespace spead {
namespace apps {
namespace bench {

using clock_type = std::chrono::steady_clock;

/*! Heap-sized buffers the memcpy ceiling cycles through; the assembler's consumer holds
 * heaps so that it cycles through as many. */
constexpr std::size_t copy_ring = 4;

/*! Packets laid out back to back in one big buffer, as a NIC ring would hold them. */
struct packet_set {
    std::vector<std::uint8_t> bytes;
    std::vector<recv::packet_view> packets;
    /*! Per packet: where its payload starts and where it belongs in the heap. The
     * ceiling uses these so it does no parsing at all. */
    struct copy {
        std::size_t payload_start;
        std::size_t heap_offset;
    };
    std::vector<copy> copies;
    std::size_t heaps = 0;
    std::uint64_t payload_bytes = 0; //!< heap payload carried (what memcpy copies)
    std::uint64_t packet_bytes = 0;  //!< SPEAD packet bytes (what the link carries)
};

/*! Immediate item naming a heap's substream (mem --threads); the timestamp is
 * bench_timestamp_item (bench_sender.h). */
constexpr std::uint64_t substream_item = 0x1601;

/*! Which heaps a packet set holds: heap k (from 0) has cnt k × substreams + substream
 * + 1 and, when timestamped, timestamp k × heap size, as a digitiser sends it. */
struct heap_numbering {
    bool timestamped = false;
    std::size_t substream = 0;
    std::size_t substreams = 1;
};

/*! \p total bytes of \p heap_size-byte heaps (at least one) cut into
 * \p packet_size-byte packets by the sender's packetiser. */
packet_set make_packets(std::size_t heap_size,
                        std::size_t packet_size,
                        std::uint64_t total,
                        const heap_numbering& numbering);

/*! Page faults (minor and major) the calling thread has taken so far. */
std::uint64_t thread_page_faults();

/*! One timed pass over a packet set: its seconds, and the page faults the calling
 * thread took within them (none when every buffer it writes was touched before). */
struct timed_pass {
    double seconds = 0;
    std::uint64_t page_faults = 0;
};

/*! Times a pass from construction to done(), counting its page faults. */
class pass_timer
{
public:
    pass_timer() : d_faults(thread_page_faults()), d_start(clock_type::now()) {}
    timed_pass done() const
    {
        const std::chrono::duration<double> elapsed = clock_type::now() - d_start;
        return { elapsed.count(), thread_page_faults() - d_faults };
    }

private:
    std::uint64_t d_faults;
    clock_type::time_point d_start;
};

/*! The ceiling's destination: copy_ring heap-sized buffers, zeroed when made (so that
 * their pages are faulted in then, not in a timed pass). */
using copy_buffers = std::vector<std::vector<std::uint8_t>>;
copy_buffers make_copy_buffers(std::size_t heap_size);

/*! The ceiling: each packet's payload copied to its heap offset in \p ring, the next
 * buffer for each heap. */
timed_pass memcpy_pass(const packet_set& set, copy_buffers& ring);

/*! memcpy_pass()'s seconds, into buffers of its own. */
inline double memcpy_seconds(const packet_set& set, std::size_t heap_size)
{
    copy_buffers ring = make_copy_buffers(heap_size);
    return memcpy_pass(set, ring).seconds;
}

} // namespace bench
} // namespace apps
} // namespace spead
} // namespace gr

#endif
