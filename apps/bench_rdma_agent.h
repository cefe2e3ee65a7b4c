/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_SPEAD_APPS_BENCH_RDMA_AGENT_H
#define INCLUDED_SPEAD_APPS_BENCH_RDMA_AGENT_H

// spead_bench rdma's sender agent: one child process, forked before the bench uses
// verbs and moved into --sender-netns's network namespace, that runs every sending end
// (the raw writer, the SPEAD rdma sender) on command over a socketpair and answers
// with its figures.

#include "bench_rdma_raw.h"
#include "bench_sender.h"
#include "cpu_usage.h"
#include <sys/types.h>
#include <string>

namespace gr {
namespace spead {
namespace apps {
namespace bench {

/*! The raw writer's figures and the agent's CPU time while it wrote. */
struct raw_sent {
    raw_write_result result;
    cpu_times cpu;
};

/*! The path of network namespace \p netns: /run/netns/NAME (`ip netns add NAME`), or
 * \p netns itself when it holds a '/' (e.g. /proc/PID/ns/net). */
std::string netns_path(const std::string& netns);

class sender_agent
{
public:
    /*!
     * Forks the agent. With a non-empty \p netns (see netns_path()) the agent enters
     * that network namespace (setns(2), CLONE_NEWNET) before anything else; empty, it
     * stays in this one. Call before this process uses verbs (the emulator finds its
     * devices once per process, and fork copies what it found) and while it has one
     * thread. Returns once the agent said it is ready.
     * \throws std::invalid_argument naming --sender-netns when the namespace cannot be
     * opened or entered; std::system_error when the socketpair or the fork fails
     */
    explicit sender_agent(const std::string& netns);
    /*! Tells the agent to end and reaps it (kills it if it does not end). */
    ~sender_agent();
    sender_agent(const sender_agent&) = delete;
    sender_agent& operator=(const sender_agent&) = delete;

    /*! write_raw(\p options) in the agent.
     * \throws std::runtime_error with the agent's cause */
    raw_sent write_raw(const raw_write_options& options);
    /*! send_heaps(\p options) in the agent on a send::rdma_stream to \p endpoint
     * (verbs://ADDR:PORT); \p options' make_stream and destination are not used.
     * \throws what sender_message::report() throws */
    sender_report send(const std::string& endpoint, const sender_options& options);

private:
    /*! Tells the agent to end and reaps it, killing it after 5 s. */
    void end() noexcept;

    pid_t d_pid = -1;
    int d_fd = -1; //!< this end of the socketpair
};

} // namespace bench
} // namespace apps
} // namespace spead
} // namespace gr

#endif
