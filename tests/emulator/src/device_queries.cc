/* Copyright 2026 gr-spead authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
// ibv_query_device, ibv_query_device_ex and ibv_query_port: what the emulated NIC
// advertises. Capabilities say what it models (raw packet QPs, managed flow steering,
// IP checksum offload, RC queue pairs with RNR NAKs) and nothing more (no TSO, RSS,
// pacing, MPRQ, timestamps, RDMA read, atomics).
#include "device.h"
#include "device_context.h"

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstring>

// verbs.h turns ibv_query_port into a call through the extended context; the exported
// function behind it still exists for old binaries.
#undef ibv_query_port

namespace spead_emu {
namespace {

unsigned device_capabilities()
{
    unsigned flags = IBV_DEVICE_MANAGED_FLOW_STEERING | IBV_DEVICE_RC_RNR_NAK_GEN;
    if (features().ip_checksum_offload)
        flags |= IBV_DEVICE_RAW_IP_CSUM;
    return flags;
}

ibv_device_attr device_attributes(device_context& context)
{
    emulated_device& device = context.device();
    ibv_device_attr attr{};
    snprintf(attr.fw_ver, sizeof(attr.fw_ver), "spead-emu 1");
    attr.node_guid = device.node_guid();
    attr.sys_image_guid = device.node_guid();
    attr.max_mr_size = UINT64_MAX;
    attr.page_size_cap = ~uint64_t{ 0xfff };
    attr.vendor_id = 0; // no PCI vendor: nobody should mistake this for a real NIC
    attr.max_qp = device_limits::max_qp;
    attr.max_qp_wr = device_limits::max_qp_wr;
    attr.device_cap_flags = device_capabilities();
    attr.max_sge = device_limits::max_sge;
    attr.max_cq = device_limits::max_cq;
    attr.max_cqe = device_limits::max_cqe;
    attr.max_mr = device_limits::max_mr;
    attr.max_pd = device_limits::max_pd;
    attr.atomic_cap = IBV_ATOMIC_NONE;
    // RC QPs accept the RDMA read/atomic depths applications set, though neither
    // operation is modelled (ConnectX-5's values).
    attr.max_qp_rd_atom = device_limits::max_rd_atomic;
    attr.max_qp_init_rd_atom = device_limits::max_rd_atomic;
    attr.max_res_rd_atom = device_limits::max_rd_atomic * device_limits::max_qp;
    attr.max_raw_ethy_qp = device_limits::max_qp;
    attr.max_pkeys = 1;
    attr.phys_port_cnt = 1;
    return attr;
}

// The RoCE rule: the largest IB MTU that fits in the netdev MTU after the RoCE headers.
ibv_mtu ib_mtu_for(int netdev_mtu)
{
    const int payload = netdev_mtu - (40 + 8 + 12 + 28 + 4); // GRH, UDP, BTH, ext, ICRC
    if (payload >= 4096)
        return IBV_MTU_4096;
    if (payload >= 2048)
        return IBV_MTU_2048;
    if (payload >= 1024)
        return IBV_MTU_1024;
    if (payload >= 512)
        return IBV_MTU_512;
    return IBV_MTU_256;
}

} // namespace

namespace operations {

int query_device_ex(ibv_context* context,
                    const ibv_query_device_ex_input* input,
                    ibv_device_attr_ex* attr,
                    size_t size)
{
    device_context* emulated = device_context::from(context);
    if (emulated == nullptr || attr == nullptr)
        return EINVAL;
    if (input != nullptr && input->comp_mask != 0)
        return EINVAL;
    ibv_device_attr_ex full{};
    full.orig_attr = device_attributes(*emulated);
    full.device_cap_flags_ex = device_capabilities();
    full.raw_packet_caps =
        features().ip_checksum_offload ? IBV_RAW_PACKET_CAP_IP_CSUM : 0;
    full.phys_port_cnt_ex = 1;
    // Applications compiled against an older verbs.h pass a smaller struct.
    memcpy(attr, &full, std::min(size, sizeof(full)));
    return 0;
}

int query_port(ibv_context* context, uint8_t port, ibv_port_attr* attr, size_t size)
{
    device_context* emulated = device_context::from(context);
    if (emulated == nullptr || attr == nullptr)
        return EINVAL;
    if (port != 1)
        return EINVAL;
    const auto netdev = query_netdev(emulated->device().netdev());
    if (!netdev)
        return ENODEV; // the interface vanished
    ibv_port_attr full{};
    const bool running = netdev->running && !emulated->device().faults().port_down();
    full.state = running ? IBV_PORT_ACTIVE : IBV_PORT_DOWN;
    full.max_mtu = IBV_MTU_4096;
    full.active_mtu = ib_mtu_for(netdev->mtu);
    full.gid_tbl_len = 256;
    full.port_cap_flags = IBV_PORT_CM_SUP | IBV_PORT_IP_BASED_GIDS;
    full.max_msg_sz = device_limits::max_message_size;
    full.pkey_tbl_len = 1;
    full.max_vl_num = 1;
    full.active_width = 2;             // 4x
    full.active_speed = 32;            // EDR: 4x EDR reads as 100 Gb/s
    full.phys_state = running ? 5 : 3; // LinkUp : Disabled
    full.link_layer = IBV_LINK_LAYER_ETHERNET;
    memcpy(attr, &full, std::min(size, sizeof(full)));
    return 0;
}

} // namespace operations
} // namespace spead_emu

using spead_emu::device_context;

extern "C" {

int ibv_query_device(ibv_context* context, ibv_device_attr* attr)
{
    device_context* emulated = device_context::from(context);
    if (emulated == nullptr || attr == nullptr)
        return EINVAL;
    *attr = spead_emu::device_attributes(*emulated);
    return 0;
}

// The pre-extended-context entry point, reached by binaries built against old headers.
// Its struct ends before port_cap_flags2.
int ibv_query_port(ibv_context* context, uint8_t port, _compat_ibv_port_attr* attr)
{
    return spead_emu::operations::query_port(context,
                                             port,
                                             reinterpret_cast<ibv_port_attr*>(attr),
                                             offsetof(ibv_port_attr, port_cap_flags2));
}

} // extern "C"
