/* Copyright 2026 gr-spead authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
// emu_verbs_sender: sends UDP datagrams through a raw-packet QP as the product's
// udp_ibv_stream does: Ethernet/IPv4/UDP headers built in a registered header slot, the
// payload gathered zero-copy from a second registered region (two SGEs, two lkeys),
// only the last WR of each batch signalled, IPv4 checksum left to the NIC when it
// advertises IBV_RAW_PACKET_CAP_IP_CSUM.
//
//   emu_verbs_sender --interface ADDRESS|NETDEV --destination IP:PORT --count N
//                    --size BYTES [--destination-mac MAC] [--batch N] [--ttl N]
//                    [--source-port PORT] [--interval-us US]
//
// Exit: 0 all sent, 3 no RDMA device, 4 a verbs call failed, 2 usage.
#include "program_support.h"
#include "verbs_device.h"

#include <verbs_builders.h>

#include <arpa/inet.h>
#include <endian.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <thread>
#include <vector>

using namespace emu_programs;
using namespace verbs_builders;
using namespace verbs_owners;

namespace {

constexpr size_t header_size = 14 + 20 + 8;
constexpr size_t header_slot = 64; // header slots, cache-line apart

int fail(const char* what)
{
    fprintf(stderr, "emu_verbs_sender: %s: %s\n", what, strerror(errno));
    return exit_verbs_error;
}

uint16_t ipv4_header_checksum(const uint8_t* header)
{
    uint32_t sum = 0;
    for (int i = 0; i < 20; i += 2)
        sum += static_cast<uint32_t>(header[i] << 8 | header[i + 1]);
    while (sum >> 16)
        sum = (sum & 0xffff) + (sum >> 16);
    return static_cast<uint16_t>(~sum);
}

struct frame_addressing {
    mac_address source_mac;
    mac_address destination_mac;
    in_addr source;
    in_addr destination;
    uint16_t source_port;
    uint16_t destination_port;
    uint8_t ttl;
};

void write_headers(uint8_t* header,
                   const frame_addressing& to,
                   size_t payload_size,
                   uint16_t identification,
                   bool nic_fills_checksum)
{
    memset(header, 0, header_size);
    memcpy(header, to.destination_mac.data(), 6);
    memcpy(header + 6, to.source_mac.data(), 6);
    header[12] = 0x08; // IPv4
    uint8_t* ip = header + 14;
    ip[0] = 0x45;
    const uint16_t total = htons(static_cast<uint16_t>(20 + 8 + payload_size));
    memcpy(ip + 2, &total, 2);
    const uint16_t id = htons(identification);
    memcpy(ip + 4, &id, 2);
    ip[6] = 0x40; // don't fragment
    ip[8] = to.ttl;
    ip[9] = IPPROTO_UDP;
    memcpy(ip + 12, &to.source, 4);
    memcpy(ip + 16, &to.destination, 4);
    if (!nic_fills_checksum) {
        const uint16_t checksum = htons(ipv4_header_checksum(ip));
        memcpy(ip + 10, &checksum, 2);
    }
    uint8_t* udp = ip + 20;
    const uint16_t source_port = htons(to.source_port);
    const uint16_t destination_port = htons(to.destination_port);
    const uint16_t length = htons(static_cast<uint16_t>(8 + payload_size));
    memcpy(udp, &source_port, 2);
    memcpy(udp + 2, &destination_port, 2);
    memcpy(udp + 4, &length, 2); // checksum 0: none (or the NIC's, with IP_CSUM)
}

} // namespace

int main(int argc, char** argv)
{
    const options args(argc, argv, 1);
    const interface_info interface = interface_option(args, "emu_verbs_sender");
    frame_addressing to{};
    if (!parse_endpoint(
            args.required("destination"), to.destination, to.destination_port)) {
        fprintf(stderr, "emu_verbs_sender: --destination must be IPv4:PORT\n");
        return exit_usage;
    }
    const uint64_t count = args.number("count", 0);
    const size_t size = args.number("size", 1024);
    const uint32_t batch = static_cast<uint32_t>(args.number("batch", 16));
    const auto interval = std::chrono::microseconds(args.number("interval-us", 0));
    if (count == 0 || size < minimum_payload || batch == 0) {
        fprintf(stderr, "emu_verbs_sender: need --count, --size >= 8 and --batch >= 1\n");
        return exit_usage;
    }
    if (size + header_size > static_cast<size_t>(interface.mtu) + 14)
        fprintf(stderr,
                "emu_verbs_sender: warning: frames exceed the MTU of %s\n",
                interface.netdev.c_str());
    to.source = interface.address;
    to.source_mac = interface.mac;
    to.source_port = static_cast<uint16_t>(args.number("source-port", 50000));
    to.ttl = static_cast<uint8_t>(args.number("ttl", 1));
    if (is_multicast(to.destination)) {
        to.destination_mac = multicast_mac(to.destination);
    } else if (args.has("destination-mac")) {
        if (!parse_mac(args.text("destination-mac"), to.destination_mac)) {
            fprintf(stderr, "emu_verbs_sender: bad --destination-mac\n");
            return exit_usage;
        }
    } else if (!neighbour_mac(interface.netdev, to.destination, to.destination_mac)) {
        fprintf(
            stderr,
            "emu_verbs_sender: no neighbour entry for %s on %s; pass --destination-mac\n",
            inet_ntoa(to.destination),
            interface.netdev.c_str());
        return exit_usage;
    }

    cm_id_ptr id;
    if (const int status = open_device_of(interface, id, "emu_verbs_sender"))
        return status;
    ibv_context* context = id->verbs;
    ibv_device_attr_ex device{};
    if (ibv_query_device_ex(context, nullptr, &device) != 0)
        return fail("ibv_query_device_ex");
    const bool nic_checksums = device.raw_packet_caps & IBV_RAW_PACKET_CAP_IP_CSUM;

    pd_ptr pd(ibv_alloc_pd(context));
    if (!pd)
        return fail("ibv_alloc_pd");
    cq_ptr cq(ibv_create_cq(context, static_cast<int>(batch), nullptr, nullptr, 0));
    if (!cq)
        return fail("ibv_create_cq");
    ibv_qp_init_attr qp_attr = qp_init_attr(cq.get());
    qp_attr.cap.max_send_wr = batch;
    qp_attr.cap.max_send_sge = 2;
    const char* failed = nullptr;
    qp_ptr qp = create_qp_at_init(pd.get(), qp_attr, id->port_num, failed);
    if (!qp)
        return fail(failed);
    ibv_qp_attr attr{};
    attr.qp_state = IBV_QPS_RTR;
    if (ibv_modify_qp(qp.get(), &attr, IBV_QP_STATE) != 0)
        return fail("ibv_modify_qp(RTR)");
    attr.qp_state = IBV_QPS_RTS;
    if (ibv_modify_qp(qp.get(), &attr, IBV_QP_STATE) != 0)
        return fail("ibv_modify_qp(RTS)");

    std::vector<uint8_t> headers(header_slot * batch);
    mr_ptr header_mr(ibv_reg_mr(pd.get(), headers.data(), headers.size(), 0));
    // The user's payload, sent in place.
    std::vector<uint8_t> payloads(size * count);
    for (uint64_t i = 0; i < count; i++)
        fill_payload(&payloads[i * size], size, i);
    mr_ptr payload_mr(ibv_reg_mr(pd.get(), payloads.data(), payloads.size(), 0));
    if (!header_mr || !payload_mr)
        return fail("ibv_reg_mr");

    std::vector<ibv_sge> sges(2 * batch);
    std::vector<ibv_send_wr> wrs(batch);
    for (uint64_t first = 0; first < count; first += batch) {
        const uint32_t in_batch =
            static_cast<uint32_t>(std::min<uint64_t>(batch, count - first));
        for (uint32_t i = 0; i < in_batch; i++) {
            const uint64_t sequence = first + i;
            uint8_t* header = &headers[i * header_slot];
            write_headers(
                header, to, size, static_cast<uint16_t>(sequence), nic_checksums);
            sges[2 * i] = { reinterpret_cast<uintptr_t>(header),
                            static_cast<uint32_t>(header_size),
                            header_mr->lkey };
            sges[2 * i + 1] = { reinterpret_cast<uintptr_t>(&payloads[sequence * size]),
                                static_cast<uint32_t>(size),
                                payload_mr->lkey };
            ibv_send_wr& wr = wrs[i];
            wr = ibv_send_wr{};
            wr.wr_id = sequence;
            wr.opcode = IBV_WR_SEND;
            wr.sg_list = &sges[2 * i];
            wr.num_sge = 2;
            wr.send_flags = (nic_checksums ? IBV_SEND_IP_CSUM : 0) |
                            (i + 1 == in_batch ? IBV_SEND_SIGNALED : 0);
            wr.next = i + 1 < in_batch ? &wrs[i + 1] : nullptr;
        }
        ibv_send_wr* bad = nullptr;
        if (const int status = ibv_post_send(qp.get(), &wrs[0], &bad)) {
            errno = status;
            return fail("ibv_post_send");
        }
        // The header slots are reused only once the batch's signalled WR completed.
        ibv_wc wc{};
        if (!wait_for_send_completion(cq.get(), wc, std::chrono::seconds(5))) {
            fprintf(stderr, "emu_verbs_sender: no send completion within 5 s\n");
            return exit_verbs_error;
        }
        if (wc.status != IBV_WC_SUCCESS) {
            fprintf(stderr,
                    "emu_verbs_sender: wr_id %llu completed with %s\n",
                    static_cast<unsigned long long>(wc.wr_id),
                    ibv_wc_status_str(wc.status));
            return exit_verbs_error;
        }
        if (interval.count() > 0)
            std::this_thread::sleep_for(interval);
    }
    printf("emu_verbs_sender: sent %llu datagrams of %zu bytes to %s:%u via %s (%s), "
           "checksums by %s\n",
           static_cast<unsigned long long>(count),
           size,
           inet_ntoa(to.destination),
           to.destination_port,
           context->device->name,
           interface.netdev.c_str(),
           nic_checksums ? "the NIC" : "software");
    return exit_ok;
}
