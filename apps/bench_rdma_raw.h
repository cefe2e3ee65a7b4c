/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_SPEAD_APPS_BENCH_RDMA_RAW_H
#define INCLUDED_SPEAD_APPS_BENCH_RDMA_RAW_H

// spead_bench rdma's baseline: the raw throughput of the RDMA wire, a plain verbs
// RDMA-write stream between two RC queue pairs set up through rdma_cm, no SPEAD.

#include <cstddef>
#include <cstdint>
#include <string>

namespace gr {
namespace spead {
namespace apps {
namespace bench {

struct raw_write_options {
    std::string address = "127.0.0.1"; //!< the verbs device address both ends use
    std::uint16_t port = 0;            //!< the target's rdma_cm port
    std::size_t message = 1 << 20;     //!< bytes per RDMA write
    std::size_t depth = 8; //!< writes in flight (the target's ring holds them)
    double seconds = 3.0;  //!< how long to write
};

struct raw_write_result {
    std::uint64_t messages = 0;    //!< writes completed
    std::size_t message_bytes = 0; //!< bytes per write
    double seconds = 0.0;          //!< first write posted to last write completed
    double gbps() const
    {
        return seconds > 0 ? double(messages) * message_bytes * 8e-9 / seconds : 0.0;
    }
};

/*!
 * Runs both ends in this process: a target thread listens on address:port, registers a
 * ring of depth messages and sends its address and rkey; this thread connects and
 * writes messages round the ring (IBV_WR_RDMA_WRITE, each signalled, depth in flight)
 * for the time asked, then a SEND tells the target it is over.
 * \throws std::system_error naming the verbs or rdma_cm call that failed
 */
raw_write_result run_raw_writes(const raw_write_options& options);

} // namespace bench
} // namespace apps
} // namespace spead
} // namespace gr

#endif
