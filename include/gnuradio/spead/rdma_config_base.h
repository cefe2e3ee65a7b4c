/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_SPEAD_RDMA_CONFIG_BASE_H
#define INCLUDED_SPEAD_RDMA_CONFIG_BASE_H

#include <gnuradio/spead/api.h>
#include <cstdint>
#include <string>

namespace gr {
namespace spead {

/*!
 * \brief The settings that the two ends of a SPEAD-over-RDMA link share: the endpoint
 * and the interface, validated in the same words for both (as tcp_config_base for
 * TCP). \p Derived (recv::rdma_config, send::rdma_config) adds its own settings and
 * gives `receives` (whether the endpoint is listened on or connected to); the setters
 * return it, so calls chain. Setters throw std::invalid_argument naming the parameter,
 * the value and the fix.
 */
template <typename Derived>
class SPEAD_API rdma_config_base
{
public:
    /*!
     * The endpoint, ports 1 to 65535. To listen on: `verbs://ADDR:PORT` (that address
     * only) or `verbs://:PORT` (every address of every verbs device; see
     * set_interface()). To connect to: the receiver, `verbs://HOST:PORT`. ADDR and
     * HOST are an IPv4 address or a name, resolved here (a name that does not resolve
     * is refused here).
     */
    Derived& set_endpoint(const std::string& uri);
    /*! The endpoint's address or name ("" for every address) and port. */
    const std::string& get_host() const { return d_host; }
    std::uint16_t get_port() const { return d_port; }
    /*! An endpoint has been set (the reader or stream refuses a config without one). */
    bool has_endpoint() const { return d_port != 0; }

    /*!
     * A local interface: its netdev name (`ens1f0`) or its IPv4 address (the address
     * wins if the name has several). To listen on, when the endpoint names no address
     * (the endpoint's address wins when both are given; with neither, every address:
     * rdma_cm's wildcard). To connect from: empty (default) is the route's, on the
     * first verbs device that reaches the receiver.
     */
    Derived& set_interface(const std::string& address_or_name);
    const std::string& get_interface() const { return d_interface; }

protected:
    rdma_config_base() = default;

private:
    Derived& self() { return static_cast<Derived&>(*this); }

    std::string d_host;
    std::uint16_t d_port = 0;
    std::string d_interface;
};

} // namespace spead
} // namespace gr

#endif /* INCLUDED_SPEAD_RDMA_CONFIG_BASE_H */
