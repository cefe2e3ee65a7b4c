/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// What every transport's writer inherits: the synchronous default for completions,
// and the reports (counters, a failure for good) that go to its send::stream.

#include "transport/packet_writer.h"

namespace gr {
namespace spead {
namespace send {

std::uint64_t
packet_writer::reap_completions(bool, boost::system::error_code&, std::uint64_t written)
{
    // Synchronous transports are done with a packet once write_packets() returns.
    return written;
}

void packet_writer::count(send_stat s, std::uint64_t n)
{
    if (d_count)
        d_count(s, n);
}

void packet_writer::failure(const std::string& cause)
{
    if (d_failure)
        d_failure(cause);
}

} // namespace send
} // namespace spead
} // namespace gr
