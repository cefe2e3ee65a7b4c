/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_SPEAD_BLOCK_TRANSPORT_H
#define INCLUDED_SPEAD_BLOCK_TRANSPORT_H

namespace gr {
namespace spead {

/*! The transport a source or sink block runs on once "auto" is decided. */
enum class transport_kind { udp, ibverbs, pcap };

/*! The block parameter's spelling: "udp", "ibverbs", "pcap". */
inline const char* transport_name(transport_kind t)
{
    switch (t) {
    case transport_kind::ibverbs:
        return "ibverbs";
    case transport_kind::pcap:
        return "pcap";
    case transport_kind::udp:
        break;
    }
    return "udp";
}

} // namespace spead
} // namespace gr

#endif /* INCLUDED_SPEAD_BLOCK_TRANSPORT_H */
