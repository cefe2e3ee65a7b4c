/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// verbs://HOST:PORT, the rdma transport's endpoints, parsed and resolved.

#ifndef INCLUDED_SPEAD_TRANSPORT_RDMA_URI_H
#define INCLUDED_SPEAD_TRANSPORT_RDMA_URI_H

#include <gnuradio/spead/api.h>
#include <boost/asio/ip/address_v4.hpp>
#include <cstdint>
#include <string>

namespace gr {
namespace spead {
namespace rdma {

struct uri {
    std::string host; //!< "" = every address (listening only)
    std::uint16_t port = 0;
};

/*!
 * Parses `verbs://HOST:PORT` (HOST an IPv4 address or a name; empty only when
 * \p host_optional, i.e. for a listener). Does not resolve.
 * \throws std::invalid_argument naming \p parameter, the text and the fix
 */
SPEAD_API uri parse_uri(const std::string& text,
                        const std::string& parameter,
                        bool host_optional);

/*! An IPv4 address or a host name (IPv4, as RoCE v2 and rdma_cm here use).
 * \throws std::invalid_argument naming \p parameter when it does not resolve */
SPEAD_API boost::asio::ip::address_v4 resolve_host(const std::string& host,
                                                   const std::string& parameter);

/*! "verbs://10.0.0.2:7150" */
SPEAD_API std::string to_string(const uri& u);

} // namespace rdma
} // namespace spead
} // namespace gr

#endif
