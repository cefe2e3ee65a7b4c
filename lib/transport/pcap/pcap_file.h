/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_SPEAD_TRANSPORT_PCAP_FILE_H
#define INCLUDED_SPEAD_TRANSPORT_PCAP_FILE_H

#include "protocol/packetiser.h"
#include "transport/raw_packet.h"
#include <gnuradio/spead/api.h>
#include <gnuradio/spead/recv_stream.h>
#include <gnuradio/spead/stats.h>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <memory>
#include <string>
#include <vector>

// libpcap's handle types, kept opaque so that users of this header need no <pcap.h>.
struct pcap;
struct pcap_dumper;

namespace gr {
namespace spead {

namespace detail {
struct SPEAD_API pcap_closer {
    void operator()(struct pcap* handle) const;
};
struct SPEAD_API pcap_dumper_closer {
    void operator()(struct pcap_dumper* dumper) const;
};
} // namespace detail

/*!
 * \brief Reads the UDP datagrams of a capture file (pcap or pcapng, via libpcap).
 *
 * Takes Ethernet (EN10MB) and Linux cooked (LINUX_SLL, "any" interface) captures and
 * keeps unfragmented IPv4 UDP datagrams, optionally only those to one destination
 * port. Every other frame is counted: frames for other ports in frames_filtered,
 * rejected frames in frames_not_ipv4_udp, frames_vlan, frames_ip_options,
 * frames_fragmented or frames_truncated. Not thread-safe.
 */
class SPEAD_API pcap_file_reader
{
public:
    /*!
     * \param path capture file
     * \param dst_port keep only datagrams to this UDP port; 0 keeps all
     * \throws std::runtime_error naming the file and libpcap's message if it cannot be
     *         read, or the link type if it is not Ethernet or Linux cooked
     */
    explicit pcap_file_reader(const std::string& path, std::uint16_t dst_port = 0);
    ~pcap_file_reader();
    pcap_file_reader(const pcap_file_reader&) = delete;
    pcap_file_reader& operator=(const pcap_file_reader&) = delete;

    /*!
     * The next kept datagram; its payload points into libpcap's buffer and stays valid
     * until the next call to next() or next_batch().
     * \return false at the end of the file
     * \throws std::runtime_error on a read error (e.g. a truncated file)
     */
    bool next(udp_datagram& out);

    /*!
     * Replaces the contents of \p out with up to \p max payloads (fewer only at the end
     * of the file), copied into a buffer the reader reuses: the views stay valid until
     * the next call to next() or next_batch(). Allocates only while that buffer grows.
     * \return the number of payloads; 0 at the end of the file
     * \throws std::runtime_error on a read error
     */
    std::size_t next_batch(std::vector<recv::packet_view>& out, std::size_t max);

    /*! The end of the file was reached. */
    bool at_end() const { return d_at_end; }
    link_type get_link_type() const { return d_link; }
    const std::string& path() const { return d_path; }
    std::uint16_t dst_port() const { return d_dst_port; }
    /*! Frames read from the file, kept or not. */
    std::uint64_t frames_read() const { return d_frames_read; }
    /*! Datagrams kept (returned by next() or next_batch()). */
    std::uint64_t datagrams_kept() const { return d_datagrams_kept; }
    /*! The frames_* counters; every other counter stays 0. */
    const recv_stats& stats() const { return d_stats; }

private:
    std::string d_path;
    std::uint16_t d_dst_port;
    std::unique_ptr<struct pcap, detail::pcap_closer> d_handle;
    link_type d_link = link_type::ethernet;
    bool d_at_end = false;
    std::exception_ptr d_read_error; //!< met after a batch's first datagram
    std::uint64_t d_frames_read = 0;
    std::uint64_t d_datagrams_kept = 0;
    recv_stats d_stats;
    std::vector<std::uint8_t> d_batch_bytes;  //!< payload copies of the last batch
    std::vector<std::size_t> d_batch_offsets; //!< where each payload starts in it
};

/*!
 * \brief Records UDP payloads to a pcap file as Ethernet frames (EN10MB), with IPv4
 * and UDP headers built by udp_frame_builder (IPv4 checksum computed, UDP checksum 0,
 * identification counting up from 0). Not thread-safe.
 */
class SPEAD_API pcap_file_writer
{
public:
    using clock = std::chrono::system_clock;

    /*!
     * \param path file to create (replaced if it exists)
     * \param ttl IPv4 time to live written in each frame
     * \throws std::runtime_error naming the file and libpcap's message if it cannot be
     *         created
     */
    explicit pcap_file_writer(const std::string& path, std::uint8_t ttl = 1);
    /*! Flushes and closes the file (errors at this point are not reported: call
     * flush() first to see them). */
    ~pcap_file_writer();
    pcap_file_writer(const pcap_file_writer&) = delete;
    pcap_file_writer& operator=(const pcap_file_writer&) = delete;

    /*! Writes one datagram of \p flow stamped with \p when.
     * \throws std::invalid_argument if size exceeds max_udp_payload */
    void write(const udp_flow& flow,
               const std::uint8_t* payload,
               std::size_t size,
               clock::time_point when = clock::now());

    /*! Writes one datagram gathered from \p pieces (a packet from packet_generator). */
    void write(const udp_flow& flow,
               const send::packet_piece* pieces,
               std::size_t n_pieces,
               clock::time_point when = clock::now());

    /*! Pushes buffered frames to the file. \throws std::runtime_error on an I/O error */
    void flush();

    const std::string& path() const { return d_path; }
    std::uint64_t packets_written() const { return d_packets_written; }

private:
    void
    write_frame(const udp_flow& flow, std::size_t payload_size, clock::time_point when);

    std::string d_path;
    std::uint8_t d_ttl;
    std::unique_ptr<struct pcap, detail::pcap_closer> d_handle; //!< a "dead" handle
    std::unique_ptr<struct pcap_dumper, detail::pcap_dumper_closer> d_dumper;
    std::vector<std::uint8_t> d_frame; //!< one frame, reused
    std::uint16_t d_next_identification = 0;
    std::uint64_t d_packets_written = 0;
};

} // namespace spead
} // namespace gr

#endif
