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

#include "protocol/packetiser.h"
#include "streams/packet_writer.h"
#include "transport/endpoint.h"
#include "transport/file_descriptor.h"
#include "transport/raw_packet.h"
#include "verbs.h"
#include <gnuradio/logger.h>
#include <gnuradio/spead/send_udp_ibv.h>
#include <arpa/inet.h>
#include <fcntl.h>
#include <net/route.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <sys/socket.h>
#include <system_error>
#include <boost/asio/error.hpp>
#include <algorithm>
#include <chrono>
#include <cstring>
#include <fstream>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <thread>

namespace gr {
namespace spead {
namespace send {

namespace {

using boost::asio::ip::address_v4;
using boost::asio::ip::udp;
using steady = std::chrono::steady_clock;
using transport::file_descriptor;

/*! Bytes of IPv4 + UDP header that count against the MTU. */
constexpr std::size_t ip_udp_header = ipv4_header_size + udp_header_size;
/*! Slots start on cache lines: the NIC reads whole lines. */
constexpr std::size_t slot_alignment = 64;
/*! SGEs per WR: the header slot plus zero-copy pieces. More makes every WQE bigger
 * (16 bytes each on mlx5) for a case that is rare; packets needing more are copied. */
constexpr int max_sges_wanted = 8;
/*! Completions taken per ibv_poll_cq. */
constexpr int poll_batch = 16;
/*! How long the NIC may make no progress before the outstanding sends are abandoned:
 * far longer than any real transmit, short enough to report a dead device. */
constexpr auto stall_limit = std::chrono::seconds(5);
/*! Longest single wait on the completion channel, so stalls are noticed. */
constexpr int channel_wait_ms = 10;
/*! How long a unicast destination may take to answer ARP. */
constexpr auto neighbour_wait = std::chrono::seconds(1);
/*! UDP discard port: a datagram to it makes the kernel resolve the neighbour. */
constexpr unsigned short discard_port = 9;

std::size_t round_up(std::size_t n, std::size_t m) { return (n + m - 1) / m * m; }

boost::system::error_code error_for(ibv_wc_status status)
{
    namespace errc = boost::system::errc;
    switch (status) {
    case IBV_WC_LOC_LEN_ERR:
        return errc::make_error_code(errc::message_size);
    case IBV_WC_LOC_PROT_ERR:
        return errc::make_error_code(errc::bad_address);
    case IBV_WC_WR_FLUSH_ERR:
        return errc::make_error_code(errc::operation_canceled);
    default:
        return errc::make_error_code(errc::io_error);
    }
}

/*!
 * The host whose MAC a frame to \p destination needs: the gateway of the longest
 * matching route of the main table on \p interface_name, or the destination itself
 * when it is on-link (or no route says otherwise).
 */
address_v4 next_hop(const address_v4& destination, const std::string& interface_name)
{
    // Iface Destination Gateway Flags RefCnt Use Metric Mask MTU Window IRTT; addresses
    // are the raw network-order words printed as native hex.
    std::ifstream routes("/proc/net/route");
    std::string line;
    std::getline(routes, line);
    const std::uint32_t wanted = destination.to_uint();
    int best_prefix = -1;
    unsigned long best_metric = 0;
    std::uint32_t best_gateway = 0;
    while (std::getline(routes, line)) {
        std::istringstream fields(line);
        std::string iface;
        unsigned long dest = 0, gateway = 0, flags = 0, refcnt = 0, use = 0, metric = 0,
                      mask = 0;
        if (!(fields >> iface >> std::hex >> dest >> gateway >> flags >> std::dec >>
              refcnt >> use >> metric >> std::hex >> mask))
            continue;
        if (iface != interface_name || !(flags & RTF_UP))
            continue;
        const std::uint32_t net = ntohl(std::uint32_t(dest));
        const std::uint32_t netmask = ntohl(std::uint32_t(mask));
        if ((wanted & netmask) != (net & netmask))
            continue;
        const int prefix = __builtin_popcount(netmask);
        if (prefix < best_prefix || (prefix == best_prefix && metric >= best_metric))
            continue;
        best_prefix = prefix;
        best_metric = metric;
        best_gateway = (flags & RTF_GATEWAY) ? ntohl(std::uint32_t(gateway)) : 0;
    }
    return best_gateway ? address_v4(best_gateway) : destination;
}

} // namespace

struct udp_ibv_stream::impl : packet_writer {
    /*! A registered user region, sorted by begin. */
    struct region {
        std::uintptr_t begin;
        std::uintptr_t end;
        std::uint32_t lkey;
    };

    impl(const stream_config& config, const udp_ibv_config& ibv_config);
    std::size_t write_packets(const packet* packets,
                              std::size_t n,
                              boost::system::error_code& ec) override;
    std::uint64_t reap_completions(bool wait,
                                   boost::system::error_code& ec,
                                   std::uint64_t written) override;

    void check_config(const stream_config& config, const udp_ibv_config& ibv_config);
    mac_address destination_mac(const udp::endpoint& ep);
    /*! The QP, with as many send WRs (slots) of the ring as the driver accepts. */
    void create_queue_pair(ibv_context* context);
    void register_regions(const udp_ibv_config& ibv_config);

    /*! The registered region that holds [p, p + length) wholly, or null. */
    const region* find_region(const std::uint8_t* p, std::size_t length);
    /*! SGEs for \p p: copies into the slot, zero-copy from regions. \return false
     * when the packet needs more SGEs than the QP takes. */
    bool gather(const packet& p, std::uint8_t* frame, ibv_send_wr& wr, bool& zero_copy);
    /*! Fills WR \p wr (and its slot) for \p p. \return true if zero-copy. */
    bool build(const packet& p, std::uint64_t sequence, ibv_send_wr& wr);
    /*! Posts the chain built so far; its last WR is signalled. */
    void post_chain(boost::system::error_code& ec);
    /*! Takes the completions there are; errors go to completion_error. \return how
     * many, or -1 if the CQ failed. */
    int poll_completions();
    /*! Waits (bounded) until \p target packets are complete. \return false after a
     * stall (\p ec says so; the outstanding packets were abandoned). */
    bool wait_for_completions(std::uint64_t target, boost::system::error_code& ec);
    /*! The NIC made no progress: flush or forget what is outstanding. */
    void abandon_outstanding();
    /*! Brings the QP back to RTS once nothing is outstanding (after an error). */
    void recover();

    gr::logger logger;
    std::size_t max_packet_size;
    std::vector<udp::endpoint> endpoints;
    int max_poll;
    transport::network_interface iface;

    // Verbs objects, in creation order: C++ destroys them in reverse.
    std::optional<ibv::device_binding> binding;
    file_descriptor socket; //!< reserves the source port; primes ARP
    ibv::comp_channel_ptr channel;
    ibv::cq_ptr cq;
    ibv::pd_ptr pd;
    ibv::qp_ptr qp;
    ibv::mapping_ptr ring;
    ibv::mr_ptr ring_mr;
    std::vector<ibv::mr_ptr> region_mrs;

    bool checksum_offload = false;
    std::size_t slot_size = 0;
    std::size_t n_slots = 0;
    int max_sges = 1;
    std::uint64_t signal_interval = 1;
    std::vector<region> regions;
    std::size_t last_region = 0;
    std::vector<udp_frame_builder> builders; //!< by substream
    std::vector<ibv_send_wr> wrs;            //!< by slot
    std::vector<ibv_sge> sges;               //!< max_sges per slot

    // ---- writer thread only ----
    std::uint64_t posted = 0;         //!< packets handed to the NIC
    std::uint64_t completed = 0;      //!< packets the NIC is done with
    std::uint64_t last_signalled = 0; //!< posted count at the last signalled WR
    ibv_send_wr* chain_first = nullptr;
    ibv_send_wr* chain_last = nullptr;
    std::uint64_t chain_length = 0;
    bool qp_failed = false; //!< an error completion put the QP in ERR
    /*! First error found on completion since the last reap_completions(), which
     * reports it for the heaps it completes. */
    boost::system::error_code completion_error;
    std::uint64_t error_completions = 0;
    std::uint64_t error_completions_counted = 0; //!< of those, in packets_failed
    int last_logged_status = -1;
};

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
        flow.dst_mac = destination_mac(ep);
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
    ibv::modify_qp(qp.get(), IBV_QPS_INIT, binding->port_num());
    ibv::modify_qp(qp.get(), IBV_QPS_RTR);
    ibv::modify_qp(qp.get(), IBV_QPS_RTS);

    // A signalled WR at least every half ring: slots come back while the other half is
    // filled.
    signal_interval = std::max<std::uint64_t>(1, n_slots / 2);
    ring = ibv::allocate_ring(n_slots * slot_size);
    // The NIC only reads what it sends: no access flags.
    ring_mr = ibv::register_memory(pd.get(), ring.get(), n_slots * slot_size, 0);
    register_regions(ibv_config);

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

    // Overlap: sort by start, compare neighbours; report the user's indices.
    const auto& given = ibv_config.get_memory_regions();
    std::vector<std::size_t> order(given.size());
    for (std::size_t i = 0; i < order.size(); i++)
        order[i] = i;
    auto begin_of = [&](std::size_t i) {
        return reinterpret_cast<std::uintptr_t>(given[i].first);
    };
    std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
        return begin_of(a) < begin_of(b);
    });
    for (std::size_t k = 1; k < order.size(); k++) {
        const std::size_t a = order[k - 1], b = order[k];
        if (begin_of(a) + given[a].second > begin_of(b))
            throw std::invalid_argument(
                "memory_regions: region " + std::to_string(std::min(a, b)) +
                " overlaps region " + std::to_string(std::max(a, b)) +
                "; each byte may be registered once: merge overlapping regions into "
                "one");
    }

    const int mtu = transport::interface_mtu(iface.name);
    if (config.get_max_packet_size() + ip_udp_header > std::size_t(mtu))
        throw std::invalid_argument(
            "max_packet_size: " + std::to_string(config.get_max_packet_size()) +
            " bytes + 28 bytes of IPv4/UDP header exceed the MTU of " +
            std::to_string(mtu) + " of " + iface.name +
            " and raw frames cannot fragment; use at most " +
            std::to_string(mtu - int(ip_udp_header)) + " or raise the interface MTU");
}

mac_address udp_ibv_stream::impl::destination_mac(const udp::endpoint& ep)
{
    const address_v4 host = ep.address().to_v4();
    if (host.is_multicast())
        return multicast_mac(host.to_uint());
    const address_v4 hop = next_hop(host, iface.name);
    mac_address mac{};
    if (ibv::lookup_neighbour(hop, iface.name, mac))
        return mac;
    // Not in the neighbour table yet: a datagram to the discard port makes the kernel
    // ARP for it (through the same route), then the table is read again.
    const sockaddr_in discard = transport::to_sockaddr(udp::endpoint(host, discard_port));
    const auto deadline = steady::now() + neighbour_wait;
    auto next_probe = steady::now();
    while (steady::now() < deadline) {
        if (steady::now() >= next_probe) {
            (void)sendto(socket.get(),
                         nullptr,
                         0,
                         MSG_DONTWAIT,
                         reinterpret_cast<const sockaddr*>(&discard),
                         sizeof(discard));
            next_probe = steady::now() + std::chrono::milliseconds(250);
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
        if (ibv::lookup_neighbour(hop, iface.name, mac))
            return mac;
    }
    const std::string via = hop == host ? "" : " (via gateway " + hop.to_string() + ")";
    ibv::throw_error(
        "endpoints: no MAC address for " + host.to_string() + via + " on " + iface.name,
        EHOSTUNREACH,
        "Raw frames need the destination's Ethernet address from the kernel "
        "neighbour table, and " +
            hop.to_string() +
            " did not answer ARP within 1 s. Check that the host is "
            "up and reachable through " +
            iface.name + " (`ip route get " + host.to_string() + "`, `ip neigh show " +
            hop.to_string() + "`), add a static entry (`ip neigh add " + hop.to_string() +
            " lladdr MAC dev " + iface.name + "`), or send to a multicast group");
}

void udp_ibv_stream::impl::register_regions(const udp_ibv_config& ibv_config)
{
    for (const auto& [ptr, size] : ibv_config.get_memory_regions()) {
        // Handed to the driver as given: under PeerDirect a GPU pointer registers too.
        // The NIC only reads it.
        region_mrs.push_back(ibv::register_memory(pd.get(), ptr, size, 0));
        const auto begin = reinterpret_cast<std::uintptr_t>(ptr);
        regions.push_back({ begin, begin + size, region_mrs.back()->lkey });
    }
    std::sort(regions.begin(), regions.end(), [](const region& a, const region& b) {
        return a.begin < b.begin;
    });
}

const udp_ibv_stream::impl::region*
udp_ibv_stream::impl::find_region(const std::uint8_t* p, std::size_t length)
{
    if (regions.empty())
        return nullptr;
    const auto begin = reinterpret_cast<std::uintptr_t>(p);
    const auto end = begin + length;
    // Consecutive pieces are nearly always in the region the previous one was in.
    const region& cached = regions[last_region];
    if (begin >= cached.begin && end <= cached.end)
        return &cached;
    auto it = std::upper_bound(
        regions.begin(), regions.end(), begin, [](std::uintptr_t a, const region& r) {
            return a < r.begin;
        });
    if (it == regions.begin())
        return nullptr;
    --it;
    if (end > it->end)
        return nullptr;
    last_region = std::size_t(it - regions.begin());
    return &*it;
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
        const region* r = j == 0 ? nullptr : find_region(piece.data, piece.length);
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

int udp_ibv_stream::impl::poll_completions()
{
    ibv_wc wc[poll_batch];
    const int n = ibv_poll_cq(cq.get(), poll_batch, wc);
    if (n < 0) {
        // Only a CQ overrun does this, and the CQ has room for every WR.
        if (!completion_error)
            completion_error =
                boost::system::errc::make_error_code(boost::system::errc::io_error);
        logger.error("ibv_poll_cq failed: the send completion queue is broken");
        qp_failed = true;
        return -1;
    }
    for (int i = 0; i < n; i++) {
        if (wc[i].status != IBV_WC_SUCCESS) {
            error_completions++;
            qp_failed = true;
            if (!completion_error)
                completion_error = error_for(wc[i].status);
            if (int(wc[i].status) != last_logged_status) {
                last_logged_status = int(wc[i].status);
                logger.error("a send work request completed with {} (vendor error "
                             "0x{:x}); the heaps in flight fail and the send queue is "
                             "reset",
                             ibv_wc_status_str(wc[i].status),
                             wc[i].vendor_err);
            }
        }
        completed = std::max<std::uint64_t>(completed, wc[i].wr_id);
    }
    return n;
}

bool udp_ibv_stream::impl::wait_for_completions(std::uint64_t target,
                                                boost::system::error_code& ec)
{
    auto deadline = steady::now() + stall_limit;
    int empty_polls = 0;
    while (completed < target) {
        const int n = poll_completions();
        if (n < 0) {
            // The CQ is broken for good: nothing will complete, so do not wait for it.
            if (!ec)
                ec = boost::system::errc::make_error_code(boost::system::errc::io_error);
            abandon_outstanding();
            return false;
        }
        if (n > 0) {
            empty_polls = 0;
            deadline = steady::now() + stall_limit; // progress
            continue;
        }
        if (++empty_polls < max_poll)
            continue;
        empty_polls = 0;
        if (steady::now() > deadline) {
            if (!ec)
                ec = boost::asio::error::timed_out;
            logger.error("the NIC completed no send for {} s: abandoning {} packet(s) "
                         "in flight (is the device still there?)",
                         stall_limit.count(),
                         posted - completed);
            abandon_outstanding();
            return false;
        }
        if (!channel) {
            sched_yield(); // busy polling, but let the NIC's other users run
            continue;
        }
        // Arm, then look once more: a completion between the last poll and the arming
        // raises no event.
        if (ibv_req_notify_cq(cq.get(), 0) != 0)
            continue;
        if (poll_completions() != 0)
            continue;
        pollfd pfd{ channel->fd, POLLIN, 0 };
        if (poll(&pfd, 1, channel_wait_ms) > 0) {
            ibv_cq* event_cq = nullptr;
            void* event_context = nullptr;
            while (ibv_get_cq_event(channel.get(), &event_cq, &event_context) == 0)
                ibv_ack_cq_events(event_cq, 1);
        }
    }
    return completed >= target;
}

void udp_ibv_stream::impl::abandon_outstanding()
{
    // ERR flushes every outstanding WR; give the flush a moment, then forget the rest
    // (RESET discards the queue, so the NIC touches none of that memory afterwards).
    ibv_qp_attr attr{};
    attr.qp_state = IBV_QPS_ERR;
    ibv_modify_qp(qp.get(), &attr, IBV_QP_STATE);
    const auto deadline = steady::now() + std::chrono::seconds(1);
    while (completed < posted && steady::now() < deadline) {
        if (poll_completions() <= 0)
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    completed = posted;
    qp_failed = true;
    recover();
}

void udp_ibv_stream::impl::recover()
{
    if (completed < posted)
        return; // the NIC still owns slots: wait for their completions first
    try {
        ibv::modify_qp(qp.get(), IBV_QPS_RESET);
        ibv::modify_qp(qp.get(), IBV_QPS_INIT, binding->port_num());
        ibv::modify_qp(qp.get(), IBV_QPS_RTR);
        ibv::modify_qp(qp.get(), IBV_QPS_RTS);
        qp_failed = false;
        logger.warn("send queue reset to RTS after an error; sending continues");
    } catch (const std::system_error& e) {
        logger.error("could not reset the send queue: {}", e.what());
    }
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

udp_ibv_stream::~udp_ibv_stream() = default;

std::size_t udp_ibv_stream::impl::write_packets(const packet* packets,
                                                std::size_t n,
                                                boost::system::error_code& ec)
{
    impl& d = *this;
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

std::uint64_t udp_ibv_stream::impl::reap_completions(bool wait,
                                                     boost::system::error_code& ec,
                                                     std::uint64_t /*written*/)
{
    impl& d = *this;
    if (wait)
        d.wait_for_completions(d.posted, ec);
    else
        d.poll_completions();
    if (d.completion_error) {
        if (!ec)
            ec = d.completion_error;
        d.completion_error.clear();
    }
    if (d.error_completions > d.error_completions_counted) {
        count(send_stat::packets_failed,
              d.error_completions - d.error_completions_counted);
        d.error_completions_counted = d.error_completions;
    }
    if (d.qp_failed && d.completed == d.posted)
        d.recover();
    return d.completed;
}

} // namespace send
} // namespace spead
} // namespace gr
