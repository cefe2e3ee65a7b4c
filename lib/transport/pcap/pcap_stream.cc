/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "pcap_file.h"
#include "protocol/packet_writer.h"
#include "protocol/packetiser.h"
#include "transport/endpoint.h"
#include "transport/raw_packet.h"
#include <gnuradio/logger.h>
#include <gnuradio/spead/send_pcap.h>
#include <exception>
#include <stdexcept>

namespace gr {
namespace spead {
namespace send {

namespace {

using boost::asio::ip::udp;

constexpr mac_address source_mac = { 0x02, 0, 0, 0, 0, 0x01 };
constexpr mac_address unicast_destination_mac = { 0x02, 0, 0, 0, 0, 0x02 };

/*! \p path, once the destinations are checked: a bad destination must not create
 * (or replace) the file. */
const std::string& checked(const std::string& path,
                           const std::vector<udp::endpoint>& destinations)
{
    if (destinations.empty())
        throw std::invalid_argument(
            "destinations: none given; set at least one, e.g. 239.1.2.3:7148");
    for (const auto& ep : destinations)
        transport::check_endpoint(ep, "destinations", transport::endpoint_use::send);
    return path;
}

udp_flow flow_to(const udp::endpoint& destination)
{
    udp_flow flow;
    flow.dst_ip = destination.address().to_v4().to_uint();
    flow.dst_port = destination.port();
    flow.src_ip = boost::asio::ip::address_v4::loopback().to_uint();
    flow.src_port = destination.port();
    flow.src_mac = source_mac;
    flow.dst_mac = is_ipv4_multicast(flow.dst_ip) ? multicast_mac(flow.dst_ip)
                                                  : unicast_destination_mac;
    return flow;
}

} // namespace

struct pcap_stream::impl : packet_writer {
    impl(const std::string& path, const std::vector<udp::endpoint>& destinations)
        : logger("spead pcap_stream"), file(checked(path, destinations))
    {
        for (const auto& ep : destinations)
            flows.push_back(flow_to(ep));
    }
    // The stream destroys its writer after its last batch: the file is complete.
    ~impl() override
    {
        try {
            file.flush();
        } catch (const std::exception& e) {
            logger.error("{}", e.what());
        }
    }

    std::size_t write_packets(const packet* packets,
                              std::size_t n,
                              boost::system::error_code& ec) override
    {
        std::size_t written = 0;
        try {
            for (; written < n; written++) {
                const packet& p = packets[written];
                file.write(flows[p.substream], p.pieces, p.n_pieces);
            }
            // What the stream reports sent is then in the file; if it cannot get
            // there, none of the batch counts as sent.
            file.flush();
        } catch (const std::exception& e) {
            logger.error("{}", e.what());
            ec = boost::system::errc::make_error_code(boost::system::errc::io_error);
            if (written == n)
                written = 0;
        }
        return written;
    }

    gr::logger logger;
    pcap_file_writer file; //!< writer thread only, after construction
    std::vector<udp_flow> flows;
};

pcap_stream::pcap_stream(boost::asio::io_context& io,
                         const stream_config& config,
                         const std::string& path,
                         const std::vector<udp::endpoint>& destinations)
    : stream(io, config, destinations.size(), std::make_unique<impl>(path, destinations))
{
}

pcap_stream::pcap_stream(boost::asio::io_context& io,
                         const stream_config& config,
                         const std::string& path,
                         const std::string& destinations)
    : pcap_stream(io,
                  config,
                  path,
                  transport::parse_endpoints(
                      destinations, "destinations", transport::endpoint_use::send))
{
}


} // namespace send
} // namespace spead
} // namespace gr
