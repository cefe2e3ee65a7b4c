/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "pcap_file.h"
#include <pcap/pcap.h>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <utility>

namespace gr {
namespace spead {

namespace detail {
void pcap_closer::operator()(pcap_t* handle) const { pcap_close(handle); }
void pcap_dumper_closer::operator()(pcap_dumper_t* dumper) const
{
    pcap_dump_close(dumper);
}
} // namespace detail

namespace {

// Large enough for any IPv4 UDP datagram in an Ethernet frame.
constexpr int writer_snaplen = 262144;

std::string link_type_name(int dlt)
{
    const char* name = pcap_datalink_val_to_name(dlt);
    return name ? std::string(name) : "DLT " + std::to_string(dlt);
}

} // namespace

// ---------------------------------------------------------------------------------
// reader
// ---------------------------------------------------------------------------------

pcap_file_reader::pcap_file_reader(const std::string& path, std::uint16_t dst_port)
    : d_path(path), d_dst_port(dst_port)
{
    char errbuf[PCAP_ERRBUF_SIZE] = {};
    d_handle.reset(pcap_open_offline(path.c_str(), errbuf));
    if (!d_handle)
        throw std::runtime_error("cannot read capture '" + path + "': " + errbuf);
    const int dlt = pcap_datalink(d_handle.get());
    if (dlt == DLT_EN10MB)
        d_link = link_type::ethernet;
    else if (dlt == DLT_LINUX_SLL)
        d_link = link_type::linux_sll;
    else
        throw std::runtime_error("cannot read capture '" + path + "': link type " +
                                 link_type_name(dlt) +
                                 " is not supported; capture on an Ethernet interface "
                                 "(EN10MB) or on 'any' (LINUX_SLL)");
}

pcap_file_reader::~pcap_file_reader() = default;

bool pcap_file_reader::next(udp_datagram& out)
{
    while (!d_at_end) {
        pcap_pkthdr* header = nullptr;
        const u_char* frame = nullptr;
        const int status = pcap_next_ex(d_handle.get(), &header, &frame);
        if (status == PCAP_ERROR_BREAK) { // end of file
            d_at_end = true;
            break;
        }
        if (status != 1)
            throw std::runtime_error(
                "cannot read capture '" + d_path + "' at record " +
                std::to_string(d_frames_read + 1) + ": " + pcap_geterr(d_handle.get()) +
                "; the file is truncated or damaged: record it again, or keep its "
                "whole records (e.g. editcap -r FILE OUT 1-" +
                std::to_string(d_frames_read) + ")");
        d_frames_read++;
        const frame_result result = parse_udp_frame(frame, header->caplen, d_link, out);
        if (result != frame_result::ok) {
            d_stats[stat_for(result)]++;
            continue;
        }
        if (d_dst_port != 0 && out.dst_port != d_dst_port) {
            d_stats[recv_stat::frames_filtered]++;
            continue;
        }
        d_datagrams_kept++;
        return true;
    }
    return false;
}

std::size_t pcap_file_reader::next_batch(std::vector<recv::packet_view>& out,
                                         std::size_t max)
{
    out.clear();
    d_batch_bytes.clear();
    d_batch_offsets.clear();
    if (d_read_error)
        std::rethrow_exception(std::exchange(d_read_error, nullptr));
    udp_datagram datagram;
    try {
        while (d_batch_offsets.size() < max && next(datagram)) {
            // Copied: libpcap reuses its buffer on the next read.
            d_batch_offsets.push_back(d_batch_bytes.size());
            d_batch_bytes.insert(d_batch_bytes.end(),
                                 datagram.payload,
                                 datagram.payload + datagram.payload_size);
        }
    } catch (const std::runtime_error&) {
        if (d_batch_offsets.empty())
            throw;
        // The datagrams read before the damage go out first; the error comes next call.
        d_read_error = std::current_exception();
    }
    // Views are made only now: the byte buffer may have moved while it grew.
    const std::size_t n = d_batch_offsets.size();
    for (std::size_t i = 0; i < n; i++) {
        const std::size_t begin = d_batch_offsets[i];
        const std::size_t end = i + 1 < n ? d_batch_offsets[i + 1] : d_batch_bytes.size();
        out.push_back(recv::packet_view{ d_batch_bytes.data() + begin, end - begin });
    }
    return n;
}

// ---------------------------------------------------------------------------------
// writer
// ---------------------------------------------------------------------------------

pcap_file_writer::pcap_file_writer(const std::string& path, std::uint8_t ttl)
    : d_path(path),
      d_ttl(ttl),
      d_handle(pcap_open_dead_with_tstamp_precision(
          DLT_EN10MB, writer_snaplen, PCAP_TSTAMP_PRECISION_MICRO)),
      d_frame(udp_frame_overhead + max_udp_payload)
{
    if (!d_handle)
        throw std::runtime_error("cannot create capture '" + path +
                                 "': libpcap could not open a dead handle");
    d_dumper.reset(pcap_dump_open(d_handle.get(), path.c_str()));
    if (!d_dumper)
        throw std::runtime_error("cannot create capture '" + path +
                                 "': " + pcap_geterr(d_handle.get()));
}

pcap_file_writer::~pcap_file_writer() = default;

void pcap_file_writer::write(const udp_flow& flow,
                             const std::uint8_t* payload,
                             std::size_t size,
                             clock::time_point when)
{
    if (size > max_udp_payload)
        throw std::invalid_argument(
            "pcap_file_writer: UDP payload of " + std::to_string(size) +
            " bytes exceeds the IPv4 limit of " + std::to_string(max_udp_payload));
    std::memcpy(d_frame.data() + udp_frame_overhead, payload, size);
    write_frame(flow, size, when);
}

void pcap_file_writer::write(const udp_flow& flow,
                             const send::packet_piece* pieces,
                             std::size_t n_pieces,
                             clock::time_point when)
{
    std::size_t size = 0;
    for (std::size_t i = 0; i < n_pieces; i++)
        size += pieces[i].length;
    if (size > max_udp_payload)
        throw std::invalid_argument(
            "pcap_file_writer: UDP payload of " + std::to_string(size) +
            " bytes exceeds the IPv4 limit of " + std::to_string(max_udp_payload));
    std::uint8_t* p = d_frame.data() + udp_frame_overhead;
    for (std::size_t i = 0; i < n_pieces; i++) {
        std::memcpy(p, pieces[i].data, pieces[i].length);
        p += pieces[i].length;
    }
    write_frame(flow, size, when);
}

void pcap_file_writer::write_frame(const udp_flow& flow,
                                   std::size_t payload_size,
                                   clock::time_point when)
{
    udp_frame_builder builder(flow, d_ttl, true);
    builder.set_next_identification(d_next_identification++);
    const std::size_t frame_size = builder.write_headers(d_frame.data(), payload_size);

    const auto since_epoch =
        std::chrono::duration_cast<std::chrono::microseconds>(when.time_since_epoch());
    pcap_pkthdr header{};
    header.ts.tv_sec = time_t(since_epoch.count() / 1000000);
    header.ts.tv_usec = suseconds_t(since_epoch.count() % 1000000);
    header.caplen = bpf_u_int32(frame_size);
    header.len = bpf_u_int32(frame_size);
    pcap_dump(reinterpret_cast<u_char*>(d_dumper.get()), &header, d_frame.data());
    d_packets_written++;
}

void pcap_file_writer::flush()
{
    if (pcap_dump_flush(d_dumper.get()) != 0)
        throw std::runtime_error("cannot write capture '" + d_path +
                                 "': " + std::strerror(errno));
}

} // namespace spead
} // namespace gr
