/* -*- c++ -*- */
/*
 * Copyright 2026 gr-spead authors
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "privileges.h"
#include "verbs.h"
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/mman.h>
#include <system_error>
#include <cerrno>
#include <cstddef>
#include <cstring>
#include <sstream>

namespace gr {
namespace spead {
namespace ibv {

namespace {
/*! A std::system_error whose what() is exactly the message given: std::system_error
 * appends the error's text again after any message, which here already holds it and
 * ends in the fix. */
class verbs_error : public std::system_error
{
public:
    verbs_error(int err, std::string message)
        : std::system_error(err, std::generic_category()), d_message(std::move(message))
    {
    }
    const char* what() const noexcept override { return d_message.c_str(); }

private:
    std::string d_message;
};
} // namespace

void throw_error(const std::string& what, int err, const std::string& fix)
{
    std::string message = what + ": " + std::strerror(err);
    if (!fix.empty())
        message += ". " + fix;
    throw verbs_error(err, std::move(message));
}

void mapping_deleter::operator()(std::uint8_t* p) const { munmap(p, size); }

mapping_ptr allocate_ring(std::size_t bytes)
{
    // mmap gives page-aligned, zeroed memory that registers cleanly with the NIC.
    void* p =
        mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        throw_error("allocating a " + std::to_string(bytes) + "-byte ring", errno);
    return mapping_ptr(static_cast<std::uint8_t*>(p), mapping_deleter{ bytes });
}

namespace {
/*! Owns what a create call returned, which it made after clearing errno; a null is
 * thrown as that call's errno (ENOMEM if it set none). */
template <typename Ptr>
Ptr owned(typename Ptr::pointer object, const char* what, const char* fix = "")
{
    const int err = errno; // before anything that may allocate
    if (!object)
        throw_error(what, err ? err : ENOMEM, fix);
    return Ptr(object);
}
} // namespace

comp_channel_ptr create_comp_channel(ibv_context* context)
{
    errno = 0;
    return owned<comp_channel_ptr>(ibv_create_comp_channel(context),
                                   "ibv_create_comp_channel");
}

cq_ptr
create_cq(ibv_context* context, int entries, ibv_comp_channel* channel, int comp_vector)
{
    const std::string what = "ibv_create_cq(" + std::to_string(entries) + " entries)";
    errno = 0;
    return owned<cq_ptr>(ibv_create_cq(context, entries, nullptr, channel, comp_vector),
                         what.c_str(),
                         "reduce buffer_size or max_size (the device limits completion "
                         "queue entries, see spead_ibv_check)");
}

pd_ptr alloc_pd(ibv_context* context)
{
    errno = 0;
    return owned<pd_ptr>(ibv_alloc_pd(context), "ibv_alloc_pd");
}

qp_ptr
create_raw_packet_qp(ibv_pd* pd, ibv_cq* send_cq, ibv_cq* recv_cq, const ibv_qp_cap& cap)
{
    ibv_qp_init_attr attr{};
    attr.send_cq = send_cq;
    attr.recv_cq = recv_cq;
    attr.qp_type = IBV_QPT_RAW_PACKET;
    attr.cap = cap;
    errno = 0;
    ibv_qp* qp = ibv_create_qp(pd, &attr);
    if (!qp) {
        const int err = errno ? errno : EINVAL;
        // Some kernels report a missing CAP_NET_RAW as EINVAL rather than EPERM.
        if (err == EPERM || err == EACCES || (err == EINVAL && !has_cap_net_raw()))
            throw_error("ibv_create_qp(RAW_PACKET)",
                        EPERM,
                        "Raw-packet queue pairs need CAP_NET_RAW. " + cap_net_raw_fix());
        throw_error("ibv_create_qp(RAW_PACKET)", err);
    }
    return qp_ptr(qp);
}

void modify_qp(ibv_qp* qp, ibv_qp_state state, int port_num)
{
    ibv_qp_attr attr{};
    attr.qp_state = state;
    int mask = IBV_QP_STATE;
    if (port_num > 0) {
        attr.port_num = std::uint8_t(port_num);
        mask |= IBV_QP_PORT;
    }
    const int status = ibv_modify_qp(qp, &attr, mask);
    if (status != 0)
        throw_error("ibv_modify_qp to state " + std::to_string(int(state)), status);
}

mr_ptr register_memory(ibv_pd* pd, const void* address, std::size_t size, int access)
{
    errno = 0;
    ibv_mr* mr = ibv_reg_mr(pd, const_cast<void*>(address), size, access);
    if (!mr) {
        const int err = errno ? errno : ENOMEM;
        if (err == ENOMEM || err == EPERM || err == EAGAIN)
            throw_error(
                "ibv_reg_mr(" + std::to_string(size) + " bytes)", err, memlock_fix(size));
        throw_error("ibv_reg_mr(" + std::to_string(size) + " bytes)", err);
    }
    return mr_ptr(mr);
}

flow_ptr create_udp_flow(ibv_qp* qp,
                         const boost::asio::ip::udp::endpoint& endpoint,
                         const mac_address& interface_mac,
                         int port_num)
{
    return create_udp_flow(qp, endpoint, interface_mac, port_num, nullptr);
}

flow_ptr create_udp_flow(ibv_qp* qp,
                         const boost::asio::ip::udp::endpoint& endpoint,
                         const mac_address& interface_mac,
                         int port_num,
                         ibv_counters* counters)
{
    struct {
        ibv_flow_attr attr;
        ibv_flow_spec_eth eth;
        ibv_flow_spec_ipv4 ip;
        ibv_flow_spec_tcp_udp udp;
        ibv_flow_spec_counter_action count; // only with counters
    } __attribute__((packed, aligned(8))) rule;
    std::memset(&rule, 0, sizeof(rule));
    rule.attr.type = IBV_FLOW_ATTR_NORMAL;
    rule.attr.size = counters ? sizeof(rule) : offsetof(decltype(rule), count);
    rule.attr.num_of_specs = counters ? 4 : 3;
    rule.attr.port = std::uint8_t(port_num);

    rule.eth.type = IBV_FLOW_SPEC_ETH;
    rule.eth.size = sizeof(rule.eth);
    rule.ip.type = IBV_FLOW_SPEC_IPV4;
    rule.ip.size = sizeof(rule.ip);
    const auto address = endpoint.address().to_v4();
    if (!address.is_unspecified()) {
        // Match the destination MAC too: ConnectX-3 requires an Ethernet match.
        const mac_address dst =
            address.is_multicast() ? multicast_mac(address.to_uint()) : interface_mac;
        std::memcpy(rule.eth.val.dst_mac, dst.data(), dst.size());
        std::memset(rule.eth.mask.dst_mac, 0xff, sizeof(rule.eth.mask.dst_mac));
        const std::uint32_t ip = htonl(address.to_uint());
        std::memcpy(&rule.ip.val.dst_ip, &ip, sizeof(ip));
        std::memset(&rule.ip.mask.dst_ip, 0xff, sizeof(rule.ip.mask.dst_ip));
    }
    rule.udp.type = IBV_FLOW_SPEC_UDP;
    rule.udp.size = sizeof(rule.udp);
    rule.udp.val.dst_port = htons(endpoint.port());
    rule.udp.mask.dst_port = 0xffff;
    if (counters) {
        rule.count.type = IBV_FLOW_SPEC_ACTION_COUNT;
        rule.count.size = sizeof(rule.count);
        rule.count.counters = counters;
    }

    errno = 0;
    ibv_flow* flow = ibv_create_flow(qp, reinterpret_cast<ibv_flow_attr*>(&rule));
    if (!flow) {
        std::ostringstream what;
        what << "ibv_create_flow(" << endpoint << ")";
        throw_error(
            what.str(),
            errno ? errno : EOPNOTSUPP,
            "The device refused a flow-steering rule: ConnectX-3 needs "
            "`options mlx4_core log_num_mgm_entry_size=-1` (then reload mlx4_core); "
            "see docs/ibverbs.md");
    }
    return flow_ptr(flow);
}

counters_ptr create_flow_packet_counter(ibv_context* context, int& error)
{
    ibv_counters_init_attr init{};
    errno = 0;
    counters_ptr counters(ibv_create_counters(context, &init));
    if (!counters) {
        error = errno ? errno : EOPNOTSUPP;
        return nullptr;
    }
    ibv_counter_attach_attr attach{};
    attach.counter_desc = IBV_COUNTER_PACKETS;
    attach.index = 0;
    // NULL flow: a static attach, bound when a flow is created with the counters.
    error = ibv_attach_counters_point_flow(counters.get(), &attach, nullptr);
    if (error != 0)
        return nullptr;
    return counters;
}

int read_flow_packet_counter(ibv_counters* counters, std::uint64_t& packets)
{
    std::uint64_t value = 0;
    // flags 0: a volatile read from the device, not the driver's periodic cache, so a
    // final reconciliation sees every frame counted so far.
    const int status = ibv_read_counters(counters, &value, 1, 0);
    if (status == 0)
        packets = value;
    return status;
}

} // namespace ibv
} // namespace spead
} // namespace gr
