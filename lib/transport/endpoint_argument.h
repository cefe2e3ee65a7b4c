/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_SPEAD_TRANSPORT_ENDPOINT_ARGUMENT_H
#define INCLUDED_SPEAD_TRANSPORT_ENDPOINT_ARGUMENT_H

// Where to receive or send as a person writes it, read the same way by spead_recv's
// SOURCE, spead_send's DESTINATION and the blocks' `endpoints`: which kind of place it
// names (UDP or TCP addresses, an RDMA listener or receiver, a capture file), checked,
// in the text the transports' configs take.

#include "transport/endpoint.h"
#include <gnuradio/spead/api.h>
#include <string>

namespace gr {
namespace spead {
namespace transport {

/*! The kinds of place an endpoint argument names. */
enum class endpoint_form {
    addresses,   //!< HOST:PORT lists (udp, ibverbs and tcp take them)
    verbs,       //!< verbs://HOST:PORT (rdma)
    capture_file //!< a pcap or pcapng file
};

/*! An endpoint argument, read. */
struct endpoint_argument {
    endpoint_form form;
    /*! As the configs take it: a bare PORT entry becomes :PORT. */
    std::string text;
};

/*!
 * Reads \p text, one argument, in the forms every tool and block takes:
 * - `HOST:PORT`, `GROUP+N:PORT` (a range: GROUP and the N addresses after it),
 *   `[v6]:PORT` or `v6:PORT`, and comma-separated lists of them: addresses;
 * - `:PORT` and (to receive) a bare `PORT`: every local address;
 * - `verbs://HOST:PORT` (`verbs://:PORT` to receive): an RDMA endpoint;
 * - a name ending .pcap or .pcapng, or (to receive) any existing file: a capture file.
 * verbs:// URIs are checked as rdma's parser checks them; addresses only for their
 * form here: the transport's config parses them (parse_endpoints(): the range, the
 * port, the name to resolve), with the same words for the tools and the blocks.
 * \throws std::invalid_argument naming \p parameter and the value: an address whose
 *         port was left out gets the same address with one as its fix
 */
SPEAD_API endpoint_argument read_endpoint_argument(const std::string& text,
                                                   const std::string& parameter,
                                                   endpoint_use use);

/*! "addresses (HOST:PORT)", "an RDMA endpoint (verbs://HOST:PORT)", "a capture file" */
SPEAD_API std::string form_name(endpoint_form form);

} // namespace transport
} // namespace spead
} // namespace gr

#endif
