/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "rdma_probe.h"
#include "transport/ibv/verbs.h"
#include <netinet/in.h>
#include <rdma/rdma_cma.h>
#include <cerrno>
#include <cstring>

namespace gr {
namespace spead {
namespace rdma {

probe_report probe(const boost::asio::ip::address_v4& address)
{
    probe_report r;
    rdma_cm_id* raw = nullptr;
    if (rdma_create_id(nullptr, &raw, nullptr, RDMA_PS_TCP) != 0) {
        r.cm_error = std::string("rdma_create_id: ") + std::strerror(errno);
        return r;
    }
    ibv::cm_id_ptr id(raw);
    sockaddr_in sin{};
    sin.sin_family = AF_INET;
    sin.sin_addr.s_addr = htonl(address.to_uint());
    if (rdma_bind_addr(raw, reinterpret_cast<sockaddr*>(&sin)) != 0 || !raw->verbs) {
        r.cm_error = "rdma_bind_addr(" + address.to_string() +
                     "): no RDMA device owns it (" + std::strerror(errno) + ")";
        return r;
    }
    r.cm_reachable = true;
    ibv_port_attr port{};
    if (ibv_query_port(raw->verbs, raw->port_num, &port) == 0)
        r.max_message = port.max_msg_sz;
    try {
        ibv::pd_ptr pd = ibv::alloc_pd(raw->verbs);
        ibv::cq_ptr cq = ibv::create_cq(raw->verbs, 4, nullptr, 0);
        ibv_qp_init_attr attr{};
        attr.send_cq = cq.get();
        attr.recv_cq = cq.get();
        attr.qp_type = IBV_QPT_RC;
        attr.cap.max_send_wr = 1;
        attr.cap.max_recv_wr = 1;
        attr.cap.max_send_sge = 1;
        attr.cap.max_recv_sge = 1;
        attr.cap.max_inline_data = 1024;
        ibv_qp* qp = ibv_create_qp(pd.get(), &attr);
        if (!qp) {
            // Some devices refuse a large inline request: ask for none.
            attr.cap.max_inline_data = 0;
            qp = ibv_create_qp(pd.get(), &attr);
        }
        if (qp) {
            r.rc_supported = true;
            r.max_inline = attr.cap.max_inline_data;
            ibv_destroy_qp(qp);
        } else {
            r.rc_error = std::string("ibv_create_qp(RC): ") + std::strerror(errno);
        }
    } catch (const std::exception& e) {
        r.rc_error = e.what();
    }
    return r;
}

} // namespace rdma
} // namespace spead
} // namespace gr
