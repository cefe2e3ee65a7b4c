/* Copyright 2026 gr-spead authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include "verbs_device.h"

#include <arpa/inet.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <thread>

namespace emu_programs {

namespace {

int find_device_of(const interface_info& interface,
                   verbs_owners::cm_id_ptr& id,
                   std::string& error)
{
    int count = 0;
    ibv_device** devices = ibv_get_device_list(&count);
    const int list_errno = errno;
    if (devices != nullptr)
        ibv_free_device_list(devices);
    if (devices == nullptr || count == 0) {
        error = std::string("no RDMA device exists (ibv_get_device_list found none") +
                (devices == nullptr ? std::string(": ") + strerror(list_errno) : "") +
                ")";
        return exit_no_rdma_device;
    }
    rdma_cm_id* raw = nullptr;
    if (rdma_create_id(nullptr, &raw, nullptr, RDMA_PS_UDP) != 0) {
        error = std::string("no RDMA device: rdma_create_id: ") + strerror(errno);
        return exit_no_rdma_device;
    }
    id.reset(raw);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr = interface.address;
    if (rdma_bind_addr(id.get(), reinterpret_cast<sockaddr*>(&address)) != 0 ||
        id->verbs == nullptr) {
        error = "no RDMA device owns " + interface.netdev + " (" +
                inet_ntoa(interface.address) + "): rdma_bind_addr: " + strerror(errno);
        return exit_no_rdma_device;
    }
    return exit_ok;
}

} // namespace

verbs_owners::qp_ptr
create_qp_at_init(ibv_pd* pd, ibv_qp_init_attr& attr, uint8_t port, const char*& failed)
{
    verbs_owners::qp_ptr qp(ibv_create_qp(pd, &attr));
    if (!qp) {
        failed = "ibv_create_qp (CAP_NET_RAW is needed)";
        return qp;
    }
    ibv_qp_attr init{};
    init.qp_state = IBV_QPS_INIT;
    init.port_num = port;
    if (const int error = ibv_modify_qp(qp.get(), &init, IBV_QP_STATE | IBV_QP_PORT)) {
        failed = "ibv_modify_qp(INIT)";
        qp.reset();
        errno = error;
    }
    return qp;
}

int open_device_of(const interface_info& interface,
                   verbs_owners::cm_id_ptr& id,
                   const char* program)
{
    std::string error;
    const int status = find_device_of(interface, id, error);
    if (status != exit_ok)
        fprintf(stderr, "%s: %s\n", program, error.c_str());
    return status;
}

bool wait_for_send_completion(ibv_cq* cq, ibv_wc& wc, std::chrono::milliseconds limit)
{
    const auto deadline = steady_clock::now() + limit;
    while (steady_clock::now() < deadline) {
        const int got = ibv_poll_cq(cq, 1, &wc);
        if (got < 0)
            return false;
        if (got == 1)
            return true;
        std::this_thread::yield();
    }
    return false;
}

} // namespace emu_programs
