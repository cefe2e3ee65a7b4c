/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// send::udp_ibv_stream: SPEAD packets as raw Ethernet frames through a RAW_PACKET QP.
//
// The transmit ring is one registered mapping cut into slots of max_packet_size + 42
// bytes (rounded up to a cache line); packet k uses slot k % n_slots and send WR k %
// n_slots. The slot holds the Ethernet/IPv4/UDP headers, the SPEAD header and every
// payload piece that is not in a registered user region; pieces in a region go out
// zero-copy as their own SGEs. wr_id is the packet's sequence number + 1, so a
// completion says how many packets the NIC is done with (completions arrive in order
// on one send queue). Only the last WR of each post is signalled, and at least every
// n_slots / 2 WRs, so slots are reclaimed while a long batch is still being posted and
// the send queue cannot fill up with unsignalled WRs.

#include "destination_mac.h"
#include "protocol/packetiser.h"
#include "transport/endpoint.h"
#include "udp_ibv_stream_impl.h"
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <system_error>
#include <algorithm>
#include <cstring>
#include <stdexcept>

namespace gr {
namespace spead {
namespace send {

namespace {

using boost::asio::ip::udp;

/*! Bytes of IPv4 + UDP header that count against the MTU. */
constexpr std::size_t ip_udp_header = ipv4_header_size + udp_header_size;
/*! Slots start on cache lines: the NIC reads whole lines. */
constexpr std::size_t slot_alignment = 64;
/*! SGEs per WR: the header slot plus zero-copy pieces. More makes every WQE bigger
 * (16 bytes each on mlx5) for a case that is rare; packets needing more are copied. */
constexpr int max_sges_wanted = 8;

std::size_t round_up(std::size_t n, std::size_t m) { return (n + m - 1) / m * m; }

} // namespace

udp_ibv_stream::impl::impl(const stream_config& config, const udp_ibv_config& ibv_config)
    : logger("spead udp_ibv_stream"),
      max_packet_size(config.get_max_packet_size()),
      endpoints(ibv_config.get_endpoints()),
      max_poll(ibv_config.get_max_poll())
{
    check_config(config, ibv_config);

    binding.emplace(iface.address);
    ibv_context* context = binding->context();
    const ibv_device_attr device = binding->query_device();
    checksum_offload = binding->has_ip_checksum_offload();

    // The source port: a kernel socket keeps it ours (as spead2 does), and sends the
    // datagrams that make the kernel resolve unicast neighbours.
    socket = file_descriptor(::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
    if (!socket)
        ibv::throw_error("socket", errno);
    const sockaddr_in source = transport::to_sockaddr(udp::endpoint(iface.address, 0));
    if (bind(socket.get(), reinterpret_cast<const sockaddr*>(&source), sizeof(source)) !=
        0)
        ibv::throw_error("binding a UDP socket to " + iface.address.to_string(), errno);
    sockaddr_in bound{};
    socklen_t bound_len = sizeof(bound);
    getsockname(socket.get(), reinterpret_cast<sockaddr*>(&bound), &bound_len);

    for (const auto& ep : endpoints) {
        udp_flow flow;
        flow.src_mac = binding->interface_mac();
        flow.dst_mac = ibv::destination_mac(ep, iface, socket.get());
        flow.src_ip = iface.address.to_uint();
        flow.dst_ip = ep.address().to_v4().to_uint();
        flow.src_port = ntohs(bound.sin_port);
        flow.dst_port = ep.port();
        builders.emplace_back(
            flow, std::uint8_t(ibv_config.get_ttl()), !checksum_offload);
    }

    // Ring geometry within the device's limits.
    slot_size = round_up(max_packet_size + udp_frame_overhead, slot_alignment);
    const std::size_t buffer_size = ibv_config.get_buffer_size();
    // The nearest whole number of slots (slots are a little larger than frames).
    n_slots = std::max<std::size_t>(1, (buffer_size + slot_size / 2) / slot_size);
    if (buffer_size < slot_size)
        logger.info("buffer_size: {} bytes is less than one {}-byte packet slot; using "
                    "one slot",
                    buffer_size,
                    slot_size);
    std::size_t max_slots = std::min<std::size_t>(device.max_qp_wr, device.max_cqe);
    if (device.max_mr_size / slot_size < max_slots)
        max_slots = device.max_mr_size / slot_size;
    if (n_slots > max_slots) {
        logger.warn("buffer_size: {} bytes would need {} send work requests but {} "
                    "allows {}: using {} bytes ({} packets of up to {} bytes)",
                    ibv_config.get_buffer_size(),
                    n_slots,
                    context->device->name,
                    max_slots,
                    max_slots * slot_size,
                    max_slots,
                    max_packet_size);
        n_slots = max_slots;
    }
    max_sges = std::max(1, std::min(max_sges_wanted, device.max_sge));

    pd = ibv::alloc_pd(context);
    const int comp_vector = ibv_config.get_comp_vector();
    if (comp_vector >= 0) {
        channel = ibv::create_comp_channel(context);
        // Waits happen in poll() with a timeout; reading events must never block.
        const int flags = fcntl(channel->fd, F_GETFL);
        if (flags < 0 || fcntl(channel->fd, F_SETFL, flags | O_NONBLOCK) != 0)
            ibv::throw_error("making the completion channel non-blocking", errno);
    }
    // Every outstanding WR may complete (with a flush error in ERR): room for all.
    cq = ibv::create_cq(context,
                        int(n_slots),
                        channel.get(),
                        comp_vector >= 0 ? comp_vector % binding->num_comp_vectors() : 0);
    create_queue_pair(context);
    events = std::make_unique<ibv::async_event_watch>(*binding);
    ibv::modify_qp(qp.get(), IBV_QPS_INIT, binding->port_num());
    ibv::modify_qp(qp.get(), IBV_QPS_RTR);
    ibv::modify_qp(qp.get(), IBV_QPS_RTS);

    // A signalled WR at least every half ring: slots come back while the other half is
    // filled.
    signal_interval = std::max<std::uint64_t>(1, n_slots / 2);
    ring = ibv::allocate_ring(n_slots * slot_size);
    // The NIC only reads what it sends: no access flags.
    ring_mr = ibv::register_memory(pd.get(), ring.get(), n_slots * slot_size, 0);
    regions = ibv::send_regions(pd.get(), ibv_config.get_memory_regions());

    wrs.resize(n_slots);
    sges.resize(n_slots * std::size_t(max_sges));
    for (std::size_t i = 0; i < n_slots; i++) {
        ibv_send_wr& wr = wrs[i];
        wr = ibv_send_wr{};
        wr.sg_list = &sges[i * std::size_t(max_sges)];
        wr.opcode = IBV_WR_SEND;
    }
    logger.debug("{} on {} ({} port {}): {} slots of {} bytes, up to {} SGEs, IPv4 "
                 "checksums by {}, {}",
                 iface.address.to_string(),
                 iface.name,
                 context->device->name,
                 int(binding->port_num()),
                 n_slots,
                 slot_size,
                 max_sges,
                 checksum_offload ? "the NIC" : "software",
                 channel ? "completion channel" : "busy polling");
}

void udp_ibv_stream::impl::create_queue_pair(ibv_context* context)
{
    // max_qp_wr counts the smallest WQEs; ours (Ethernet segment and max_sges SGEs)
    // take several basic blocks each, so a driver may refuse the largest rings (mlx5
    // limits the queue in blocks): halve until it accepts.
    const std::size_t wanted = n_slots;
    for (;;) {
        ibv_qp_cap cap{};
        cap.max_send_wr = std::uint32_t(n_slots);
        cap.max_send_sge = std::uint32_t(max_sges);
        try {
            qp = ibv::create_raw_packet_qp(pd.get(), cq.get(), cq.get(), cap);
            break;
        } catch (const std::system_error& e) {
            const int err = e.code().value();
            if (err != EINVAL && err != ENOMEM)
                throw; // CAP_NET_RAW and the like: nothing a smaller queue changes
            if (n_slots == 1)
                ibv::throw_error("ibv_create_qp(RAW_PACKET, " + std::to_string(wanted) +
                                     " down to 1 send WR of " + std::to_string(max_sges) +
                                     " SGEs)",
                                 err,
                                 std::string(context->device->name) +
                                     " refused every send queue size; check its "
                                     "limits with spead_ibv_check and `ibv_devinfo -v`");
            n_slots /= 2;
        }
    }
    if (n_slots < wanted)
        logger.warn("buffer_size: {} refused a send queue of {} work requests of {} "
                    "SGEs: using {} ({} bytes)",
                    context->device->name,
                    wanted,
                    max_sges,
                    n_slots,
                    n_slots * slot_size);
}

void udp_ibv_stream::impl::check_config(const stream_config& config,
                                        const udp_ibv_config& ibv_config)
{
    ibv_config.check_complete();
    iface = transport::resolve_interface(ibv_config.get_interface_address().to_string(),
                                         "interface_address");

    ibv::send_regions::check_no_overlap(ibv_config.get_memory_regions());

    const int mtu = transport::interface_mtu(iface.name);
    if (config.get_max_packet_size() + ip_udp_header > std::size_t(mtu))
        throw std::invalid_argument(
            "max_packet_size: " + std::to_string(config.get_max_packet_size()) +
            " bytes + 28 bytes of IPv4/UDP header exceed the MTU of " +
            std::to_string(mtu) + " of " + iface.name +
            " and raw frames cannot fragment; use at most " +
            std::to_string(mtu - int(ip_udp_header)) + " or raise the interface MTU");
}

bool udp_ibv_stream::impl::gather(const packet& p,
                                  std::uint8_t* frame,
                                  ibv_send_wr& wr,
                                  bool& zero_copy)
{
    ibv_sge* sge = wr.sg_list;
    const std::uint32_t ring_lkey = ring_mr->lkey;
    sge[0].addr = reinterpret_cast<std::uintptr_t>(frame);
    sge[0].length = std::uint32_t(udp_frame_overhead);
    sge[0].lkey = ring_lkey;
    int n_sge = 1;
    std::uint8_t* out = frame + udp_frame_overhead; // where the next copy goes
    bool last_in_slot = true; // the last SGE points into the slot and ends at out
    zero_copy = p.n_pieces > 1;
    for (std::size_t j = 0; j < p.n_pieces; j++) {
        const packet_piece& piece = p.pieces[j];
        // The header piece lives in the writer's scratch buffer: always copied.
        const ibv::send_regions::region* r =
            j == 0 ? nullptr : regions.find(piece.data, piece.length);
        if (r) {
            const auto addr = reinterpret_cast<std::uintptr_t>(piece.data);
            ibv_sge& prev = sge[n_sge - 1];
            if (!last_in_slot && prev.lkey == r->lkey &&
                prev.addr + prev.length == addr) {
                prev.length += std::uint32_t(piece.length); // adjacent items: one SGE
                continue;
            }
            if (n_sge == max_sges)
                return false;
            sge[n_sge++] = { addr, std::uint32_t(piece.length), r->lkey };
            last_in_slot = false;
            continue;
        }
        std::memcpy(out, piece.data, piece.length);
        if (last_in_slot) {
            sge[n_sge - 1].length += std::uint32_t(piece.length);
        } else {
            if (n_sge == max_sges)
                return false;
            sge[n_sge++] = { reinterpret_cast<std::uintptr_t>(out),
                             std::uint32_t(piece.length),
                             ring_lkey };
            last_in_slot = true;
        }
        out += piece.length;
        if (j > 0)
            zero_copy = false;
    }
    wr.num_sge = n_sge;
    return true;
}

bool udp_ibv_stream::impl::build(const packet& p, std::uint64_t sequence, ibv_send_wr& wr)
{
    std::uint8_t* frame = ring.get() + (sequence % n_slots) * slot_size;
    if (p.size + udp_frame_overhead > slot_size)
        throw std::logic_error("udp_ibv_stream: a packet of " + std::to_string(p.size) +
                               " bytes exceeds max_packet_size");
    builders[p.substream].write_headers(frame, p.size);
    bool zero_copy = false;
    if (gather(p, frame, wr, zero_copy))
        return zero_copy;
    // More discontiguous pieces than SGEs: gather the whole packet into the slot.
    std::uint8_t* out = frame + udp_frame_overhead;
    for (std::size_t j = 0; j < p.n_pieces; j++) {
        std::memcpy(out, p.pieces[j].data, p.pieces[j].length);
        out += p.pieces[j].length;
    }
    wr.sg_list[0].length = std::uint32_t(out - frame);
    wr.num_sge = 1;
    return false;
}

void udp_ibv_stream::impl::post_chain(boost::system::error_code& ec)
{
    if (!chain_first)
        return;
    chain_last->send_flags |= IBV_SEND_SIGNALED;
    last_signalled = posted;
    ibv_send_wr* bad = nullptr;
    const int status = ibv_post_send(qp.get(), chain_first, &bad);
    if (status != 0) {
        // The WRs from bad on were not posted: their packets fail.
        std::uint64_t unposted = 0;
        for (ibv_send_wr* wr = bad; wr; wr = wr->next)
            unposted++;
        posted -= std::min(unposted, chain_length);
        ec = boost::system::error_code(status, boost::system::system_category());
        logger.error("ibv_post_send failed: {}; {} packet(s) not sent",
                     std::strerror(status),
                     unposted);
        // What was posted may now lack a signalled WR: reset the queue once it drains.
        qp_failed = true;
    }
    chain_first = chain_last = nullptr;
    chain_length = 0;
}

udp_ibv_stream::udp_ibv_stream(boost::asio::io_context& io,
                               const stream_config& config,
                               const udp_ibv_config& ibv_config)
    : stream(io,
             config,
             std::max<std::size_t>(1, ibv_config.get_endpoints().size()),
             std::make_unique<impl>(config, ibv_config))
{
}


std::size_t udp_ibv_stream::impl::write_packets(const packet* packets,
                                                std::size_t n,
                                                boost::system::error_code& ec)
{
    impl& d = *this;
    if (!d.device_usable(ec))
        return 0;
    if (d.qp_failed) {
        // Let the failed WRs flush (their errors are reported by reap_completions),
        // then start again with a clean queue.
        if (!d.wait_for_completions(d.posted, ec))
            return 0;
        d.recover();
        if (d.qp_failed) {
            ec = boost::system::errc::make_error_code(boost::system::errc::io_error);
            return 0;
        }
    }
    std::uint64_t zero_copy = 0;
    std::size_t accepted = 0;
    while (accepted < n) {
        if (d.posted - d.completed >= d.n_slots) {
            // Ring full: hand over what is built (its last WR signalled) and wait for
            // the oldest slot.
            d.post_chain(ec);
            if (ec || !d.wait_for_completions(d.posted - d.n_slots + 1, ec))
                break;
        }
        const std::uint64_t sequence = d.posted;
        ibv_send_wr& wr = d.wrs[sequence % d.n_slots];
        zero_copy += d.build(packets[accepted], sequence, wr);
        wr.wr_id = sequence + 1;
        wr.send_flags = d.checksum_offload ? IBV_SEND_IP_CSUM : 0;
        wr.next = nullptr;
        if (d.chain_last)
            d.chain_last->next = &wr;
        else
            d.chain_first = &wr;
        d.chain_last = &wr;
        d.chain_length++;
        d.posted++;
        accepted++;
        if (d.posted - d.last_signalled >= d.signal_interval) {
            wr.send_flags |= IBV_SEND_SIGNALED;
            d.last_signalled = d.posted;
        }
    }
    const std::uint64_t before_post = d.posted;
    d.post_chain(ec);
    accepted -= std::size_t(before_post - d.posted); // WRs the NIC refused
    if (zero_copy > accepted)
        zero_copy = accepted;
    if (zero_copy)
        count(send_stat::packets_zero_copy, zero_copy);
    if (accepted > zero_copy)
        count(send_stat::packets_copied, accepted - zero_copy);
    return accepted;
}

} // namespace send
} // namespace spead
} // namespace gr
