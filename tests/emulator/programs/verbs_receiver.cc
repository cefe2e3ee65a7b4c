/* Copyright 2026 gr-spead authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
// emu_verbs_receiver: receives UDP datagrams through a raw-packet QP, as the product's
// udp_ibv_reader does (rdma_cm device lookup, one flow per endpoint, a registered buffer
// cut into slots, RTR, multicast joined through a kernel socket), and verifies their
// payload pattern. Runs over real hardware or the emulated NIC alike.
//
//   emu_verbs_receiver --interface ADDRESS|NETDEV --port PORT --count N --size BYTES
//                      [--group MULTICAST] [--mode poll|channel] [--slots N]
//                      [--timeout-ms MS] [--ready-file PATH]
//
// Exit: 0 all N arrived intact, 1 not all did, 3 no RDMA device, 4 a verbs call failed.
#include "program_support.h"
#include "verbs_device.h"

#include <verbs_builders.h>

#include <arpa/inet.h>
#include <fcntl.h>
#include <net/ethernet.h>
#include <poll.h>
#include <sched.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <vector>

using namespace emu_programs;
using namespace verbs_builders;
using namespace verbs_owners;

namespace {

constexpr size_t frame_headers = 14 + 20 + 8;

int fail(const char* what)
{
    fprintf(stderr, "emu_verbs_receiver: %s: %s\n", what, strerror(errno));
    return exit_verbs_error;
}

// Joins the group with an ordinary socket so IGMP reaches the switch; the socket must
// stay open while receiving.
int join_group(in_addr group, const interface_info& interface)
{
    const int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    ip_mreq request{};
    request.imr_multiaddr = group;
    request.imr_interface = interface.address;
    if (fd < 0 ||
        setsockopt(fd, IPPROTO_IP, IP_ADD_MEMBERSHIP, &request, sizeof(request)) != 0)
        return -1;
    return fd;
}

} // namespace

int main(int argc, char** argv)
{
    const options args(argc, argv, 1);
    const interface_info interface = interface_option(args, "emu_verbs_receiver");
    const auto port = static_cast<uint16_t>(args.number("port", 0));
    const uint64_t count = args.number("count", 0);
    const size_t size = args.number("size", 1024);
    const bool use_channel = args.text("mode", "channel") == "channel";
    const uint32_t slots =
        static_cast<uint32_t>(args.number("slots", count < 4096 ? count + 16 : 4096));
    const auto limit = std::chrono::milliseconds(args.number("timeout-ms", 10000));
    in_addr group{};
    const bool multicast = args.has("group");
    if (multicast && inet_pton(AF_INET, args.text("group").c_str(), &group) != 1) {
        fprintf(stderr, "emu_verbs_receiver: bad --group\n");
        return exit_usage;
    }
    if (port == 0 || count == 0 || size < minimum_payload) {
        fprintf(stderr, "emu_verbs_receiver: need --port, --count and --size >= 8\n");
        return exit_usage;
    }

    cm_id_ptr id;
    if (const int status = open_device_of(interface, id, "emu_verbs_receiver"))
        return status;
    ibv_context* context = id->verbs;
    ibv_port_attr port_attr{};
    if (ibv_query_port(context, id->port_num, &port_attr) != 0 ||
        port_attr.link_layer != IBV_LINK_LAYER_ETHERNET) {
        fprintf(stderr,
                "emu_verbs_receiver: %s is not an Ethernet port\n",
                context->device->name);
        return exit_verbs_error;
    }

    pd_ptr pd(ibv_alloc_pd(context));
    if (!pd)
        return fail("ibv_alloc_pd");
    channel_ptr channel;
    if (use_channel) {
        channel.reset(ibv_create_comp_channel(context));
        if (!channel)
            return fail("ibv_create_comp_channel");
        fcntl(channel->fd, F_SETFL, fcntl(channel->fd, F_GETFL) | O_NONBLOCK);
    }
    cq_ptr cq(ibv_create_cq(context, static_cast<int>(slots), nullptr, channel.get(), 0));
    if (!cq)
        return fail("ibv_create_cq");
    ibv_qp_init_attr qp_attr = qp_init_attr(cq.get());
    qp_attr.cap.max_send_wr = 1;
    qp_attr.cap.max_send_sge = 1;
    qp_attr.cap.max_recv_wr = slots;
    qp_attr.cap.max_recv_sge = 1;
    const char* failed = nullptr;
    qp_ptr qp = create_qp_at_init(pd.get(), qp_attr, id->port_num, failed);
    if (!qp)
        return fail(failed);
    const mac_address destination_mac = multicast ? multicast_mac(group) : interface.mac;
    udp_flow_rule rule = make_udp_flow_rule(
        destination_mac.data(), (multicast ? group : interface.address).s_addr, port);
    flow_ptr flow(ibv_create_flow(qp.get(), &rule.attr));
    if (!flow)
        return fail("ibv_create_flow");

    const size_t slot_size = size + frame_headers;
    std::vector<uint8_t> buffer(slot_size * slots);
    mr_ptr mr(ibv_reg_mr(pd.get(), buffer.data(), buffer.size(), IBV_ACCESS_LOCAL_WRITE));
    if (!mr)
        return fail("ibv_reg_mr");
    std::vector<ibv_sge> sges(slots);
    std::vector<ibv_recv_wr> wrs(slots);
    for (uint32_t i = 0; i < slots; i++) {
        sges[i] = { reinterpret_cast<uintptr_t>(&buffer[i * slot_size]),
                    static_cast<uint32_t>(slot_size),
                    mr->lkey };
        wrs[i].wr_id = i;
        wrs[i].sg_list = &sges[i];
        wrs[i].num_sge = 1;
        wrs[i].next = i + 1 < slots ? &wrs[i + 1] : nullptr; // posted as one chain
    }
    ibv_recv_wr* bad = nullptr;
    if (int status = ibv_post_recv(qp.get(), &wrs[0], &bad)) {
        errno = status;
        return fail("ibv_post_recv");
    }
    ibv_qp_attr rtr{};
    rtr.qp_state = IBV_QPS_RTR;
    if (ibv_modify_qp(qp.get(), &rtr, IBV_QP_STATE) != 0)
        return fail("ibv_modify_qp(RTR)");
    int membership = -1;
    if (multicast && (membership = join_group(group, interface)) < 0)
        return fail("IP_ADD_MEMBERSHIP");
    announce_ready(args.text("ready-file"));

    arrival_tally tally(count);
    const auto deadline = steady_clock::now() + limit;
    unsigned events_to_acknowledge = 0;
    bool armed = false;
    while (!tally.complete() && steady_clock::now() < deadline) {
        if (use_channel && !armed) {
            // Arm before the last poll, so a completion between poll and wait is never
            // missed.
            if (ibv_req_notify_cq(cq.get(), 0) != 0)
                return fail("ibv_req_notify_cq");
            armed = true;
        }
        ibv_wc completions[32];
        const int got = ibv_poll_cq(cq.get(), 32, completions);
        if (got < 0) {
            fprintf(stderr, "emu_verbs_receiver: ibv_poll_cq failed (CQ overrun?)\n");
            return exit_verbs_error;
        }
        for (int i = 0; i < got; i++) {
            const ibv_wc& wc = completions[i];
            if (wc.status != IBV_WC_SUCCESS) {
                fprintf(stderr,
                        "emu_verbs_receiver: receive completed with %s\n",
                        ibv_wc_status_str(wc.status));
                return exit_verbs_error;
            }
            const uint8_t* frame = &buffer[wc.wr_id * slot_size];
            if (wc.byte_len >= frame_headers)
                tally.record(frame + frame_headers, wc.byte_len - frame_headers, size);
            ibv_recv_wr repost = wrs[wc.wr_id];
            repost.next = nullptr;
            if (ibv_post_recv(qp.get(), &repost, &bad) != 0)
                return fail("ibv_post_recv");
        }
        if (got > 0)
            continue;
        if (!use_channel) {
            sched_yield(); // busy polling
            continue;
        }
        pollfd wait{ channel->fd, POLLIN, 0 };
        if (poll(&wait, 1, 100) == 1) {
            ibv_cq* event_cq = nullptr;
            void* event_context = nullptr;
            while (ibv_get_cq_event(channel.get(), &event_cq, &event_context) == 0)
                events_to_acknowledge++;
            armed = false;
        }
    }
    if (events_to_acknowledge)
        ibv_ack_cq_events(cq.get(), events_to_acknowledge);
    if (membership >= 0)
        close(membership);
    printf("emu_verbs_receiver: %s on %s (%s, %s)\n",
           tally.summary().c_str(),
           context->device->name,
           interface.netdev.c_str(),
           use_channel ? "completion channel" : "busy polling");
    return tally.complete() ? exit_ok : exit_traffic_mismatch;
}
