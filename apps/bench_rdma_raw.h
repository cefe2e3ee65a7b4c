/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_SPEAD_APPS_BENCH_RDMA_RAW_H
#define INCLUDED_SPEAD_APPS_BENCH_RDMA_RAW_H

// spead_bench rdma's baseline: the raw throughput of the RDMA wire, a plain verbs
// RDMA-write stream between two RC queue pairs set up through rdma_cm, no SPEAD; its
// target end in the bench's process, its writing end in the sender agent's.

#include <cstddef>
#include <cstdint>
#include <functional>
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
 * The writing end, in the process that sends (spead_bench rdma's sender agent): connects
 * to the target at address:port, receives its ring's address and rkey, writes messages
 * round the ring (IBV_WR_RDMA_WRITE, each signalled, depth in flight) for the time
 * asked, then a SEND tells the target it is over.
 * \throws std::system_error naming the verbs or rdma_cm call that failed
 */
raw_write_result write_raw(const raw_write_options& options);

/*! Runs the writing end (write_raw(), in whichever process) once the target listens. */
using raw_writer = std::function<raw_write_result(const raw_write_options&)>;

/*!
 * The target end in this process: a thread listens on address:port, registers a ring of
 * depth messages and sends its address and rkey to the writer, which \p write starts
 * once it listens; then waits for the writer's end.
 * \return what \p write returned
 * \throws the first failure, the target's or the writer's
 */
raw_write_result run_raw_writes(const raw_write_options& options,
                                const raw_writer& write);

} // namespace bench
} // namespace apps
} // namespace spead
} // namespace gr

#endif
