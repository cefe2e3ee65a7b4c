/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// The setters of dial_config_base, for send::tcp_config and send::rdma_config: each
// checks its value once, for both, and throws std::invalid_argument naming the
// parameter, the value and the fix.

#include "transport/config_checks.h"
#include <gnuradio/spead/send_rdma.h>
#include <gnuradio/spead/send_tcp.h>
#include <stdexcept>
#include <string>

namespace gr {
namespace spead {

using std::chrono::milliseconds;
using transport::checked_duration;

template <typename Derived>
Derived& dial_config_base<Derived>::set_connect_timeout(milliseconds timeout)
{
    d_connect_timeout = checked_duration("connect_timeout", timeout, false);
    return self();
}

template <typename Derived>
Derived& dial_config_base<Derived>::set_reconnect_backoff(milliseconds min,
                                                          milliseconds max)
{
    checked_duration("reconnect_min", min, false);
    checked_duration("reconnect_max", max, false);
    if (min > max)
        throw std::invalid_argument("reconnect_min: " + std::to_string(min.count()) +
                                    " ms is above reconnect_max (" +
                                    std::to_string(max.count()) +
                                    " ms); the back-off grows from min up to max");
    d_reconnect_min = min;
    d_reconnect_max = max;
    return self();
}

template class dial_config_base<send::tcp_config>;
template class dial_config_base<send::rdma_config>;

} // namespace spead
} // namespace gr
