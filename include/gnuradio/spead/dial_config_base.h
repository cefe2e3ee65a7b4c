/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_SPEAD_DIAL_CONFIG_BASE_H
#define INCLUDED_SPEAD_DIAL_CONFIG_BASE_H

#include <gnuradio/spead/api.h>
#include <gnuradio/spead/config_setter.h>
#include <chrono>

namespace gr {
namespace spead {

/*!
 * \brief What every connecting end of a connected link (send::tcp_config,
 * send::rdma_config) sets: how long a connection attempt may take and what happens
 * when a connection cannot be made or is lost; each validated here once, in the same
 * words for every transport (as udp_ibv_config_base for ibverbs). The setters return
 * \p Derived, so calls chain, and throw std::invalid_argument naming the parameter,
 * the value and the fix.
 */
template <typename Derived>
class SPEAD_API dial_config_base
{
public:
    /*! How long a connection attempt may take (5 s). */
    static constexpr std::chrono::milliseconds default_connect_timeout{ 5000 };
    /*! First and largest wait between reconnection attempts (0.1 s doubling to 5 s). */
    static constexpr std::chrono::milliseconds default_reconnect_min{ 100 };
    static constexpr std::chrono::milliseconds default_reconnect_max{ 5000 };

    /*! How long one connection attempt may take before it fails (a peer that never
     * accepts, a black-holed route): 1 ms to 10 min, default 5 s. */
    Derived& set_connect_timeout(std::chrono::milliseconds timeout);
    std::chrono::milliseconds get_connect_timeout() const { return d_connect_timeout; }

    /*!
     * What happens when the connection cannot be made or is lost. false (default, as
     * spead2): construction throws when the first connection fails, and once a
     * connection is lost every later heap fails (the stream is finished). true: the
     * stream keeps trying, waiting reconnect_min, then twice that, ... up to
     * reconnect_max between attempts; heaps wait meanwhile (back-pressure) and
     * construction does not wait for the first connection. Either way the heaps written
     * but not yet acknowledged by the receiver when a connection fails are counted in
     * heaps_failed and heaps_lost_in_flight (a heap is sent once acknowledged; see
     * docs/links.md).
     */
    Derived& set_reconnect(bool reconnect)
    {
        return detail::assign(self(), d_reconnect, reconnect);
    }
    bool get_reconnect() const { return d_reconnect; }

    /*! Back-off between reconnection attempts: first wait \p min, doubling up to
     * \p max (1 ms <= min <= max <= 10 min). */
    Derived& set_reconnect_backoff(std::chrono::milliseconds min,
                                   std::chrono::milliseconds max);
    std::chrono::milliseconds get_reconnect_min() const { return d_reconnect_min; }
    std::chrono::milliseconds get_reconnect_max() const { return d_reconnect_max; }

protected:
    dial_config_base() = default;

private:
    Derived& self() { return static_cast<Derived&>(*this); }

    std::chrono::milliseconds d_connect_timeout = default_connect_timeout;
    bool d_reconnect = false;
    std::chrono::milliseconds d_reconnect_min = default_reconnect_min;
    std::chrono::milliseconds d_reconnect_max = default_reconnect_max;
};

} // namespace spead
} // namespace gr

#endif /* INCLUDED_SPEAD_DIAL_CONFIG_BASE_H */
