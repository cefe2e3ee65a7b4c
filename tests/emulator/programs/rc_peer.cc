/* Copyright 2026 gr-spead authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
// emu_rc_peer: one end of an RC connection over the emulated NIC, for the failure
// cases between two namespaces (a link taken down, a peer killed). The two ends swap
// their QP numbers through files in a shared directory (the out-of-band exchange
// ibv_rc_pingpong does over its own socket).
//
//   emu_rc_peer receive --device emu_eth0 --dir D --name r --peer s
//       posts receives and reposts them as sends land, until killed.
//   emu_rc_peer send --device emu_eth0 --dir D --name s --peer r --peer-ip A
//       streams 4 KiB sends (16 in flight) until one completes with an error; prints
//       "sent: N" and "error: <ibv_wc_status_str>" and exits 4 (0 is never reached).
#include "program_support.h"

#include <infiniband/verbs.h>

#include <arpa/inet.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

using namespace emu_programs;

namespace {

[[noreturn]] void die(const char* what)
{
    fprintf(stderr, "emu_rc_peer: %s: %s\n", what, strerror(errno));
    exit(exit_verbs_error);
}

ibv_context* open_named(const std::string& name)
{
    int count = 0;
    ibv_device** devices = ibv_get_device_list(&count);
    ibv_context* context = nullptr;
    for (int i = 0; devices != nullptr && i < count; i++)
        if (name == ibv_get_device_name(devices[i]))
            context = ibv_open_device(devices[i]);
    if (devices != nullptr)
        ibv_free_device_list(devices);
    if (context == nullptr) {
        fprintf(stderr, "emu_rc_peer: no device %s\n", name.c_str());
        exit(exit_no_rdma_device);
    }
    return context;
}

uint32_t exchange(const std::string& dir,
                  const std::string& name,
                  const std::string& peer,
                  uint32_t qp_num)
{
    {
        std::ofstream out(dir + "/" + name + ".tmp");
        out << qp_num << "\n";
    }
    rename((dir + "/" + name + ".tmp").c_str(), (dir + "/" + name + ".qpn").c_str());
    for (int i = 0; i < 600; i++) {
        std::ifstream in(dir + "/" + peer + ".qpn");
        uint32_t peer_qp_num = 0;
        if (in >> peer_qp_num)
            return peer_qp_num;
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    fprintf(stderr, "emu_rc_peer: %s never wrote its QP number\n", peer.c_str());
    exit(exit_usage);
}

void connect_qp(ibv_qp* qp, in_addr peer_ip, uint32_t peer_qp_num)
{
    ibv_qp_attr attr{};
    attr.qp_state = IBV_QPS_INIT;
    attr.port_num = 1;
    attr.qp_access_flags = IBV_ACCESS_LOCAL_WRITE;
    if (ibv_modify_qp(qp,
                      &attr,
                      IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
                          IBV_QP_ACCESS_FLAGS))
        die("INIT");
    attr = {};
    attr.qp_state = IBV_QPS_RTR;
    attr.path_mtu = IBV_MTU_1024;
    attr.dest_qp_num = peer_qp_num;
    attr.max_dest_rd_atomic = 1;
    attr.min_rnr_timer = 12;
    attr.ah_attr.is_global = 1;
    attr.ah_attr.grh.dgid.raw[10] = 0xff;
    attr.ah_attr.grh.dgid.raw[11] = 0xff;
    memcpy(&attr.ah_attr.grh.dgid.raw[12], &peer_ip, 4);
    attr.ah_attr.grh.hop_limit = 1;
    attr.ah_attr.port_num = 1;
    if (ibv_modify_qp(qp,
                      &attr,
                      IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
                          IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
                          IBV_QP_MIN_RNR_TIMER))
        die("RTR");
    attr = {};
    attr.qp_state = IBV_QPS_RTS;
    attr.timeout = 14; // 67 ms, as ibv_rc_pingpong
    attr.retry_cnt = 7;
    attr.rnr_retry = 7;
    attr.max_rd_atomic = 1;
    if (ibv_modify_qp(qp,
                      &attr,
                      IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
                          IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC))
        die("RTS");
}

} // namespace

int main(int argc, char** argv)
{
    if (argc < 2) {
        fprintf(stderr,
                "usage: emu_rc_peer receive|send --device D --dir D --name N --peer P "
                "[--peer-ip A]\n");
        return exit_usage;
    }
    const std::string role = argv[1];
    const options opts(argc, argv, 2);
    ibv_context* context = open_named(opts.required("device"));
    ibv_pd* pd = ibv_alloc_pd(context);
    ibv_cq* cq = ibv_create_cq(context, 256, nullptr, nullptr, 0);
    constexpr int depth = 16;
    constexpr size_t message = 4096;
    std::vector<uint8_t> buffer(depth * message);
    ibv_mr* mr = ibv_reg_mr(pd, buffer.data(), buffer.size(), IBV_ACCESS_LOCAL_WRITE);
    if (pd == nullptr || cq == nullptr || mr == nullptr)
        die("setting up");
    ibv_qp_init_attr init{};
    init.send_cq = cq;
    init.recv_cq = cq;
    init.qp_type = IBV_QPT_RC;
    init.cap.max_send_wr = depth;
    init.cap.max_recv_wr = depth;
    init.cap.max_send_sge = 1;
    init.cap.max_recv_sge = 1;
    ibv_qp* qp = ibv_create_qp(pd, &init);
    if (qp == nullptr)
        die("ibv_create_qp");
    const uint32_t peer_qp_num = exchange(
        opts.required("dir"), opts.required("name"), opts.required("peer"), qp->qp_num);
    in_addr peer_ip{};
    inet_pton(AF_INET, opts.text("peer-ip", "127.0.0.1").c_str(), &peer_ip);
    connect_qp(qp, peer_ip, peer_qp_num);

    auto post = [&](uint64_t slot) {
        ibv_sge sge{ reinterpret_cast<uintptr_t>(buffer.data() + slot * message),
                     static_cast<uint32_t>(message),
                     mr->lkey };
        if (role == "receive") {
            ibv_recv_wr wr{};
            wr.wr_id = slot;
            wr.sg_list = &sge;
            wr.num_sge = 1;
            ibv_recv_wr* bad = nullptr;
            return ibv_post_recv(qp, &wr, &bad);
        }
        ibv_send_wr wr{};
        wr.wr_id = slot;
        wr.sg_list = &sge;
        wr.num_sge = 1;
        wr.opcode = IBV_WR_SEND;
        wr.send_flags = IBV_SEND_SIGNALED;
        ibv_send_wr* bad = nullptr;
        return ibv_post_send(qp, &wr, &bad);
    };
    for (uint64_t slot = 0; slot < depth; slot++)
        if (post(slot) != 0)
            die("posting");
    printf("connected\n");
    fflush(stdout);
    uint64_t done = 0;
    while (true) {
        ibv_wc wc{};
        const int got = ibv_poll_cq(cq, 1, &wc);
        if (got < 0)
            die("ibv_poll_cq");
        if (got == 0) {
            usleep(100);
            continue;
        }
        if (wc.status != IBV_WC_SUCCESS) {
            printf("sent: %llu\nerror: %s\n",
                   static_cast<unsigned long long>(done),
                   ibv_wc_status_str(wc.status));
            return exit_verbs_error;
        }
        done++;
        if (post(wc.wr_id) != 0)
            die("reposting");
    }
}
